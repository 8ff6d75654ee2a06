"""What LLM calls cost: requests, cache hits, retries, re-asks, tokens, dollars and seconds.

The transport records into `current_usage`, a context variable, so concurrent documents (async
tasks) each count their own calls without passing a ledger through openai and instructor.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal

from pydantic import BaseModel, Field


class Price(BaseModel):
    """Dollars per million tokens."""

    input: Decimal
    output: Decimal


class Usage(BaseModel):
    """What LLM calls cost: requests, cache hits, tokens, re-asks, seconds and dollars (when prices are
    known). Added up per document, per run and per eval."""

    requests: int = Field(default=0, description="HTTP requests sent to the endpoint (retries included).")
    cache_hits: int = Field(default=0, description="Completions answered from the cassette store, no HTTP call.")
    retries: int = Field(default=0, description="Requests repeated after 429, 5xx, a timeout or a dropped connection.")
    reasks: int = Field(
        default=0, description="Completions asked again: invalid schema or validator findings fed back."
    )
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal | None = Field(default=Decimal(0), description="None when the model has no price in the table.")
    latency_seconds: float = Field(default=0.0, description="Time spent waiting on the endpoint, retries included.")

    def add(self, other: Usage) -> None:
        for name in ("requests", "cache_hits", "retries", "reasks", "prompt_tokens", "completion_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.latency_seconds += other.latency_seconds
        self.cost_usd = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd

    def record_completion(self, body: dict, price: Price | None) -> int:
        """Count the tokens of one live completion (cache hits are free and counted apart); returns them."""
        usage = body.get("usage") or {}
        prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if price is None:
            self.cost_usd = None
        elif self.cost_usd is not None:
            self.cost_usd += (price.input * prompt + price.output * completion) / 1_000_000
        return prompt + completion

    def summary(self) -> str:
        cost = "no price for this model" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (
            f"{self.requests} requests, {self.cache_hits} from cache, {self.retries} retries, {self.reasks} re-asks, "
            f"{self.prompt_tokens:,} tokens in, {self.completion_tokens:,} out, {cost}, {self.latency_seconds:.1f} s"
        )


current_usage: ContextVar[Usage | None] = ContextVar("current_usage", default=None)


def charge() -> Usage:
    """The ledger of the document being extracted (a throwaway one outside any extraction)."""
    return current_usage.get() or Usage()


@contextmanager
def counting() -> Iterator[Usage]:
    """A fresh ledger for one document's calls, in effect for the block (and tasks it starts)."""
    usage = Usage()
    token = current_usage.set(usage)
    try:
        yield usage
    finally:
        current_usage.reset(token)
