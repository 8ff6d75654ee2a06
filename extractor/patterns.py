"""Regex helpers shared by the rules backend and the validator."""

from __future__ import annotations

import re
from collections.abc import Iterable


def any_of(patterns: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One case-blind pattern matching wherever any of `patterns` does: a single scan that rules most texts out
    before each pattern is tried in turn. None when the patterns cannot be joined (a lexicon entry with its own
    named groups or inline flags); callers then try each one."""
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), re.I)
    except re.error:
        return None
