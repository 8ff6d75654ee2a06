"""TEST FIXTURE: a scripted OpenAI-compatible HTTP server on 127.0.0.1. No model runs here.

Each request to /v1/chat/completions takes the next scripted reply: a completion built from
arguments the test wrote (`tool_reply`), an HTTP error, or a delay; or, for concurrent clients,
the reply a `responder` function picks for the request. The server records every
request body so tests can check what the client sent, and how many times.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering: longer than the client's timeout makes a timeout


def tool_reply(
    arguments: dict[str, Any] | str, name: str = "StockCompensationNote", tokens: tuple[int, int] = (1000, 200)
) -> Reply:
    """A chat completion whose one tool call carries `arguments`: what a model answers in tools mode."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(
        body={
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted-test-fixture",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "call_0", "type": "function", "function": {"name": name, "arguments": text}}
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)},
        }
    )


def error_reply(status: int, message: str, headers: dict[str, str] | None = None, code: str | None = None) -> Reply:
    return Reply(
        status=status, body={"error": {"message": message, "type": "scripted", "code": code}}, headers=headers or {}
    )


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog, 5, drops connections when 64 clients connect at once
    daemon_threads = True


class ScriptedServer:
    """Start with `with ScriptedServer() as server:`; `server.base_url` goes to the client."""

    def __init__(
        self, responder: Callable[[dict[str, Any]], Reply] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.responder = responder  # when set, answers every request instead of the script
        self.clock = clock  # stamps `arrivals`: a test's fake clock makes them the instants the client let them go
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []  # each request's target as sent: a proxied request names the whole URL
        self.arrivals: list[float] = []  # self.clock() at each request, in order
        self._encoded: dict[int, tuple[dict[str, Any], bytes]] = {}
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(self.clock())
            if self.responder is not None:
                return self.responder(body)
            if not self.script:
                return error_reply(500, "scripted test server: no reply left in the script")
            return self.script.pop(0)

    def encoded(self, reply: Reply) -> bytes:
        """The reply's body as bytes, encoded once per reply (a benchmark sends the same one thousands of times)."""
        key = id(reply)
        cached = self._encoded.get(key)
        if cached is None or cached[0] is not reply.body:
            cached = (reply.body, json.dumps(reply.body).encode("utf-8"))
            self._encoded[key] = cached
        return cached[1]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall between them

            def do_POST(self) -> None:
                server.paths.append(self.path)
                length = int(self.headers.get("content-length") or 0)
                reply = server._next(json.loads(self.rfile.read(length) or b"{}"))
                started = time.monotonic()
                payload = server.encoded(reply)
                time.sleep(max(0.0, reply.delay - (time.monotonic() - started)))  # the delay is the whole answer time
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *_: Any) -> None:
                pass

        return Handler


class KeepAliveServer(ScriptedServer):
    """The test server on HTTP/1.1 persistent connections, as OpenAI, vLLM, Ollama and llama.cpp's server keep
    them (ScriptedServer answers HTTP/1.0: one connection per request)."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return type("KeepAliveHandler", (super()._handler(),), {"protocol_version": "HTTP/1.1"})
