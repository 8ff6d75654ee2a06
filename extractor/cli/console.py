"""The commands' messages on stderr, through rich only when rich would do more than write the text.

rich takes about 11 ms to import, a twentieth of a rules extraction's start-up, whose only use of it is a line
on stderr. When stderr is no terminal (and no variable makes rich treat it as one), rich writes a line of
markup as its text with the style tags taken out: such a line is written here directly, the same bytes.
Anything else (a terminal, a live display, markup beyond balanced style tags, a backslash, control
characters, another renderable, options) goes to rich's Console, made on first use.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from extractor.regex_cache import regex

if TYPE_CHECKING:
    from rich.console import Console

_STYLE_TAG = regex(r"\[(/?)(red|yellow|green|dim)\]")  # the styles the commands' messages use


def escape(text: str) -> str:
    """rich.markup.escape, which changes only a text holding a '[' or ending in a backslash: rich is
    imported for those alone."""
    if "[" not in text and not text.endswith("\\"):
        return text
    from rich.markup import escape as rich_escape

    return rich_escape(text)


class ErrorConsole:
    """rich's Console on stderr (soft wrap, no highlighting, no emoji codes) for every use but plain lines."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The rich Console itself, for a live display or a table."""
        if self._console is None:
            from rich.console import Console

            # emoji off: messages quote paths, table titles and filing text, where ':b:' or ':ok:' is no emoji
            # code (and rich would load its 4,000 codes for every message)
            self._console = Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)
        return self._console

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal

    def print(self, *objects: Any, **options: Any) -> None:
        text = plain_text(objects[0]) if len(objects) == 1 and isinstance(objects[0], str) and not options else None
        if text is None or self._console is not None:  # once rich is there (a live display may be), it writes
            self.console.print(*objects, **options)
            return
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def plain_text(markup: str) -> str | None:
    """What rich writes for `markup` on stderr, when that is its text with the style tags removed; None when
    rich could write anything else (colours, a markup error, stripped control characters)."""
    stream = sys.stderr
    if stream is None or sys.platform == "win32" or "IPython" in sys.modules or _may_be_terminal(stream):
        return None
    if "\\" in markup or hasattr(stream, "rich_proxied_file"):
        return None
    opened: list[str] = []
    for tag in _STYLE_TAG.finditer(markup):
        closing, name = tag.groups()
        if not closing:
            opened.append(name)
        elif name in opened:
            del opened[len(opened) - 1 - opened[::-1].index(name)]
        else:
            return None  # rich raises its MarkupError
    text = _STYLE_TAG.sub("", markup)
    if "[" in text or not all(line.isprintable() for line in text.split("\n")):
        return None
    return text


def _may_be_terminal(stream: Any) -> bool:
    """rich's Console.is_terminal, erring towards True: TTY_COMPATIBLE=1 or FORCE_COLOR set make it one."""
    if os.environ.get("TTY_COMPATIBLE", "") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is None or bool(isatty())
    except ValueError:
        return True
