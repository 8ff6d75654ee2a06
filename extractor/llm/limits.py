"""Client-side rate limits: requests and tokens per minute, shared by every request of a run.

A provider that is sent more than its limit answers 429 and the retries then waste the minute;
spacing requests ourselves keeps a batch at the limit instead of bouncing off it. The scheme is
GCRA (the "virtual scheduling" form of a leaky bucket): a request may pass once every budget's
theoretical arrival time, less its burst allowance, has come, and passing moves that time on by
`cost / rate`. Tokens are estimated before a request (characters / 4) and the estimate is corrected
by the usage the endpoint reports, so a run that under-estimates slows down afterwards instead of
overshooting.

A request passes by the clock at the moment it leaves, never by a slot booked ahead of time. Waiters
that each sleep towards a slot booked for them all wake late after a stall (a busy event loop, a
descheduled worker) and leave together: a burst a provider counting requests per window rejects.
Here, whoever wakes late, a window of w seconds sees fewer than `burst + w * rate` requests pass.

Within a process the waiters form a line (one per event loop, one for threads): only its head asks
the shared budget and sleeps until the budget is ready, so the others sleep on the line instead of
all waking at every slot, and they go in the order they came.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from multiprocessing import get_context
from typing import Any

_ROUNDING = 1e-9  # seconds: a budget this close is ready (float sums like 1.1 + 0.05 miss by 1e-16)


class _Cell:
    def __init__(self, value: float) -> None:
        self.value = value


class _Budget:
    """One GCRA schedule: `rate` units per second; up to `allowance` units may start ahead of it.

    Its one number of state, the theoretical arrival time of the next unit, lives in `due`: a plain
    cell, or shared memory when worker processes share the budget.
    """

    def __init__(self, per_minute: float, allowance: float, due: Any) -> None:
        self.rate = per_minute / 60.0
        self.tolerance = allowance / self.rate
        self.due = due

    def ready(self) -> float:
        """When a request may pass."""
        return float(self.due.value) - self.tolerance

    def take(self, now: float, cost: float) -> None:
        self.due.value = max(self.due.value, now) + cost / self.rate

    def adjust(self, cost: float) -> None:
        """Correct what a request that passed cost (its tokens were estimated)."""
        self.due.value += cost / self.rate


class RateLimiter:
    """`wait` and `await acquire` return once a request of about that many tokens may be sent.

    `burst` requests may start at once (the rest are spaced evenly); the default, 1, spaces all.
    `clock`, `sleep` and `asleep` are injectable so that tests run the limiter on a fake clock.

    Thread-safe: the sync and async transports of one run share a limiter. With `shared=True` it is
    process-safe too: handed to worker processes as they start, all of them keep one rate together
    (time.monotonic is one clock for every process of the machine).
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        shared: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        context = get_context("forkserver")

        def cell() -> Any:
            return context.RawValue("d", float("-inf")) if shared else _Cell(float("-inf"))

        extra = max(0.0, burst - 1)  # requests that may start together with the first
        self.requests = _Budget(requests_per_minute, extra, cell()) if requests_per_minute else None
        token_allowance = (
            tokens_per_minute * extra / requests_per_minute if requests_per_minute and tokens_per_minute else 0.0
        )
        self.tokens = _Budget(tokens_per_minute, token_allowance, cell()) if tokens_per_minute else None
        self.clock = clock
        self.sleep = sleep
        self.asleep = asleep
        self._lock: Any = context.Lock() if shared else threading.Lock()
        self._local_lines()

    def _local_lines(self) -> None:
        self._thread_line = threading.Lock()
        self._loop_lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def __getstate__(self) -> dict[str, Any]:
        """What a worker process receives: the shared budgets and lock; it makes its own lines."""
        state = dict(self.__dict__)
        del state["_thread_line"], state["_loop_lines"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local_lines()

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    def try_pass(self, tokens: int) -> float:
        """Let a request of about `tokens` tokens pass now (returns 0), or say how many seconds until it may."""
        with self._lock:
            now = self.clock()
            costs = [(b, c) for b, c in ((self.requests, 1.0), (self.tokens, float(tokens))) if b is not None]
            ready = max(budget.ready() for budget, _ in costs)
            if ready - now > _ROUNDING:
                return ready - now
            for budget, cost in costs:
                budget.take(now, cost)
            return 0.0

    def settle(self, estimated: int, actual: int) -> None:
        """Correct a request's tokens by the usage the endpoint reported."""
        if self.tokens is not None and actual != estimated:
            with self._lock:
                self.tokens.adjust(actual - estimated)

    def wait(self, tokens: int) -> None:
        with self._thread_line:
            while (delay := self.try_pass(tokens)) > 0:
                self.sleep(delay)

    async def acquire(self, tokens: int) -> None:
        loop = asyncio.get_running_loop()
        line = self._loop_lines.get(loop)
        if line is None:
            line = self._loop_lines[loop] = asyncio.Lock()
        async with line:
            while (delay := await self.ask(tokens)) > 0:
                await self.asleep(delay)

    async def ask(self, tokens: int) -> float:
        """`try_pass` for an event loop: a limiter kept elsewhere (a Ray actor, engine_ray.py) awaits its answer."""
        return self.try_pass(tokens)


def estimate_tokens(body: bytes) -> int:
    """A request's prompt tokens, roughly: four bytes of JSON per token."""
    return max(1, len(body) // 4)
