"""Client-side rate limits, on a fake clock: the schedule, stalls, many waiters, worker processes, the transport."""

from __future__ import annotations

import asyncio
import math
import random
import time
from multiprocessing import get_context
from typing import Any

from fixture_paths import SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer
from virtual_time import VirtualTime

from extractor.backends import rules
from extractor.backends.llm import LLMBackend
from extractor.llm.client import make_clients
from extractor.llm.config import LLMConfig
from extractor.llm.limits import RateLimiter
from extractor.loaders import load


def most_in_window(times: list[float], window: float) -> int:
    """The most requests any half-open window [t, t + window) holds; the worst windows start at a request."""
    return max((sum(1 for t in times if start <= t < start + window - 1e-9) for start in times), default=0)


def allowed(window: float, per_second: float, burst: int = 1) -> int:
    """What a window may hold: fewer than burst + window * rate (GCRA's bound for requests that pass by the clock)."""
    return math.ceil(burst + window * per_second - 1e-9) - 1


def assert_rate_kept(times: list[float], per_second: float, burst: int = 1) -> None:
    for window in [k / per_second for k in range(1, 41)] + [0.37, 1.3, 2.71]:
        assert most_in_window(times, window) <= allowed(window, per_second, burst), (window, sorted(times))


def passes(time_: VirtualTime, limiter: RateLimiter, tokens: list[int], arrivals: list[float] | None = None) -> list:
    """When each request passes: all asked at the clock's time, or each at its arrival."""

    async def one(cost: int, arrival: float) -> float:
        if arrival > time_.now:
            await time_.sleep(arrival - time_.now)
        await limiter.acquire(cost)
        return round(time_.now, 9)

    return asyncio.run(time_.run(one(cost, at) for cost, at in zip(tokens, arrivals or [time_.now] * len(tokens))))


def test_a_burst_is_spread_to_the_request_rate() -> None:
    time_ = VirtualTime()
    limiter = time_.limiter(requests_per_minute=600)  # 10 a second
    times = passes(time_, limiter, [100] * 100)
    assert times == [round(k / 10, 9) for k in range(100)]
    assert most_in_window(times, 1.0) == 10
    time_.now = 30.0  # idle for a while: no credit piles up beyond the burst
    assert passes(time_, limiter, [100] * 3) == [30.0, 30.1, 30.2]


def test_burst_allowance_lets_that_many_go_at_once_then_holds_the_rate() -> None:
    time_ = VirtualTime()
    limiter = time_.limiter(requests_per_minute=60, burst=5)
    times = passes(time_, limiter, [1] * 20)
    assert times[:5] == [0.0] * 5
    assert all(abs(b - a - 1.0) < 1e-9 for a, b in zip(times[5:], times[6:]))
    assert_rate_kept(times, 1.0, burst=5)


def test_tokens_per_minute_spaces_large_requests_and_settles_to_the_reported_usage() -> None:
    time_ = VirtualTime()
    limiter = time_.limiter(tokens_per_minute=60_000)  # 1,000 tokens a second
    assert passes(time_, limiter, [2_000, 2_000, 500]) == [0.0, 2.0, 4.0]
    limiter.settle(estimated=500, actual=3_500)  # the answer was long: 3,000 more tokens than booked
    assert passes(time_, limiter, [1_000]) == [7.5]
    time_ = VirtualTime()
    both = time_.limiter(requests_per_minute=6_000, tokens_per_minute=60_000)
    assert passes(time_, both, [10, 10, 5_000, 10]) == [0.0, 0.01, 0.02, 5.02]  # whichever budget is tighter


def test_after_a_stall_the_waiters_leave_one_slot_apart_not_together() -> None:
    """A limiter that books slots ahead and lets each waiter go when it wakes sends every slot that
    fell due in a stall at once: on a loaded machine, 22 requests reached the server in a 0.5 s window
    where 10 are allowed (the earlier real-time test gave 3 of slack, and still failed)."""
    for burst in (1, 3):
        time_ = VirtualTime()
        time_.stall(0.3, 1.0)  # the loop is blocked: 14 slots fall due in the stall
        limiter = time_.limiter(requests_per_minute=1_200, burst=burst)  # 20 a second
        times = passes(time_, limiter, [1] * 40)
        assert_rate_kept(times, 20.0, burst)
        after = [t for t in times if t >= 1.0]
        assert after[:burst] == [1.0] * burst  # the burst allowance, unused during the stall
        assert all(abs(b - a - 0.05) < 1e-9 for a, b in zip(after[burst - 1 :], after[burst:]))  # then the rate
        assert time_.sleeps < len(times)  # one waiter sleeps at a time, once per slot: no herd waking at each


