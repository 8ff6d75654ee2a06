"""httpcore's connections to a plain-HTTP endpoint on asyncio's own socket calls: opened in one turn of the loop.

httpcore opens connections through anyio, whose connect (happy eyeballs: a task group, a task per address,
an event, a cancel scope) takes the event loop about six turns. In a bulk worker each turn waits behind the
documents computing beside the loop: on 2 loaded cores a connect took about 30 ms against a 300 ms answer,
paid on every request by an endpoint that closes its connection after each answer (an HTTP/1.0 server, some
proxies and gateways). Here a connect is `loop.sock_connect`, a read `loop.sock_recv` and a write
`loop.sock_sendall`: one turn each, or none when the socket is ready (a name, unlike an address, is first
looked up on the loop's thread pool). Their failures are anyio's: a timeout only when the time ran out (a
dead peer's ETIMEDOUT is a read error), a refused or reset connection an error httpx's retries know.

Used for http:// endpoints only (TLS stays with anyio), and for an address, or a name whose addresses are
all loopback or just one; a name with several other addresses keeps anyio's happy eyeballs, so that an
unreachable IPv6 address cannot hold a connection until its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpcore2
import httpx2
from httpcore2._utils import is_socket_readable

from extractor.llm.tls import tls_context

T = TypeVar("T")


def async_transport(base_url: str | None, proxy: str | None = None) -> httpx2.AsyncHTTPTransport:
    """httpx's transport for `base_url` (through `proxy`, if any); for a plain-HTTP endpoint reached directly,
    its connections made here."""
    transport = httpx2.AsyncHTTPTransport(verify=tls_context(), proxy=proxy)
    if proxy is None and base_url and urlparse(base_url).scheme == "http":
        pool = getattr(transport, "_pool", None)
        if type(pool) is httpcore2.AsyncConnectionPool and hasattr(pool, "_network_backend"):
            pool._network_backend = SocketBackend()  # (httpx's transport takes no backend of its own)
    return transport


class SocketStream(httpcore2.AsyncNetworkStream):
    """A connected non-blocking socket, read and written by the running loop."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._busy = 0  # reads and writes waiting on the socket
        self._closing = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        loop = asyncio.get_running_loop()
        return await self._wait(
            loop.sock_recv(self._sock, max_bytes), timeout, httpcore2.ReadTimeout, httpcore2.ReadError
        )

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            loop = asyncio.get_running_loop()
            await self._wait(
                loop.sock_sendall(self._sock, buffer), timeout, httpcore2.WriteTimeout, httpcore2.WriteError
            )

    async def _wait(
        self, call: Awaitable[T], timeout: float | None, late: type[Exception], failed: type[Exception]
    ) -> T:
        self._busy += 1
        try:
            scope = asyncio.timeout(timeout)
            async with scope:
                return await call
        except OSError as error:  # (TimeoutError among them: the kernel's ETIMEDOUT is a failure, not our time)
            raise (late if scope.expired() else failed)(error) from error
        finally:
            self._busy -= 1
            if self._closing and not self._busy:
                self._sock.close()

    async def aclose(self) -> None:
        """Closed now, or, while a read or write waits on it, shut down: that wakes it (the loop still watches
        its descriptor, which must not be reused before), and the last to finish closes it."""
        if not self._busy:
            self._sock.close()
            return
        self._closing = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        await self.aclose()
        raise httpcore2.ConnectError("TLS is opened by anyio's backend: this one serves http:// endpoints only")

    def get_extra_info(self, info: str) -> Any:
        if info == "socket":
            return self._sock
        if info == "is_readable":  # asked of an idle kept connection: readable means the server closed it
            return is_socket_readable(self._sock)  # (httpcore's own check, as its anyio stream makes it)
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        return None


class SocketBackend(httpcore2.AsyncNetworkBackend):
    """TCP connections opened with `loop.sock_connect`; a name with several addresses other than loopback
    is handed to anyio (see the module's docstring)."""

    def __init__(self) -> None:
        self._anyio = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        options = list(socket_options or ())
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                addresses = await _addresses(host, port)
        except TimeoutError as error:
            raise httpcore2.ConnectTimeout(error) from error
        except OSError as error:  # (a name that does not resolve)
            raise httpcore2.ConnectError(error) from error
        if len(addresses) > 1 and not all(ipaddress.ip_address(a[1][0]).is_loopback for a in addresses):
            remaining = None if deadline is None else max(0.0, deadline - loop.time())
            return await self._anyio.connect_tcp(host, port, remaining, local_address, options)
        failure: OSError | None = None
        try:
            async with asyncio.timeout_at(deadline):
                for family, address in addresses:  # (loopback: a refused address fails at once)
                    try:
                        return SocketStream(await _connect(family, address, local_address, options))
                    except OSError as error:
                        failure = error
        except TimeoutError as error:
            raise httpcore2.ConnectTimeout(error) from error
        raise httpcore2.ConnectError(failure or OSError(f"{host} has no address")) from failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return await self._anyio.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _addresses(host: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
    """(family, socket address) of each of host's addresses: an address literal as it is, a name resolved."""
    try:
        literal = ipaddress.ip_address(host)  # (httpcore passes an IPv6 address without brackets)
    except ValueError:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return [(family, address) for family, _, _, _, address in found]
    family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
    return [(family, (str(literal), port))]


async def _connect(
    family: int, address: tuple[Any, ...], local_address: str | None, options: list[Any]
) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as asyncio's own connections
        for option in options:
            sock.setsockopt(*option)
        if local_address:
            sock.bind((local_address, 0))
        await asyncio.get_running_loop().sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return sock
