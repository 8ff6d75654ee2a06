"""The HTTP layer under the openai client: cassettes first, then rate limits and bounded retries, counting every call.

Retrying here, below openai and instructor, repeats one HTTP request, not a whole conversation: a
429 on a re-ask does not restart the extraction. openai's own retries are turned off (max_retries=0)
so there is one policy. What retrying cannot fix (400, 401, 403, 404) passes straight up, and openai
raises its typed error at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import httpx2
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential_jitter,
)

from extractor.llm.cassettes import Cassettes
from extractor.llm.errors import EndpointError
from extractor.llm.limits import RateLimiter, estimate_tokens
from extractor.llm.proxies import Proxy
from extractor.llm.sockets import async_transport
from extractor.llm.tls import tls_context
from extractor.llm.usage import Price, charge

TRANSIENT_ERRORS = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)
_DROP_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; a server's Retry-After wins, up to `max_wait` seconds."""

    attempts: int = 5
    initial_wait: float = 1.0
    max_wait: float = 60.0

    def options(self) -> dict[str, Any]:
        backoff = wait_exponential_jitter(multiplier=self.initial_wait, max=self.max_wait, jitter=self.initial_wait)
        longest = self.max_wait  # not self: tenacity's retrying objects are cycles, which would hold the policy

        def wait(state: RetryCallState) -> float:
            outcome = state.outcome
            if outcome is not None and not outcome.failed:
                after = retry_after(outcome.result().headers)
                if after is not None:
                    return min(after, longest)
            return backoff(state)

        def count(state: RetryCallState) -> None:
            charge().retries += 1

        return {
            "stop": stop_after_attempt(self.attempts),
            "wait": wait,
            "retry": retry_if_exception_type(TRANSIENT_ERRORS) | retry_if_result(is_transient),
            "before_sleep": count,
            "retry_error_callback": lambda state: state.outcome.result(),  # last response, or raise its error
        }


def is_transient(response: httpx2.Response) -> bool:
    """429 and 5xx, except a 429 for an exhausted quota: waiting will not refill it."""
    if response.status_code == 429:
        return b"insufficient_quota" not in response.content
    return response.status_code >= 500


def retry_after(headers: httpx2.Headers) -> float | None:
    """Seconds a server asks us to wait: 'retry-after-ms', 'retry-after' in seconds, or an HTTP date."""
    seconds: float | None = None
    try:
        if "retry-after-ms" in headers:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif (value := headers.get("retry-after")) is not None:
            try:
                seconds = float(value)
            except ValueError:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (ValueError, TypeError, OverflowError):
        return None  # a header we cannot read: fall back to backoff
    return max(0.0, seconds) if seconds is not None and math.isfinite(seconds) else None


class _Ledger:
    """What the sync and async transports share: cassette lookups, response rebuilding, counting."""

    def __init__(
        self, policy: RetryPolicy, cassettes: Cassettes | None, price: Price | None, limiter: RateLimiter | None
    ) -> None:
        self.policy = policy
        self.cassettes = cassettes
        self.price = price
        self.limiter = limiter if limiter is not None and limiter.active else None

    def replayed(self, request: httpx2.Request) -> httpx2.Response | None:
        recorded = self.cassettes.get(request.content) if self.cassettes else None
        if recorded is None:
            return None
        usage = charge()
        if getattr(self.cassettes, "billed", False):  # a Batch API answer: paid for, so counted like a live one
            usage.requests += 1
            factor = self.cassettes.price_factor  # type: ignore[union-attr]
            price = (
                self.price.model_copy(update={"input": self.price.input * factor, "output": self.price.output * factor})
                if self.price
                else None
            )
            usage.record_completion(json.loads(recorded), price)
        else:
            usage.cache_hits += 1
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=recorded, request=request)

    def received(
        self, request: httpx2.Request, response: httpx2.Response, started: float, estimate: int
    ) -> httpx2.Response:
        """A read response as a fresh one (bodies are decoded), with its tokens and time counted."""
        usage = charge()
        usage.requests += 1
        usage.latency_seconds += time.monotonic() - started
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP_HEADERS]
        fresh = httpx2.Response(response.status_code, headers=headers, content=response.content, request=request)
        if response.status_code == 200 and request.url.path.endswith("completions"):
            try:
                spent = usage.record_completion(json.loads(response.content), self.price)
            except ValueError:
                return fresh  # openai reports the unreadable body
            if self.limiter is not None:
                self.limiter.settle(estimate, spent)
            if self.cassettes:
                self.cassettes.put(request.content, response.content)
        return fresh

    def failed(self, started: float) -> None:
        usage = charge()
        usage.requests += 1
        usage.latency_seconds += time.monotonic() - started


