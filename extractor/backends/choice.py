"""Which backend runs: named by the user, or 'auto' (the LLM when an endpoint is configured, else rules)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from extractor.document import Document
    from extractor.extraction import Extraction
    from extractor.llm.config import LLMConfig


class BackendName(str, Enum):
    rules = "rules"
    llm = "llm"
    hybrid = "hybrid"
    auto = "auto"


def resolve_backend(name: BackendName, config: LLMConfig) -> tuple[BackendName, str]:
    """The backend that will run, and why (for 'auto', said to the user)."""
    if name is not BackendName.auto:
        return name, f"backend {name.value}"
    if config.endpoint_configured:
        return BackendName.llm, f"backend auto: llm ({config.model} at {config.base_url or 'the OpenAI API'})"
    return BackendName.rules, "backend auto: rules (no LLM endpoint or key configured)"


class Extract(Protocol):
    """A backend as one function: the document's extraction, and with `validated` its validation against the
    document attached. The LLM and hybrid backends validate on their way (the re-ask check, the merged note's
    check), so a caller that wants the validation asks for it here instead of validating a second time."""

    def __call__(self, document: Document, /, *, validated: bool = False) -> Extraction: ...


def extractor_for(name: BackendName, config: LLMConfig) -> Extract:
    """The chosen backend as an `Extract`; LLM clients are only made when an LLM backend is chosen.

    The backends are imported here, not at the top: the LLM ones import openai and instructor (half a
    second), which the rules backend and everything that only needs BackendName should not pay for."""
    if name is BackendName.rules:
        from extractor.backends import rules

        return rules.extract
    from extractor.backends import hybrid
    from extractor.backends.llm import LLMBackend

    llm = LLMBackend(config)
    if name is BackendName.hybrid:

        def extract_hybrid(document: Document, *, validated: bool = False) -> Extraction:
            return hybrid.extract(document, llm, validated)

        return extract_hybrid
    return llm.extract
