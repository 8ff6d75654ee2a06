"""One input from path to Extraction, every failure but the endpoint's turned into a reason.

`extract` and `eval` go on after a bad document; only an EndpointError (bad key, model or URL)
propagates, since no other document would fare better. (Bulk runs split these steps between
worker processes and the event loop: extractor.bulk.work.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from extractor.document import Document, LoadError
from extractor.extraction import Extraction
from extractor.llm.client import EndpointError, LLMError
from extractor.llm.usage import Usage
from extractor.loaders import load

INTERNAL_ERROR = "internal error, please report it: {error}"


@dataclass
class Attempt:
    path: Path
    document: Document | None = None
    extraction: Extraction | None = None
    reason: str | None = None  # why it failed (the path not included)
    usage: Usage | None = None  # LLM calls spent on a failed attempt

    @property
    def message(self) -> str:
        return f"{self.path}: {self.reason}"


def attempt(path: Path, extract: Callable[[Document], Extraction]) -> Attempt:
    """Load and extract one input; raises only EndpointError."""
    try:
        document = load(path)
    except LoadError as error:
        return Attempt(path, reason=error.reason)
    try:
        return Attempt(path, document, extract(document))
    except EndpointError:
        raise
    except LLMError as error:
        return Attempt(path, document, reason=str(error), usage=error.usage)
    except Exception as error:  # noqa: BLE001 - one document's bug must not lose the batch
        return Attempt(path, document, reason=INTERNAL_ERROR.format(error=repr(error)))
