"""One TLS context for every client of the process: building one reads the system's CA certificates.

httpx builds a context for each transport it is given no context for, whether or not the endpoint speaks TLS:
about 25 ms of CPU each, two per set of LLM clients (the sync and the async transport). A bulk worker makes its
clients once, but `extractor.extract(..., backend="llm")` makes them at every call. A context is safe to share
between connections and threads; it is the one httpx would build (`httpx2.create_ssl_context()`), built again
when the environment's `SSL_CERT_FILE` or `SSL_CERT_DIR`, which choose its certificates, change.
"""

from __future__ import annotations

import os
import ssl
from functools import lru_cache

import httpx2


def tls_context() -> ssl.SSLContext:
    """httpx's default context for the environment as it is now (verifying, the system's or the named CAs)."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@lru_cache(maxsize=4)
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()
