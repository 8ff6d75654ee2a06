"""Column headers as real filings print them: what a column measures, for which period, award and scale.

A header is read from all its levels at once ("Restricted Stock Units | Shares", "Three Months Ended
June 30, | 2025", "Fiscal Years Ended January 31, | 2025"), so a year over several measures and a measure
over several years both come out as one typed column each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from extractor.numbers import scale_exponent
from extractor.periods import MONTH_NAMES, MONTHS, find_dates

# What a column measures, checked in order on the header's levels, lowest level first.
MEASURES: list[tuple[str, re.Pattern[str]]] = [
    ("intrinsic", re.compile(r"intrinsic value|^(?:aggregate )?value$", re.I)),
    ("term", re.compile(r"(?<!long-)(?<!long )\b(?:contractual )?(?:term|life)\b|^\(?(?:in )?years\)?$", re.I)),
    ("fair_value", re.compile(r"fair value", re.I)),
    ("cost", re.compile(r"^(?:aggregate|total) (?:purchase )?(?:price|cost)\b", re.I)),  # 'Aggregate Purchase Price'
    (
        "price",
        re.compile(r"(?:exercise|grant|purchase|strike) price|price per share|^(?:weighted[- ]average )?price$", re.I),
    ),
    ("cost", re.compile(r"unrecognized|compensation cost|costs?$", re.I)),
    ("min", re.compile(r"^minimum\b|^low\b", re.I)),
    ("max", re.compile(r"^maximum\b|^high\b", re.I)),
    (
        "count",
        re.compile(r"\b(?:number|shares|units|awards|options|sars|rsus|psus|stock units|share units|amount)\b", re.I),
    ),
]
_MONTHS_PHRASE = re.compile(r"\b(three|six|nine|twelve|3|6|9|12)[- ]months?\b|\bquarter\b", re.I)
_YEAR_PHRASE = re.compile(r"\b(?:fiscal )?years?\b|\bannual\b", re.I)
_YEAR = re.compile(r"(?<![\d,.$])(?:fiscal\s+|fy\s*)?((?:19|20)\d\d)(?![\d,])", re.I)
_MONTH_DAY = re.compile(r"\b(" + MONTH_NAMES + r")\.?\s+(\d{1,2})\b", re.I)
_MONTH_WORDS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)?\d\d)\b")


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
        try:
            found.append(date(year, month, day))
        except ValueError:
            continue
    return found


def header_period(parts: list[str]) -> HeaderPeriod:
    """The period named across a column's header levels."""
    period = HeaderPeriod()
    for part in parts:
        dates = header_dates(part)
        if dates:
            period.end = dates[-1]
        else:
            md = _MONTH_DAY.search(part)
            if md:
                day = int(md[2])
                if 1 <= day <= 31:
                    period.month_day = (MONTHS[md[1].lower()], day)
            years = _YEAR.findall(part)
            if len(years) == 1:
                period.year = int(years[0])
        months = _MONTHS_PHRASE.search(part)
        if months:
            period.months = _MONTH_WORDS.get(months[1].lower(), 3) if months[1] else 3
        elif period.months is None and _YEAR_PHRASE.search(part) and re.search(r"ended|ending", part, re.I):
            period.months = 12
    if period.end is not None:
        period.year = period.end.year
    return period


def measure_kind(parts: list[str]) -> str | None:
    """What the column measures, from its lowest header level that says."""
    for part in reversed(parts):
        text = re.sub(r"\s*\((?:\d|[a-z])\)\s*$", "", part.strip())
        text = re.sub(
            r"\((?:in )?(?:thousands|millions|billions)[^)]*\)|\bin (?:thousands|millions|billions)\b",
            "",
            text,
            flags=re.I,
        ).strip(" ,")
        for kind, pattern in MEASURES:
            if pattern.search(text):
                return kind
    return None


def column_scale(parts: list[str]) -> int | None:
    """A scale stated in the column's own header ('Shares (in millions)')."""
    for part in parts:
        exponent = scale_exponent(part)
        if exponent is not None and re.search(r"thousand|million|billion", part, re.I):
            return exponent
    return None
