"""The LLM clients reach their endpoint through the proxy the environment names (HTTP_PROXY, HTTPS_PROXY,
ALL_PROXY, NO_PROXY), as the openai library's default client does: a team behind a corporate proxy is not cut
off because the clients run on transports of ours. A server on this machine is always asked directly.

Every endpoint here is a name only these tests resolve, to a test server on 127.0.0.1, or an address on this
machine: nothing is looked up or reached outside it. (tests/conftest.py clears the machine's own variables.)
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from fixture_paths import SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.backends.llm import LLMBackend
from extractor.bulk.work import Job, Rendered, Step, Stop, handle
from extractor.llm.client import make_clients
from extractor.llm.config import LLMConfig
from extractor.llm.errors import EndpointError
from extractor.llm.proxies import Proxy, endpoint_url, environment_proxy
from extractor.loaders import load

HOST = "filings.llm.test"  # resolved by the `looked_up` fixture alone
SECRET = "s3cret"


@pytest.fixture
def looked_up(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """HOST resolves to 127.0.0.1, any other name as before; the names looked up, in order."""
    real = socket.getaddrinfo
    names: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(host)
        return real("127.0.0.1" if host == HOST else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


class RefusingProxy:
    """A proxy on 127.0.0.1 that answers every request, forwarded or CONNECT, with one status line; it keeps
    each request's head."""

    def __init__(self, status: str) -> None:
        self.status = status
        self.heads: list[str] = []
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://analyst:{SECRET}@127.0.0.1:{self._socket.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                head = b""
                while b"\r\n\r\n" not in head and (chunk := connection.recv(65536)):
                    head += chunk
                self.heads.append(head.split(b"\r\n\r\n")[0].decode())
                connection.sendall(f"HTTP/1.1 {self.status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())

    def __enter__(self) -> RefusingProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self._socket.close()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port of this machine nothing listens on: a connection to it is refused at once. It stays bound
    (never listening) for the test, so no other test's server can take it meanwhile."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def settings(base_url: str | None, **overrides: Any) -> LLMConfig:
    values = {"base_url": base_url, "model": "scripted", "cache": "off", "attempts": 2, "retry_wait": 0.01}
    return LLMConfig.model_validate({**values, **overrides})


def answered(server: ScriptedServer) -> None:
    document = load(SEED_002)
    server.script.append(tool_reply(quoted_answer(rules.extract(document), document)))


def extract_sync(base_url: str | None, **overrides: Any) -> int:
    """Parts of seed 002's note extracted through the sync client."""
    return len(
        LLMBackend(settings(base_url, **overrides)).extract(load(SEED_002)).note.model_dump(exclude_defaults=True)
    )


def extract_async(base_url: str | None, **overrides: Any) -> int:
    """The same through a bulk worker's async client (connections of extractor.llm.sockets when direct)."""
    job = Job("key", str(SEED_002), SEED_002.stem, SEED_002.read_bytes())
    outcome = asyncio.run(handle(job, Step(BackendName.llm, llm_config=settings(base_url, **overrides))))
    if isinstance(outcome, Stop):
        raise EndpointError(outcome.message)
    assert isinstance(outcome, Rendered) and outcome.record is not None, outcome
    return len(json.loads(outcome.record)["extraction"]["note"])


EXTRACT = pytest.mark.parametrize("extract", [extract_sync, extract_async], ids=["sync", "async"])


@EXTRACT
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_the_endpoint_is_reached_through_the_proxy_the_environment_names(
    server, looked_up, monkeypatch, extract, variable, closed_port
):
    endpoint = f"http://{HOST}:{closed_port}/v1"  # reached directly, it would refuse the connection
    monkeypatch.setenv(variable, server.base_url.removesuffix("/v1"))
    answered(server)
    assert extract(endpoint) > 3
    assert server.paths == [f"{endpoint}/chat/completions"]  # a proxy's request: the whole URL
    assert HOST not in looked_up  # the proxy looks the endpoint up, not this machine


@EXTRACT
@pytest.mark.parametrize("listed", [HOST, ".llm.test", "llm.test", "*.llm.test", f"{HOST}:PORT", "other.example, *"])
def test_a_host_no_proxy_lists_is_reached_directly(server, looked_up, monkeypatch, extract, listed, closed_port):
    port = server.base_url.split(":")[-1].removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")  # a proxy that would refuse it
    monkeypatch.setenv("NO_PROXY", listed.replace("PORT", port))
    answered(server)
    assert extract(f"http://{HOST}:{port}/v1") > 3
    assert server.paths == ["/v1/chat/completions"] and HOST in looked_up


@EXTRACT
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_this_machines_own_server_is_never_reached_through_a_proxy(server, monkeypatch, extract, host, closed_port):
    """A proxy elsewhere cannot reach this machine's loopback: a local vLLM or llama.cpp server is asked directly."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")
    answered(server)
    assert extract(server.base_url.replace("127.0.0.1", host)) > 3
    assert server.paths == ["/v1/chat/completions"]


@EXTRACT
def test_openai_base_url_chooses_the_proxy_as_it_chooses_the_endpoint(server, monkeypatch, extract, closed_port):
    """With no base URL set, openai goes to OPENAI_BASE_URL: the proxy is chosen for that endpoint, not OpenAI's."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{closed_port}")  # would be OpenAI's proxy
    answered(server)
    assert extract(None) > 3 and server.paths == ["/v1/chat/completions"]


@EXTRACT
def test_an_unreachable_proxy_is_named_without_its_password(looked_up, monkeypatch, extract, closed_port):
    monkeypatch.setenv("http_proxy", f"http://analyst:{SECRET}@127.0.0.1:{closed_port}")
    with pytest.raises(EndpointError) as failure:
        extract(f"http://{HOST}:8000/v1")
    assert str(failure.value).startswith(
        f"cannot reach http://{HOST}:8000/v1 (through the proxy http://127.0.0.1:{closed_port}, from http_proxy) after 2 attempts"
    )
    assert HOST not in looked_up


@EXTRACT
@pytest.mark.parametrize("scheme, variable", [("http", "http_proxy"), ("https", "HTTPS_PROXY")])
def test_a_proxy_asking_for_credentials_stops_with_what_to_do(looked_up, monkeypatch, extract, scheme, variable):
    """A 407, to a request the proxy forwards (http) or to the tunnel it was asked for (https, CONNECT): every
    document would fail alike, so the run stops, naming the proxy without the password it was given."""
    with RefusingProxy("407 Proxy Authentication Required") as proxy:
        monkeypatch.setenv(variable, proxy.url)
        with pytest.raises(EndpointError) as failure:
            extract(f"{scheme}://{HOST}/v1")
        shown = proxy.url.replace(f"analyst:{SECRET}@", "")
        assert str(failure.value) == (
            f"the proxy {shown} ({variable}) asks for credentials (HTTP 407): give them in {variable} "
            "as http://user:password@host:port"
        )
        credentials = base64.b64encode(f"analyst:{SECRET}".encode()).decode()
        assert len(proxy.heads) == 1 and f"\r\nProxy-Authorization: Basic {credentials}" in proxy.heads[0]
        assert proxy.heads[0].startswith("CONNECT" if scheme == "https" else "POST http://")
    assert HOST not in looked_up


@EXTRACT
def test_a_tunnel_the_proxy_will_not_open_stops_the_run_at_once(looked_up, monkeypatch, extract):
    with RefusingProxy("502 Bad Gateway") as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with pytest.raises(EndpointError) as failure:
            extract(f"https://{HOST}/v1")
        shown = proxy.url.replace(f"analyst:{SECRET}@", "")
        assert str(failure.value) == (
            f"the proxy {shown} (HTTPS_PROXY) would not connect to https://{HOST}/v1 (502 Bad Gateway)"
        )
        assert len(proxy.heads) == 1  # not retried: a refused tunnel is the proxy's rule, not a passing failure


@pytest.mark.parametrize(
    "value, why",
    [
        (f"http://analyst:{SECRET}/x@proxy.corp:3128", "does not hold a proxy URL httpx can read"),
        (f"http://analyst:{SECRET}#@proxy.corp:3128", "does not hold a proxy URL httpx can read"),
        (f"http://analyst:{SECRET}@proxy.corp:99999", "does not hold a proxy URL httpx can read"),
        (f"ftp://analyst:{SECRET}@proxy.corp:21", "cannot be used: not an http, https, socks5 or socks5h URL"),
        pytest.param(
            f"socks5://analyst:{SECRET}@proxy.corp:1080",
            "cannot be used: install socksio for a SOCKS proxy",
            marks=pytest.mark.skipif(importlib.util.find_spec("socksio") is not None, reason="socksio is installed"),
        ),
    ],
)
def test_a_proxy_httpx_cannot_use_is_a_clear_error_before_any_request(monkeypatch, value, why):
    monkeypatch.setenv("HTTPS_PROXY", value)
    with pytest.raises(EndpointError, match=why) as failure:
        LLMBackend(LLMConfig(model="gpt-4o-mini", api_key="sk-test")).clients  # noqa: B018  # (made on first use)
    assert "HTTPS_PROXY" in str(failure.value) and SECRET not in str(failure.value)
    assert failure.value.__cause__ is None and failure.value.__suppress_context__  # (its text may quote it)


def test_a_missing_key_is_said_first_and_an_offline_run_needs_no_proxy(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "ftp://proxy.corp:21")
    with pytest.raises(EndpointError, match="^no API key"):
        make_clients(LLMConfig(model="gpt-4o-mini"))
    assert make_clients(LLMConfig(model="gpt-4o-mini", cache="replay")).proxy is None  # nothing is sent


ENVIRONMENTS = [
    ({"HTTP_PROXY": "http://p:3128"}, "http://vllm.internal:8000/v1", ("http://p:3128", "HTTP_PROXY")),
    ({"HTTP_PROXY": "http://p:3128"}, "https://api.example.com/v1", None),  # an https endpoint: HTTPS_PROXY
    ({"HTTPS_PROXY": "p:3128"}, None, ("http://p:3128", "HTTPS_PROXY")),  # no scheme: HTTP; no URL: OpenAI's
    ({"https_proxy": "http://a:1", "HTTPS_PROXY": "http://b:2"}, None, ("http://a:1", "https_proxy")),
    ({"https_proxy": "", "HTTPS_PROXY": "http://b:2"}, None, None),  # an empty lower-case name turns it off
    ({"ALL_PROXY": "http://p:1", "HTTPS_PROXY": "http://q:2"}, None, ("http://q:2", "HTTPS_PROXY")),
    ({"ALL_PROXY": "socks5://p:1080"}, "http://vllm.internal/v1", ("socks5://p:1080", "ALL_PROXY")),
    ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "openai.com"}, None, None),
    ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.openai.com"}, None, None),
    ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "penai.com"}, None, ("http://p:1", "HTTPS_PROXY")),
    ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "https://api.openai.com"}, None, None),
    ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "http://api.openai.com"}, None, ("http://p:1", "HTTPS_PROXY")),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "http://10.1.2.3:8000/v1", None),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "http://11.1.2.3:8000/v1", ("http://p:1", "HTTP_PROXY")),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "fd00::5"}, "http://[fd00::5]:8000/v1", None),
    ({"HTTP_PROXY": "http://p:1", "no_proxy": "vllm.internal, gpu.internal"}, "http://gpu.internal/v1", None),
    ({"HTTP_PROXY": "http://p:1"}, "http://10.0.0.5:8000/v1", ("http://p:1", "HTTP_PROXY")),
    ({}, "http://vllm.internal:8000/v1", None),
]


