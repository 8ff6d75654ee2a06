"""A bulk worker's computing, off its event loop: one thread beside it, so the loop serves the endpoint on time.

On the LLM path a worker's loop has requests in flight while it reads, grounds, validates and renders
other documents (~15 ms of CPU each). Run on the loop, that work holds every answer and every new
request behind it (a connection per request waits twice), so each request takes longer than the
endpoint does, and fewer are in flight. In one thread beside the loop, it gives way to the loop
every 0.2 ms it is waited for (the interpreter's switch interval, set by workers.py): answers are read
and requests sent on time, and the documents still compute one at a time.

A computation cannot be interrupted. A document cancelled during one (its time limit) waits for it
to end, as it did on the loop, where it held everything: a pathological one is still killed with
its worker at the deadline (workers.py), not left running while the document is reported stopped.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_thread: ThreadPoolExecutor | None = None  # made in the worker that uses it, never before a fork


async def compute(func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`func(*args, **kwargs)` in the worker's computing thread, in this task's context (stage, usage)."""
    global _thread
    if _thread is None:
        _thread = ThreadPoolExecutor(1, thread_name_prefix="compute")
    context = contextvars.copy_context()
    future = asyncio.get_running_loop().run_in_executor(_thread, lambda: context.run(func, *args, **kwargs))
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            if future.cancelled():  # the loop is closing
                raise
            cancelled = True  # let the computation end; then the cancellation goes on
    if cancelled:
        raise asyncio.CancelledError
    return future.result()
