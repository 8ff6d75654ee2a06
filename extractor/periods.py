"""Fiscal calendars and dates as filings write them ("Years Ended February 29 or 28", "Fiscal 2021")."""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import NamedTuple

from extractor.patterns import finditer_from, folded, initials, screen_text
from extractor.regex_cache import regex
from extractor.schemas.values import Period

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))  # longest first: "september" before "sep"
# A lookahead for the first letters of the months: Python tries a case-blind pattern at every position of the
# text (it finds no literal prefix in one); the one-character test rules most positions out at once.
_MONTH_START = f"(?={initials(MONTHS)})"
DATE_RE = regex(
    _MONTH_START + r"\b(?P<month>" + MONTH_NAMES + r")\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>(?:19|20)\d\d)\b",
    re.I,
)


def calendar_day(year: int, month: int, day: int) -> date | None:
    """The date, or None where the calendar has none (February 30, a 13th month): a printed date can be wrong."""
    try:
        return date(year, month, day)
    except ValueError:
        return None


def find_dates(text: str) -> list[tuple[date, int, int]]:
    """Every 'February 29, 2020' / 'Jul. 31, 2018' in the text, with its span."""
    found = []
    for match in DATE_RE.finditer(text):
        day = calendar_day(int(match["year"]), MONTHS[folded(match["month"])], int(match["day"]))
        if day is not None:
            found.append((day, match.start(), match.end()))
    return found


def balance_date(label: str) -> date | None:
    """The instant of a balance row: 'Outstanding at August 1, 2015' is the close of July 31, 2015."""
    dates = find_dates(label)
    if not dates:
        return None
    day = dates[-1][0]
    return day - timedelta(days=1) if day.day == 1 else day


@dataclass(frozen=True)
class FiscalCalendar:
    """Fiscal years named by the calendar year they end in, ending on a fixed month and day."""

    month: int
    day: int
    weekday: int | None = None  # 52/53-week years: the year ends on the last such weekday of `month`

    @classmethod
    def from_end(cls, fiscal_end: date) -> FiscalCalendar:
        return cls(fiscal_end.month, fiscal_end.day)

    @classmethod
    def anchored(cls, month: int, day: int, latest: date | None) -> FiscalCalendar:
        """A calendar whose year ends in the last week of a month, not on its last day, is a 52/53-week
        calendar (Dec 28, 2013; Dec 29, 2012; Dec 31, 2011): it ends on the latest end's weekday."""
        last = calendar.monthrange(latest.year if latest else 2001, month)[1]
        if latest is not None and latest.month == month and latest.day == day and last - 6 <= day < last:
            return cls(month, day, latest.weekday())
        return cls(month, day)

    def year_end(self, year: int) -> date:
        """The end of fiscal `year`; a month-end calendar stays on the month end (Feb 28/29)."""
        last = calendar.monthrange(year, self.month)[1]
        if self.weekday is not None:
            end = date(year, self.month, last)
            return end - timedelta(days=(end.weekday() - self.weekday) % 7)
        month_end = self.day >= calendar.monthrange(2001, self.month)[1]  # 2001: Feb 28 counts
        return date(year, self.month, last if month_end else min(self.day, last))

    def year_of(self, day: date) -> int:
        """The fiscal year a date falls in."""
        return day.year if day <= self.year_end(day.year) else day.year + 1

    def period(self, year: int) -> Period:
        return Period.over(self.year_end(year - 1) + timedelta(days=1), self.year_end(year))

    def period_ending(self, end: date) -> Period:
        return self.period(self.year_of(end)) if self.year_end(self.year_of(end)) == end else Period.over(None, end)


