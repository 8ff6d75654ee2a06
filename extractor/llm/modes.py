"""How an LLM's answer is constrained: an option of every command that runs a backend, so it lives apart from
the settings model (extractor.llm.config), which a rules extraction never loads."""

from __future__ import annotations

from enum import Enum


class StructuredMode(str, Enum):
    """How the answer is constrained. 'tools' works with OpenAI, vLLM, Ollama and llama.cpp's server."""

    tools = "tools"
    json_schema = "json_schema"
    json = "json"
    md_json = "md_json"
