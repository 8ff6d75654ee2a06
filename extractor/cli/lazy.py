"""Commands imported only when they run, so `extractor --help` and `extractor extract` stay cheap.

Importing every command module up front pulled in openai, instructor, FastAPI, pyarrow and the eval
harness for every invocation (about a second). Here the top-level group lists each command by a
placeholder that carries only its summary; resolving a command to run it (or to show its own --help)
imports its module and builds the same command typer would have built from eager registration.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperGroup

from extractor.cli import startup


class LazyGroup(TyperGroup):
    """A group whose `targets` (command name -> "module:attribute", a command function or a Typer app)
    are imported when a command is resolved to run, never when the group's help lists them."""

    targets: ClassVar[dict[str, str]] = {}

    # ctx and the command are typer's (vendored) click types, which it does not export.
    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name in self.targets:
            command = load(name, self.targets[name])
            startup.resume()  # the command is loaded: collect as usual while it runs
        return name, command, rest


def load(name: str, target: str) -> Any:
    """The click command for `target` under `name`, built by typer exactly as `app.command(name)` or
    `app.add_typer(sub_app, name=name)` would have built it."""
    module, _, attribute = target.partition(":")
    found = getattr(import_module(module), attribute)
    holder = typer.Typer()
    if isinstance(found, typer.Typer):
        holder.add_typer(found, name=name)
    else:
        holder.command(name)(found)
    return typer.main.get_group(holder).commands[name]


def placeholder() -> None:
    """Stands for a lazy command in the group's listing; never runs (resolve_command swaps in the real one)."""
