"""TEST FIXTURE: a fake clock and sleep for asyncio tasks, so timing tests do not depend on the machine.

Time moves only when nothing else can: every unfinished task is asleep on this clock or waiting in
a watched rate limiter, and the event loop has nothing ready to run. Then the earliest sleeper wakes
and the clock jumps to its time. A task busy elsewhere (a request to a local server) holds the clock
still, so what the server stamps with this clock is the instant its request was let go.
A stall blocks the loop for a while: everyone due in between wakes at its end, in order, as an
event loop that was busy would wake them.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from extractor.llm.limits import RateLimiter


class VirtualTime:
    def __init__(self, oversleep: Callable[[], float] | None = None) -> None:
        self.now = 0.0
        self.sleeps = 0  # how many times a task went to sleep: waiters waking at every slot show here
        self._oversleep = oversleep  # extra seconds per sleep, as a loaded machine wakes sleepers late
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._stalls: list[tuple[float, float]] = []
        self._held: Counter[asyncio.Task[Any] | None] = Counter()

    def __call__(self) -> float:
        return self.now

    def stall(self, start: float, end: float) -> None:
        """Block the loop from `start` to `end`."""
        self._stalls.append((start, end))

    def limiter(self, **limits: Any) -> RateLimiter:
        """A rate limiter on this clock, whose waiters hold the clock still only by waiting."""
        limiter = RateLimiter(**limits, clock=self, asleep=self.sleep)
        acquire = limiter.acquire

        async def watched(tokens: int) -> None:
            async with self._holding():
                await acquire(tokens)

        limiter.acquire = watched  # type: ignore[method-assign]
        return limiter

    @asynccontextmanager
    async def _holding(self) -> AsyncIterator[None]:
        task = asyncio.current_task()
        self._held[task] += 1
        try:
            yield
        finally:
            self._held[task] -= 1

    async def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        late = self._oversleep() if self._oversleep else 0.0
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds + late, next(self._order), future))
        async with self._holding():
            await future

    async def run(self, coroutines: Iterable[Awaitable[Any]]) -> list[Any]:
        """Run the coroutines together on this clock; their results in order."""
        tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
        while True:
            await self._until_still(tasks)
            if all(task.done() for task in tasks):
                return [task.result() for task in tasks]
            if not self._sleepers:
                raise RuntimeError("every task waits and none sleeps: nothing could wake them")
            when, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, when)
            for start, end in self._stalls:
                if start <= self.now < end:
                    self.now = end
            future.set_result(None)

    async def _until_still(self, tasks: list[asyncio.Task[Any]]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0)
            for task in tasks:
                if task.done() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            busy = [task for task in tasks if not task.done() and not self._held[task]]
            if not busy and not loop._ready:  # type: ignore[attr-defined]  # CPython's queue of runnable callbacks
                return
            if busy:
                await asyncio.sleep(0.001)  # a real wait, only while a task does real I/O