YEAR_DIGITS = regex(r"(?:19|20)\d\d")  # a year as printed: the prose rules' years, dates and year-like numbers
_MD = r"(?P<month>" + MONTH_NAMES + r")\.?\s+(?P<day>\d{1,2})\b"
# "for the fiscal years ended January 31", "year ended December 31, 2024": how a filing names its year end
_YEAR_ENDED = regex(r"(?=[fy])\b(?:fiscal\s+)?years?\s+end(?:ed|ing)(?:\s+on)?[:,]?\s+" + _MD, re.I)
_YEAR_ENDED_STARTS = ("fiscal", "year")  # what every match begins with (finditer_from)
# the dates a filing reports at: "ended June 30, 2025", "as of December 31, 2024", "at January 31, 2025"
_REPORTED = regex(r"(?=[eat])\b(?:ended|ending|as of|at|through)\s+(?=(?:" + MONTH_NAMES + r")\.?\s+\d{1,2}\b)", re.I)
_REPORTED_STARTS = ("end", "as of", "at", "through")
_QUARTERLY = regex(r"\b(?:three|six|nine)\s+months\b|\bquarter", re.I)  # a quarter's report, not a year's
_QUARTERLY_STARTS = ("three", "six", "nine", "quarter")


class FiscalFrame(NamedTuple):
    """What a filing says of its own calendar: the month and day its fiscal years end, and the latest period
    end it reports. Never the latest date printed anywhere (a 2053 bond maturity is not a period end)."""

    calendar: FiscalCalendar
    latest: date | None
    said: bool  # the year end was stated, not assumed


def fiscal_frame(
    text: str, stated: date | None, header_ends: Sequence[date] = (), header_month_days: Sequence[tuple[int, int]] = ()
) -> FiscalFrame:
    """The fiscal calendar and latest period end from what the filing says of itself."""
    month_days: Counter[tuple[int, int]] = Counter(header_month_days)
    screened = screen_text(text)  # the note is scanned by three case-blind patterns: each only where it may begin
    for match in finditer_from(_YEAR_ENDED, text, screened, _YEAR_ENDED_STARTS):
        day = int(match["day"])
        if 1 <= day <= 31:
            month_days[(MONTHS[folded(match["month"])], day)] += 2  # said in words: counts twice a header's
    reported = [
        d
        for m in finditer_from(_REPORTED, text, screened, _REPORTED_STARTS)
        for d, _, _ in find_dates(text[m.end() : m.end() + 30])[:1]
    ]
    ends = Counter([*header_ends, *reported, *([stated] if stated else [])])
    repeated = [day for day, count in ends.items() if count >= 2]  # a period end is reported more than once
    latest = stated or max(repeated or ends, default=None)
    if month_days:
        month, day = max(month_days.items(), key=lambda item: item[1])[0]
        return FiscalFrame(FiscalCalendar.anchored(month, day, latest), latest, True)
    if latest is not None and next(finditer_from(_QUARTERLY, text, screened, _QUARTERLY_STARTS), None) is None:
        return FiscalFrame(FiscalCalendar.anchored(latest.month, latest.day, latest), latest, False)
    return FiscalFrame(FiscalCalendar(12, 31), latest, False)


def infer_fiscal_end(text: str, stated: date | None) -> date:
    """The latest fiscal period end: as the document states it, else the latest period end it reports."""
    return fiscal_frame(text, stated).latest or latest_printed_date(text)


def latest_printed_date(text: str) -> date:
    """The last resort when a filing reports no period end: the latest full date it prints (or last year's end)."""
    dates = [d for d, _, _ in find_dates(text)]
    return max(dates) if dates else date(date.today().year - 1, 12, 31)


def months_before(end: date, months: int) -> date:
    """The first day of the `months` ending on `end` (Jun 30 and 6 months -> Jan 1; a quarter is a quarter)."""
    year, month = divmod(end.month - 1 - months, 12)
    year, month = end.year + year, month + 1
    last = calendar.monthrange(year, month)[1]
    month_end = end.day == calendar.monthrange(end.year, end.month)[1]
    return date(year, month, last if month_end else min(end.day, last)) + timedelta(days=1)
