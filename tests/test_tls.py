"""extractor.llm.tls: every set of LLM clients in a process shares one TLS context, httpx's own, built again only
when SSL_CERT_FILE or SSL_CERT_DIR change (they choose its certificates)."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx2
import pytest

from extractor.llm import tls
from extractor.llm.client import make_clients
from extractor.llm.config import LLMConfig

SYSTEM_CAS = Path("/etc/ssl/certs/ca-certificates.crt")


@pytest.fixture
def built(monkeypatch) -> list[ssl.SSLContext]:
    """The contexts built from now on, none kept from earlier tests."""
    contexts: list[ssl.SSLContext] = []
    create = httpx2.create_ssl_context

    def counted() -> ssl.SSLContext:
        contexts.append(create())
        return contexts[-1]

    monkeypatch.setattr(tls.httpx2, "create_ssl_context", counted)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    tls._context.cache_clear()
    yield contexts
    tls._context.cache_clear()


def contexts_of(config: LLMConfig) -> list[ssl.SSLContext]:
    """The TLS contexts of the sync and the async client's connection pools."""
    clients = make_clients(config)
    return [client.client._client._transport.inner._pool._ssl_context for client in (clients.sync, clients.run_async)]


def test_every_client_of_the_process_shares_one_context(built):
    plain = LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="x")
    secure = LLMConfig(model="m", base_url="https://llm.example.com/v1", api_key="x")
    used = contexts_of(plain) + contexts_of(plain) + contexts_of(secure)
    assert len(built) == 1 and all(context is built[0] for context in used)
    assert built[0].verify_mode == ssl.CERT_REQUIRED and built[0].check_hostname  # httpx's default: verifying


@pytest.mark.skipif(not SYSTEM_CAS.is_file(), reason="no system CA bundle to name")
def test_a_named_ca_bundle_builds_its_own_context(built, monkeypatch):
    first = tls.tls_context()
    monkeypatch.setenv("SSL_CERT_FILE", str(SYSTEM_CAS))
    named = tls.tls_context()
    assert named is not first and tls.tls_context() is named and len(built) == 2
    assert named.cert_store_stats()["x509_ca"] > 0  # the bundle's certificates, loaded
    monkeypatch.delenv("SSL_CERT_FILE")
    assert tls.tls_context() is first
