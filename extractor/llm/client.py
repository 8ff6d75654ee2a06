"""instructor on the openai client, sync and async, over the cassette-and-retry transport.

Also turns what can go wrong into one clear sentence: `EndpointError` when nothing will work
(bad key, unknown model, nothing listening), `LLMError` when one document failed.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import httpx2
import instructor
import openai
from instructor.core import InstructorRetryException

from extractor.llm import model_checks
from extractor.llm.cassettes import CacheMode, CassetteMiss, Cassettes
from extractor.llm.completions import direct_acreate, direct_create
from extractor.llm.config import LLMConfig, StructuredMode
from extractor.llm.errors import EndpointError, LLMError
from extractor.llm.limits import RateLimiter
from extractor.llm.proxies import OPENAI_URL, Proxy, endpoint_url, environment_proxy
from extractor.llm.transport import RetryPolicy, transports
from extractor.llm.usage import charge

MODES = {
    StructuredMode.tools: instructor.Mode.TOOLS,
    StructuredMode.json_schema: instructor.Mode.JSON_SCHEMA,
    StructuredMode.json: instructor.Mode.JSON,
    StructuredMode.md_json: instructor.Mode.MD_JSON,
}
logging.getLogger("instructor").addHandler(logging.NullHandler())  # its errors reach the user through explain()
KEYLESS = "no-key"  # local servers (vLLM, Ollama, llama.cpp) ignore the key, but openai requires one


@dataclass
class Clients:
    sync: instructor.Instructor
    run_async: instructor.AsyncInstructor
    config: LLMConfig
    proxy: Proxy | None = None  # the one both clients go through (extractor.llm.proxies)

    def create_kwargs(self, messages: list[dict[str, Any]], response_model: type) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "response_model": response_model,
            "temperature": self.config.temperature,
            "max_retries": self.config.reasks,
        }
        if self.config.max_tokens is not None:  # only when set: recorded completions keep their keys
            kwargs["max_tokens"] = self.config.max_tokens
        return kwargs


def _api_key(config: LLMConfig, endpoint: str) -> str:
    if config.api_key is not None:
        return config.api_key.get_secret_value()
    if (urlparse(endpoint).hostname or "").endswith("openai.com"):
        raise EndpointError(
            "no API key: set OPENAI_API_KEY (or --api-key), or point --base-url at a local server "
            "(vLLM, Ollama, llama.cpp), which needs none"
        )
    return KEYLESS


def make_clients(
    config: LLMConfig, limiter: RateLimiter | None = None, answers: Any = None, requests: int | None = None
) -> Clients:
    """Both clients share the transport's retry policy, rate limits, cassettes and price table; openai's own retries are off.

    `limiter` is one shared with other processes (bulk runs); by default the config's rpm and tpm make one.
    `answers` replaces the cassette store (llm.batch: a request recorder, or Batch API results): no
    request then reaches the endpoint, and no key is needed. `requests`: at most that many of the async
    client's requests at the endpoint at once (a bulk worker's share of --concurrency; transport.py)."""
    cassettes = (
        answers
        if answers is not None
        else (Cassettes(config.cache_dir, config.cache) if config.cache is not CacheMode.off else None)
    )
    policy = RetryPolicy(attempts=config.attempts, initial_wait=config.retry_wait, max_wait=config.max_wait)
    if limiter is None and (config.rpm or config.tpm):
        limiter = RateLimiter(config.rpm, config.tpm)
    offline = answers is not None or config.cache is CacheMode.replay
    endpoint = endpoint_url(config.base_url)
    key = KEYLESS if offline and config.api_key is None else _api_key(config, endpoint)
    proxy = None if offline else environment_proxy(endpoint)  # (nothing is sent offline)
    sync_transport, async_transport = transports(policy, cassettes, config.price, limiter, endpoint, proxy, requests)
    common: dict[str, Any] = {"base_url": endpoint, "timeout": config.timeout, "max_retries": 0}
    sync_client = openai.OpenAI(api_key=key, http_client=httpx2.Client(transport=sync_transport), **common)
    async_client = openai.AsyncOpenAI(api_key=key, http_client=httpx2.AsyncClient(transport=async_transport), **common)
    mode = MODES[config.mode]
    model_checks.install()  # instructor's walk of the response model: once per model, not seven times a request
    clients = Clients(
        instructor.Instructor(
            client=sync_client, create=instructor.patch(create=direct_create(sync_client), mode=mode), mode=mode
        ),
        instructor.AsyncInstructor(
            client=async_client, create=instructor.patch(create=direct_acreate(async_client), mode=mode), mode=mode
        ),
        config,
        proxy,
    )
    for client in (clients.sync, clients.run_async):
        client.on("parse:error", _count_reask)
    return clients


def _refused_by_proxy(cause: BaseException) -> bool:
    """The proxy, not the endpoint, said no: a 407 to a request it forwards, or a tunnel it would not open."""
    if isinstance(cause, openai.APIStatusError):
        return cause.status_code == 407
    return isinstance(cause, openai.APIConnectionError) and isinstance(cause.__cause__, httpx2.ProxyError)


def _proxy_failure(cause: BaseException, proxy: Proxy, endpoint: str) -> EndpointError:
    """Every document would fail alike: the run stops with what to change. (A refused tunnel is not retried.)"""
    said = f"{cause.status_code} {cause.message}" if isinstance(cause, openai.APIStatusError) else str(cause.__cause__)
    if said.startswith("407"):
        return EndpointError(
            f"the proxy {proxy.shown} ({proxy.source}) asks for credentials (HTTP 407): give them in {proxy.source} "
            "as http://user:password@host:port"
        )
    return EndpointError(f"the proxy {proxy.shown} ({proxy.source}) would not connect to {endpoint} ({said})")


def _count_reask(*_: Any, **__: Any) -> None:
    charge().reasks += 1


def explain(error: BaseException, config: LLMConfig, proxy: Proxy | None = None) -> LLMError:
    """The first cause we understand, as a sentence that says what to do (never containing the key), naming the
    `proxy` the request went through."""
    failure = _explain(error, config, proxy)
    if config.api_key is not None and config.api_key.get_secret_value() in str(failure):
        failure = type(failure)(str(failure).replace(config.api_key.get_secret_value(), "***"))
    return failure


def _explain(error: BaseException, config: LLMConfig, proxy: Proxy | None) -> LLMError:
    endpoint = endpoint_url(config.base_url)
    named = where = "the OpenAI API" if endpoint == OPENAI_URL else endpoint
    if proxy is not None:
        where += f" (through the proxy {proxy.shown}, from {proxy.source})"
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, LLMError):
            return cause
        if proxy is not None and _refused_by_proxy(cause):
            return _proxy_failure(cause, proxy, named)
        if isinstance(cause, CassetteMiss):
            return LLMError(str(cause))
        if isinstance(cause, openai.AuthenticationError):
            return EndpointError(f"{where} refused the API key (HTTP 401): check OPENAI_API_KEY or --api-key")
        if isinstance(cause, openai.PermissionDeniedError):
            return EndpointError(f"{where} denied access to model '{config.model}' (HTTP 403)")
        if isinstance(cause, openai.NotFoundError):
            return EndpointError(
                f"{where} has no model '{config.model}' (HTTP 404); check --model, and that --base-url ends in /v1"
            )
        if isinstance(cause, openai.BadRequestError):
            text = str(cause.message)
            if cause.code == "context_length_exceeded" or re.search(
                r"context (length|window)|too many tokens|prompt is too long", text, re.I
            ):
                return LLMError(
                    f"the prompt is too long for {config.model}'s context (HTTP 400: {text}); lower --max-chars"
                )
            return LLMError(f"{where} rejected the request (HTTP 400): {text}")
        if isinstance(cause, openai.APITimeoutError):
            return LLMError(f"no answer from {where} within {config.timeout:g} s, {config.attempts} attempts")
        if isinstance(cause, openai.RateLimitError) and cause.code == "insufficient_quota":
            return EndpointError(f"{where}: the account's quota is used up (HTTP 429 insufficient_quota)")
        if isinstance(cause, openai.APIStatusError):
            tries = f" after {config.attempts} attempts" if cause.status_code == 429 or cause.status_code >= 500 else ""
            return LLMError(f"{where} answered HTTP {cause.status_code}{tries}: {cause.message}")
        if isinstance(cause, openai.APIConnectionError) and not isinstance(cause.__cause__, CassetteMiss):
            return EndpointError(f"cannot reach {where} after {config.attempts} attempts ({cause.__cause__ or cause})")
        if isinstance(cause, InstructorRetryException) and not isinstance(cause.__cause__, openai.APIError):
            last = str(cause.__cause__ or cause).splitlines()[0]
            return LLMError(f"the answer did not fit the schema after {cause.n_attempts} attempts ({last})")
        cause = cause.__cause__
    return LLMError(f"LLM call failed: {error}")
