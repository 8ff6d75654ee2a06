"""Chat completions posted as instructor builds them, through openai's public `post`.

openai's `chat.completions.create` first walks its request through `maybe_transform`, which renames
aliased keys and formats dates and files by the request's TypedDict: every message is tried against each
variant of the message union, about 5 % of a bulk worker's CPU per document (callgrind, seed 002). Chat
requests have no aliased key, date or file, so the walk returns what it was given; posting that directly
sends the same bytes (tests compare them with openai's own create in every structured mode), with the
same authorization and options, and the answer is read into the same `ChatCompletion`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

import openai
from openai.resources.chat import Completions
from openai.types.chat import ChatCompletion

PATH = "/chat/completions"
# create()'s keyword arguments that are request options, not body keys
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


@cache
def body_keys() -> tuple[str, ...]:
    """The body's keys in the order create() writes them: its parameters', options aside."""
    parameters = inspect.signature(Completions.create).parameters
    return tuple(name for name in parameters if name != "self" and name not in _OPTIONS)


def request(params: dict[str, Any]) -> tuple[dict[str, Any], openai.RequestOptions]:
    """(body, options) of the POST create() would make of these keyword arguments."""
    if params.get("stream"):
        raise ValueError("a streamed completion is not posted directly: use openai's create()")
    keys = body_keys()
    unknown = sorted(params.keys() - set(keys) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"chat.completions.create() got unexpected keyword arguments: {', '.join(unknown)}")
    given = {k: v for k, v in params.items() if not isinstance(v, openai.Omit | openai.NotGiven)}
    body = {key: given[key] for key in keys if key in given}
    options: openai.RequestOptions = {"security": {"bearer_auth": True}}  # as create() asks: the API key, as a bearer
    if given.get("extra_headers") is not None:
        options["headers"] = given["extra_headers"]
    if given.get("extra_query") is not None:
        options["params"] = given["extra_query"]
    if given.get("extra_body") is not None:
        options["extra_json"] = given["extra_body"]
    if "timeout" in given:  # None too: no timeout
        options["timeout"] = given["timeout"]
    return body, options


def direct_create(client: openai.OpenAI) -> Callable[..., ChatCompletion]:
    """A `chat.completions.create` for instructor to patch, on the sync client."""

    def create(**params: Any) -> ChatCompletion:
        body, options = request(params)
        return client.post(PATH, body=body, options=options, cast_to=ChatCompletion)

    return create


def direct_acreate(client: openai.AsyncOpenAI) -> Callable[..., Awaitable[ChatCompletion]]:
    """The same on the async client."""

    async def create(**params: Any) -> ChatCompletion:
        body, options = request(params)
        return await client.post(PATH, body=body, options=options, cast_to=ChatCompletion)

    return create
