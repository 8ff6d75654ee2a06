"""Date phrases of a sentence and the periods they name.

"As of December 31, 2024 and 2023" names two instants; "for the years ended December 31, 2024, 2023 and 2022"
three fiscal years; "three months ended June 30, 2025" one quarter (a quarter is a quarter: it starts three
months before the day after its end); "in fiscal 2025", "during 2024" a fiscal year; "In February 2024" a month;
"at the end of the year" the latest fiscal period end. The nth number of a "…, respectively" list takes the
nth period of the phrase that lists as many.
"""

from __future__ import annotations

import calendar as _calendar
import re
from datetime import date, timedelta
from functools import lru_cache
from typing import NamedTuple

from extractor.patterns import folded, initials
from extractor.periods import MONTH_NAMES, MONTHS, YEAR_DIGITS, FiscalCalendar, calendar_day, months_before
from extractor.regex_cache import regex

_MONTH = r"(?P<month>" + MONTH_NAMES + r")\.?"
_YEARS = r"(?P<years>(?:19|20)\d\d(?:\s*,?\s*(?:and\s+|or\s+)?(?:19|20)\d\d)*)"
_SPAN_WORDS = {
    "three": 3,
    "3": 3,
    "six": 6,
    "6": 6,
    "nine": 9,
    "9": 9,
    "twelve": 12,
    "12": 12,
    "thirteen": 3,
    "26": 6,
    "39": 9,
}

# A month name's first letter, then as many letters as month names have, then a day: the one check of the
# "March 31, 2025" pattern that fails fast at most positions of a sentence.
_A_MONTH_THEN_DAY = f"(?={initials(MONTHS)}[a-z]{{{min(map(len, MONTHS)) - 1},{max(map(len, MONTHS)) - 1}}}\\.?\\s+\\d)"

# Most specific first; a later pattern never takes a span an earlier one took. Each starts with a lookahead for
# its first letters: Python tries a case-blind pattern at every position, and the one-character test passes
# over most positions at once.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "months_ended",
        regex(
            r"(?=[tsn1369])\b(?P<span>three|six|nine|twelve|thirteen|3|6|9|12)[- ]months?\s+(?:period\s+)?(?:ended|ending)\s+"
            + _MONTH
            + r"\s+(?P<day>\d{1,2}),?\s+"
            + _YEARS,
            re.I,
        ),
    ),
    (
        "weeks_ended",
        regex(
            r"(?=[t123])\b(?P<span>thirteen|twenty-six|thirty-nine|13|26|39)[- ]weeks?\s+(?:period\s+)?(?:ended|ending)\s+"
            + _MONTH
            + r"\s+(?P<day>\d{1,2}),?\s+"
            + _YEARS,
            re.I,
        ),
    ),
    (
        "years_ended",
        regex(
            r"(?=[fy])\b(?:fiscal\s+)?years?\s+(?:ended|ending)\s+(?:on\s+)?"
            + _MONTH
            + r"\s+(?P<day>\d{1,2}),?\s+"
            + _YEARS,
            re.I,
        ),
    ),
    ("day_list", regex(_A_MONTH_THEN_DAY + _MONTH + r"\s+(?P<day>\d{1,2}),?\s+" + _YEARS, re.I)),
    ("month", regex(r"(?=[id])\b(?:in|during)\s+" + _MONTH + r",?\s+" + _YEARS, re.I)),
    ("fiscal", regex(r"(?=f)\bfiscal(?:\s+years?)?\s+" + _YEARS, re.I)),
    (
        "year",
        regex(
            r"(?=[idfo])\b(?:in|during|for|of)\s+(?:the\s+)?(?:(?:calendar\s+)?years?\s+)?"
            + _YEARS
            + r"(?!\s*(?:plan|program|equity|stock|incentive|omnibus|employee|long|share|director)\b)",
            re.I,
        ),
    ),
    (
        "year_end",
        regex(
            r"(?=a)\b(?:at|as of)\s+(?:the\s+)?(?:end\s+of\s+(?:the\s+|each\s+)?(?:fiscal\s+)?year|(?:fiscal\s+)?year[- ]end)\b",
            re.I,
        ),
    ),
]


assert all("(?P<years>" in pattern.pattern for _, pattern in _PATTERNS[:-1]) and _PATTERNS[-1][0] == "year_end"


class Span(NamedTuple):
    """One period a phrase names: `start` None for an instant or a period whose start the phrase does not give."""

    end: date
    start: date | None = None
    instant: bool = False


class DatePhrase(NamedTuple):
    start: int
    end: int
    kind: str
    periods: tuple[Span, ...]


def find_phrases(sentence: str, calendar: FiscalCalendar) -> list[DatePhrase]:
    """Every date phrase of the sentence, in order, with its periods."""
    return list(_phrases(sentence, calendar))


@lru_cache(maxsize=2048)  # each sentence is read twice (sentence rules, then the generic reader)
def _phrases(sentence: str, calendar: FiscalCalendar) -> tuple[DatePhrase, ...]:
    taken: list[tuple[int, int]] = []
    phrases: list[DatePhrase] = []
    # Every pattern but the last names a year: most sentences name none, and are read by that one alone.
    patterns = _PATTERNS if YEAR_DIGITS.search(sentence) else _PATTERNS[-1:]
    for kind, pattern in patterns:
        for m in pattern.finditer(sentence):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            periods = _periods(kind, m, calendar)
            if periods:
                taken.append((m.start(), m.end()))
                phrases.append(DatePhrase(m.start(), m.end(), kind, tuple(periods)))
    return tuple(sorted(phrases, key=lambda p: p.start))


def named_day(phrases: list[DatePhrase]) -> Span | None:
    """The one day or month a sentence names ("On February 19, 2025, we granted …"), if that is all it names:
    the date of the later sentences of its paragraph that name none ("The fair value … was $79.53 per unit")."""
    if len(phrases) == 1 and len(phrases[0].periods) == 1 and phrases[0].kind in ("day_list", "month"):
        return phrases[0].periods[0]
    return None


def _periods(kind: str, m: re.Match[str], calendar) -> list[Span]:
    groups = m.groupdict()
    years = [int(y) for y in YEAR_DIGITS.findall(groups.get("years") or "")]
    if kind == "year_end":
        return [Span(end=date.min, instant=True)]  # resolved by the caller to the latest fiscal period end
    if kind in ("months_ended", "weeks_ended", "years_ended", "day_list"):
        month, day = MONTHS[folded(groups["month"])], int(groups["day"])
        ends = [d for y in years if (d := calendar_day(y, month, day))]
        if kind == "months_ended":
            span = _SPAN_WORDS[folded(groups["span"])]
            return [Span(end=d, start=months_before(d, span)) for d in ends]
        if kind == "weeks_ended":
            weeks = {"thirteen": 13, "twenty-six": 26, "thirty-nine": 39}.get(folded(groups["span"])) or int(
                groups["span"]
            )
            return [Span(end=d, start=d - timedelta(weeks=weeks) + timedelta(days=1)) for d in ends]
        if kind == "years_ended":
            return [Span(end=d, start=months_before(d, 12)) for d in ends]
        return [Span(end=d, instant=True) for d in ends]
    if kind == "month":
        month = MONTHS[folded(groups["month"])]
        return [Span(end=date(y, month, _calendar.monthrange(y, month)[1]), start=date(y, month, 1)) for y in years]
    # "fiscal 2025", "during 2024": fiscal years of the filing's calendar
    spans = []
    for year in years:
        period = calendar.period(year)
        spans.append(Span(end=period.end, start=period.start))
    return spans