@pytest.mark.parametrize("variables, base_url, expected", ENVIRONMENTS)
def test_an_endpoint_takes_the_proxy_httpx_own_client_would(monkeypatch, variables, base_url, expected):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    endpoint = endpoint_url(base_url)
    chosen = environment_proxy(endpoint)
    assert (chosen.url, chosen.source) == expected if expected else chosen is None
    if "socks" in str(variables) and importlib.util.find_spec("socksio") is None:
        return  # (httpx's client cannot be made to compare with)
    client = httpx2.Client(trust_env=True)  # httpx's own choice, with the same environment
    assert (client._transport_for_url(httpx2.URL(endpoint)) is not client._transport) == (expected is not None)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.2/v1",
        "http://[::1]:8000/v1",
        "http://localhost:11434/v1",
        "http://gpu.localhost:8000/v1",
        "http://[::ffff:127.0.0.1]:8000/v1",
    ],
)
def test_this_machines_addresses_take_no_proxy(monkeypatch, base_url):
    monkeypatch.setenv("HTTP_PROXY", "http://p:1")
    monkeypatch.setenv("ALL_PROXY", "http://p:1")
    assert environment_proxy(base_url) is None


def test_a_proxy_is_shown_without_its_user_and_password(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", f"http://analyst:{SECRET}@[fd00::1]:3128")
    assert environment_proxy("https://api.openai.com/v1") == Proxy(
        f"http://analyst:{SECRET}@[fd00::1]:3128", "http://[fd00::1]:3128", "HTTPS_PROXY"
    )
