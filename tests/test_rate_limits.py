"""Client-side rate limits: the schedule itself (a fake clock), then real requests through the transport."""

from __future__ import annotations

import asyncio

from fixture_paths import SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.llm import LLMBackend
from extractor.llm.config import LLMConfig
from extractor.llm.limits import RateLimiter
from extractor.loaders import load


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def starts(limiter: RateLimiter, clock: Clock, tokens: list[int]) -> list[float]:
    """When each of a burst of requests, all asked for at the same instant, may start."""
    return [round(clock.now + limiter.reserve(cost), 9) for cost in tokens]


def most_in_window(times: list[float], window: float) -> int:
    return max(sum(1 for t in times if start <= t < start + window - 1e-9) for start in times)


def test_a_burst_is_spread_to_the_request_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)  # 10 a second
    times = starts(limiter, clock, [100] * 100)
    assert times[0] == 0 and abs(times[-1] - 9.9) < 1e-9
    assert most_in_window(times, 1.0) == 10
    clock.now = 30.0  # idle for a while: no credit piles up beyond the burst
    assert starts(limiter, clock, [100] * 3) == [30.0, 30.1, 30.2]


def test_burst_allowance_lets_that_many_go_at_once_then_holds_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=60, burst=5, clock=clock)
    times = starts(limiter, clock, [1] * 20)
    assert times[:5] == [0.0] * 5
    assert all(abs(b - a - 1.0) < 1e-9 for a, b in zip(times[5:], times[6:]))
    assert most_in_window(times, 60.0) <= 60 + 5


def test_tokens_per_minute_spaces_large_requests_and_settles_to_the_reported_usage() -> None:
    clock = Clock()
    limiter = RateLimiter(tokens_per_minute=60_000, clock=clock)  # 1,000 tokens a second
    assert starts(limiter, clock, [2_000, 2_000, 500]) == [0.0, 2.0, 4.0]
    limiter.settle(estimated=500, actual=3_500)  # the answer was long: 3,000 more tokens than booked
    assert starts(limiter, clock, [1_000]) == [7.5]
    both = RateLimiter(requests_per_minute=6_000, tokens_per_minute=60_000, clock=clock)
    assert starts(both, clock, [10, 10, 5_000, 10]) == [0.0, 0.01, 0.02, 5.02]  # whichever budget is tighter


def test_concurrent_extractions_through_the_transport_keep_the_rate() -> None:
    document = load(SEED_002)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    with ScriptedServer(lambda body: reply) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", cache="off", rpm=1_200)  # 20 a second
        backend = LLMBackend(config)

        async def burst() -> list:
            return await asyncio.gather(*(backend.aextract(document) for _ in range(30)))

        extractions = asyncio.run(burst())
    assert len(extractions) == 30 and all(e.note.award_activity for e in extractions)
    arrivals = server.arrivals
    assert len(arrivals) == 30
    assert arrivals[-1] - arrivals[0] >= 29 / 20 - 0.1  # spread over the time the rate allows, not all at once
    assert (
        most_in_window(arrivals, 0.5) <= 10 + 3
    )  # a slot's request may arrive a little late, never early; unlimited, all 30 land in ~0.1 s
