"""Agreement between facts: one fact printed twice, balances that are subsets of each other,
quantities two tables state differently (outstanding = exercisable + nonvested; cash from
exercises = count x price), and the two ends of a range."""

from __future__ import annotations

from collections.abc import Iterator

from extractor.findings import Finding
from extractor.schemas.concepts import Printings, concept_words
from extractor.schemas.facts import Fact
from extractor.schemas.relations import (
    EXERCISE_PROCEEDS,
    OUTSTANDING_SPLIT,
    PLAN_TERMS,
    RANGES,
    SUBSETS,
    WITHIN_RANGE,
)
from extractor.validator.factset import (
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


def _where(fact: Fact) -> str:
    return f"'{fact.source.text}' at offset {fact.source.start}" if fact.source else "(no source)"


def conflict_groups(facts: FactSet) -> list[list[Located]]:
    """Facts of one concept and dims, their period ends within a day of the first one's (the spec's
    matching rule) and as long (a quarter is not its year to date), with values that disagree; found by
    key and by value, not by comparing all pairs."""
    groups: list[Printings] = []
    opened: dict[tuple, dict[int, int]] = {}  # (concept, dims, short months) -> day of a group's first fact -> group
    for pair, (identity, day) in zip(facts, facts.identities, strict=True):
        days = opened.setdefault((identity, pair[1].period.short_months), {})
        first = min((g for g in (days.get(day - 1), days.get(day), days.get(day + 1)) if g is not None), default=None)
        if first is None:
            days[day] = len(groups)
            groups.append(Printings())
            groups[-1].add(pair)
        elif groups[first].first_agreeing(pair[1]) is None:
            groups[first].add(pair)
    return [group.pairs for group in groups if len(group.pairs) >= 2]


def check_conflicts(facts: FactSet) -> Iterator[Finding]:
    """The same fact (concept, period, dims) extracted twice with values that disagree."""
    for pairs in conflict_groups(facts):
        first = pairs[0][1]
        values = "; ".join(f"{show(f.value)} from {_where(f)}" for _, f in pairs)
        # the tool's own names for numbers no concept holds (ext:, from a row label) can meet across tables
        # whose award type was not stated, and plan terms differ by plan and cohort: worth a look, not proof of a misread
        loose = (first.concept.startswith("ext:") and "award" not in first.dims) or first.concept in PLAN_TERMS
        yield finding(
            "consistency.conflict",
            "warning" if loose else "error",
            f"{concept_words(first.concept)} ({award_label(first.dims)}, {first.period.end_date.isoformat()}) extracted with "
            f"different values: {values}",
            pairs,
            expected=first.value,
            found=pairs[1][1].value,
        )


def subset_pairs(facts: FactSet) -> Iterator[tuple[Located, Located]]:
    for small_concept, large_concept in SUBSETS:
        for small in facts.of(small_concept):
            large = facts.at(large_concept, small[1].dims, small[1].period.end_date, instant=True)
            if large is not None:
                yield small, large


def check_subsets(facts: FactSet) -> Iterator[Finding]:
    """Exercisable <= vested and expected to vest <= outstanding, for counts and intrinsic values."""
    for small, large in subset_pairs(facts):
        _, loose = rounding_bounds([small[1], large[1]])
        if small[1].value - large[1].value > loose:
            exp = display_exponent([small[1], large[1]])
            yield finding(
                "consistency.subset",
                "error",
                f"{award_label(small[1].dims)} at {small[1].period.end_date.isoformat()}: {concept_words(small[1].concept)} "
                f"{show(small[1].value, exp)} exceeds {concept_words(large[1].concept)} {show(large[1].value, exp)}{scale_note(exp)}",
                [small, large],
                expected=large[1].value,
                found=small[1].value,
            )


def _with_companions(
    facts: FactSet, concepts: tuple[str, str, str], instant: bool
) -> Iterator[tuple[Located, Located, Located]]:
    """Each fact of the first concept, with the facts of the other two at its date and dims."""
    first, second, third = concepts
    for anchor in facts.of(first):
        if (anchor[1].period.instant is not None) != instant:
            continue
        day, dims = anchor[1].period.end_date, anchor[1].dims
        other = facts.at(second, dims, day, instant=instant)
        third_fact = facts.at(third, dims, day, instant=instant)
        if other is not None and third_fact is not None:
            yield anchor, other, third_fact


def split_triples(facts: FactSet) -> Iterator[tuple[Located, Located, Located]]:
    return _with_companions(facts, OUTSTANDING_SPLIT, instant=True)


def check_outstanding_split(facts: FactSet) -> Iterator[Finding]:
    """Options outstanding = exercisable + nonvested at the same date (a warning: some vested options are not exercisable)."""
    for outstanding, exercisable, nonvested in split_triples(facts):
        day, dims = outstanding[1].period.end_date, outstanding[1].dims
        computed = exercisable[1].value + nonvested[1].value
        strict, loose = rounding_bounds([outstanding[1], exercisable[1], nonvested[1]])
        if grade(computed - outstanding[1].value, strict, loose) is None:
            continue
        exp = display_exponent([outstanding[1], exercisable[1], nonvested[1]])
        yield finding(
            "consistency.outstanding_split",
            "warning",
            f"{award_label(dims)} at {day.isoformat()}: exercisable {show(exercisable[1].value, exp)} + nonvested "
            f"{show(nonvested[1].value, exp)} = {show(computed, exp)}, outstanding extracted {show(outstanding[1].value, exp)}"
            f"{scale_note(exp)}",
            [outstanding, exercisable, nonvested],
            expected=computed,
            found=outstanding[1].value,
        )


def proceeds_triples(facts: FactSet) -> Iterator[tuple[Located, Located, Located]]:
    return _with_companions(facts, EXERCISE_PROCEEDS, instant=False)


def check_exercise_proceeds(facts: FactSet) -> Iterator[Finding]:
    """Cash received from exercises = options exercised x their weighted-average exercise price
    (a warning: cashless and net-share exercises bring in less cash)."""
    for proceeds, count, price in proceeds_triples(facts):
        end, dims = proceeds[1].period.end_date, proceeds[1].dims
        computed = count[1].value * price[1].value
        bound = (
            half_unit(proceeds[1])
            + abs(count[1].value) * half_unit(price[1])
            + abs(price[1].value) * half_unit(count[1])
        )
        if abs(computed - proceeds[1].value) <= bound:
            continue
        exp = display_exponent([proceeds[1]])
        yield finding(
            "consistency.exercise_proceeds",
            "warning",
            f"{award_label(dims)}, {year_label(end)}: {show(count[1].value)} exercised × ${show(price[1].value, 0, 2)} = "
            f"${show(computed, exp, 1)} expected as cash received, ${show(proceeds[1].value, exp)} extracted{scale_note(exp)}",
            [proceeds, count, price],
            expected=computed,
            found=proceeds[1].value,
        )


def range_pairs(facts: FactSet) -> Iterator[tuple[Located, Located]]:
    """(minimum, maximum) pairs: by Minimum/Maximum concepts, and by dims.bound min/max."""
    for low_concept, high_concept in RANGES:
        for low in facts.of(low_concept):
            high = facts.at(high_concept, low[1].dims, low[1].period.end_date)
            if high is not None:
                yield low, high
    for low in facts:
        if low[1].dims.get("bound") == "min":
            high = facts.at(low[1].concept, {**low[1].dims, "bound": "max"}, low[1].period.end_date)
            if high is not None:
                yield low, high


def within_range_triples(facts: FactSet) -> Iterator[tuple[Located, Located, Located]]:
    for concept, (low_concept, high_concept) in WITHIN_RANGE.items():
        for average in facts.of(concept):
            end, dims = average[1].period.end_date, average[1].dims
            low, high = facts.at(low_concept, dims, end), facts.at(high_concept, dims, end)
            if low is not None and high is not None:
                yield average, low, high


def check_ranges(facts: FactSet) -> Iterator[Finding]:
    """A range's minimum is not above its maximum; a weighted average lies inside its range."""
    for low, high in range_pairs(facts):
        if low[1].value > high[1].value:
            yield finding(
                "consistency.range",
                "error",
                f"{concept_words(low[1].concept)} ({award_label(low[1].dims)}, {low[1].period.end_date.isoformat()}): minimum "
                f"{show(low[1].value)} is above maximum {show(high[1].value)}",
                [low, high],
                expected=high[1].value,
                found=low[1].value,
            )
    for average, low, high in within_range_triples(facts):
        end, dims = average[1].period.end_date, average[1].dims
        if not low[1].value <= average[1].value <= high[1].value:
            yield finding(
                "consistency.range",
                "error",
                f"{concept_words(average[1].concept)} ({award_label(dims)}, {end.isoformat()}) {show(average[1].value)} lies outside "
                f"its range {show(low[1].value)}–{show(high[1].value)}",
                [average, low, high],
                found=average[1].value,
            )
