"""What the commands that run a backend share: their options, declared once, and the backend they build."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from extractor.backends.choice import BackendName, Extract, extractor_for, resolve_backend
from extractor.cli.common import err
from extractor.cli.console import escape
from extractor.llm.cassettes import CacheMode
from extractor.llm.modes import StructuredMode

if TYPE_CHECKING:  # the LLM's settings and prompts: loaded only when an LLM backend may run
    from extractor.llm.config import LLMConfig

LLM = "LLM options (backends llm, hybrid, auto; flags win over the environment and extractor.toml's llm table)"

# Options shared by the commands that run a backend (extract, eval, run): declared once.
BackendOption = Annotated[
    BackendName,
    typer.Option(
        help="rules: no LLM, no key. llm: the model reads every note. hybrid: rules first, then the LLM only for the tables and paragraphs holding numbers rules left unexplained or facts an error finding blames. auto: llm when an endpoint or key is configured, else rules."
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        help="Model name as the endpoint knows it (default: gpt-4o-mini; env EXTRACTOR_MODEL).", rich_help_panel=LLM
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama) (env OPENAI_BASE_URL).",
        rich_help_panel=LLM,
    ),
]
ApiKeyOption = Annotated[
    str | None,
    typer.Option(
        help="API key (env OPENAI_API_KEY, preferred: flags show in process lists). Local servers need none.",
        rich_help_panel=LLM,
    ),
]
TemperatureOption = Annotated[
    float | None, typer.Option(help="Sampling temperature (default: 0).", rich_help_panel=LLM)
]
TimeoutOption = Annotated[
    float | None, typer.Option(help="Seconds to wait for one answer (default: 120).", rich_help_panel=LLM)
]
ModeOption = Annotated[
    StructuredMode | None,
    typer.Option(
        help="How the answer is constrained to the schema (default: tools, which OpenAI, vLLM, Ollama and llama.cpp all support).",
        rich_help_panel=LLM,
    ),
]
CacheOption = Annotated[
    CacheMode | None,
    typer.Option(
        help="Recorded completions: read-write reuses and records, replay never calls the endpoint, off (default: read-write).",
        rich_help_panel=LLM,
    ),
]
CacheDirOption = Annotated[
    Path | None,
    typer.Option(
        help="Folder of recorded completions (plain JSON files; commit them to replay) (default: .extractor-cache/completions).",
        rich_help_panel=LLM,
    ),
]
PromptOption = Annotated[
    str | None,
    typer.Option(
        help="Prompt id (its latest version), id@vN, or a .toml file. stock_compensation@v1 (default) asks for the whole note, for large models; stock_compensation@v2 asks one table or paragraph at a time with worked examples, for small local models.",
        rich_help_panel=LLM,
    ),
]
MaxCharsOption = Annotated[
    int | None,
    typer.Option(
        help="Longest note text in one prompt; longer notes are split with overlap (default: 60000).",
        rich_help_panel=LLM,
    ),
]
RpmOption = Annotated[
    float | None,
    typer.Option(
        "--rpm", help="Requests per minute to send at most, retries included (default: no limit).", rich_help_panel=LLM
    ),
]
TpmOption = Annotated[
    float | None,
    typer.Option(
        "--tpm",
        help="Tokens per minute to use at most, prompt and completion (estimated before a request, corrected after) (default: no limit).",
        rich_help_panel=LLM,
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        help="TOML file with an llm table of these settings and llm.prices tables (input/output dollars per million tokens per model) (default: ./extractor.toml if present).",
        rich_help_panel=LLM,
    ),
]


LLM_FLAGS = (
    "model",
    "base_url",
    "api_key",
    "temperature",
    "timeout",
    "mode",
    "cache",
    "cache_dir",
    "prompt",
    "max_chars",
    "rpm",
    "tpm",
)


def llm_flags(arguments: dict[str, object]) -> dict[str, object]:
    """The LLM settings among a command's arguments, for resolve_config (a command may lack some)."""
    return {name: arguments.get(name) for name in LLM_FLAGS}


def chosen_backend(
    backend: BackendName, flags: dict[str, object], config: Path | None
) -> tuple[BackendName, LLMConfig]:
    """The backend that will run and its settings; bad settings exit 2 with the reason."""
    from extractor.llm.config import ConfigError, LLMConfig, resolve_config

    try:
        settings = resolve_config(flags, config_file=config) if backend is not BackendName.rules else LLMConfig()
    except ConfigError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    chosen, why = resolve_backend(backend, settings)
    if backend is BackendName.auto:
        err.print(f"[dim]{escape(why)}[/dim]")
    return chosen, settings


def backend_runner(
    backend: BackendName, flags: dict[str, object], config: Path | None
) -> tuple[BackendName, Extract, LLMConfig | None]:
    """The chosen backend as a function of one document, with its LLM settings: None for rules, which reads
    none (the settings model, prompts and config file are then never loaded)."""
    if backend is BackendName.rules:
        from extractor.backends import rules

        return backend, rules.extract, None
    from extractor.llm.prompts import PromptError

    chosen, settings = chosen_backend(backend, flags, config)
    try:
        return chosen, extractor_for(chosen, settings), settings
    except PromptError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
