"""OpenAI Batch API files: the requests a run would send, written out; the results, read back in.

A request line is exactly the body the openai client would POST (captured from the client itself,
so tools, schema and parameters cannot drift), with `custom_id` = the request's content key (the
same key the cassettes use). Importing answers each request from the results file by that key,
through the normal client: the answer is parsed, grounded and validated like a live one. A request
that is not in the results (a re-ask, say) fails its document with a reason, never a call.

File formats: https://platform.openai.com/docs/guides/batch (input: custom_id, method, url, body;
output: custom_id, response {status_code, body}, error).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.document import Document
from extractor.errors import ExtractorError
from extractor.llm.cassettes import CassetteMiss, request_key

if TYPE_CHECKING:  # for annotations only: reading a results file (a rules process's too) needs no openai
    from extractor.backends.llm import LLMBackend, Spans

ENDPOINT = "/v1/chat/completions"
BATCH_PRICE = Decimal("0.5")  # of the listed per-token price: https://platform.openai.com/docs/guides/batch


class Captured(CassetteMiss):
    """Raised instead of sending: carries the request body the client built."""

    def __init__(self, body: bytes) -> None:
        super().__init__("captured for a Batch API file, not sent")
        self.body = body


class RequestRecorder:
    """A stand-in for the cassette store that stops every request before it is sent."""

    billed = False

    def get(self, body: bytes) -> bytes | None:
        raise Captured(body)

    def put(self, body: bytes, response: bytes) -> None:  # pragma: no cover - nothing is ever answered
        pass


def captured_body(error: BaseException) -> bytes | None:
    """The body a recorder captured, found in an exception's chain of causes."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, Captured):
            return cause.body
        cause = cause.__cause__ or cause.__context__
    return None


def request_lines(llm: LLMBackend, document: Document, blocks: Spans | None = None) -> list[str]:
    """The Batch API lines for a document: its first question for each part of the note (or each of
    `blocks`), as the client would send them. `llm` must have been made with a RequestRecorder as its answers."""
    lines = []
    for ask in llm.questions(document, blocks):
        try:
            llm.clients.sync.chat.completions.create(**llm.clients.create_kwargs(ask.messages, ask.response_model))
        except Exception as error:
            body = captured_body(error)
            if body is None:
                raise
            lines.append(request_line(body))
    return lines


def request_line(body: bytes) -> str:
    """One line of a Batch API input file."""
    payload = json.loads(body)
    return (
        json.dumps(
            {"custom_id": request_key(body), "method": "POST", "url": ENDPOINT, "body": payload}, ensure_ascii=False
        )
        + "\n"
    )


class BatchError(ExtractorError):
    """A results file that cannot be read; the message names the file and line."""


def index_results(path: Path) -> tuple[dict[str, int], list[int]]:
    """custom_id -> byte offset of its line in a Batch API output file (the file is not held in
    memory), and the numbers of lines that are not results (their requests then go unanswered)."""
    index: dict[str, int] = {}
    unreadable: list[int] = []
    try:
        with open(path, "rb") as handle:
            offset = 0
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    try:
                        index[str(json.loads(line)["custom_id"])] = offset
                    except (ValueError, KeyError, TypeError):
                        unreadable.append(number)
                offset += len(line)
    except OSError as error:
        raise BatchError(f"{path}: cannot be read ({error.strerror or error})") from error
    if not index:
        raise BatchError(f"{path}: holds no Batch API results")
    return index, unreadable


class BatchAnswers:
    """A stand-in for the cassette store answering from a Batch API output file.

    `billed`: the answers are paid completions, so the transport counts their tokens and cost, at
    `price_factor` of the listed price (the Batch API bills half).
    """

    billed = True
    price_factor = BATCH_PRICE

    def __init__(self, path: Path, index: dict[str, int]) -> None:
        self.path = path
        self.index = index

    def get(self, body: bytes) -> bytes:
        key = request_key(body)
        offset = self.index.get(key)
        if offset is None:
            raise CassetteMiss(
                f"no result for this request (custom_id {key[:12]}…) in {self.path}; a batch answers only the requests it was given"
            )
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            line = handle.readline()
        try:
            result: dict[str, Any] = json.loads(line)
            response = result.get("response") or {}
            if result.get("error") or response.get("status_code") != 200:
                error = result.get("error") or (response.get("body") or {}).get("error") or {}
                message = error.get("message") if isinstance(error, dict) else str(error)
                status = f"HTTP {response['status_code']}: " if response.get("status_code") else ""
                raise CassetteMiss(f"the Batch API could not answer this request ({status}{message or 'no message'})")
            body = response["body"]
            if not isinstance(body, dict):
                raise TypeError("its body is not a JSON object")
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise CassetteMiss(
                f"the result for custom_id {key[:12]}… in {self.path} is not a Batch API result ({error!r})"
            ) from error
        return json.dumps(body).encode("utf-8")

    def put(self, body: bytes, response: bytes) -> None:
        pass