class LLMTransport(httpx2.BaseTransport):
    def __init__(self, ledger: _Ledger, inner: httpx2.BaseTransport) -> None:
        self.ledger = ledger
        self.inner = inner  # made by transports(): the process's one TLS context, the proxy

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        return self.ledger.replayed(request) or Retrying(**self.ledger.policy.options())(self._send, request)

    def _send(self, request: httpx2.Request) -> httpx2.Response:
        estimate = estimate_tokens(request.content)
        if self.ledger.limiter is not None:
            self.ledger.limiter.wait(estimate)
        started, response = time.monotonic(), None
        try:
            response = self.inner.handle_request(request)
            response.read()
        except TRANSIENT_ERRORS:
            self.ledger.failed(started)
            raise
        finally:
            if response is not None:
                response.close()
        return self.ledger.received(request, response, started, estimate)

    def close(self) -> None:
        self.inner.close()


class AsyncLLMTransport(httpx2.AsyncBaseTransport):
    """With `requests`, at most that many of its requests are at the endpoint at once (a bulk worker's share of
    --concurrency). A request holds its place through its retries (a struggling endpoint sees fewer requests
    while they back off) until its answer is read, and no longer: the next request, built while it waited,
    starts before openai and instructor make the answer into the response model (on a kept connection it is
    sent; a new connection is opened), so the endpoint waits less on this process's CPU."""

    def __init__(self, ledger: _Ledger, inner: httpx2.AsyncBaseTransport, requests: int | None = None) -> None:
        self.ledger = ledger
        self.inner = inner  # made by transports(): asyncio's sockets or the proxy, the process's one TLS context
        self.places: AbstractAsyncContextManager[Any] = (
            asyncio.Semaphore(requests) if requests is not None else nullcontext()
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        replayed = self.ledger.replayed(request)
        if replayed is not None:
            return replayed
        async with self.places:
            sent: httpx2.Response = await AsyncRetrying(**self.ledger.policy.options())(
                self._send, request
            )  # tenacity leaves its result untyped
        await asyncio.sleep(0)  # a request waiting for the freed place starts before this answer is parsed
        return sent

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        estimate = estimate_tokens(request.content)
        if self.ledger.limiter is not None:
            await self.ledger.limiter.acquire(estimate)
        started, response = time.monotonic(), None
        try:
            response = await self.inner.handle_async_request(request)
            await response.aread()
        except TRANSIENT_ERRORS:
            self.ledger.failed(started)
            raise
        finally:
            if response is not None:
                await response.aclose()
        return self.ledger.received(request, response, started, estimate)

    async def aclose(self) -> None:
        await self.inner.aclose()


def transports(
    policy: RetryPolicy,
    cassettes: Cassettes | None,
    price: Price | None,
    limiter: RateLimiter | None = None,
    base_url: str | None = None,
    proxy: Proxy | None = None,
    requests: int | None = None,
) -> tuple[LLMTransport, AsyncLLMTransport]:
    """A sync and an async transport sharing one policy, cassette store, price and rate limits, both through
    `proxy` (extractor.llm.proxies) if any; the async one opens its connections to a plain-HTTP `base_url`
    reached directly on asyncio's socket calls (extractor.llm.sockets)."""
    ledger = _Ledger(policy, cassettes, price, limiter)
    through = proxy.url if proxy else None
    try:
        inner = httpx2.HTTPTransport(verify=tls_context(), proxy=through)
        inner_async = async_transport(base_url, through)
    except (ImportError, ValueError, httpx2.InvalidURL) as error:  # a SOCKS proxy without socksio; another scheme
        assert proxy is not None  # (only a proxy makes these fail)
        raise EndpointError(
            f"the proxy {proxy.shown} ({proxy.source}) cannot be used: "
            + (
                "install socksio for a SOCKS proxy"
                if isinstance(error, ImportError)
                else "not an http, https, socks5 or socks5h URL"
            )
            + ", or list the endpoint's host in NO_PROXY"
        ) from None
    return LLMTransport(ledger, inner), AsyncLLMTransport(ledger, inner_async, requests)
