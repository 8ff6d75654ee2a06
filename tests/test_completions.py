"""Chat completions posted directly (extractor/llm/completions.py) send what openai's own create sends.

Each structured mode's request, as instructor builds it for the note schema from a real prompt and seed,
goes through openai's `chat.completions.create` and through `direct_create`; an httpx mock transport keeps
what each sent. The JSON, the headers and the completion read back must be the same: a later openai
whose create changes a request (a renamed key, a new header) fails here, not in a bulk run.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import httpx2
import instructor
import openai
import pytest
from fixture_paths import FIXTURES
from llm_server import tool_reply
from openai.resources.chat import Completions

from extractor.llm import completions
from extractor.llm.client import MODES
from extractor.llm.modes import StructuredMode
from extractor.llm.prompts import load_prompt
from extractor.llm.response_model import quoted_view
from extractor.schemas.stock_compensation import StockCompensationNote

REPLY = tool_reply({"plans": []}).body
KEY, URL = "sk-test", "http://127.0.0.1:9/v1"  # nothing listens: the mock transports answer


def instructor_kwargs(mode: StructuredMode) -> dict[str, Any]:
    """The keyword arguments instructor passes to create() for seed 002's note, with a re-ask's turns."""
    seen: dict[str, Any] = {}

    def record(**kwargs: Any) -> Any:
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before instructor reads an answer

    prompt = load_prompt()
    messages = prompt.messages(
        title="seed 002",
        fiscal_year_end="2009-12-31",
        focus="",
        content=(FIXTURES / "002_59f0e0194afd947c.txt").read_text()[:4000],
    )
    messages += [{"role": "assistant", "content": '{"plans": []}'}, {"role": "user", "content": "Check “these”."}]
    with pytest.raises(KeyboardInterrupt):
        instructor.patch(create=record, mode=MODES[mode])(
            model="m",
            messages=messages,
            response_model=quoted_view(StockCompensationNote),
            temperature=0.0,
            max_tokens=2048,
            max_retries=0,
        )
    return seen


def capture(sent: list[httpx2.Request]) -> httpx2.MockTransport:
    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, json=REPLY)

    return httpx2.MockTransport(answer)


def sync_client(transport: httpx2.BaseTransport) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=URL, http_client=httpx2.Client(transport=transport), max_retries=0)


def async_client(transport: httpx2.AsyncBaseTransport) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key=KEY, base_url=URL, http_client=httpx2.AsyncClient(transport=transport), max_retries=0
    )


def comparable(request: httpx2.Request) -> tuple[str, str, Any, dict[str, str]]:
    """What a server reads of a request: its keys may come in another order (instructor's, not create()'s)."""
    return request.method, str(request.url), json.loads(request.content), dict(request.headers)


@pytest.mark.parametrize("mode", list(StructuredMode))
def test_the_direct_post_sends_what_openais_create_sends(mode: StructuredMode) -> None:
    kwargs = instructor_kwargs(mode)
    assert kwargs["messages"] and ("tools" in kwargs) == (mode is StructuredMode.tools)
    sent: list[httpx2.Request] = []
    client = sync_client(capture(sent))
    theirs = client.chat.completions.create(**kwargs)
    ours = completions.direct_create(client)(**kwargs)
    assert len(sent) == 2
    assert comparable(sent[1]) == comparable(sent[0])
    assert sent[1].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(sent[1].content)["messages"][-1]["content"].startswith("Check “these”.")
    assert type(ours) is type(theirs) and ours.model_dump() == theirs.model_dump()


def test_the_async_direct_post_sends_what_openais_create_sends() -> None:
    kwargs = instructor_kwargs(StructuredMode.tools)
    sent: list[httpx2.Request] = []

    async def both() -> tuple[Any, Any]:
        client = async_client(capture(sent))
        return await client.chat.completions.create(**kwargs), await completions.direct_acreate(client)(**kwargs)

    theirs, ours = asyncio.run(both())
    assert comparable(sent[1]) == comparable(sent[0])
    assert ours.model_dump() == theirs.model_dump()


MESSAGES = [{"role": "user", "content": "hi"}]
OPTIONS = [  # extra_* and timeout: request options, not body keys; omitted values left out, None sent as null
    {"seed": openai.omit, "extra_headers": {"X-Trace": "1"}, "extra_query": {"api-version": "2024"}, "timeout": 7.0},
    {"temperature": 0.0, "extra_body": {"top_k": 3, "temperature": 0.5}},  # extra_body wins over a body key
    {"max_tokens": None, "timeout": None},  # null sent; no timeout at all
    {"timeout": openai.NOT_GIVEN, "extra_headers": {"Authorization": "Bearer other"}},
]


@pytest.mark.parametrize("extra", OPTIONS)
def test_options_go_where_create_puts_them(extra: dict[str, Any]) -> None:
    kwargs = {"model": "m", "messages": MESSAGES, **extra}
    sent: list[httpx2.Request] = []
    client = sync_client(capture(sent))
    client.chat.completions.create(**kwargs)
    completions.direct_create(client)(**kwargs)

    async def both() -> None:
        aclient = async_client(capture(sent))
        await aclient.chat.completions.create(**kwargs)
        await completions.direct_acreate(aclient)(**kwargs)

    asyncio.run(both())
    assert len(sent) == 4
    for theirs, ours in (sent[0:2], sent[2:4]):
        assert comparable(ours) == comparable(theirs)
        assert ours.extensions["timeout"] == theirs.extensions["timeout"]
    assert completions.request(kwargs)[1]["security"] == {"bearer_auth": True}


def test_what_create_refuses_is_refused() -> None:
    """A stream, a keyword create() does not take, a request without model or messages: refused, not sent."""
    sent: list[httpx2.Request] = []
    client = sync_client(capture(sent))
    create = completions.direct_create(client)
    with pytest.raises(ValueError, match="streamed"):
        create(model="m", messages=MESSAGES, stream=True)
    with pytest.raises(TypeError, match="temprature"):
        create(model="m", messages=MESSAGES, temprature=0)
    with pytest.raises(TypeError, match="model"):
        create(messages=MESSAGES)
    assert not sent


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (400, {"error": {"message": "too long", "code": "context_length_exceeded"}}, openai.BadRequestError),
        (429, {"error": {"message": "quota", "code": "insufficient_quota"}}, openai.RateLimitError),
        (500, {"error": {"message": "down"}}, openai.InternalServerError),
    ],
)
def test_an_error_status_raises_what_create_raises(status: int, body: dict[str, Any], error: type) -> None:
    """client.explain() reads openai's exception classes, status codes and error codes."""
    transport = httpx2.MockTransport(lambda request: httpx2.Response(status, json=body))
    client = sync_client(transport)
    raised = []
    for create in (client.chat.completions.create, completions.direct_create(client)):
        with pytest.raises(error) as caught:
            create(model="m", messages=MESSAGES)
        raised.append((type(caught.value), caught.value.status_code, caught.value.code, caught.value.body))
    assert raised[0] == raised[1]


@pytest.mark.parametrize("mode", list(StructuredMode))
def test_instructor_passes_only_what_create_takes(mode: StructuredMode) -> None:
    """openai's create() would refuse any other keyword; the direct post refuses what its TypedDict lacks."""
    parameters = inspect.signature(Completions.create).parameters
    body = {name for name in parameters if name != "self" and name not in completions._OPTIONS}
    assert body == completions.KEYS
    assert {name for name in body if parameters[name].default is inspect.Parameter.empty} == completions.REQUIRED
    assert set(instructor_kwargs(mode)) <= body
