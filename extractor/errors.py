"""The one base class of every error the library raises on purpose.

Why: a caller (a script, a notebook, the CLI) catches `ExtractorError` once for anything the
library refuses (a file it cannot load, a queue operation it will not do, an LLM endpoint that
fails) and still lets genuine bugs (a TypeError, a KeyError) surface. The specific classes stay,
with their other bases (an `EditError` is still a `ValueError`), so existing `except` clauses keep
their meaning.
"""

from __future__ import annotations


class ExtractorError(Exception):
    """Something the library refuses or cannot do; the message says what and, where it can, what to do."""


class SettingsError(ExtractorError, ValueError):
    """Arguments that cannot work together (an LLM backend without LLM settings, an unknown backend)."""
