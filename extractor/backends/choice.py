"""Which backend runs: named by the user, or 'auto' (the LLM when an endpoint is configured, else rules)."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from extractor.backends import hybrid, rules
from extractor.backends.llm import LLMBackend
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


def extractor_for(name: BackendName, config: LLMConfig) -> Callable[[Document], Extraction]:
    """A function from Document to Extraction; LLM clients are only made when an LLM backend is chosen."""
    if name is BackendName.rules:
        return rules.extract
    llm = LLMBackend(config)
    if name is BackendName.hybrid:
        return lambda document: hybrid.extract(document, llm)
    return llm.extract
