"""One input from path to (validated) Extraction, every failure but the endpoint's turned into a reason.

The one place a single document is loaded, extracted and validated: `extractor.extract`, the
`extract` command and `eval` all call it. They go on after a bad document; only an EndpointError (bad key, model or URL)
propagates, since no other document would fare better. (Bulk runs split these steps between
worker processes and the event loop: extractor.bulk.work.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from extractor.document import Document, LoadError
from extractor.extraction import Extraction
from extractor.llm.usage import Usage
from extractor.loaders import load
from extractor.validator import validate

if TYPE_CHECKING:
    from extractor.llm.client import EndpointError, LLMError

INTERNAL_ERROR = "internal error, please report it: {error}"
LLM_CLIENT = "extractor.llm.client"  # defines the LLM errors; imports openai, so only LLM backends load it


@dataclass
class Attempt:
    """One input's outcome: the loaded document and its extraction, or the reason it failed (and the LLM
    usage a failed attempt spent). A batch goes on after a failed attempt."""

    path: Path
    document: Document | None = None
    extraction: Extraction | None = None
    reason: str | None = None  # why it failed (the path not included)
    usage: Usage | None = None  # LLM calls spent on a failed attempt

    @property
    def message(self) -> str:
        return f"{self.path}: {self.reason}"


def attempt(
    path: Path, extract: Callable[[Document], Extraction], validated: bool = False, accepted: Collection[str] = ()
) -> Attempt:
    """Load and extract one input, and validate the extraction against its document when `validated`
    (findings whose ids are in `accepted` set aside); raises only EndpointError."""
    try:
        document = load(path)
    except LoadError as error:
        return Attempt(path, reason=error.reason)
    try:
        return Attempt(path, document, extract_document(document, extract, validated, accepted))
    except endpoint_errors():
        raise
    except llm_errors() as error:
        return Attempt(path, document, reason=str(error), usage=error.usage)
    except Exception as error:
        return Attempt(path, document, reason=INTERNAL_ERROR.format(error=repr(error)))


def extract_document(
    document: Document,
    extract: Callable[[Document], Extraction],
    validated: bool = True,
    accepted: Collection[str] = (),
) -> Extraction:
    """Extract a loaded document and, when `validated`, attach the validator's findings on it (those
    in `accepted` set aside): every caller gets extraction and validation the same way."""
    extraction = extract(document)
    if validated:
        extraction.validation = validate(extraction, document, accepted)
    return extraction


def endpoint_errors() -> tuple[type[EndpointError], ...]:
    """EndpointError once an LLM backend has loaded its client, else nothing: only LLM backends raise
    it, and importing it to catch it would import openai (half a second) into every rules run."""
    client = sys.modules.get(LLM_CLIENT)
    return (client.EndpointError,) if client else ()


def llm_errors() -> tuple[type[LLMError], ...]:
    """LLMError once an LLM backend has loaded its client, else nothing (as endpoint_errors)."""
    client = sys.modules.get(LLM_CLIENT)
    return (client.LLMError,) if client else ()


def iter_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Files as given; directories walked recursively in name order (hidden files skipped)."""
    for given in paths:
        path = Path(os.fspath(given))
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        else:
            yield path
