"""The validator, rule by rule, with passing and failing cases built from the seeds' own numbers."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from fixture_paths import FIXTURES, GOLD, SEED_000, SEED_002

from extractor.backends import rules
from extractor.loaders import load, load_text
from extractor.schemas.concepts import CASH_SETTLEMENT, EXPENSE, PP, UNRECOGNIZED, P
from extractor.schemas.facts import Fact, read_facts
from extractor.schemas.values import Period, SourceSpan
from extractor.validator import SourceText, Validation, read_accepted, relation_members, validate, validate_facts

S000, S002 = "000_a279831d03f6579a", "002_59f0e0194afd947c"
FY2020, FY2019, FY2018 = date(2020, 2, 29), date(2019, 2, 28), date(2018, 7, 31)


@pytest.fixture(scope="module")
def source000() -> SourceText:
    return SourceText.of(load(SEED_000))


@pytest.fixture(scope="module")
def source002() -> SourceText:
    return SourceText.of(load(SEED_002))


def gold(stem: str) -> list[Fact]:
    return read_facts(str(GOLD / f"{stem}.facts.jsonl"))


def changed(facts: list[Fact], concept: str, end: date, dims: dict[str, str], **update: object) -> list[Fact]:
    """The facts with one fact (found by concept, period end and dims) changed; fails if not found."""
    hits = [i for i, f in enumerate(facts) if f.concept == concept and f.period.end_date == end and f.dims == dims]
    assert len(hits) == 1, (concept, end, dims, hits)
    out = list(facts)
    out[hits[0]] = facts[hits[0]].model_copy(update=update)
    return out


def rules_of(result: Validation, severity: str | None = None) -> set[str]:
    return {f.rule for f in result.findings if severity is None or f.severity == severity}


def only(result: Validation, rule: str):
    hits = [f for f in result.findings if f.rule == rule]
    assert len(hits) == 1, [(f.rule, f.message) for f in result.findings]
    return hits[0]


OPTION = {"award": "option"}
SAR = {"award": "sar"}


# --- the gold and the rules backend are clean -------------------------------------------------


def test_gold_has_no_error_and_only_accepted_filing_quirks(source000: SourceText, source002: SourceText) -> None:
    for path in sorted(GOLD.glob("*.facts.jsonl")):
        stem = path.name.removesuffix(".facts.jsonl")
        source = {S000: source000, S002: source002}[stem]
        accepted_file = GOLD / f"{stem}.accepted.jsonl"
        accepted = read_accepted(accepted_file) if accepted_file.exists() else {}
        raw = validate_facts(read_facts(str(path)), source)
        assert raw.passed, [f.message for f in raw.errors]
        assert {f.id for f in raw.findings} == set(accepted), [f.message for f in raw.findings]
        result = validate_facts(read_facts(str(path)), source, accepted)
        assert result.findings == [] and len(result.accepted) == len(accepted)


@pytest.mark.parametrize(
    "path", [SEED_000, SEED_002, FIXTURES / "html" / f"{S000}.htm", FIXTURES / "html" / f"{S002}.htm"]
)
def test_rules_backend_extractions_pass(path) -> None:
    document = load(path)
    result = validate(rules.extract(document), document)
    assert result.passed and result.grounded_in_document, [f.message for f in result.errors]


def test_weak_aligned_text_extraction_fails_with_reasons() -> None:
    document = load(FIXTURES / "text" / "002_aligned.txt")
    result = validate(rules.extract(document), document)
    assert not result.passed
    conflict = next(f for f in result.errors if f.rule == "consistency.conflict")
    assert all(ref.path and ref.path.startswith("award_activity[") for ref in conflict.facts)


# --- roll-forwards -------------------------------------------------------------------------------


def test_rollforward_count_error_names_the_arithmetic() -> None:
    facts = changed(gold(S000), f"{P}OptionsOutstandingNumber", FY2020, OPTION, value=Decimal(6949000))
    finding = only(validate_facts(facts), "rollforward.count")
    assert finding.severity == "error"
    assert "7,869 + 1,601.489 − 2,413 − 63 = 6,994.489 expected, 6,949 extracted (in thousands)" in finding.message
    assert finding.expected == Decimal(6994489) and finding.found == Decimal(6949000)
    involved = {
        f"line {n}" for n, f in enumerate(facts, 1) if f.dims == OPTION and f.value in (6949000, 1601489, 63000)
    }
    assert len(involved) == 3 and {ref.path for ref in finding.facts} >= involved  # the facts file's lines


def test_rollforward_count_off_by_rounding_is_a_warning() -> None:
    facts = changed(gold(S000), f"{P}OptionsForfeituresAndExpirationsInPeriod", FY2020, OPTION, value=Decimal(64000))
    assert only(validate_facts(facts), "rollforward.count").severity == "warning"


def test_three_year_sar_chain_each_ending_is_the_next_beginning() -> None:
    facts = changed(gold(S002), f"{P}OptionsOutstandingNumber", date(2016, 7, 31), SAR, value=Decimal(2481000))
    found = [f for f in validate_facts(facts).findings if f.rule == "rollforward.count"]
    assert sorted(f.message.split(":")[0] for f in found) == [
        "sar outstanding roll-forward, year ended 2016-07-31",
        "sar outstanding roll-forward, year ended 2017-07-31",
    ]


def test_weighted_average_rollforward_of_seed_000_options() -> None:
    assert "rollforward.weighted_average" not in rules_of(validate_facts(gold(S000)))
    concept = f"{P}OptionsOutstandingWeightedAverageExercisePrice"
    slightly = validate_facts(changed(gold(S000), concept, FY2020, OPTION, value=Decimal("66.85")))
    assert only(slightly, "rollforward.weighted_average").severity == "warning"
    badly = only(
        validate_facts(changed(gold(S000), concept, FY2020, OPTION, value=Decimal("74.85"))),
        "rollforward.weighted_average",
    )
    assert badly.severity == "error" and "= 64.85 expected, 74.85 extracted" in badly.message


def test_nonvested_sar_fair_values_do_not_reconcile_in_the_filing() -> None:
    quirk = [f for f in validate_facts(gold(S002)).findings if "nonvested" in f.message]
    assert len(quirk) == 1 and quirk[0].severity == "warning"
    assert "58.33 expected, 56.72 extracted" in quirk[0].message


# --- totals --------------------------------------------------------------------------------------


def test_expense_by_line_item_must_equal_the_total() -> None:
    facts = changed(
        gold(S000),
        EXPENSE,
        FY2020,
        {"line_item": "selling, general and administrative expenses"},
        value=Decimal(99535000),
    )
    finding = only(validate_facts(facts), "totals.sum")
    assert finding.severity == "error" and "by line item" in finding.message and "110,857" in finding.message


def test_other_share_based_incentives_is_a_subtotal_of_its_members() -> None:
    assert "totals.sum" not in rules_of(validate_facts(gold(S000)))  # option + rsu + msu + (psu + dsu + rs + espp)
    facts = changed(gold(S000), EXPENSE, FY2020, {"award": "other"}, value=Decimal(6878000))
    finding = only(validate_facts(facts), "totals.sum")
    assert "other 6,878 is neither a further part nor the sum of some parts" in finding.message


def test_future_year_schedules_equal_their_totals() -> None:
    facts = changed(gold(S002), UNRECOGNIZED, FY2018, {"year": "2020-07-31"}, value=Decimal(8900000))
    assert only(validate_facts(facts), "totals.sum").severity == "error"
    maximum = {"award": "rsu", "bound": "max", "year": "2022-02-28"}
    facts = changed(gold(S000), CASH_SETTLEMENT, FY2020, maximum, value=Decimal(62686000))
    assert "max" in str(only(validate_facts(facts), "totals.sum").facts[0].dims)


# --- cross-table agreement and ranges ------------------------------------------------------------


def test_the_same_fact_printed_twice_must_agree() -> None:
    document = load(SEED_000)
    extraction = rules.extract(document)
    table = next(t for t in extraction.note.award_activity if t.award == "option")
    granted = next(r for r in table.rows if r.kind == "granted")
    assert validate(extraction, document).passed  # 1,601 thousand and 1,601,489 agree
    granted.count = granted.count.model_copy(update={"value": Decimal(1701000)})
    finding = only(validate(extraction, document), "consistency.conflict")
    assert "1,701,000" in finding.message and "1,601,489" in finding.message
    assert any(ref.path and ref.path.startswith("award_years[") for ref in finding.facts)


def test_exercisable_cannot_exceed_outstanding() -> None:
    facts = changed(gold(S000), f"{P}OptionsExercisableNumber", FY2020, OPTION, value=Decimal(7010000))
    assert only(validate_facts(facts), "consistency.subset").severity == "error"


def test_outstanding_sars_are_exercisable_plus_nonvested() -> None:
    assert "consistency.outstanding_split" not in rules_of(validate_facts(gold(S002)))  # 1,092 + 232 = 1,324
    facts = changed(gold(S002), f"{P}OptionsNonvestedNumber", FY2018, SAR, value=Decimal(282000))
    assert only(validate_facts(facts), "consistency.outstanding_split").severity == "warning"


def test_exercise_proceeds_match_count_times_price() -> None:
    assert "consistency.exercise_proceeds" not in rules_of(validate_facts(gold(S000)))  # 2,413 x 51.55 = 124.4 million
    facts = changed(gold(S000), "ProceedsFromStockOptionsExercised", FY2020, OPTION, value=Decimal(142400000))
    assert only(validate_facts(facts), "consistency.exercise_proceeds").severity == "warning"


def test_range_minimum_not_above_maximum_and_average_inside() -> None:
    low = f"{P}FairValueAssumptionsExpectedVolatilityRateMinimum"
    facts = changed(gold(S000), low, FY2020, OPTION, value=Decimal("0.336"))
    assert any("is above maximum" in f.message for f in validate_facts(facts).errors)
    term = "SharebasedCompensationArrangementBySharebasedPaymentAwardFairValueAssumptionsExpectedTerm1"
    facts = changed(gold(S002), term, FY2018, {"award": "sar", "bound": "min"}, value=Decimal("6.5"))
    assert "consistency.range" in rules_of(validate_facts(facts), "error")
    average = f"{P}FairValueAssumptionsWeightedAverageVolatilityRate"
    facts = changed(gold(S000), average, FY2020, OPTION, value=Decimal("0.392"))
    assert any("lies outside its range" in f.message for f in validate_facts(facts).errors)


# --- plausibility --------------------------------------------------------------------------------


def test_bounds_on_signs_rates_and_terms() -> None:
    facts = changed(gold(S000), f"{P}OptionsExercisesInPeriod", FY2020, OPTION, value=Decimal(-2413000))
    assert "sign taken from parentheses" in only(validate_facts(facts), "plausibility.bounds").message
    volatility = f"{P}FairValueAssumptionsExpectedVolatilityRate"
    facts = changed(gold(S002), volatility, FY2018, SAR, value=Decimal("4.0"))
    assert only(validate_facts(facts), "plausibility.bounds").severity == "error"
    facts = changed(gold(S000), EXPENSE, FY2020, {"award": "psu"}, value=Decimal(-2559000))
    assert any(f.rule == "plausibility.bounds" and f.severity == "warning" for f in validate_facts(facts).findings)
    remaining = "SharebasedCompensationArrangementBySharebasedPaymentAwardOptionsOutstandingWeightedAverageRemainingContractualTerm2"
    facts = changed(gold(S000), remaining, FY2020, OPTION, value=Decimal(43))
    assert "plausibility.bounds" in rules_of(validate_facts(facts), "error")


def test_dates_inside_the_filings_periods() -> None:
    facts = changed(gold(S000), "PreferredStockSharesAuthorized", FY2020, {}, period=Period.at(date(2021, 2, 28)))
    assert "after the latest fiscal year end 2020-02-29" in only(validate_facts(facts), "plausibility.dates").message
    backwards = Period(start=date(2020, 3, 1), end=date(2019, 2, 28))
    facts = changed(
        gold(S000), f"{PP}OptionsExercisesInPeriodWeightedAverageExercisePrice", FY2020, OPTION, period=backwards
    )
    assert any("starts 2020-03-01 after it ends" in f.message for f in validate_facts(facts).errors)


# --- grounding and scale -------------------------------------------------------------------------


def test_a_number_without_a_span_is_an_error_and_is_looked_for(source000: SourceText) -> None:
    facts = changed(gold(S000), f"{P}OptionsExercisesInPeriod", FY2020, OPTION, source=None)
    assert "is printed at offset" in only(validate_facts(facts, source000), "grounding.missing").message
    facts = changed(gold(S000), f"{P}OptionsExercisesInPeriod", FY2020, OPTION, source=None, value=Decimal(2417000))
    assert (
        "no printed number in the document reads back"
        in only(validate_facts(facts, source000), "grounding.missing").message
    )


def test_span_must_hold_the_text_it_claims(source000: SourceText) -> None:
    original = next(f for f in gold(S000) if f.concept == f"{P}OptionsExercisesInPeriod")
    moved = original.source.model_copy(update={"start": original.source.start + 1, "end": original.source.end + 1})
    facts = changed(gold(S000), original.concept, FY2020, OPTION, source=moved)
    assert only(validate_facts(facts, source000), "grounding.span").severity == "error"
    assert "grounding.span" not in rules_of(validate_facts(facts))  # without the text, spans are taken as given


def test_value_must_read_back_from_its_printed_number() -> None:
    facts = changed(gold(S000), f"{P}OptionsOutstandingNumber", FY2020, OPTION, value=Decimal(6994001))
    assert "does not read back from the printed '6,994'" in only(validate_facts(facts), "grounding.readback").message
    years = next(f for f in gold(S002) if f.source.text == "ten")  # a word reads back too
    assert validate_facts([years]).passed


def test_scale_must_match_the_table_note_or_the_word_after_the_number(source000: SourceText) -> None:
    facts = changed(gold(S000), f"{P}OptionsExercisesInPeriod", FY2020, OPTION, value=Decimal(2413))
    finding = only(validate_facts(facts, source000), "scale.context")
    assert "in units, but the document states thousands there" in finding.message and finding.expected == 2413000
    facts = changed(gold(S000), "StockRepurchaseProgramAuthorizedAmount1", FY2020, {}, value=Decimal(2000000))
    assert "'billion' after the number" in only(validate_facts(facts, source000), "scale.context").message


# --- accepted findings and relation membership ---------------------------------------------------


def test_accepted_findings_stop_applying_when_their_values_change(source002: SourceText) -> None:
    accepted = read_accepted(GOLD / f"{S002}.accepted.jsonl")
    facts = changed(gold(S002), f"{P}OptionsNonvestedNumber", date(2017, 7, 31), SAR, value=Decimal(320000))
    result = validate_facts(facts, source002, accepted)
    assert any("nonvested roll-forward" in f.message for f in result.findings)
    assert len(result.accepted) == 1  # the other quirk is untouched


def test_relation_members() -> None:
    members = relation_members(gold(S000))
    assert (f"{P}OptionsOutstandingNumber", "2020-02-29", (("award", "option"),)) in members
    assert (EXPENSE, "2020-02-29", (("line_item", "cost of sales"),)) in members
    assert ("PreferredStockSharesAuthorized", "2020-02-29", ()) not in members


# --- cases found in review -----------------------------------------------------------------------


def test_a_signed_adjustment_row_takes_part_in_the_rollforward() -> None:
    psu = {"award": "psu"}
    start, end = date(2019, 3, 1), FY2020
    flow = Period(start=start, end=end)

    def fact(concept: str, value: int, period: Period) -> Fact:
        return Fact(concept=concept, value=Decimal(value), unit="shares", period=period, dims=psu)

    balance = f"{P}EquityInstrumentsOtherThanOptionsNonvestedNumber"
    facts = [
        fact(balance, 100000, Period.at(FY2019)),
        fact(f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", 50000, flow),
        fact("ext:EquityInstrumentsOtherThanOptionsAdjustmentsInPeriod", -10000, flow),
        fact(f"{P}EquityInstrumentsOtherThanOptionsVestedInPeriod", 30000, flow),
        fact(balance, 110000, Period.at(end)),
    ]
    result = validate_facts(facts)
    assert "rollforward.count" not in rules_of(result) and "plausibility.bounds" not in rules_of(result)
    assert "rollforward.count" in rules_of(validate_facts(facts[:2] + facts[3:]), "error")


def test_zero_in_a_thousands_table_reads_back_at_any_scale(source000: SourceText) -> None:
    printed = next(f for f in gold(S000) if f.source.text == "23")  # restricted stock expense, "(In thousands)"
    at = printed.source.start
    text = source000.text[:at] + " 0" + source000.text[at + 2 :]  # the cell now prints a zero
    source = SourceText.of(load_text(text))
    zero = printed.model_copy(update={"value": Decimal(0), "source": SourceSpan(start=at + 1, end=at + 2, text="0")})
    assert source.stated_scale(at + 1, at + 2).exponents == (3,)
    assert validate_facts([zero], source).findings == []


def test_a_note_naming_two_scales_allows_both_and_no_note_only_warns(tmp_path) -> None:
    table = (
        "<table><tr><td>Stock options (In millions, except shares in thousands)</td><td>Shares</td>"
        "<td>Weighted Average Exercise Price</td></tr>"
        "<tr><td>Outstanding at February 28, 2019</td><td>7,869</td><td>$ 57.96</td></tr>"
        "<tr><td>Granted</td><td>1,601</td><td>$ 78.74</td></tr>"
        "<tr><td>Outstanding at February 29, 2020</td><td>9,470</td><td>$ 61.55</td></tr></table>"
    )
    path = tmp_path / "mixed.htm"
    path.write_text(f"<html><body><p>Stock Options</p>{table}</body></html>", encoding="utf-8")
    source = SourceText.of(load(path))
    start = source.text.index("7,869")
    assert source.stated_scale(start, start + 5).exponents == (3, 6)
    plain = path.read_text().replace(" (In millions, except shares in thousands)", "")
    path.write_text(plain, encoding="utf-8")
    source = SourceText.of(load(path))
    start = source.text.index("7,869")
    count = Fact(
        concept=f"{P}OptionsOutstandingNumber",
        value=Decimal(7869000),
        unit="shares",
        period=Period.at(FY2019),
        dims=OPTION,
        source={"start": start, "end": start + 5, "text": "7,869"},
    )
    assert only(validate_facts([count], source), "scale.context").severity == "warning"


def test_conflicts_match_period_ends_a_day_apart() -> None:
    facts = gold(S000)
    beginning = next(f for f in facts if f.concept == f"{P}OptionsOutstandingNumber" and f.period.end_date == FY2019)
    other = beginning.model_copy(update={"value": Decimal(7969000), "period": Period.at(date(2019, 3, 1))})
    assert "consistency.conflict" in rules_of(validate_facts([*facts, other]), "error")


def test_total_cannot_count_the_other_subtotal_twice() -> None:
    facts = [f for f in gold(S000) if not (f.concept == EXPENSE and "line_item" in f.dims)]
    facts = changed(facts, EXPENSE, FY2020, {}, value=Decimal(117735000))  # 110,757 + "other" 6,978 again
    assert "totals.sum" in rules_of(validate_facts(facts), "error")


def test_months_read_back_as_years_within_rounding() -> None:
    base = next(f for f in gold(S002) if f.source.text == "ten")
    months = base.model_copy(update={"value": Decimal("1.67"), "source": base.source.model_copy(update={"text": "20"})})
    assert "grounding.readback" not in rules_of(validate_facts([months]))
    assert "grounding.readback" in rules_of(validate_facts([months.model_copy(update={"value": Decimal("1.9")})]))
    tenths = months.model_copy(
        update={"value": Decimal("0.1"), "source": base.source.model_copy(update={"text": "0.9"})}
    )
    assert "grounding.readback" in rules_of(validate_facts([tenths]))  # "0.9" is not a count of months


def test_an_empty_extraction_of_a_text_that_prints_amounts_fails_for_review_unless_accepted():
    from extractor.document import Document

    def document(text: str) -> Document:
        return Document(id="p", path="p.txt", format="rpage-text", text=text)

    prose = document(
        "Note 9. Figures we do not explain: 86,000 of them at $237.86 each; then 1,250,000, and also $4.2 million."
    )
    report = validate(rules.extract(prose), prose)
    assert [(f.rule, f.severity) for f in report.findings] == [("coverage.empty", "error")]
    assert "prints 4 amounts" in report.findings[0].message and not report.passed
    accepted = validate(rules.extract(prose), prose, {report.findings[0].id})
    assert accepted.passed and [f.rule for f in accepted.accepted] == ["coverage.empty"]
    assert validate(rules.extract(prose)).passed  # without the document there is nothing to compare with

    nothing = document("Note 9. The Company has no stock-based compensation plans in fiscal 2020 or 2019.")
    assert validate(rules.extract(nothing), nothing).findings == []  # years and note numbers are not amounts
