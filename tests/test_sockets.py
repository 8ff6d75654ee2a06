"""The async client's connections to a plain-HTTP endpoint (extractor.llm.sockets), against the test server:
opened on asyncio's socket calls, kept when the endpoint keeps them, and failing as anyio's did."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpcore2
import pytest
from fixture_paths import FIXTURES
from llm_server import KeepAliveServer, ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.llm import LLMBackend
from extractor.llm import sockets
from extractor.llm.client import make_clients
from extractor.llm.config import LLMConfig
from extractor.llm.errors import EndpointError, LLMError
from extractor.llm.sockets import SocketBackend, SocketStream, async_transport
from extractor.loaders import load

SEED = FIXTURES / "002_59f0e0194afd947c.txt"


@pytest.fixture
def connects(monkeypatch) -> list[tuple[Any, ...]]:
    """Every address a connection was opened to by extractor.llm.sockets."""
    opened: list[tuple[Any, ...]] = []
    connect = sockets._connect

    async def counted(family: int, address: tuple[Any, ...], *args: Any) -> socket.socket:
        opened.append(address)
        return await connect(family, address, *args)

    monkeypatch.setattr(sockets, "_connect", counted)
    return opened


def settings(base_url: str, **overrides: Any) -> LLMConfig:
    values = {"base_url": base_url, "model": "scripted", "cache": "off", "retry_wait": 0.01, **overrides}
    return LLMConfig.model_validate(values)


def answering(server: ScriptedServer, delay: float = 0.0) -> ScriptedServer:
    """The server answering every request with the seed's answer, after `delay` seconds."""
    document = load(SEED)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    reply.delay = delay
    server.responder = lambda body: reply
    return server


def extract_concurrently(config: LLMConfig, count: int) -> list[Any]:
    backend = LLMBackend(config, clients=make_clients(config, requests=2))

    async def run() -> list[Any]:
        return await asyncio.gather(*(backend.aextract(load(SEED), validated=True) for _ in range(count)))

    return asyncio.run(run())


def test_a_plain_http_endpoint_is_served_over_asyncio_sockets_with_the_sync_clients_answer(connects):
    with answering(ScriptedServer()) as server:  # HTTP/1.0: the server closes each connection after its answer
        extractions = extract_concurrently(settings(server.base_url), 3)
        alone = LLMBackend(settings(server.base_url)).extract(load(SEED), validated=True)  # httpx's sync client
    assert len(server.requests) == 4 and len(connects) == 3  # one connection a request, each opened here
    assert {address[0] for address in connects} == {"127.0.0.1"}
    for extraction in extractions:
        assert extraction.note == alone.note and extraction.validation is not None
        assert extraction.validation.errors == alone.validation.errors


def test_a_kept_connection_is_reused(connects):
    with answering(KeepAliveServer()) as server:
        backend = LLMBackend(settings(server.base_url))

        async def one_after_another() -> None:
            for _ in range(3):
                await backend.aextract(load(SEED))

        asyncio.run(one_after_another())
    assert len(server.requests) == 3 and len(connects) == 1


