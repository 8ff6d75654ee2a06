"""The validator finds a fact's twins and relatives by key, not by comparing every pair (issue 22).

The pairwise code it replaced is kept below as the reference: on real extractions, on duplicated
printings at other scales, and on generated tricky sets, the merged facts, the conflicting groups
and every lookup are the same. How many values are compared is counted, not timed: it grows with
the number of printings, not with its square (evals/benchmarks/validator_scaling.py has the seconds).
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from fixture_paths import FIXTURES, GOLD, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import extractor.schemas.concepts as schema_concepts
from extractor.backends import rules
from extractor.evals.benchmarks.validator_scaling import price_ranges_html, rollforward_html
from extractor.loaders import load, load_text
from extractor.schemas.concepts import EXPENSE, P, iter_facts, iter_located_facts
from extractor.schemas.facts import Fact, printed_exponent, read_facts, values_agree
from extractor.schemas.relations import SUMMABLE
from extractor.schemas.values import Period, SourceSpan
from extractor.validator import SourceText, consistency, grounding, validate, validate_facts
from extractor.validator.arithmetic import total_groups
from extractor.validator.consistency import conflict_groups
from extractor.validator.factset import FactSet, Located
from extractor.validator.grounding import readback_exponent

ONE_DAY = timedelta(days=1)

# --- the pairwise reference: the code before issue 22, verbatim ----------------------------------


def pairwise_merge(printings: list[Located]) -> list[Located]:
    chosen: dict[tuple, list[Located]] = {}
    for path, fact in printings:
        group = chosen.setdefault(fact.key(), [])
        index = next((i for i, (_, f) in enumerate(group) if values_agree(f, fact)), None)
        if index is None:
            group.append((path, fact))
            continue
        twin = group[index][1]
        if _more_precise(fact, twin) or (not _more_precise(twin, fact) and _position(fact) < _position(twin)):
            group[index] = (path, fact)
    merged = [pair for group in chosen.values() for pair in group]
    return sorted(merged, key=lambda pair: _position(pair[1]))


def _position(fact: Fact) -> int:
    return fact.source.start if fact.source else 1 << 62


def _more_precise(a: Fact, b: Fact) -> bool:
    return printed_exponent(a) < printed_exponent(b)


def pairwise_conflicts(located: list[Located]) -> list[list[Located]]:
    groups: list[list[Located]] = []
    for pair in located:
        fact = pair[1]
        group = next(
            (
                g
                for g in groups
                if g[0][1].concept == fact.concept
                and g[0][1].dims == fact.dims
                and abs(g[0][1].period.end_date - fact.period.end_date) <= ONE_DAY
            ),
            None,
        )
        if group is None:
            groups.append([pair])
        elif not any(values_agree(other, fact) for _, other in group):
            group.append(pair)
    return [g for g in groups if len(g) >= 2]


def linear_at(located: list[Located], concept: str, dims: dict, end: date, instant: bool | None) -> Located | None:
    for pair in located:
        if pair[1].concept != concept or pair[1].dims != dims:
            continue
        period = pair[1].period
        if instant is not None and (period.instant is not None) != instant:
            continue
        if abs(period.end_date - end) <= ONE_DAY:
            return pair
    return None


def pairwise_totals(located: list[Located]) -> list[tuple[Located, list[Located], str]]:
    out = []
    for concept, split_keys in SUMMABLE.items():
        of_concept = [p for p in located if p[1].concept == concept]
        for total in of_concept:
            for key in split_keys:
                if key in total[1].dims:
                    continue
                parts = [
                    p
                    for p in of_concept
                    if key in p[1].dims
                    and {k: v for k, v in p[1].dims.items() if k != key} == total[1].dims
                    and p[1].period.end_date == total[1].period.end_date
                ]
                if len(parts) >= 2:
                    out.append((total, parts, key))
    return out


def linear_find(source: SourceText, fact: Fact) -> int | None:
    for start, magnitude in source.numbers:
        if readback_exponent(fact, magnitude) is not None:
            return start
    return None


def assert_same_as_pairwise(printings: list[Located]) -> None:
    """Merged facts, conflicts, totals and every lookup the relations make agree with the pairwise code."""
    facts = FactSet(printings)
    assert facts.located == pairwise_merge(printings)
    assert conflict_groups(facts) == pairwise_conflicts(facts.located)
    assert list(total_groups(facts)) == pairwise_totals(facts.located)
    for _, fact in facts.located:
        assert facts.of(fact.concept, fact.dims) == [
            p for p in facts.located if p[1].concept == fact.concept and p[1].dims == fact.dims
        ]
        for days in range(-2, 3):
            end = fact.period.end_date + timedelta(days=days)
            for instant in (None, True, False):
                expected = linear_at(facts.located, fact.concept, fact.dims, end, instant)
                assert facts.at(fact.concept, fact.dims, end, instant) is expected, (fact, days, instant)


# --- real extractions ------------------------------------------------------------------------------

DOCUMENTS = [
    *sorted(FIXTURES.glob("*.txt")),
    *sorted((FIXTURES / "html").glob("*.htm")),
    *sorted((FIXTURES / "text").glob("*.txt")),
    *sorted((ROOT / "evals" / "suites" / "heterogeneous" / "documents").glob("*")),
]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_real_extractions_merge_and_conflict_as_before(path) -> None:
    assert_same_as_pairwise(list(iter_located_facts(rules.extract(load(path)).note)))


def _reprinted(fact: Fact, value: Decimal, text: str, start: int) -> Fact:
    return fact.model_copy(update={"value": value, "source": SourceSpan(start=start, end=start + len(text), text=text)})


@pytest.mark.parametrize("stem", sorted(p.name.removesuffix(".facts.jsonl") for p in GOLD.glob("*.facts.jsonl")))
def test_gold_printed_again_at_other_scales_merges_and_conflicts_as_before(stem: str) -> None:
    """Every gold count printed a second time in thousands (rounded: agrees), a third time one
    thousand off (conflicts), and its exact value again later (a twin of the same precision)."""
    gold = read_facts(str(GOLD / f"{stem}.facts.jsonl"))
    printings: list[Located] = [(f"line {i}", f) for i, f in enumerate(gold, start=1)]
    for i, fact in enumerate(gold):
        if fact.unit != "shares" or not fact.value:
            continue
        thousands = (fact.value / 1000).quantize(Decimal(1))
        printings.append((f"again {i}", _reprinted(fact, thousands * 1000, f"{thousands:,}", 90_000 + i)))
        printings.append((f"off {i}", _reprinted(fact, (thousands + 1) * 1000, f"{thousands + 1:,}", 80_000 + i)))
        printings.append((f"twin {i}", _reprinted(fact, fact.value, f"{fact.value:,}", 70_000 + i)))
    facts = FactSet(printings)
    assert conflict_groups(facts), "the 'one thousand off' printings must conflict"
    assert_same_as_pairwise(printings)


def test_generated_tables_merge_and_conflict_as_before() -> None:
    for html in (rollforward_html(120), price_ranges_html(120)):
        printings = list(iter_located_facts(rules.extract(load_text(html, path="t.htm", doc_id="t")).note))
        assert_same_as_pairwise(printings)


@pytest.mark.parametrize("stem", sorted(p.name.removesuffix(".facts.jsonl") for p in GOLD.glob("*.facts.jsonl")))
def test_a_value_without_a_span_is_looked_for_as_before(stem: str) -> None:
    """Gold values, scaled, shifted and signed, looked for in their document: printed first at the same offset."""
    source = SourceText.of(load(FIXTURES / f"{stem}.txt"))
    found = []
    for fact in read_facts(str(GOLD / f"{stem}.facts.jsonl")):
        for value in (fact.value, fact.value * 1000, fact.value / 1000, fact.value / 100, fact.value + 1, -fact.value):
            probe = fact.model_copy(update={"value": value, "source": None})
            found.append(source.find(probe))
            assert found[-1] == linear_find(source, probe), probe
    assert None in found and len(set(found)) > 50


# --- tricky sets, generated ----------------------------------------------------------------------

GRANTED = f"{P}OptionsGrantsInPeriodGross"
DIMS = (
    {},
    {"award": "option"},
    {"award": "rsu"},
    {"line_item": "Cost of sales"},
    {"award": "option", "line_item": "Cost of sales"},
)
DAY = date(2020, 2, 29)
# Values near each other at several printed scales: 1,601,500 rounds half up to 1,602 thousand.
BASES = (1_601_489, 1_601_500, 1_601_499, 1_602_000, 1_600_000, 7_000, 0)


@st.composite
def printing(draw: st.DrawFn) -> Fact:
    base = Decimal(draw(st.sampled_from(BASES)) + draw(st.sampled_from((0, 0, 1, -1, 500, 1000))))
    exponent = draw(st.sampled_from((0, 0, 3, 6, -2)))  # units, thousands, millions, cents
    printed = base.scaleb(-exponent).quantize(Decimal(1)) if exponent >= 0 else base.quantize(Decimal("0.01"))
    value = printed.scaleb(exponent) if exponent >= 0 else printed
    end = DAY + timedelta(days=draw(st.integers(-1, 2)))
    period = Period.at(end) if draw(st.booleans()) else Period.over(None, end)
    start = draw(st.one_of(st.none(), st.integers(0, 6)))
    text = f"{printed:,}"
    return Fact(
        concept=draw(st.sampled_from((GRANTED, EXPENSE))),
        value=value if draw(st.integers(0, 4)) else value.normalize(),  # printed 1.6E+6 or 1600000
        unit="shares",
        period=period,
        dims=draw(st.sampled_from(DIMS)),
        source=None if start is None else SourceSpan(start=start, end=start + len(text), text=text),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(printing(), max_size=30))
def test_tricky_printings_merge_and_conflict_as_before(facts: list[Fact]) -> None:
    assert_same_as_pairwise([(f"p{i}", f) for i, f in enumerate(facts)])


def test_the_more_precise_printing_wins_whichever_comes_first() -> None:
    thousands = Fact(
        concept=GRANTED,
        value=Decimal(1_602_000),
        unit="shares",
        period=Period.over(None, DAY),
        dims={"award": "option"},
        source=SourceSpan(start=10, end=15, text="1,602"),
    )
    units = _reprinted(thousands, Decimal(1_601_500), "1,601,500", 50)
    off = _reprinted(thousands, Decimal(1_601_499), "1,601,499", 90)  # rounds to 1,601 thousand
    for printings in ([("a", thousands), ("b", units), ("c", off)], [("c", off), ("b", units), ("a", thousands)]):
        facts = FactSet(printings)
        assert [path for path, _ in facts.located] == ["b", "c"]
        assert [[path for path, _ in group] for group in conflict_groups(facts)] == [["b", "c"]]
        assert_same_as_pairwise(printings)


# --- comparisons counted ---------------------------------------------------------------------------


def test_comparisons_grow_with_the_printings_not_with_their_square(monkeypatch: pytest.MonkeyPatch) -> None:
    """A roll-forward of 1,000 flow rows prints each flow's count and price some 250 times, all
    disagreeing: each printing is compared with its few neighbours in value, not with all before it."""
    calls = 0

    def counted(a: Fact, b: Fact) -> bool:
        nonlocal calls
        calls += 1
        return values_agree(a, b)

    monkeypatch.setattr(schema_concepts, "values_agree", counted)
    monkeypatch.setattr(consistency, "values_agree", counted, raising=False)  # where the pairwise code called it
    document = load_text(rollforward_html(1000), path="t.htm", doc_id="t")
    extraction = rules.extract(document)
    printings = sum(1 for _ in iter_located_facts(extraction.note))
    assert printings >= 2000
    result = validate(extraction, document)
    assert {f.rule for f in result.findings} >= {"consistency.conflict"}
    assert calls <= printings  # pairwise: 496,008


def test_values_without_spans_are_looked_up_not_searched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A facts file without spans (an LLM's answer) has each value looked up by magnitude, not read
    back against every number the document prints."""
    calls = 0

    def counted(fact: Fact, printed: Decimal, months: bool | None = None) -> int | None:
        nonlocal calls
        calls += 1
        return readback_exponent(fact, printed, months)

    monkeypatch.setattr(grounding, "readback_exponent", counted)
    document = load_text(rollforward_html(300), path="t.htm", doc_id="t")
    facts = [fact.model_copy(update={"source": None}) for fact in iter_facts(rules.extract(document).note)]
    result = validate_facts(facts, document)
    missing = [f for f in result.findings if f.rule == "grounding.missing"]
    assert len(missing) == len(facts) and all("is printed at offset" in f.message for f in missing)
    assert calls <= len(facts)  # searched: one call per number before the value's first printing
