"""The command line: `extractor COMMAND`, one module per command group, each a thin layer over the library.

The CLI turns library results into output and library errors into messages and exit codes; the library
never imports it. Each command's module is imported only when that command runs (extractor/cli/lazy.py):
`extractor --help` and a rules extraction never load openai, FastAPI, pyarrow or the eval harness. This
module imports nothing heavy either: `main` pauses the collector before typer and the group (`app`,
`COMMANDS`: extractor/cli/group.py, also importable from here) are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from extractor.cli import startup

if TYPE_CHECKING:
    from extractor.cli.group import COMMANDS as COMMANDS
    from extractor.cli.group import app as app


def main() -> None:
    startup.pause()  # until the command is loaded (extractor/cli/startup.py), typer's import included
    from extractor.cli.group import app

    app()


def __getattr__(name: str) -> Any:
    if name in ("app", "COMMANDS"):
        from extractor.cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'extractor.cli' has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
