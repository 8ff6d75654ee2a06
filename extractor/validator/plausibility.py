"""Plausibility: values within the bounds their concept allows, and dates inside the filing's periods."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from extractor.findings import Finding, Severity
from extractor.schemas.concepts import concept_words
from extractor.schemas.facts import Fact
from extractor.schemas.relations import CONCEPT_BOUNDS, MAY_BE_NEGATIVE, PLAN_TERMS, SIGNED, UNIT_BOUNDS
from extractor.validator.factset import (
    FactSet,
    award_label,
    finding,
    show,
)

FLOW_DAYS = range(28, 400)  # a quarter (or a stub month) up to a fiscal year of 53 weeks


def check_bounds(facts: FactSet) -> Iterator[Finding]:
    """Counts, prices and amounts are not negative; rates and terms lie within plausible bounds."""
    for pair in facts:
        fact = pair[1]
        low, high = CONCEPT_BOUNDS.get(fact.concept, UNIT_BOUNDS[fact.unit])
        if fact.concept in SIGNED or low <= fact.value and (high is None or fact.value <= high):
            continue
        negative = fact.value < low and low == 0
        severity: Severity = "warning" if negative and fact.concept in MAY_BE_NEGATIVE else "error"
        shown = f"{show(fact.value * 100)}%" if fact.unit == "pure" else f"{show(fact.value)} {fact.unit}"
        allowed = (
            f"{show(low * 100)}%–{show(high * 100)}%"
            if fact.unit == "pure" and high is not None
            else f"{show(low)}–{show(high)} {fact.unit}"
            if high is not None
            else f"at least {show(low)}"
        )
        yield finding(
            "plausibility.bounds",
            severity,
            f"{concept_words(fact.concept)} ({award_label(fact.dims)}, {fact.period.end_date.isoformat()}) is {shown}; "
            f"plausible values are {allowed}" + (" (a sign taken from parentheses?)" if negative else ""),
            [pair],
            found=fact.value,
        )


def _named(fact: Fact) -> str:
    """How a date finding names its fact: written only for a finding."""
    return f"{concept_words(fact.concept)} ({award_label(fact.dims)})"


def check_dates(facts: FactSet, fiscal_year_ends: list[date] | None = None) -> Iterator[Finding]:
    """Periods run forwards, flows last a quarter to a year, and no date falls outside the filing's years."""
    flows = [p for p in facts if p[1].period.instant is None]
    # The filing's own fiscal year ends bound every date; without them, the flows' ends do.
    ends = list(fiscal_year_ends or []) or [p[1].period.end_date for p in flows]
    starts = [p[1].period.start for p in flows if p[1].period.start]
    latest = max(ends, default=None)
    earliest = (
        date.fromordinal(max(1, min(starts).toordinal() - 2)) if starts else None
    )  # a reviewer may type 0001-01-01
    for pair in facts:
        fact = pair[1]
        period = fact.period
        if period.start is not None and period.end is not None:
            days = (period.end - period.start).days + 1
            if days <= 0:
                yield finding(
                    "plausibility.dates",
                    "error",
                    f"{_named(fact)}: period starts {period.start} after it ends {period.end}",
                    [pair],
                )
            elif days not in FLOW_DAYS:
                yield finding(
                    "plausibility.dates",
                    "warning",
                    f"{_named(fact)}: a flow over {days} days ({period.start} to {period.end})",
                    [pair],
                )
        day = period.end_date
        if latest is not None and (day - latest).days > 1:
            yield finding(
                "plausibility.dates",
                "error",
                f"{_named(fact)}: dated {day}, after the latest fiscal year end {latest}",
                [pair],
            )
        elif earliest is not None and day < earliest:
            yield finding(
                "plausibility.dates",
                "warning" if fact.concept in PLAN_TERMS else "error",  # a plan term dated at the plan's adoption
                f"{_named(fact)}: dated {day}, before the earliest fiscal year reported (from {min(starts)})",
                [pair],
            )
        schedule_year = fact.dims.get("year")
        try:
            year_end = date.fromisoformat(schedule_year) if schedule_year else None
        except ValueError:
            yield finding(
                "plausibility.dates",
                "error",
                f"{_named(fact)}: dims.year '{schedule_year}' is not a date (YYYY-MM-DD)",
                [pair],
            )
            continue
        if year_end and year_end <= day:
            yield finding(
                "plausibility.dates",
                "error",
                f"{_named(fact)}: future-year schedule entry for {schedule_year} is not after {day}",
                [pair],
            )