def random_run(seed: int) -> tuple[list[float], int, int]:
    """80 requests arriving in clumps, sleepers woken late (now and then by half a second, as a
    descheduled worker is), up to three stalls, tokens under- and over-estimated; seeded, so repeatable.
    Returns when each passed, the burst, and how many sleeps it took."""
    rng = random.Random(seed)
    burst = rng.choice([1, 1, 2, 5])
    time_ = VirtualTime(oversleep=lambda: rng.choice([0.0, 0.0, 0.001, 0.004, 0.02, 0.5]))
    for _ in range(rng.randint(0, 3)):
        start = rng.uniform(0, 8)
        time_.stall(start, start + rng.uniform(0.05, 2.0))
    limiter = time_.limiter(requests_per_minute=600, tokens_per_minute=600_000, burst=burst)  # 10 a second
    arrivals = sorted(rng.choice([0.0, rng.uniform(0, 10)]) for _ in range(80))

    async def one(arrival: float, cost: int) -> float:
        await time_.sleep(arrival)
        await limiter.acquire(cost)
        passed = time_.now
        limiter.settle(cost, int(cost * rng.uniform(0.5, 1.5)))
        return passed

    times = asyncio.run(time_.run(one(at, rng.randint(100, 2_000)) for at in arrivals))
    return times, burst, time_.sleeps


def test_any_window_holds_no_more_than_the_rate_whatever_the_stalls_arrivals_and_late_wakeups() -> None:
    for seed in range(30):
        times, burst, sleeps = random_run(seed)
        assert len(times) == 80
        assert_rate_kept(times, 10.0, burst)
        assert sleeps <= 2 * len(times), seed  # its arrival, then at most once in the limiter: no herd


def test_the_blocking_wait_keeps_the_rate_when_its_sleep_oversleeps() -> None:
    time_ = VirtualTime()
    lateness = iter([0.0, 0.7, 0.0, 0.0, 0.3] * 10)

    def sleep(seconds: float) -> None:
        time_.now += seconds + next(lateness)

    limiter = RateLimiter(requests_per_minute=1_200, clock=time_, sleep=sleep)
    times = []
    for _ in range(30):
        limiter.wait(100)
        times.append(time_.now)
    assert_rate_kept(times, 20.0)


class SharedClock:
    """A fake clock worker processes share."""

    def __init__(self) -> None:
        self.cell = get_context("forkserver").RawValue("d", 0.0)

    def __call__(self) -> float:
        return float(self.cell.value)


def try_three(limiter: RateLimiter, results: Any) -> None:
    results.put([limiter.try_pass(1) for _ in range(3)])


def test_worker_processes_share_one_budget() -> None:
    context = get_context("forkserver")
    clock = SharedClock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock, shared=True)  # a slot every 0.1 s
    results = context.Queue()
    workers = [context.Process(target=try_three, args=(limiter, results)) for _ in range(2)]
    for worker in workers:
        worker.start()
    answers = sorted(delay for _ in workers for delay in results.get(timeout=60))
    for worker in workers:
        worker.join(timeout=60)
    assert [round(delay, 9) for delay in answers] == [0.0] + [0.1] * 5  # at t=0 one of the six passes, in all
    clock.cell.value = 0.1
    assert limiter.try_pass(1) == 0 and round(limiter.try_pass(1), 9) == 0.1  # the parent is in the same budget


def test_the_default_clock_and_sleep_really_wait() -> None:
    limiter = RateLimiter(requests_per_minute=6_000)  # 100 a second
    started = time.monotonic()
    for _ in range(3):
        limiter.wait(1)
    assert time.monotonic() - started >= 0.02 - 1e-6  # the third leaves two slots after the first, never sooner

    async def three() -> float:
        began = time.monotonic()
        await asyncio.gather(*(limiter.acquire(1) for _ in range(3)))
        return time.monotonic() - began

    assert asyncio.run(three()) >= 0.02 - 1e-6


def test_concurrent_extractions_through_the_transport_keep_the_rate_through_a_stall() -> None:
    """30 extractions at once through the real client and transport to a local server, on a fake clock
    that stamps each request as it arrives: they arrive one slot apart, and the slots that fell due
    while the loop was blocked are not sent together when it resumes."""
    document = load(SEED_002)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    time_ = VirtualTime()
    time_.stall(0.3, 1.0)
    with ScriptedServer(lambda body: reply, clock=time_) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", cache="off", rpm=1_200)  # 20 a second
        backend = LLMBackend(config, clients=make_clients(config, time_.limiter(requests_per_minute=1_200)))
        scenario = time_.run(backend.aextract(document) for _ in range(30))
        extractions = asyncio.run(asyncio.wait_for(scenario, timeout=120))
    assert len(extractions) == 30 and all(e.note.award_activity for e in extractions)
    arrivals = [round(t, 9) for t in server.arrivals]
    expected = [round(k * 0.05, 9) for k in range(6)] + [round(1.0 + k * 0.05, 9) for k in range(24)]
    assert arrivals == expected  # unlimited, all 30 arrive at 0; booked slots, 14 arrive together at 1.0
    assert most_in_window(arrivals, 0.5) == 10
