"""The facts under validation, indexed for the lookups relations need, and how to print numbers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, timedelta
from decimal import Decimal

from extractor.numbers import tolerance
from extractor.validator.findings import FactRef, Finding, Severity
from schemas.concepts import merge_printings
from schemas.facts import Fact, printed_exponent

Located = tuple[str | None, Fact]
ONE_DAY = timedelta(days=1)


class FactSet:
    """Facts merged to one per identity (disagreeing duplicates kept), with their schema paths."""

    def __init__(self, printings: Iterable[Located]) -> None:
        self.printings: list[Located] = list(printings)
        self.located: list[Located] = merge_printings(self.printings)  # type: ignore[arg-type]
        self._by_concept: dict[str, list[Located]] = {}
        for pair in self.located:
            self._by_concept.setdefault(pair[1].concept, []).append(pair)

    def __iter__(self) -> Iterator[Located]:
        return iter(self.located)

    def of(self, concept: str, dims: dict[str, str] | None = None) -> list[Located]:
        """Facts of a concept, optionally with exactly these dims."""
        pairs = self._by_concept.get(concept, [])
        return pairs if dims is None else [p for p in pairs if p[1].dims == dims]

    def at(self, concept: str, dims: dict[str, str], end: date, instant: bool | None = None) -> Located | None:
        """The fact of a concept and dims whose period ends on `end` (±1 day), first in the document."""
        for pair in self.of(concept, dims):
            period = pair[1].period
            if instant is not None and (period.instant is not None) != instant:
                continue
            if abs(period.end_date - end) <= ONE_DAY:
                return pair
        return None


def half_unit(fact: Fact) -> Decimal:
    """Half the weight of the last printed digit: the most rounding can hide in one printed number."""
    return tolerance(0, printed_exponent(fact))


def rounding_bounds(facts: Iterable[Fact]) -> tuple[Decimal, Decimal]:
    """(strict, loose) tolerance for a sum: half the coarsest printed digit; all the terms' rounding."""
    halves = [half_unit(f) for f in facts]
    return max(halves), sum(halves, Decimal(0))


def grade(difference: Decimal, strict: Decimal, loose: Decimal) -> Severity | None:
    """No finding when rounding explains it; a warning when the printed terms' rounding could; else an error."""
    difference = abs(difference)
    if difference <= strict:
        return None
    return "warning" if difference <= loose else "error"


def display_exponent(facts: Iterable[Fact]) -> int:
    """The scale to print a relation in: the coarsest of its facts, in whole thousands."""
    exponents = [max(printed_exponent(f), 0) for f in facts]
    return max(exponents, default=0) // 3 * 3


SCALE_NAMES = {0: "units", 3: "thousands", 6: "millions", 9: "billions"}


def scale_note(exponent: int) -> str:
    return f" (in {SCALE_NAMES[exponent]})" if exponent and exponent in SCALE_NAMES else ""


def show(value: Decimal, exponent: int = 0, places: int | None = None) -> str:
    """A number as a reader would print it at a scale: 6994000 at 3 -> '6,994'."""
    scaled = value.scaleb(-exponent)
    if places is not None:
        scaled = scaled.quantize(Decimal(1).scaleb(-places))
    elif scaled == scaled.to_integral_value():
        scaled = scaled.quantize(Decimal(1))
    else:
        scaled = scaled.normalize()
    return f"{scaled:,}"


def year_label(end: date) -> str:
    return f"year ended {end.isoformat()}"


def award_label(dims: dict[str, str]) -> str:
    return dims.get("award", "all awards").replace("_", " ")


def finding(
    rule: str,
    severity: Severity,
    message: str,
    pairs: Iterable[Located],
    expected: Decimal | None = None,
    found: Decimal | None = None,
) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,
        message=message,
        facts=[FactRef.of(path, fact) for path, fact in pairs],
        expected=expected,
        found=found,
    )
