"""The LLM path's errors, apart from the client: code that only catches them (every extraction loop, the rules
backend's included) imports them without importing openai and instructor."""

from __future__ import annotations

from extractor.errors import ExtractorError
from extractor.llm.usage import Usage


class LLMError(ExtractorError):
    """One document's LLM extraction failed; the others can go on. `usage` counts the calls it made."""

    usage: Usage | None = None


class EndpointError(LLMError):
    """The endpoint cannot serve any document (key, model, URL): stop the batch."""
