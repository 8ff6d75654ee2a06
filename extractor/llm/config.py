"""LLM settings from CLI flags, then the environment, then a config file, then defaults.

The key is never written anywhere by this tool; prefer OPENAI_API_KEY over putting it in a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator

from extractor.errors import ExtractorError
from extractor.llm.cassettes import CacheMode
from extractor.llm.modes import StructuredMode
from extractor.llm.usage import Price
from extractor.tomlfile import read_toml

DEFAULT_CONFIG = Path("extractor.toml")
ENVIRONMENT = {"OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "base_url", "EXTRACTOR_MODEL": "model"}


class LLMConfig(BaseModel):
    """Everything the LLM backends need: endpoint, model, sampling, retries, prompt, splitting, rate limits,
    prices and the completion cache. Built by the caller (nothing read from files or the environment);
    the command line builds it from flags, environment and extractor.toml (resolve_config)."""

    model: str = "gpt-4o-mini"
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
    api_key: SecretStr | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    timeout: float = Field(default=120.0, gt=0, description="Seconds to wait for one answer.")
    mode: StructuredMode = StructuredMode.tools
    attempts: int = Field(
        default=5, ge=1, description="HTTP attempts per request (429, 5xx, timeouts, dropped connections)."
    )
    retry_wait: float = Field(default=1.0, gt=0, description="First backoff wait in seconds; doubles, with jitter.")
    max_wait: float = Field(default=60.0, gt=0, description="Longest single wait, Retry-After included.")
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Longest answer in tokens (None: the endpoint's own limit). Bounds a small local model that keeps writing rows.",
    )
    reasks: int = Field(default=2, ge=0, description="Re-asks when the answer does not fit the schema.")
    feedback_reasks: int = Field(default=1, ge=0, description="Re-asks with the validator's error findings.")
    max_chars: int = Field(
        default=60_000, ge=2_000, description="Longest note text sent in one prompt; longer is split."
    )
    overlap_chars: int = Field(default=1_500, ge=0)
    cache: CacheMode = Field(
        default=CacheMode.off,
        description="Recorded completions. Off unless asked: a library call writes nothing where it runs. The command line's default is read-write (resolve_config).",
    )
    cache_dir: Path = Path(".extractor-cache/completions")
    prompt: str = Field(
        default="stock_compensation@v1",
        description="Prompt id@vN or .toml file. v1 asks for the whole note (large models); v2 one table or paragraph at a time, with worked examples (small local models).",
    )
    rpm: float | None = Field(
        default=None, gt=0, description="Requests per minute this client may send (None: no limit)."
    )
    tpm: float | None = Field(
        default=None, gt=0, description="Tokens per minute (prompt and completion) this client may use."
    )
    prices: dict[str, Price] = Field(default_factory=dict, description="Dollars per million tokens, by model.")

    @field_validator("api_key")
    @classmethod
    def _clean_key(cls, key: SecretStr | None) -> SecretStr | None:
        """Keys pasted from files often end in a newline, which HTTP headers refuse."""
        if key is None:
            return None
        value = key.get_secret_value().strip()
        if not value.isascii() or any(c.isspace() for c in value):
            raise ValueError("the API key has spaces or non-ASCII characters; check how it was copied")
        return SecretStr(value) if value else None

    @property
    def endpoint_configured(self) -> bool:
        """An endpoint was named or a key given: 'auto' then uses the LLM."""
        return self.base_url is not None or self.api_key is not None

    @property
    def price(self) -> Price | None:
        return self.prices.get(self.model)


class ConfigError(ExtractorError):
    """A config file or setting that cannot be used; the message says which and why."""


# The command line records completions unless told otherwise (replayable runs); the library does not.
COMMAND_LINE_DEFAULTS: Mapping[str, Any] = {"cache": CacheMode.read_write}


def resolve_config(
    flags: Mapping[str, Any], environ: Mapping[str, str] | None = None, config_file: Path | None = None
) -> LLMConfig:
    """The command line's settings: flags (None = not given) over environment over the [llm] table of
    extractor.toml (the file named, else ./extractor.toml when present) over COMMAND_LINE_DEFAULTS.
    Library callers build an LLMConfig themselves: nothing is read from files or the environment then."""
    return merge_settings(LLMConfig, "llm", flags, ENVIRONMENT, environ, config_file, COMMAND_LINE_DEFAULTS)


Settings = TypeVar("Settings", bound=BaseModel)


def merge_settings(
    model: type[Settings],
    table: str,
    flags: Mapping[str, Any],
    environment: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Settings:
    """One table of extractor.toml, under the variables `environment` names, under the flags
    (None = not given); ConfigError names the setting and the file."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = dict(defaults or {})
    path = config_file or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    if path is not None:
        values.update(read_toml(path, ConfigError).get(table, {}))
    values.update({field: environ[name] for name, field in environment.items() if environ.get(name)})
    values.update({key: value for key, value in flags.items() if value is not None})
    try:
        return model.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        label = "LLM setting" if table == "llm" else f"{table} setting"
        raise ConfigError(f"{label} '{where}': {first['msg']}" + (f" (from {path})" if path else "")) from error
