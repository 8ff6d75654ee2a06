"""`extractor review`: the correction queue's web app (the server starts only for this command)."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import socket
from typing import NoReturn

import typer
from rich.markup import escape

from extractor.cli.common import (
    QueueConfigOption,
    QueueUrlOption,
    RootOption,
    err,
    open_queue,
    queue_settings,
    unusable_queue_file,
)
from extractor.queue.reviewers import reviewer_names


@unusable_queue_file()
def review_command(
    host: str = typer.Option(
        "127.0.0.1",
        help="Address to listen on. Anything but loopback exposes the queue to the network over plain HTTP: put it behind TLS.",
    ),
    port: int = typer.Option(
        8000, min=0, max=65535, help="Port to listen on; 0 takes any free one (the address to open is printed)."
    ),
    allowed_host: list[str] = typer.Option(
        [],
        "--allowed-host",
        metavar="NAME",
        help="A host name reviewers' browsers use to reach the server, e.g. review.example.org (repeatable; default: hosts in extractor.toml's queue table). Requests naming any other Host get 400, which also defeats DNS rebinding. localhost and 127.0.0.1 are always answered, and so is --host when it is one address; needed with --host 0.0.0.0 or ::.",
    ),
    max_save_mb: float | None = typer.Option(
        None,
        min=0.001,
        max=1024,
        help="Refuse (413) an edit form larger than this many MiB before reading it (default: max_save_mb in extractor.toml's queue table, else 4). A note of 200 values sends about 65 KB; other forms are capped at 64 KiB.",
    ),
    save_seconds: float | None = typer.Option(
        None,
        min=0.1,
        max=3600,
        help="Refuse (503, nothing saved) a save whose re-validation takes longer than this (default: save_seconds in extractor.toml's queue table, else 20). A long note takes tens of milliseconds; an overrunning check keeps one of two validation threads until it ends, so the server keeps answering.",
    ),
    root: RootOption = None,
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Open the review web app: the queue overview, and each item's source with its values to correct.

    Reviewers sign in with the token 'extractor queue add-reviewer NAME' prints. Each item shows
    the filing text with every extracted value highlighted, the validator's findings beside the
    values they involve, and forms to correct values, units, periods and award types; saving
    re-validates at once. Press ? on an item page for the keyboard shortcuts.

    Examples:
      extractor queue add-reviewer alice
      extractor review                       # then open http://127.0.0.1:8000
      extractor review --root /data/filings --queue sqlite:////data/review/queue.sqlite
      extractor review --host 0.0.0.0 --allowed-host review.example.org   # behind a TLS proxy
    """
    import uvicorn  # the server only: the other commands never need it

    from extractor.review.app import create_app

    settings = queue_settings(
        queue, config, root, hosts=allowed_host or None, max_save_mb=max_save_mb, save_seconds=save_seconds
    )
    hosts = _served_hosts(host, settings.hosts)
    store = open_queue(settings, must_exist=False)
    if not _loopback(host):
        err.print(
            f"[yellow]warning[/yellow]: listening on {escape(host)}: anyone who can reach it sees the sign-in page; "
            "tokens travel unencrypted unless a TLS proxy is in front"
        )
    if not reviewer_names(store):
        err.print(
            "[yellow]note[/yellow]: no reviewers yet: 'extractor queue add-reviewer NAME' creates one and prints their token"
        )
    sockets = _listening_sockets(host, port)
    err.print(f"review queue {escape(str(store.path))}, documents from {escape(str(settings.root.resolve()))}")
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else _url_host(host)
    err.print(f"open http://{escape(shown)}:{sockets[0].getsockname()[1]}/ (Ctrl-C stops)")
    app = create_app(store, settings.root, hosts, round(settings.max_save_mb * 2**20), settings.save_seconds)
    server = uvicorn.Server(uvicorn.Config(app, log_level=os.environ.get("EXTRACTOR_LOG_LEVEL", "warning")))
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises it again once shut down: Ctrl-C stops, exit 0
        server.run(sockets=sockets)


def _listening_sockets(host: str, port: int) -> list[socket.socket]:
    """The server's sockets, listening before the address is printed, one per address the host resolves to (as
    asyncio's create_server binds them): the printed port is the one served (--port 0: the one the system
    chose), and a port in use or a host that is not this machine's is said plainly, exit 2."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        _refuse(f"--host {host} does not resolve ({error.strerror}): give this machine's name or an address of it")
    sockets: list[socket.socket] = []
    try:
        for family, kind, protocol, _, address in dict.fromkeys(found):
            listening = socket.socket(family, kind, protocol)
            sockets.append(listening)
            if os.name == "posix":  # a restart takes the port at once; elsewhere it would share a port in use
                listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # IPv4 has its own socket, as asyncio binds them
                listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            chosen = port or (sockets[0].getsockname()[1] if len(sockets) > 1 else 0)  # --port 0: one port for all
            listening.bind((address[0], chosen, *address[2:]))
            listening.listen(2048)  # listening now: the printed address takes connections at once
    except OSError as error:
        for opened in sockets:
            opened.close()
        if error.errno in (errno.EADDRINUSE, errno.EACCES):
            reason = "is in use (another server?)" if error.errno == errno.EADDRINUSE else "needs privileges"
            _refuse(f"{host} port {port} {reason}: choose another with --port N, or --port 0 for any free one")
        _refuse(
            f"cannot listen on {host} port {port} ({error.strerror}): --host must be this machine's name or an address of it"
        )
    return sockets


def _refuse(message: str) -> NoReturn:
    err.print(f"[red]error[/red]: {escape(message)}")
    raise typer.Exit(code=2)


def _served_hosts(host: str, named: list[str]) -> list[str]:
    """The Host names to answer besides loopback: the configured ones, and the listening address
    when it is one address; exit 2 when listening on every address without names to answer."""
    if host not in ("0.0.0.0", "::", ""):
        return [*named, _url_host(host)]
    if not named:
        _refuse(
            f"listening on {host} answers any host name, which lets other sites' pages reach the server (DNS "
            "rebinding): name the ones reviewers use with --allowed-host review.example.org (repeatable), or hosts in "
            "extractor.toml's queue table"
        )
    return named


def _url_host(host: str) -> str:
    """The host as a URL and a Host header write it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
