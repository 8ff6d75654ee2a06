"""The top-level group `extractor COMMAND`: each command's name, summary and the module defining it."""

from __future__ import annotations

import typer

from extractor import __version__
from extractor.cli.lazy import LazyGroup, placeholder

# name -> (where the command is defined, the summary `extractor --help` lists: the first paragraph of the
# command's own help, which tests/test_cli_startup.py checks), in the order the listing shows them: extract
# one, then bulk runs, then checking and scoring.
COMMANDS = {
    "extract": (
        "extractor.cli.extract:extract_command",
        "Extract every input and validate it; unreadable inputs are reported and the others still processed.",
    ),
    "run": (
        "extractor.cli.run:run_command",
        "Extract thousands of filings into one folder; stop any time (Ctrl-C, even kill -9) and run again to finish.",
    ),
    "score": (
        "extractor.cli.score:score_command",
        "Score extracted facts against gold: precision, recall and F1 per document and overall.",
    ),
    "validate": (
        "extractor.cli.validate:validate_command",
        "Check saved extractions: roll-forwards, totals, cross-table agreement, ranges, scale, grounding.",
    ),
    "eval": (
        "extractor.cli.eval:eval_command",
        "Score a backend (and prompt) on a suite against its gold; store the run; compare with a baseline.",
    ),
    "eval-runs": (
        "extractor.cli.eval:eval_runs_command",
        "List stored eval runs, oldest first: the ids to pass to 'eval --baseline'.",
    ),
    "version": ("extractor.cli.group:version", "Print the version."),
    "review": (
        "extractor.cli.review:review_command",
        "Open the review web app: the queue overview, and each item's source with its values to correct.",
    ),
    "queue": (
        "extractor.cli.queue:queue_app",
        "The correction queue: extractions that failed validation (or were sampled for QA), for people to fix.",
    ),
    "gold": ("extractor.cli.gold:gold_app", "Build gold facts for eval suites."),
    "local-model": (
        "extractor.cli.local_model:local_model_app",
        "Serve a GGUF model on this machine with llama.cpp's OpenAI-compatible server (needs the 'local' extra).",
    ),
}


class Commands(LazyGroup):
    targets = {name: target for name, (target, _) in COMMANDS.items()}


app = typer.Typer(
    cls=Commands,
    add_completion=False,
    no_args_is_help=True,
    help="Extract stock-based compensation data from SEC filing sections, grounded in the source text.",
)
for _name, (_, _summary) in COMMANDS.items():
    app.command(_name, help=_summary)(placeholder)


def version() -> None:
    """Print the version."""
    typer.echo(__version__)
