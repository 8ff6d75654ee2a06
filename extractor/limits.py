"""The largest input any command reads (larger files become a failure saying so): its own module, importing
nothing, so `extractor run` shows it in its options before it loads the readers."""

from __future__ import annotations

MAX_BYTES = 64 * 1024 * 1024
