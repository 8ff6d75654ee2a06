"""The facts under validation, indexed for the lookups relations need, and how to print numbers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from decimal import Decimal

from extractor.findings import FactRef, Finding, Severity
from extractor.numbers import tolerance
from extractor.schemas.concepts import merge_printings
from extractor.schemas.facts import Fact, printed_exponent

Located = tuple[str | None, Fact]


class FactSet:
    """Facts merged to one per identity (disagreeing duplicates kept), with their schema paths,
    indexed by concept, dims and period end: each lookup a relation makes is one dict access."""

    def __init__(self, printings: Iterable[Located]) -> None:
        self.printings: list[Located] = list(printings)
        self.located: list[Located] = merge_printings(self.printings)
        self._by_concept: dict[str, list[Located]] = {}
        self._by_dims: dict[tuple, list[Located]] = {}
        # (concept, dims) -> (day, instant?) -> the first fact there and its rank: a lookup hashes the dims once
        self._first_on: dict[tuple, dict[tuple[int, bool], tuple[int, Located]]] = {}
        self._splits: dict[tuple[str, str], dict[tuple, list[Located]]] = {}
        self.identities: list[tuple[tuple, int]] = []  # each located fact's (concept, dims) and period end's day
        for rank, pair in enumerate(self.located):
            fact = pair[1]
            identity = (fact.concept, dims_key(fact.dims))
            day = fact.period.end_date.toordinal()
            self.identities.append((identity, day))
            self._by_concept.setdefault(fact.concept, []).append(pair)
            self._by_dims.setdefault(identity, []).append(pair)
            self._first_on.setdefault(identity, {}).setdefault((day, fact.period.instant is not None), (rank, pair))

    def __iter__(self) -> Iterator[Located]:
        return iter(self.located)

    def of(self, concept: str, dims: dict[str, str] | None = None) -> list[Located]:
        """Facts of a concept, optionally with exactly these dims."""
        if dims is None:
            return self._by_concept.get(concept, [])
        return self._by_dims.get((concept, dims_key(dims)), [])

    def at(self, concept: str, dims: dict[str, str], end: date, instant: bool | None = None) -> Located | None:
        """The fact of a concept and dims whose period ends on `end` (±1 day), first in the document."""
        days = self._first_on.get((concept, dims_key(dims)))
        if days is None:
            return None
        day = end.toordinal()
        kinds = (True, False) if instant is None else (instant,)
        hits = [days.get((d, kind)) for d in (day - 1, day, day + 1) for kind in kinds]
        return min((hit for hit in hits if hit is not None), default=(None, None))[1]  # the lowest rank

    def parts(
        self, concept: str, key: str, dims: dict[str, str], end: date, months: int | None = None
    ) -> list[Located]:
        """Facts of a concept with these dims and one more, `key`, whose period ends on `end` and is as long
        (a quarter's parts, not the year to date's): a split of a total."""
        splits = self._splits.get((concept, key))
        if splits is None:
            splits = self._splits[(concept, key)] = {}
            for pair in self.of(concept):
                if key in pair[1].dims:
                    rest = {k: v for k, v in pair[1].dims.items() if k != key}
                    period = pair[1].period
                    splits.setdefault((dims_key(rest), period.end_date, period.short_months), []).append(pair)
        return splits.get((dims_key(dims), end, months), [])


def dims_key(dims: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """Dims as a dict key: equal dims give equal keys, whatever their order."""
    return tuple(sorted(dims.items()))


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
