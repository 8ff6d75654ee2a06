"""The error console writes a plain line itself only when rich would have written exactly those bytes."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape

from extractor.cli import console
from extractor.cli.console import ErrorConsole, escape, plain_text

MESSAGES = [
    "validation [green]passed[/green]: a.txt: 0 errors, 4 warnings",
    "[red]error[/red]: " + rich_escape("we[ird] :ok: name.txt") + ": not found",
    "[yellow]warning[/yellow]: p: " + "word " * 60,
    "[dim]why[/dim]",
    "  leading and trailing  ",
    "two\nlines\n",
    "wide 漢字 and 😀 and … and é",
    "",
    "[red]unclosed",
    "[/red]closing nothing",
    "[red][yellow]crossed[/red][/yellow]",
    "a ] bracket",
    "tab\there",
    "carriage\rreturn",
    "bell\x07",
    "back\\slash",
    "[bold]another style[/bold]",
]


@pytest.mark.parametrize("markup", MESSAGES)
def test_a_plain_line_is_what_rich_writes(monkeypatch, markup):
    monkeypatch.setattr(console.sys, "stderr", io.StringIO())  # no terminal
    written = io.StringIO()
    try:
        Console(file=written, soft_wrap=True, highlight=False, emoji=False).print(markup)
        expected: str | None = written.getvalue()
    except Exception:  # a markup error: the plain path must leave it to rich
        expected = None
    plain = plain_text(markup)
    assert plain is None or plain + "\n" == expected


@pytest.mark.parametrize("text", ["plain", "a[b]c", "[red]x[/red]", "ends\\", "ends\\\\", "\\[x]", ""])
def test_escape_is_richs(text):
    assert escape(text) == rich_escape(text)


def test_a_terminal_or_forced_colour_goes_to_rich(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(console.sys, "stderr", Terminal())
    assert plain_text("x") is None
    monkeypatch.setattr(console.sys, "stderr", io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert plain_text("x") is None


def test_the_error_console_writes_the_plain_text(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(console.sys, "stderr", stream)
    ErrorConsole().print("[red]error[/red]: a.txt")
    assert stream.getvalue() == "error: a.txt\n"
