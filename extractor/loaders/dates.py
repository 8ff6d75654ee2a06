"""Dates as filing headers print them, for the HTML and the text loaders alike (the text loader must not
import the HTML one: lxml is for HTML inputs only)."""

from __future__ import annotations

import re
from datetime import date, datetime


def parse_header_date(text: str) -> date | None:
    """ "Feb. 29, 2020" / "Jul. 31, 2018" / "December 31, 2019" as R pages print them."""
    cleaned = re.sub(r"\bSept\b", "Sep", text.replace(".", "").replace("\u00a0", " ").strip())
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%b %d %Y", "%B %d %Y"):
        try:
            return datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
    return None
