"""One input from path to (validated) Extraction, every failure but the endpoint's turned into a reason.

The one place a single document is loaded, extracted and validated: `extractor.extract`, the
`extract` command and `eval` all call it. They go on after a bad document; only an EndpointError (bad key, model or URL)
propagates, since no other document would fare better. (Bulk runs split these steps between
worker processes and the event loop: extractor.bulk.work.)
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from extractor.backends.choice import Extract
from extractor.document import Document, LoadError
from extractor.extraction import Extraction
from extractor.llm.errors import EndpointError, LLMError
from extractor.llm.usage import Usage
from extractor.loaders import load
from extractor.validator import set_aside, validate

INTERNAL_ERROR = "internal error, please report it: {error}"


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
    path: Path,
    extract: Extract,
    validated: bool = False,
    accepted: Collection[str] = (),
    keep_facts: bool = False,
) -> Attempt:
    """Load and extract one input, and validate the extraction against its document when `validated`
    (findings whose ids are in `accepted` set aside; with `keep_facts`, the facts the validation merged kept
    for `Extraction.take_facts`); raises only EndpointError."""
    try:
        document = load(path)
    except LoadError as error:
        return Attempt(path, reason=error.reason)
    except Exception as error:  # a loader's own failure is this input's, not the batch's
        return Attempt(path, reason=INTERNAL_ERROR.format(error=repr(error)))
    try:
        return Attempt(path, document, extract_document(document, extract, validated, accepted, keep_facts))
    except EndpointError:
        raise
    except LLMError as error:
        return Attempt(path, document, reason=str(error), usage=error.usage)
    except Exception as error:
        return Attempt(path, document, reason=INTERNAL_ERROR.format(error=repr(error)))


def extract_document(
    document: Document,
    extract: Extract,
    validated: bool = True,
    accepted: Collection[str] = (),
    keep_facts: bool = False,
) -> Extraction:
    """Extract a loaded document and, when `validated`, attach the validator's findings on it (those
    in `accepted` set aside): every caller gets extraction and validation the same way, and the document is
    validated once (the backend's own validation, when it made one on its way). `keep_facts`: for a
    caller that writes the facts next (`Extraction.take_facts`), not for one that hands the extraction on."""
    extraction = extract(document, validated=validated)
    if not validated:
        return extraction
    if extraction.validation is None:
        extraction.validation = validate(extraction, document, accepted, keep_facts=keep_facts)
        return extraction
    extraction.validation = set_aside(extraction.validation, accepted)
    if not keep_facts:
        extraction.forget_facts()
    return extraction


def iter_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Files as given; directories walked recursively in name order (hidden files skipped)."""
    for given in paths:
        path = Path(os.fspath(given))
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        else:
            yield path
