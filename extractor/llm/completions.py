"""Chat completions posted as instructor builds them, through openai's public `post`.

openai's `chat.completions.create` first walks its request through `maybe_transform`, which renames
aliased keys and formats dates and files by the request's TypedDict: every message is tried against each
variant of the message union, about 5 % of a bulk worker's CPU per document (callgrind, seed 002). Chat
requests have no aliased key, date or file, so the walk returns what it was given; posting that directly
sends the same JSON (its keys in instructor's order, not create()'s), with the same headers, authorization
and options, and the answer is read into the same `ChatCompletion`. Tests compare both with openai's own
create in every structured mode. A keyword create() does not take, or a missing model or messages, is
refused as create() refuses it, read from the request's TypedDict (openai's chat resources, where create()
is, are not imported: 0.3 s of a worker's start-up).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming as _Params

PATH = "/chat/completions"
# create()'s keyword arguments that are request options, not body keys
_OPTIONS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
# create()'s body keys, from the request's TypedDict (loaded with ChatCompletion; its chat resources are not),
# and the two it cannot do without
KEYS, REQUIRED = _Params.__required_keys__ | _Params.__optional_keys__, frozenset({"messages", "model"})


def request(params: dict[str, Any]) -> tuple[dict[str, Any], openai.RequestOptions]:
    """(body, options) of the POST create() would make of these keyword arguments."""
    if params.get("stream"):
        raise ValueError("a streamed completion is not posted directly: use openai's create()")
    unknown, missing = sorted(params.keys() - KEYS - _OPTIONS), sorted(REQUIRED - params.keys())
    if unknown or missing:  # as create() refuses them, rather than sent for the endpoint to refuse or ignore
        raise TypeError(f"chat.completions.create(): unexpected {unknown}, missing {missing}")
    given = {k: v for k, v in params.items() if not isinstance(v, openai.Omit | openai.NotGiven)}
    body = {key: value for key, value in given.items() if key not in _OPTIONS}
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
