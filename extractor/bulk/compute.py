"""A bulk worker's computing, off its event loop: one thread beside it, so the loop serves the endpoint on time.

On the LLM path a worker's loop has requests in flight while it reads, grounds, validates and renders
other documents (~15 ms of CPU each). Run on the loop, that work holds every answer and every new
request behind it (a connection per request waits twice), so each request takes longer than the
endpoint does, and fewer are in flight. In one thread beside the loop, it gives way to the loop
every 0.2 ms it is waited for (the interpreter's switch interval, set by workers.py): answers are read
and requests sent on time, and the documents still compute one at a time.

The thread takes the oldest document's work first, not the oldest piece of work: a worker handed 32
documents at once otherwise read all 32 before preparing the first one's request, and each document's
next step queued behind every younger document's.

A computation cannot be interrupted. A document cancelled during one (its time limit) waits for it
to end, as it did on the loop, where it held everything: a pathological one is still killed with
its worker at the deadline (workers.py), not left running while the document is reported stopped.
A computation still waiting for the thread when its document is cancelled is dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_arrivals = itertools.count(1)
_rank: contextvars.ContextVar[int] = contextvars.ContextVar("compute_rank", default=0)


def first_come() -> None:
    """Rank the calling task's computing after every document that came before it (call once per document)."""
    _rank.set(next(_arrivals))


class _Thread:
    """One thread running submitted work, lowest rank first, then in order of submission."""

    def __init__(self) -> None:
        self._work: queue.PriorityQueue[tuple[int, int, Callable[[], Any], Future[Any]]] = queue.PriorityQueue()
        self._order = itertools.count()
        threading.Thread(target=self._serve, name="compute", daemon=True).start()

    def submit(self, rank: int, work: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._work.put((rank, next(self._order), work, future))
        return future

    def _serve(self) -> None:
        while True:
            _, _, work, future = self._work.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except StopIteration as error:  # asyncio cannot carry it (the awaiting task would wait forever)
                    future.set_exception(RuntimeError(f"the computation raised {error!r}"))
                except BaseException as error:  # the awaiting task raises it
                    future.set_exception(error)
            del work, future  # a finished document's objects are not kept until the next one comes


_thread: _Thread | None = None  # made in the worker that uses it, never before a fork


async def compute(func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`func(*args, **kwargs)` in the worker's computing thread, in this task's context (stage, usage)."""
    global _thread
    if _thread is None:
        _thread = _Thread()
    context = contextvars.copy_context()
    queued = _thread.submit(_rank.get(), lambda: context.run(func, *args, **kwargs))
    future = asyncio.wrap_future(queued)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            if queued.cancel():  # it had not started: it never will
                raise
            cancelled = True  # let the computation end; then the cancellation goes on
    if cancelled:
        raise asyncio.CancelledError
    return future.result()
