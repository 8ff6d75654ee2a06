"""Arithmetic relations: roll-forwards add up (counts and weighted averages), totals equal their parts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from itertools import combinations

from extractor.findings import Finding, Severity
from extractor.schemas.concepts import concept_words
from extractor.schemas.relations import ROLLFORWARDS, SUBTOTAL_AWARD, SUMMABLE, RollForward
from extractor.validator.factset import (
    SCALE_NAMES,
    FactSet,
    Located,
    award_label,
    display_exponent,
    finding,
    grade,
    half_unit,
    rounding_bounds,
    scale_note,
    show,
    year_label,
)

# A weighted average off by more than its rounding but less than this share of itself is a
# warning: filings do print such tables (modifications, tranches valued apart); more is an error.
WEIGHTED_AVERAGE_WARNING_SHARE = Decimal("0.05")


@dataclass
class Term:
    """One row of a roll-forward year: its sign, count and (when printed) weighted-average price."""

    label: str
    sign: int
    count: Located
    price: Located | None


@dataclass
class RollForwardYear:
    family: RollForward
    award: str
    end: date
    terms: list[Term]  # beginning first, then the flows
    ending: Term

    @property
    def title(self) -> str:
        return f"{self.award.replace('_', ' ')} {self.family.name} roll-forward, {year_label(self.end)}"


def rollforward_years(facts: FactSet) -> Iterator[RollForwardYear]:
    """Every (family, award, year) with a beginning balance, an ending balance and at least one flow."""
    for family in ROLLFORWARDS:
        awards = {f.dims.get("award") for _, f in facts.of(family.balance)} & family.awards
        for award in sorted(a for a in awards if a):
            dims = {"award": award}
            flows_by_end: dict[date, list[Term]] = {}
            for flow in family.flows:
                for pair in facts.of(flow.count, dims):
                    end = pair[1].period.end_date
                    if pair[1].period.instant is not None or facts.at(flow.count, dims, end, instant=False) is not pair:
                        continue  # a balance, or a disagreeing duplicate (the conflict rule reports it)
                    price = facts.at(flow.price, dims, end, instant=False) if flow.price else None
                    flows_by_end.setdefault(end, []).append(Term(flow.kind.replace("_", " "), flow.sign, pair, price))
            for end, flows in sorted(flows_by_end.items()):
                start = next((t.count[1].period.start for t in flows if t.count[1].period.start), None)
                beginning = _opening_balance(facts, family, dims, end, start)
                ending = facts.at(family.balance, dims, end, instant=True)
                if beginning is None or ending is None:
                    continue
                yield RollForwardYear(
                    family,
                    award,
                    end,
                    [_balance_term("beginning", facts, family, dims, beginning), *flows],
                    _balance_term("ending", facts, family, dims, ending),
                )


def _opening_balance(
    facts: FactSet, family: RollForward, dims: dict[str, str], end: date, start: date | None
) -> Located | None:
    """The balance the year starts from: at the day before its start, else the latest one a month or more before its end."""
    if start is not None:
        if start == date.min:  # a period from the calendar's first day: no day before it holds a balance
            return None
        return facts.at(family.balance, dims, start - timedelta(days=1), instant=True)
    earlier = [
        p for p in facts.of(family.balance, dims) if p[1].period.instant and (end - p[1].period.instant).days > 27
    ]
    return max(earlier, key=lambda p: p[1].period.end_date, default=None)


def _balance_term(label: str, facts: FactSet, family: RollForward, dims: dict[str, str], pair: Located) -> Term:
    price = (
        facts.at(family.balance_price, dims, pair[1].period.end_date, instant=True) if family.balance_price else None
    )
    return Term(label, 1, pair, price)


def check_rollforwards(facts: FactSet) -> Iterator[Finding]:
    """Every roll-forward year: its counts add up, and its weighted-average price follows."""
    for year in rollforward_years(facts):
        yield from _check_counts(year)
        yield from _check_prices(year)


def _check_counts(year: RollForwardYear) -> Iterator[Finding]:
    """beginning + granted - exercised/vested - forfeited - expired ± adjustments = ending."""
    counts = [t.count[1] for t in year.terms]
    computed = sum((t.sign * t.count[1].value for t in year.terms), Decimal(0))
    found = year.ending.count[1].value
    strict, loose = rounding_bounds([*counts, year.ending.count[1]])
    severity = grade(computed - found, strict, loose)
    if severity is None:
        return
    exp = display_exponent([*counts, year.ending.count[1]])
    sum_text = " ".join(
        f"{'+' if t.sign > 0 else '−'} {show(t.count[1].value, exp)}" if i else show(t.count[1].value, exp)
        for i, t in enumerate(year.terms)
    )
    labels = ", ".join(t.label for t in year.terms[1:])
    yield finding(
        "rollforward.count",
        severity,
        f"{year.title}: {sum_text} = {show(computed, exp)} expected, {show(found, exp)} extracted"
        f"{scale_note(exp)} (flows: {labels})",
        [*(t.count for t in year.terms), year.ending.count],
        expected=computed,
        found=found,
    )


def _check_prices(year: RollForwardYear) -> Iterator[Finding]:
    """The ending weighted-average price is the count-weighted combination of the rows."""
    rows = [(t.sign, t.count[1], t.price[1]) for t in year.terms if t.price is not None]
    ending = year.ending
    if len(rows) < len(year.terms) or ending.price is None or ending.count[1].value <= 0:
        return
    ending_count, found = ending.count[1].value, ending.price[1].value
    computed = sum((sign * count.value * price.value for sign, count, price in rows), Decimal(0)) / ending_count
    # Worst-case rounding of every printed count and price, carried through the division.
    slack = sum(
        (abs(count.value) * half_unit(price) + abs(price.value) * half_unit(count) for _, count, price in rows),
        Decimal(0),
    )
    bound = (slack + abs(computed) * half_unit(ending.count[1])) / ending_count + half_unit(ending.price[1])
    difference = abs(computed - found)
    if difference <= bound:
        return
    severity: Severity = "warning" if found and difference <= abs(found) * WEIGHTED_AVERAGE_WARNING_SHARE else "error"
    exp = display_exponent([count for _, count, _ in rows] + [ending.count[1]])
    parts = " ".join(
        f"{('+ ' if sign > 0 else '− ') if i else '('}{show(count.value, exp)}×{show(price.value, 0, 2)}"
        for i, (sign, count, price) in enumerate(rows)
    )
    yield finding(
        "rollforward.weighted_average",
        severity,
        f"{year.title}: weighted-average price {parts}) / {show(ending_count, exp)} = {show(computed, 0, 2)} "
        f"expected, {show(found, 0, 2)} extracted (counts in {SCALE_NAMES.get(exp, exp)}; rounding allows "
        f"±{show(bound, 0, 3)})",
        [p for t in [*year.terms, ending] for p in (t.count, t.price) if p is not None],
        expected=computed.quantize(Decimal("0.0001")),
        found=found,
    )


def total_groups(facts: FactSet) -> Iterator[tuple[Located, list[Located], str]]:
    """(total, parts, split key) for every total with two or more parts split by one dims key."""
    for concept, split_keys in SUMMABLE.items():
        for total in facts.of(concept):
            for key in split_keys:
                if key in total[1].dims:
                    continue
                parts = facts.parts(concept, key, total[1].dims, total[1].period.end_date, total[1].period.short_months)
                if len(parts) >= 2:
                    yield total, parts, key


def check_totals(facts: FactSet) -> Iterator[Finding]:
    """A total equals the sum of its parts, for every split the total has (by line item, award, year)."""
    for total, parts, key in total_groups(facts):
        yield from _check_total(total, parts, key)


def _check_total(total: Located, parts: list[Located], key: str) -> Iterator[Finding]:
    is_subtotal = key == "award"  # only an award split has a "total other" that may sum some of its siblings
    subtotal = next((p for p in parts if is_subtotal and p[1].dims[key] == SUBTOTAL_AWARD), None)
    leaves = [p for p in parts if p is not subtotal]
    found = total[1].value
    everything = [total[1], *(p[1] for p in parts)]
    strict, loose = rounding_bounds(everything)
    leaf_sum = sum((p[1].value for p in leaves), Decimal(0))
    if subtotal and _is_subset_sum(subtotal, leaves):
        readings = [leaf_sum]  # "other" sums some of its siblings: counting it again would double it
    else:
        readings = [leaf_sum + (subtotal[1].value if subtotal else 0)]  # "other" is one more part
    computed = min(readings, key=lambda value: abs(value - found))
    severity = grade(computed - found, strict, loose)
    if severity is None:
        return
    exp = display_exponent(everything)
    what = f"{_describe(total)} by {key.replace('_', ' ')}"
    listed = " + ".join(f"{show(p[1].value, exp)} ({p[1].dims[key]})" for p in leaves)
    if subtotal is not None:
        listed += (
            f"; {SUBTOTAL_AWARD} {show(subtotal[1].value, exp)} is neither a further part nor the sum of some parts"
        )
    yield finding(
        "totals.sum",
        severity,
        f"{what}: parts sum to {show(computed, exp)}, total extracted {show(found, exp)}{scale_note(exp)}: {listed}",
        [total, *parts],
        expected=computed,
        found=found,
    )


def _is_subset_sum(subtotal: Located, leaves: list[Located]) -> bool:
    """Whether some of the parts add up to the subtotal, within their rounding (rounding_bounds' strict bound:
    the coarsest half unit among the subtotal and the group's terms, each worked out once, not once a group)."""
    target, own = subtotal[1].value, half_unit(subtotal[1])
    terms = [(p[1].value, half_unit(p[1])) for p in leaves]
    for size in range(1, len(terms) + 1):
        for group in combinations(terms, size):
            if abs(sum(value for value, _ in group) - target) <= max(own, *(half for _, half in group)):
                return True
    return False


def _describe(pair: Located) -> str:
    fact = pair[1]
    award = f" ({award_label(fact.dims)})" if "award" in fact.dims else ""
    return f"{concept_words(fact.concept)}{award} at {fact.period.end_date.isoformat()}"
