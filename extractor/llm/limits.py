"""Client-side rate limits: requests and tokens per minute, shared by every request of a run.

A provider that is sent more than its limit answers 429 and the retries then waste the minute;
spacing requests ourselves keeps a batch at the limit instead of bouncing off it. The scheme is
GCRA (the "virtual scheduling" form of a leaky bucket): each request takes the next free slot of
each budget, slots are `cost / rate` apart, and at most `burst` requests' worth may go early. Tokens
are estimated before a request (characters / 4) and the estimate is corrected by the usage the
endpoint reports, so a run that under-estimates slows down afterwards instead of overshooting.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from multiprocessing import get_context
from typing import Any


class _Cell:
    value: float = float("-inf")


class _Budget:
    """One GCRA schedule: `rate` units per second; up to `allowance` units may start ahead of it.

    Its one number of state, the theoretical arrival time of the next unit, lives in `due`: a plain
    cell, or shared memory when worker processes share the budget.
    """

    def __init__(self, per_minute: float, allowance: float, due: Any) -> None:
        self.rate = per_minute / 60.0
        self.tolerance = allowance / self.rate
        self.due = due

    def start(self, now: float) -> float:
        return max(now, self.due.value - self.tolerance)

    def take(self, at: float, cost: float) -> None:
        self.due.value = max(self.due.value, at) + cost / self.rate

    def adjust(self, cost: float) -> None:
        self.due.value += cost / self.rate


class RateLimiter:
    """`reserve` books the next slot and says how long to wait; `wait` and `await acquire` sleep for it.

    `burst` requests may start at once (the rest are spaced evenly); the default, 1, spaces all.

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
    ) -> None:
        context = get_context("forkserver")

        def cell() -> Any:
            return context.RawValue("d", float("-inf")) if shared else _Cell()

        extra = max(0.0, burst - 1)  # requests that may start together with the first
        self.requests = _Budget(requests_per_minute, extra, cell()) if requests_per_minute else None
        token_allowance = (
            tokens_per_minute * extra / requests_per_minute if requests_per_minute and tokens_per_minute else 0.0
        )
        self.tokens = _Budget(tokens_per_minute, token_allowance, cell()) if tokens_per_minute else None
        self.clock = clock
        self._lock: Any = context.Lock() if shared else threading.Lock()

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    def reserve(self, tokens: int) -> float:
        """Book a request of about `tokens` tokens; returns the seconds to wait before sending it."""
        with self._lock:
            now = self.clock()
            at = max([now] + [budget.start(now) for budget in (self.requests, self.tokens) if budget is not None])
            if self.requests is not None:
                self.requests.take(at, 1)
            if self.tokens is not None:
                self.tokens.take(at, tokens)
            return at - now

    def settle(self, estimated: int, actual: int) -> None:
        """Correct a booking by the tokens the endpoint reported using."""
        if self.tokens is not None and actual != estimated:
            with self._lock:
                self.tokens.adjust(actual - estimated)

    def wait(self, tokens: int) -> None:
        delay = self.reserve(tokens)
        if delay > 0:
            time.sleep(delay)

    async def acquire(self, tokens: int) -> None:
        delay = self.reserve(tokens)
        if delay > 0:
            await asyncio.sleep(delay)


def estimate_tokens(body: bytes) -> int:
    """A request's prompt tokens, roughly: four bytes of JSON per token."""
    return max(1, len(body) // 4)
