"""Dates as filing headers print them, for the HTML and the text loaders alike (the text loader must not
import the HTML one: lxml is for HTML inputs only)."""

from __future__ import annotations

from datetime import date

from extractor.periods import find_dates


def parse_header_date(text: str) -> date | None:
    """ "Feb. 29, 2020" / "Jul. 31, 2018" / "December 31, 2019" as R pages print them: the cell is one date, read
    by periods.find_dates (English month names, whatever the process locale; not strptime, whose first call
    costs a single-file extraction some 4 ms building its locale's patterns). None for anything else."""
    cell = text.replace(".", "").replace("\u00a0", " ").strip()
    dates = find_dates(cell)
    return dates[0][0] if len(dates) == 1 and dates[0][1:] == (0, len(cell)) else None
