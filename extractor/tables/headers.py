"""Column headers as real filings print them: what a column measures, for which period, award and scale.

A header is read from all its levels at once ("Restricted Stock Units | Shares", "Three Months Ended
June 30, | 2025", "Fiscal Years Ended January 31, | 2025"), so a year over several measures and a measure
over several years both come out as one typed column each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from extractor.numbers import scale_exponent
from extractor.patterns import folded
from extractor.periods import MONTH_NAMES, MONTHS, calendar_day, find_dates
from extractor.regex_cache import regex

# What a column measures, checked in order on the header's levels, lowest level first.
MEASURES: list[tuple[str, re.Pattern[str]]] = [
    ("intrinsic", regex(r"intrinsic value|^(?:aggregate )?value$", re.I)),
    ("term", regex(r"(?<!long-)(?<!long )\b(?:contractual )?(?:term|life)\b|^\(?(?:in )?years\)?$", re.I)),
    ("fair_value", regex(r"fair value", re.I)),
    ("cost", regex(r"^(?:aggregate|total) (?:purchase )?(?:price|cost)\b", re.I)),  # 'Aggregate Purchase Price'
    (
        "price",
        regex(r"(?:exercise|grant|purchase|strike) price|price per share|^(?:weighted[- ]average )?price$", re.I),
    ),
    ("cost", regex(r"unrecognized|compensation cost|costs?$", re.I)),
    ("min", regex(r"^minimum\b|^low\b", re.I)),
    ("max", regex(r"^maximum\b|^high\b", re.I)),
    (
        "count",
        regex(r"\b(?:number|shares|units|awards|options|sars|rsus|psus|stock units|share units|amount)\b", re.I),
    ),
]
_MONTHS_PHRASE = regex(r"\b(three|six|nine|twelve|3|6|9|12)[- ]months?\b|\bquarter\b", re.I)
_YEAR_PHRASE = regex(r"\b(?:fiscal )?years?\b|\bannual\b", re.I)
_YEAR = regex(r"(?<![\d,.$])(?:fiscal\s+|fy\s*)?((?:19|20)\d\d)(?![\d,])", re.I)
_MONTH_DAY = regex(r"\b(" + MONTH_NAMES + r")\.?\s+(\d{1,2})\b", re.I)
_MONTH_WORDS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_NUMERIC_DATE = regex(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)?\d\d)\b")


@dataclass
class HeaderPeriod:
    """The period a header names: a full date, or a year with a month-day from elsewhere, and its length."""

    end: date | None = None
    year: int | None = None
    month_day: tuple[int, int] | None = None
    months: int | None = None


def header_dates(text: str) -> list[date]:
    """Full dates in any printed form: 'Jan 31, 2025', 'January 31, 2025', '12/31/2024'."""
    found = [d for d, _, _ in find_dates(text)]
    for match in _NUMERIC_DATE.finditer(text):
        month, day, year = int(match[1]), int(match[2]), int(match[3])
        year += 2000 if year < 100 else 0
        if (day_printed := calendar_day(year, month, day)) is not None:
            found.append(day_printed)
    return found


def header_period(parts: list[str]) -> HeaderPeriod:
    """The period named across a column's header levels."""
    period = HeaderPeriod()
    for part in parts:
        end, month_day, year, months, yearly = _part_period(part)
        if end is not None:
            period.end = end
        else:
            period.month_day = month_day or period.month_day
            period.year = period.year if year is None else year
        if months is not None:
            period.months = months
        elif period.months is None and yearly:
            period.months = 12
    if period.end is not None:
        period.year = period.end.year
    return period


_ENDED = regex(r"ended|ending", re.I)


@lru_cache(maxsize=4096)  # a header level spans several columns: each is read once
def _part_period(part: str) -> tuple[date | None, tuple[int, int] | None, int | None, int | None, bool]:
    """What one header level says: its last full date, else a month-day and a year; the months of a period
    it names; whether it names a year ended ("Fiscal Years Ended")."""
    dates = header_dates(part)
    month_day, year = None, None
    if not dates:
        md = _MONTH_DAY.search(part)
        if md and 1 <= int(md[2]) <= 31:
            month_day = (MONTHS[folded(md[1])], int(md[2]))
        years = _YEAR.findall(part)
        if len(years) == 1:
            year = int(years[0])
    named = _MONTHS_PHRASE.search(part)
    months = (_MONTH_WORDS.get(named[1].lower(), 3) if named[1] else 3) if named else None
    yearly = bool(_YEAR_PHRASE.search(part) and _ENDED.search(part))
    return (dates[-1] if dates else None), month_day, year, months, yearly


def measure_kind(parts: list[str]) -> str | None:
    """What the column measures, from its lowest header level that says."""
    return next((kind for part in reversed(parts) if (kind := _part_kind(part)) is not None), None)


_FOOTNOTE_AT_END = regex(r"\s*\((?:\d|[a-z])\)\s*$")
_SCALE_WORDS = regex(r"\((?:in )?(?:thousands|millions|billions)[^)]*\)|\bin (?:thousands|millions|billions)\b", re.I)


@lru_cache(maxsize=4096)  # a header level spans several columns, and each column's levels are asked about one by one
def _part_kind(part: str) -> str | None:
    text = _SCALE_WORDS.sub("", _FOOTNOTE_AT_END.sub("", part.strip())).strip(" ,")
    return next((kind for kind, pattern in MEASURES if pattern.search(text)), None)


def column_scale(parts: list[str]) -> int | None:
    """A scale stated in the column's own header ('Shares (in millions)')."""
    for part in parts:
        exponent = scale_exponent(part)  # found only where a scale word is printed
        if exponent is not None:
            return exponent
    return None
