"""Source-grounded extraction and QA of SEC filing sections (stock-based compensation notes).

    import extractor
    result = extractor.extract("note.htm")                     # rules backend: no LLM, no key
    result.validation.passed, result.facts()[0].concept

    for tried in extractor.extract_many(["filings/"]):         # one after another; bad files say why
        print(tried.path, tried.reason or len(tried.extraction.facts()))

    extractor.run(["filings/"], "out/run")                     # bulk: worker processes, resumable
    extractor.evaluate("evals/suites/heterogeneous").metrics().overall.f1

The names below are imported on first use, so `import extractor` stays about as cheap as pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it: the public API, imported when first used
_EXPORTS = {
    "extract": "extractor.api",
    "extract_many": "extractor.api",
    "run": "extractor.api",
    "validate": "extractor.api",
    "evaluate": "extractor.api",
    "LLMConfig": "extractor.llm.config",
    "Document": "extractor.document",
    "Extraction": "extractor.extraction",
    "Validation": "extractor.findings",
    "Finding": "extractor.findings",
    "Attempt": "extractor.attempt",
    "ExtractorError": "extractor.errors",
    "SettingsError": "extractor.errors",
    "LoadError": "extractor.document",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from extractor.api import evaluate as evaluate
    from extractor.api import extract as extract
    from extractor.api import extract_many as extract_many
    from extractor.api import run as run
    from extractor.api import validate as validate
    from extractor.attempt import Attempt as Attempt
    from extractor.document import Document as Document
    from extractor.document import LoadError as LoadError
    from extractor.errors import ExtractorError as ExtractorError
    from extractor.errors import SettingsError as SettingsError
    from extractor.extraction import Extraction as Extraction
    from extractor.findings import Finding as Finding
    from extractor.findings import Validation as Validation
    from extractor.llm.config import LLMConfig as LLMConfig


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'extractor' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
