"""The forkserver a run's worker processes are forked from, and what it imports before it forks any.

A worker forked from it starts in milliseconds, with the run's modules imported once for all of them.
It is started as soon as a run knows its backend and settings, before the run's own process imports the rest of
the bulk code and readies its step: the two processes then import at once, on two cores, not one
after the other (a small rules run from the command line: 1.05 -> 0.8 s; an LLM run: 2.85 -> 2.0 s).
This module imports nothing of the run for that reason.
"""

from __future__ import annotations

import signal
from multiprocessing import forkserver, get_context

from extractor.backends.choice import BackendName

CONTEXT = get_context("forkserver")  # never fork a process that has threads
# What the forkserver imports: a rules run's modules, and for a run that asks an LLM its client's too (openai and
# instructor, ~1.5 s), which a rules run never imports. The first run's backend decides (the forkserver lives as
# long as the process); a later LLM pool's workers import them.
# Last, bulk/frozen.py freezes what the forkserver imported, so that its exit does not collect it.
RULES_PRELOAD = ["extractor.bulk.work", "extractor.bulk.frozen"]
LLM_PRELOAD = ["extractor.bulk.work", "extractor.backends.hybrid", "extractor.bulk.frozen"]  # hybrid: the LLM client


def start_forkserver(backend: BackendName) -> None:
    """Have the forkserver import what `backend`'s workers need, unless it runs already.

    Ctrl-C and SIGTERM are ignored for the moment it takes to spawn it: an ignored signal stays
    ignored across its exec, so a Ctrl-C while it imports (about a second) cannot kill it, and the
    workers it forks inherit the same deafness (the main process decides what a Ctrl-C means)."""
    # unused once it runs
    CONTEXT.set_forkserver_preload(RULES_PRELOAD if backend is BackendName.rules else LLM_PRELOAD)
    previous = {number: signal.signal(number, signal.SIG_IGN) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        forkserver.ensure_running()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
