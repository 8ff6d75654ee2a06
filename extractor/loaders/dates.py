"""Dates as filing headers print them, for the HTML and the text loaders alike (the text loader must not
import the HTML one: lxml is for HTML inputs only)."""

from __future__ import annotations

import re
from datetime import date

from extractor.patterns import folded
from extractor.periods import MONTH_NAMES, MONTHS

# The whole header cell: "Feb. 29, 2020", "Sept 30 2019", "December 31, 2019" (dots dropped first). Read with
# the English month table, not strptime: its month names follow the process locale, and its first call
# costs a single-file extraction some 4 ms building its locale's patterns.
_HEADER_DATE = re.compile(rf"(?P<month>{MONTH_NAMES})\s+(?P<day>\d{{1,2}}),?\s+(?P<year>\d{{4}})", re.I)


def parse_header_date(text: str) -> date | None:
    """ "Feb. 29, 2020" / "Jul. 31, 2018" / "December 31, 2019" as R pages print them; None for anything else."""
    match = _HEADER_DATE.fullmatch(text.replace(".", "").replace("\u00a0", " ").strip())
    if match is None:
        return None
    try:
        return date(int(match["year"]), MONTHS[folded(match["month"])], int(match["day"]))
    except ValueError:  # February 30
        return None
