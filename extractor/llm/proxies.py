"""The endpoint the openai client goes to, and the proxy the environment names for it, as httpx's client reads it.

httpx reads HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (and, on macOS and Windows, the system's proxy
settings) only when it builds a client's transport itself; the LLM clients run on transports built here
(retries, rate limits, cassettes), so the choice is made here, with httpx's own reading of the environment and
its own matching of NO_PROXY, and a team behind a corporate proxy reaches its endpoint as the openai library's
default client would. One addition: a server on this machine is always asked directly.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

import httpx2
from httpx2._utils import URLPattern, get_environment_proxies  # what httpx2.Client(trust_env=True) mounts

from extractor.llm.errors import EndpointError

OPENAI_URL = "https://api.openai.com/v1"  # where the openai client goes when no base URL is set


@dataclass(frozen=True)
class Proxy:
    """A proxy's URL, the same without the user and password it may carry (what a message may print), and
    where it was named (an environment variable, or the system's settings)."""

    url: str
    shown: str
    source: str


def endpoint_url(base_url: str | None) -> str:
    """The URL the openai client sends to: `base_url`, else OPENAI_BASE_URL, else OpenAI's API (as openai reads it)."""
    return base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL


def environment_proxy(endpoint: str) -> Proxy | None:
    """The proxy httpx's own client would take to `endpoint` (see the module's docstring), or None: none named,
    NO_PROXY lists the host, or the host is this machine's (localhost, 127.0.0.0/8, ::1), which a proxy
    elsewhere cannot reach. Raises EndpointError, naming the variable but never its value, when the proxy's
    URL or a NO_PROXY entry cannot be read."""
    url = httpx2.URL(endpoint)
    if _loopback(url.host):
        return None
    try:
        mounts = sorted(((URLPattern(key), value) for key, value in get_environment_proxies().items()), key=_first)
    except (ValueError, httpx2.InvalidURL):
        raise EndpointError(
            "NO_PROXY holds an entry httpx cannot read (a host, a domain, an address or a network)"
        ) from None
    for pattern, value in mounts:
        if pattern.matches(url):
            return None if value is None else _proxy(value, _source(pattern.scheme or "all"))
    return None


def _first(mount: tuple[URLPattern, str | None]) -> URLPattern:
    return mount[0]  # (URLPattern orders its patterns most specific first, as httpx's client tries them)


def _proxy(value: str, source: str) -> Proxy:
    try:
        parsed = httpx2.URL(value)
        if parsed.port is not None and not 0 < parsed.port < 65536:
            raise ValueError("no such port")
    except (ValueError, httpx2.InvalidURL):
        raise EndpointError(
            f"{source} does not hold a proxy URL httpx can read (in its user or password, percent-encode any "
            "'/', '#', '?' or '@')"
        ) from None  # (the error's text may quote the password)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = f":{parsed.port}" if parsed.port is not None else ""
    return Proxy(value, f"{parsed.scheme}://{host}{port}", source)


def _source(scheme: str) -> str:
    """The variable httpx read the scheme's proxy from (urllib's order: the lower-case name first)."""
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
        if os.environ.get(name):
            return name
    return "the system's proxy settings"


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)
