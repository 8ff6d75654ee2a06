"""What the commands share: the error console, input walking, accepted findings, and the queue they open.

Library errors become messages and exit codes here (2: bad input or settings), never in the library.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from extractor.cli.console import ErrorConsole, escape

if TYPE_CHECKING:  # the queue (its settings, sqlite3), rich and the tables are imported by the commands that use them
    from rich.console import Console

    from extractor.findings import Validation
    from extractor.queue.settings import QueueSettings
    from extractor.queue.store import Queue

err = ErrorConsole()  # rich only for what a plain write would not reproduce (extractor/cli/console.py)

ACCEPT_HELP = "Accepted findings (JSON Lines of {id, reason}) to set aside, e.g. evals/gold/<document>.accepted.jsonl."

QueueUrlOption = Annotated[
    str | None,
    typer.Option(
        "--queue",
        help="The queue: a SQLite file or sqlite:///path URL (default: url in extractor.toml's queue table, env EXTRACTOR_QUEUE, else out/queue.sqlite).",
    ),
]
RootOption = Annotated[
    Path | None,
    typer.Option(
        help="Documents are read only from below this folder (default: root in extractor.toml's queue table, env EXTRACTOR_REVIEW_ROOT, else the working folder)."
    ),
]
QueueConfigOption = Annotated[
    Path | None,
    typer.Option(
        help="TOML file whose queue table sets url, root, qa_rate and claim_minutes (default: ./extractor.toml if present)."
    ),
]
ReviewerOption = Annotated[
    str | None, typer.Option(help="Who is acting, for claims and the audit log (default: your login name).")
]


def accepted_findings(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    from extractor.findings import read_accepted

    try:
        return read_accepted(path)
    except (OSError, ValueError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error


def print_findings(console: Console, name: str, validation: Validation) -> None:
    from rich.text import Text

    from extractor.render import findings_table

    rendered = findings_table(name, validation)
    console.print(rendered, soft_wrap=isinstance(rendered, Text))  # a one-line verdict stays one line (grep-able)


def queue_settings(url: str | None, config: Path | None, root: Path | None = None, **more: object) -> QueueSettings:
    from extractor.llm.config import ConfigError
    from extractor.queue.settings import resolve_queue_settings

    try:
        return resolve_queue_settings({"url": url, "root": root, **more}, config)
    except ConfigError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error


def open_queue(settings: QueueSettings, must_exist: bool = True) -> Queue:
    """The configured queue; exit 2 with the reason when it is missing or unusable."""
    if must_exist and not settings.path.exists():
        err.print(
            f"[red]error[/red]: no queue at {escape(str(settings.path))} yet: 'extractor run' and 'extractor extract --queue' create it"
        )
        raise typer.Exit(code=2)
    from extractor.queue.store import Queue

    with unusable_queue_file():
        return Queue(settings.path, lease_seconds=settings.claim_minutes * 60)


@contextmanager
def unusable_queue_file() -> Iterator[None]:
    """Exit 2 naming the file when the queue is damaged or not a queue, whether opening it or a query
    deep into a command found out: no other command would fare better with it."""
    from extractor.queue.store import QueueFileError

    try:
        yield
    except QueueFileError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
