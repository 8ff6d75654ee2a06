"""The command line: `extractor COMMAND`, one module per command group, each a thin layer over the library.

The CLI turns library results into output and library errors into messages and exit codes; the library
never imports it.
"""

from __future__ import annotations

import typer

from extractor import __version__
from extractor.cli.eval import eval_command, eval_runs_command
from extractor.cli.extract import extract_command
from extractor.cli.gold import gold_app
from extractor.cli.local_model import local_model_app
from extractor.cli.queue import queue_app
from extractor.cli.review import review_command
from extractor.cli.run import run_command
from extractor.cli.score import score_command
from extractor.cli.validate import validate_command

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Extract stock-based compensation data from SEC filing sections, grounded in the source text.",
)
# In the order a new user looks for them: extract one, then bulk runs, then checking and scoring.
app.command("extract")(extract_command)
app.command("run")(run_command)
app.command("score")(score_command)
app.command("validate")(validate_command)
app.command("eval")(eval_command)
app.command("eval-runs")(eval_runs_command)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


app.add_typer(queue_app, name="queue")
app.command("review")(review_command)
app.add_typer(gold_app, name="gold", help="Build gold facts for eval suites.")
app.add_typer(local_model_app, name="local-model")


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
