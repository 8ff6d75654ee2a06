"""The program's start-up without the cyclic garbage collector scanning what start-up imports.

Starting a command imports typer, pydantic and its models, the lexicons and their regexes: some 40,000 objects
that live until the process ends, and no garbage. With the collector on, it scans them again and again while
they are being made: about a tenth of a rules extraction's start-up. So the program's entry point pauses it,
and once the command is loaded `resume` freezes what exists (gc.freeze: later collections skip it) and turns it
back on before the command runs: a long run collects as usual. A caller that invokes the typer app in-process
(the tests) never paused it, and keeps its collector as it was.
"""

from __future__ import annotations

import gc

_paused = False  # the collector is off because the program is starting
_program = False  # the program's entry point started this process (not a test invoking the app in-process)


def pause() -> None:
    """Turn the collector off for start-up; the program's entry point calls it first."""
    global _paused, _program
    _program = True
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """After start-up: freeze the objects start-up made, then collect as usual. A no-op unless paused."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def freeze() -> None:
    """Freeze what a command made once it is under way (a bulk run's LLM clients: some 60,000 objects that
    live as long as it does), so the collections of a long run skip them. A no-op unless the program's
    entry point started this process."""
    if _program:
        gc.freeze()