def test_a_name_resolving_to_loopback_addresses_is_connected_address_by_address(connects, monkeypatch):
    """A refused loopback address fails at once: the next is tried (no happy eyeballs needed for loopback)."""
    with answering(ScriptedServer()) as server:  # listening on 127.0.0.1 only: 127.0.0.2 (loopback too) refuses
        port = int(server.base_url.split(":")[2].split("/")[0])

        async def resolved(host: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
            assert host == "llm.local"
            return [(socket.AF_INET, ("127.0.0.2", port)), (socket.AF_INET, ("127.0.0.1", port))]

        monkeypatch.setattr(sockets, "_addresses", resolved)
        by_name = extract_concurrently(settings(f"http://llm.local:{port}/v1"), 1)[0]
    assert connects == [("127.0.0.2", port), ("127.0.0.1", port)]
    assert by_name.note.model_dump(exclude_defaults=True) and len(server.requests) == 1


def test_a_name_with_several_addresses_keeps_anyios_happy_eyeballs(monkeypatch):
    handed: list[tuple[str, int]] = []

    async def resolved(host: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
        return [(socket.AF_INET6, ("2001:db8::1", port, 0, 0)), (socket.AF_INET, ("192.0.2.1", port))]

    async def anyio_connect(self: Any, host: str, port: int, *args: Any) -> Any:
        handed.append((host, port))
        return "anyio's stream"

    monkeypatch.setattr(sockets, "_addresses", resolved)
    monkeypatch.setattr(httpcore2.AnyIOBackend, "connect_tcp", anyio_connect)
    stream = asyncio.run(SocketBackend().connect_tcp("llm.example", 8000, timeout=5))
    assert stream == "anyio's stream" and handed == [("llm.example", 8000)]


def test_nothing_listening_or_a_reset_is_an_endpoint_error_retried_and_no_answer_in_time_a_document_failure(
    connects,
):
    with socket.socket() as free:  # a port nothing listens on: bound, never listening
        free.bind(("127.0.0.1", 0))
        closed_url = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
        refused = rf"cannot reach http://127.0.0.1:.* after 2 attempts \(\[Errno {errno.ECONNREFUSED}\]"
        before = _open_sockets()
        with pytest.raises(EndpointError, match=refused):
            asyncio.run(LLMBackend(settings(closed_url, attempts=2)).aextract(load(SEED)))
        after = _open_sockets()
        assert before is None or after is None or not after - before  # each refused socket closed
    assert len(connects) == 2  # refused: a transient error, retried once
    with resetting() as reset_url, pytest.raises(EndpointError, match="cannot reach .* after 3 attempts"):
        asyncio.run(LLMBackend(settings(reset_url, attempts=3)).aextract(load(SEED)))
    assert len(connects) == 2 + 3  # reset before an answer: a read error, retried
    slow = answering(ScriptedServer(), delay=3.0)  # the client gives up after 0.2 s, far before
    with slow, pytest.raises(LLMError, match=r"no answer from .* within 0.2 s, 1 attempts"):
        asyncio.run(LLMBackend(settings(slow.base_url, timeout=0.2, attempts=1)).aextract(load(SEED)))


def _open_sockets() -> set[str] | None:
    """This process's open sockets, by the kernel's name of each ('socket:[inode]': a new socket never takes an
    old one's), None where /proc does not list them. A set, not a count: an earlier test's socket that the
    collector happens to close meanwhile must not read as one of these closed, nor hide one of these left open."""
    listing = Path("/proc/self/fd")
    if not listing.is_dir():
        return None
    found = set()
    for entry in listing.iterdir():
        with contextlib.suppress(OSError):  # closed between the listing and the link read (the listing's own)
            target = os.readlink(entry)
            if target.startswith("socket:"):
                found.add(target)
    return found


@contextlib.contextmanager
def resetting() -> Iterator[str]:
    """A server that accepts each connection, reads the request and resets it (SO_LINGER 0): no answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        listener.close()


def test_a_dead_peers_etimedout_is_a_read_error_and_only_our_own_deadline_a_timeout():
    """On Python 3.11 the kernel's ETIMEDOUT is a TimeoutError: it must not read as the answer being late
    (which the client explains as "no answer within N s", a document's failure, not an unreachable endpoint)."""
    left, right = socket.socketpair()
    left.setblocking(False)

    async def dead_peer(sock: socket.socket, size: int) -> bytes:
        raise TimeoutError(errno.ETIMEDOUT, "Connection timed out")

    async def read(stream: SocketStream, timeout: float | None, peer_dead: bool = False) -> Exception:
        if peer_dead:
            asyncio.get_running_loop().sock_recv = dead_peer  # type: ignore[method-assign]
        try:
            await stream.read(1024, timeout)
        except Exception as error:
            return error
        raise AssertionError("read returned")

    with right:
        stream = SocketStream(left)
        assert isinstance(asyncio.run(read(stream, 0.05)), httpcore2.ReadTimeout)  # nothing sent: our deadline
        failure = asyncio.run(read(stream, 60, peer_dead=True))
        assert type(failure) is httpcore2.ReadError and "timed out" in str(failure)
        asyncio.run(stream.aclose())


def test_closing_a_stream_wakes_its_waiting_read_and_frees_its_descriptor_after():
    """A stream closed while a read waits on it (a client closed with requests in flight) ends that read at
    once, and the loop can watch a new socket given the same descriptor number."""
    left, right = socket.socketpair()
    left.setblocking(False)

    async def scenario() -> tuple[bytes, bytes]:
        stream = SocketStream(left)
        waiting = asyncio.create_task(stream.read(1024))
        await asyncio.sleep(0)  # the read is now waiting on the socket
        await stream.aclose()
        ended = await asyncio.wait_for(waiting, 30)  # at once: the shutdown wakes it (30 s: a hang's bound)
        assert left.fileno() == -1  # closed by the read, once it ended
        again, peer = socket.socketpair()  # likely the same descriptor number as the closed one
        with peer:
            again.setblocking(False)
            reused = SocketStream(again)
            peer.sendall(b"ok")
            got = await asyncio.wait_for(reused.read(1024), 30)
            await reused.aclose()
        return ended, got

    with right:
        assert asyncio.run(scenario()) == (b"", b"ok")


def test_only_plain_http_endpoints_are_connected_here():
    plain = async_transport("http://127.0.0.1:8000/v1")._pool
    assert isinstance(plain._network_backend, SocketBackend)  # (fails if httpx or httpcore rename their parts)
    for base_url in ("https://api.openai.com/v1", None):
        assert not isinstance(async_transport(base_url)._pool._network_backend, SocketBackend)
    proxied = async_transport("http://vllm.internal:8000/v1", "http://proxy.corp:3128")._pool  # (the proxy's pool)
    assert not isinstance(proxied._network_backend, SocketBackend)


def test_an_idle_connection_is_readable_once_the_server_has_closed_it_or_sent_something():
    left, right = socket.socketpair()
    readable = SocketStream(left).get_extra_info
    with left, right:
        assert not readable("is_readable")
        right.sendall(b"x")
        assert readable("is_readable")
        left.recv(1)
        right.close()
        assert readable("is_readable")  # the end of the stream: the pool drops the connection instead of reusing it
    assert readable("is_readable")  # closed here too
