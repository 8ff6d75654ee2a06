"""XBRL to gold facts: the inline re-rendering of seed 002 must reproduce its hand labels exactly,
a plain instance must yield exactly its in-scope facts, and what is left out must be counted."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from fixture_paths import FIXTURES, GOLD, HTML_002, ROOT, SEED_002
from typer.testing import CliRunner

from extractor.cli import app
from extractor.loaders import load
from extractor.schemas.concepts import EXPENSE, PL, UNRECOGNIZED, P
from extractor.schemas.facts import Fact, read_facts
from extractor.scoring import score
from extractor.validator import read_accepted, validate_facts
from extractor.xbrl import (
    GoldFacts,
    XbrlError,
    award_of_member,
    duration_years,
    in_scope_concepts,
    ix_number,
    known_extension_concepts,
    read_gold,
)

INLINE = ROOT / "evals" / "suites" / "heterogeneous" / "documents" / "002_inline_xbrl.htm"
SUITE_GOLD = ROOT / "evals" / "suites" / "heterogeneous" / "gold" / "002_inline_xbrl.facts.jsonl"
SUITE_ACCEPTED = ROOT / "evals" / "suites" / "heterogeneous" / "gold" / "002_inline_xbrl.accepted.jsonl"
SEED_GOLD = GOLD / "002_59f0e0194afd947c.facts.jsonl"
SEED_ACCEPTED = GOLD / "002_59f0e0194afd947c.accepted.jsonl"
INSTANCE = FIXTURES / "xbrl" / "small_instance.xml"
SAME_END = FIXTURES / "xbrl" / "same_end.xml"
FY2018 = {"start": date(2017, 8, 1), "end": date(2018, 7, 31)}
JUL2018 = {"instant": date(2018, 7, 31)}


@pytest.fixture(scope="module")
def inline() -> GoldFacts:
    return read_gold(INLINE)


@pytest.fixture(scope="module")
def instance() -> GoldFacts:
    return read_gold(INSTANCE)


def by_key(facts: list[Fact]) -> dict[tuple, Fact]:
    keyed = {fact.key(): fact for fact in facts}
    assert len(keyed) == len(facts), "one fact per (concept, period end, dims)"
    return keyed


# --- the inline XBRL re-rendering of seed 002 --------------------------------------------------


def test_inline_xbrl_reproduces_the_hand_labeled_gold(inline: GoldFacts) -> None:
    gold = read_facts(str(SEED_GOLD))
    result = score(inline.facts, gold)
    assert (result.precision, result.recall) == (1.0, 1.0), (result.missed, result.extra, result.wrong_value)
    assert len(inline.facts) == len(gold) == 103
    assert inline.kind == "inline" and inline.tagged == 113 and inline.duplicates == 6
    # the dei cover facts and the note's text block; nothing else was left out
    assert dict(inline.skipped) == {"out of scope": 4}
    assert dict(inline.skipped_concepts["out of scope"]) == {
        "DocumentType": 1,
        "EntityRegistrantName": 1,
        "CurrentFiscalYearEndDate": 1,
        "DisclosureOfCompensationRelatedCostsShareBasedPaymentsTextBlock": 1,
    }
    assert inline.without_source == 0


def test_inline_facts_equal_gold_in_value_period_and_printing(inline: GoldFacts) -> None:
    """Not just matching under the scoring rule: same values, periods (plan terms and remaining
    terms as instants, as gold writes them) and the same printing kept of each duplicate."""
    produced = by_key(inline.facts)
    for hand in read_facts(str(SUITE_GOLD)):
        fact = produced[hand.key()]
        assert (fact.value, fact.unit, fact.period) == (hand.value, hand.unit, hand.period), hand.concept
        assert fact.source == hand.source, (hand.concept, fact.source, hand.source)


def test_duplicate_printings_keep_the_most_precise_then_the_first(inline: GoldFacts) -> None:
    facts = by_key(inline.facts)
    sar_fy = ("2018-07-31", (("award", "sar"),))
    vested = facts[("ext:OptionsVestedInPeriodNumber", *sar_fy)]
    assert vested.value == 169000 and vested.source.text == "169,000"  # prose, not the table's "169" (thousands)
    granted = facts[(f"{P}OptionsGrantsInPeriodGross", *sar_fy)]
    text = load(INLINE).text
    # printed "86" twice at the same precision: the activity table's (the first) is kept
    assert granted.source.start == text.index("\t86\t") + 1
    assert granted.source.start < text.index("nonvested SARs as of")


def test_inline_sources_point_into_the_rendered_document(inline: GoldFacts) -> None:
    document = load(INLINE)
    assert document.format == "html"
    assert all(fact.source is not None for fact in inline.facts)
    for fact in inline.facts:
        assert document.text[fact.source.start : fact.source.end] == fact.source.text, fact.concept
    # rendered one table row per line, cells tab-separated, '$' joined to its number
    assert "Outstanding at August 1, 2015\t2,385\t$ 47.96\n" in document.text
    assert "Expected term (average in years)\t5.8-6.4\t5.5-6.2\t5.3-5.9\n" in document.text


def test_inline_gold_passes_the_validator(inline: GoldFacts) -> None:
    validation = validate_facts(inline.facts, load(INLINE), read_accepted(SEED_ACCEPTED))
    assert validation.passed and validation.errors == [], [f.message for f in validation.errors]
    assert len(validation.accepted) == 2  # the seed's two SAR weighted-average quirks, same finding ids


def test_suite_gold_is_the_seed_gold_relocated() -> None:
    seed, suite = read_facts(str(SEED_GOLD)), read_facts(str(SUITE_GOLD))
    assert [(f.concept, f.value, f.unit, f.period, f.dims) for f in suite] == [
        (f.concept, f.value, f.unit, f.period, f.dims) for f in seed
    ]
    assert [f.source.text for f in suite] == [f.source.text for f in seed]
    validation = validate_facts(suite, load(INLINE), read_accepted(SUITE_ACCEPTED))
    assert validation.passed and len(validation.accepted) == 2
    # the seed gold leaves a few printed numbers out (coverage warnings); nothing else is found
    assert {(f.rule, f.severity) for f in validation.findings} <= {
        ("coverage.table", "warning"),
        ("coverage.prose", "warning"),
    }


# --- a plain instance ---------------------------------------------------------------------------


def test_small_instance_yields_exactly_its_in_scope_facts(instance: GoldFacts) -> None:
    option = {"award": "option"}
    expected = [
        (f"{P}OptionsOutstandingNumber", Decimal(1324000), "shares", JUL2018, option),
        (f"{P}OptionsOutstandingWeightedAverageExercisePrice", Decimal("91.01"), "USD/share", JUL2018, option),
        # P4Y3M18D is 4.3 years; a remaining term is a balance in gold: the instant at the period end
        (f"{PL}OptionsOutstandingWeightedAverageRemainingContractualTerm2", Decimal("4.3"), "years", JUL2018, option),
        (EXPENSE, Decimal(25400000), "USD", FY2018, {}),
        (EXPENSE, Decimal(20100000), "USD", FY2018, {"line_item": "selling general and administrative expenses"}),
        # RangeAxis on a concept with its own Minimum/Maximum form: that concept, no bound
        (f"{P}FairValueAssumptionsRiskFreeInterestRateMinimum", Decimal("0.012"), "pure", FY2018, option),
        (f"{P}FairValueAssumptionsRiskFreeInterestRateMaximum", Decimal("0.023"), "pure", FY2018, option),
        # ... and on one without: dims.bound
        (
            f"{PL}FairValueAssumptionsExpectedTerm1",
            Decimal("5.8"),
            "years",
            FY2018,
            {"award": "option", "bound": "min"},
        ),
        (f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", Decimal(45000), "shares", FY2018, {"award": "msu"}),
        (UNRECOGNIZED, Decimal(14000000), "USD", JUL2018, {"year": "2019-07-31"}),
        ("ext:OptionsVestedInPeriodNumber", Decimal(169000), "shares", FY2018, option),
        ("PreferredStockSharesOutstanding", Decimal(0), "shares", JUL2018, {}),
    ]
    got = [
        (f.concept, f.value, f.unit, {k: v for k, v in f.period.model_dump().items() if v is not None}, f.dims)
        for f in instance.facts
    ]
    assert got == expected
    assert all(f.source is None for f in instance.facts)  # a plain instance has no document text


def test_small_instance_counts_what_it_skips(instance: GoldFacts) -> None:
    assert instance.kind == "instance" and instance.tagged == 16 and instance.duplicates == 0
    assert dict(instance.skipped) == {"out of scope": 2, "unknown extension": 1, "other dimensions": 1}
    assert dict(instance.skipped_concepts["out of scope"]) == {"CurrentFiscalYearEndDate": 1, "Revenues": 1}
    assert dict(instance.skipped_concepts["unknown extension"]) == {"StockOptionsCancelledInMerger": 1}
    assert dict(instance.skipped_concepts["other dimensions"]) == {"AllocatedShareBasedCompensationExpense": 1}
    assert "skipped 3 out of scope (1 unknown extensions); 1 with other dimensions" in instance.summary()


def test_instance_decimals_carry_the_reported_precision(instance: GoldFacts) -> None:
    """decimals="-5" means "to the hundred thousand": a more precise printing agrees with it."""
    total = next(f for f in instance.facts if f.concept == EXPENSE and not f.dims)
    finer = total.model_copy(update={"value": Decimal(25412345)})
    assert score([total], [finer]).correct == 1
    assert score([total], [total.model_copy(update={"value": Decimal(25462345)})]).correct == 0


def test_one_fact_per_key_and_options_default_to_the_option_award() -> None:
    """The scorer matches on (concept, period end, dims), so two facts with one key would always
    miss one: the year to date beats the quarter ending the same day; a second, different value
    for the same period is dropped and counted. An Options concept without the award axis is
    about options; a unit concept without it could be any unit type, so it is kept and counted."""
    result = read_gold(SAME_END)
    half = {"start": date(2022, 1, 1), "end": date(2022, 6, 30)}
    got = [
        (f.concept, f.value, {k: v for k, v in f.period.model_dump().items() if v is not None}, f.dims)
        for f in result.facts
    ]
    assert got == [
        (EXPENSE, Decimal(7500000), half, {}),
        ("ProceedsFromStockOptionsExercised", Decimal(1200000), half, {}),
        (f"{P}OptionsOutstandingNumber", Decimal(1324000), {"instant": date(2022, 6, 30)}, {"award": "option"}),
        (f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", Decimal(45000), half, {}),
    ]
    assert result.tagged == 7 and result.duplicates == 1  # the two options printings: one fact
    assert dict(result.skipped) == {"shorter period, same end": 1, "conflicting duplicates": 1}
    assert result.award_not_stated == 1
    summary = result.summary()
    assert "(1 duplicate printings merged, 1 conflicting duplicates: first kept)" in summary
    assert "1 shorter period, same end" in summary and "1 award type not stated" in summary
    assert "unreadable" not in summary


# --- inline transformations, dimensions and skips, in a small hand-made filing ------------------

SNIPPET = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:ixt="http://www.xbrl.org/inlineXBRL/transformation/2020-02-12"
 xmlns:ixt3="http://www.xbrl.org/inlineXBRL/transformation/2015-02-26"
 xmlns:ixt-sec="http://www.sec.gov/inlineXBRL/transformation/2015-08-31"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
 xmlns:iso4217="http://www.xbrl.org/2003/iso4217" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
 xmlns:us-gaap="http://fasb.org/us-gaap/2019-01-31" xmlns:xyz="http://xyz.example/2019">
<body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonFraction name="us-gaap:AllocatedShareBasedCompensationExpenseNetOfTax" contextRef="FY" unitRef="USD" decimals="-5" scale="6">3.1</ix:nonFraction>
</ix:hidden><ix:resources>
CONTEXTS
<xbrli:unit id="USD"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
<xbrli:unit id="EUR"><xbrli:measure>iso4217:EUR</xbrli:measure></xbrli:unit>
<xbrli:unit id="shares"><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unit>
</ix:resources></ix:header></div>
<p>No preferred stock: <ix:nonFraction name="us-gaap:PreferredStockSharesOutstanding" contextRef="AsOf" unitRef="shares" decimals="INF" format="ixt:fixed-zero">No</ix:nonFraction> shares are outstanding.
Awards expire after <ix:nonNumeric name="us-gaap:SharebasedCompensationArrangementBySharebasedPaymentAwardExpirationPeriod" contextRef="FY" format="ixt-sec:durwordsen">ten years</ix:nonNumeric>.</p>
<table>
<tr><td>(in millions)</td><td>2019</td></tr>
<tr><td>Cost of sales:</td><td>$</td><td><ix:nonFraction name="us-gaap:AllocatedShareBasedCompensationExpense" contextRef="FY_COGS" unitRef="USD" decimals="-5" scale="6" format="ixt:num-dot-decimal">1.5</ix:nonFraction></td></tr>
<tr><td>Total</td><td>$</td><td><ix:nonFraction name="us-gaap:AllocatedShareBasedCompensationExpense" contextRef="FY" unitRef="USD" decimals="-5" scale="6"><ix:nonFraction name="us-gaap:ShareBasedCompensation" contextRef="FY" unitRef="USD" decimals="-5" scale="6">4.0</ix:nonFraction></ix:nonFraction></td></tr>
</table>
<p>Research costs include <ix:nonFraction name="us-gaap:AllocatedShareBasedCompensationExpense" contextRef="FY_RD" unitRef="USD" decimals="-5" scale="6" format="ixt3:numcommadecimal">2,5</ix:nonFraction> million.
Performance units were reduced by (<ix:nonFraction name="xyz:EquityInstrumentsOtherThanOptionsAdjustmentsInPeriod" contextRef="FY_PSU" unitRef="shares" decimals="-3" scale="3" sign="-">12</ix:nonFraction>) thousand.
Deferred units outstanding: <ix:nonFraction name="us-gaap:ShareBasedCompensationArrangementByShareBasedPaymentAwardNonOptionEquityInstrumentsOutstandingNumber" contextRef="AsOf_DSU" unitRef="shares" decimals="INF" format="ixt:fixed-zero">&#8212;</ix:nonFraction>.
Euro expense <ix:nonFraction name="us-gaap:AllocatedShareBasedCompensationExpense" contextRef="FY_PSU" unitRef="EUR" decimals="0">7</ix:nonFraction>;
proceeds <ix:nonFraction name="us-gaap:ProceedsFromStockOptionsExercised" contextRef="FY" unitRef="USD" decimals="0" xsi:nil="true"/>;
by tranche <ix:nonFraction name="us-gaap:ProceedsFromStockOptionsExercised" contextRef="FY_Typed" unitRef="USD" decimals="0">8</ix:nonFraction>;
undated <ix:nonFraction name="us-gaap:ProceedsFromStockOptionsExercised" contextRef="Forever" unitRef="USD" decimals="0">9</ix:nonFraction>.</p>
</body></html>
"""


def _context(cid: str, period: str, segment: str = "") -> str:
    segment = f"<xbrli:segment>{segment}</xbrli:segment>" if segment else ""
    entity = (
        f'<xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">1</xbrli:identifier>{segment}</xbrli:entity>'
    )
    return f'<xbrli:context id="{cid}">{entity}<xbrli:period>{period}</xbrli:period></xbrli:context>'


def _member(axis: str, member: str) -> str:
    return f'<xbrldi:explicitMember dimension="{axis}">{member}</xbrldi:explicitMember>'


def write_snippet(tmp_path: Path, contexts: str | None = None) -> Path:
    year = "<xbrli:startDate>2019-01-01</xbrli:startDate><xbrli:endDate>2019-12-31</xbrli:endDate>"
    at = "<xbrli:instant>2019-12-31</xbrli:instant>"
    contexts = contexts or "\n".join(
        [
            _context("FY", year),
            _context("AsOf", at),
            _context("FY_COGS", year, _member("us-gaap:IncomeStatementLocationAxis", "us-gaap:CostOfSalesMember")),
            _context(
                "FY_RD",
                year,
                _member("us-gaap:IncomeStatementLocationAxis", "us-gaap:ResearchAndDevelopmentExpenseMember"),
            ),
            _context("FY_PSU", year, _member("us-gaap:AwardTypeAxis", "xyz:PerformanceShareUnitsMember")),
            _context("AsOf_DSU", at, _member("us-gaap:AwardTypeAxis", "xyz:DeferredStockUnitsMember")),
            _context("Forever", "<xbrli:forever/>"),
            _context(
                "FY_Typed",
                year,
                '<xbrldi:typedMember dimension="xyz:TrancheAxis"><xyz:Tranche>1</xyz:Tranche></xbrldi:typedMember>',
            ),
        ]
    )
    path = tmp_path / "snippet.htm"
    path.write_text(SNIPPET.replace("CONTEXTS", contexts), encoding="utf-8")
    return path


def test_inline_transformations_dims_and_skips(tmp_path: Path) -> None:
    path = write_snippet(tmp_path)
    result = read_gold(path)
    FY, AT = {"start": date(2019, 1, 1), "end": date(2019, 12, 31)}, {"instant": date(2019, 12, 31)}
    got = [
        (
            f.concept,
            f.value,
            f.unit,
            {k: v for k, v in f.period.model_dump().items() if v is not None},
            f.dims,
            f.source.text if f.source else None,
        )
        for f in result.facts
    ]
    assert got == [
        ("PreferredStockSharesOutstanding", Decimal(0), "shares", AT, {}, "No"),  # fixed-zero
        (f"{PL}ExpirationPeriod", Decimal(10), "years", AT, {}, "ten"),  # words; a plan term: an instant
        (EXPENSE, Decimal(1500000), "USD", FY, {"line_item": "cost of sales"}, "1.5"),  # the row's caption
        (EXPENSE, Decimal(4000000), "USD", FY, {}, "4.0"),
        ("ShareBasedCompensation", Decimal(4000000), "USD", FY, {}, "4.0"),  # nested: the same printing
        (
            "ext:EquityInstrumentsOtherThanOptionsAdjustmentsInPeriod",
            Decimal(-12000),
            "shares",
            FY,
            {"award": "psu"},
            "12",
        ),
        # facts without a span come last, in document order
        ("AllocatedShareBasedCompensationExpenseNetOfTax", Decimal(3100000), "USD", FY, {}, None),  # hidden
        # read by the format, but "2,5" is no number the project's text reading reads back: no span
        (
            EXPENSE,
            Decimal(2500000),
            "USD",
            FY,
            {"line_item": "research and development expense"},
            None,
        ),  # no row: the member's words
        (
            f"{P}NonOptionEquityInstrumentsOutstandingNumber",
            Decimal(0),
            "shares",
            AT,
            {"award": "dsu"},
            None,
        ),  # a dash prints no number
    ]
    nested = [f for f in result.facts if f.source and f.source.text == "4.0"]
    assert nested[0].source == nested[1].source
    text = load(path).text
    assert all(text[f.source.start : f.source.end] == f.source.text for f in result.facts if f.source)
    assert result.facts[0].source.start == text.index("No shares")  # not the "No" that starts the sentence
    assert result.without_source == 3
    assert dict(result.skipped) == {"unsupported unit": 1, "nil": 1, "other dimensions": 1, "no dated period": 1}
    assert "1 with other dimensions; 3 unreadable (unit, nil, period or format); 3 without source" in result.summary()


def test_a_printing_far_from_the_previous_fact_is_found_by_its_words(tmp_path: Path) -> None:
    """The vesting period printed 60,000 characters into the document is the "three" after
    "vest over", not the first "three" of the document (Item 1's "three segments")."""
    head = SNIPPET.split("<body>")[0] + "<body>"
    context = _context("AsOf", "<xbrli:instant>2019-12-31</xbrli:instant>")
    filler = "".join(f"<p>Paragraph {i} of the business description, written at some length.</p>\n" for i in range(800))
    path = tmp_path / "far.htm"
    path.write_text(
        f'{head}<div style="display:none"><ix:header><ix:resources>{context}</ix:resources></ix:header></div>'
        f"<p>Item 1. Business. We operate three segments.</p>\n{filler}"
        '<p>Note 12. Awards vest over <ix:nonNumeric name="us-gaap:ShareBasedCompensationArrangementByShareBasedPaymentAwardAwardVestingPeriod1"'
        ' contextRef="AsOf" format="ixt-sec:durwordsen">three years</ix:nonNumeric>.</p></body></html>',
        encoding="utf-8",
    )
    (fact,) = read_gold(path).facts
    text = load(path).text
    assert fact.source.start > 50_000
    assert fact.source.start == text.index("vest over three") + len("vest over ")


# --- errors -------------------------------------------------------------------------------------


def test_a_file_that_is_not_xbrl_is_a_clear_error(tmp_path: Path) -> None:
    for path in (SEED_002, HTML_002):  # R-page text; R-page HTML (not XML)
        with pytest.raises(XbrlError, match="neither an XBRL instance nor inline XBRL") as caught:
            read_gold(path)
        assert str(path) in str(caught.value)
    xhtml = tmp_path / "plain.htm"
    xhtml.write_text(
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>4.4 million</p></body></html>', encoding="utf-8"
    )
    with pytest.raises(XbrlError, match="holds no XBRL facts"):
        read_gold(xhtml)
    with pytest.raises(XbrlError, match="cannot be read"):
        read_gold(tmp_path / "missing.xml")


def test_broken_references_are_clear_errors(tmp_path: Path) -> None:
    text = INSTANCE.read_text(encoding="utf-8")
    broken = tmp_path / "broken_context.xml"
    broken.write_text(text.replace('contextRef="FY2018_MSU"', 'contextRef="FY2018_PSU"'), encoding="utf-8")
    with pytest.raises(XbrlError, match="refers to the unknown context 'FY2018_PSU'") as caught:
        read_gold(broken)
    assert str(broken) in str(caught.value) and "EquityInstrumentsOtherThanOptionsGrantsInPeriod" in str(caught.value)
    broken.write_text(
        text.replace('unitRef="USDPerShare" decimals="2"', 'unitRef="USDPerShareX" decimals="2"'), encoding="utf-8"
    )
    with pytest.raises(XbrlError, match="unknown unit 'USDPerShareX'"):
        read_gold(broken)
    inline = write_snippet(tmp_path, contexts=_context("FY", "<xbrli:instant>2019-12-31</xbrli:instant>"))
    with pytest.raises(XbrlError, match="unknown context 'AsOf'"):
        read_gold(inline)


# --- pieces ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("iso", "years"),
    [("P4Y3M18D", "4.3"), ("P10Y", "10"), ("P5Y3M", "5.25"), ("P1Y6M", "1.5"), ("P6Y4M24D", "6.4"), ("P0Y9M", "0.75")],
)
def test_iso_durations_in_years(iso: str, years: str) -> None:
    assert duration_years(iso) == Decimal(years)
    assert str(duration_years(iso)) == years  # no digits nobody printed


@pytest.mark.parametrize(
    ("text", "fmt", "value"),
    [
        ("1,234.56", "ixt:num-dot-decimal", "1234.56"),
        ("1,234.56", "ixt:numdotdecimal", "1234.56"),
        ("1.234,5", "ixt:num-comma-decimal", "1234.5"),
        ("—", "ixt:zerodash", "0"),
        ("None", "ixt:fixed-zero", "0"),
        ("twenty five", "ixt-sec:numwordsen", "25"),
        ("5 dollars 25 cents", "ixt:num-unit-decimal", "5.25"),  # the unit words are the decimal point
        ("1,234 dollars 5 cents", "ixt:numunitdecimal", "1234.05"),
        ("5.3", "ixt-sec:duryear", "5.3"),
        ("18", "ixt-sec:durmonth", "1.5"),
        ("five years, six months", "ixt-sec:durwordsen", "5.5"),
        ("2385", None, "2385"),
    ],
)
def test_ix_numbers(text: str, fmt: str | None, value: str) -> None:
    assert ix_number(text, fmt) == Decimal(value)


def test_unknown_formats_and_unreadable_text_are_errors() -> None:
    with pytest.raises(ValueError, match="not supported"):
        ix_number("12/31/2019", "ixt:date-month-day-year")
    with pytest.raises(ValueError):
        ix_number("n/a", "ixt:num-dot-decimal")
    with pytest.raises(ValueError):
        ix_number("525", "ixt:num-unit-decimal")  # no unit words: no fraction to read


@pytest.mark.parametrize(
    ("member", "award"),
    [
        ("EmployeeStockOptionMember", "option"),
        ("StockAppreciationRightsSARSMember", "sar"),
        ("RestrictedStockUnitsRSUMember", "rsu"),
        ("PerformanceSharesMember", "psu"),
        ("RestrictedStockMember", "restricted_stock"),
        ("EmployeeStockMember", "espp"),
        ("MarketStockUnitsMember", "msu"),
        ("DeferredStockUnitsMember", "dsu"),
        ("PerformanceShareUnitsMember", "psu"),
        ("CashSettledRestrictedStockUnitsMember", "rsu"),
        ("NonqualifiedStockOptionsMember", "option"),
        ("PhantomShareUnitsPSUsMember", "other"),
        ("LongTermIncentivePlanAwardsMember", "other"),
    ],
)
def test_award_members(member: str, award: str) -> None:
    assert award_of_member(member) == award


def test_scope_covers_every_concept_the_hand_gold_uses() -> None:
    scope, extensions = in_scope_concepts(), known_extension_concepts()
    assert f"{PL}OptionsVestedInPeriodFairValue1" in scope and "ShareBasedCompensation" in scope
    assert "Revenues" not in scope and not any(name.startswith("ext:") for name in scope)
    for gold_file in GOLD.glob("*.facts.jsonl"):
        for fact in read_facts(str(gold_file)):
            assert fact.concept in (extensions if fact.concept.startswith("ext:") else scope), (
                gold_file.name,
                fact.concept,
            )


# --- the command --------------------------------------------------------------------------------


def test_cli_writes_gold_and_reports_what_it_skipped(tmp_path: Path) -> None:
    out = tmp_path / "gold" / "002_inline_xbrl.facts.jsonl"
    result = CliRunner().invoke(app, ["gold", "from-xbrl", str(INLINE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 103 and all("document" not in json.loads(line) for line in lines)
    written = [Fact.from_json(line) for line in lines]
    assert score(written, read_facts(str(SEED_GOLD))).f1 == 1.0
    assert result.stdout == ""
    summary = result.stderr.strip()
    assert summary.count("\n") == 0  # one line
    assert "103 facts" in summary and "skipped 4 out of scope" in summary
    assert "0 with other dimensions" in summary and "0 without source" in summary


def test_cli_prints_to_stdout_without_output_and_fails_cleanly() -> None:
    result = CliRunner().invoke(app, ["gold", "from-xbrl", str(INSTANCE)])
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 12 and "1 with other dimensions" in result.stderr
    failed = CliRunner().invoke(app, ["gold", "from-xbrl", str(SEED_002)])
    assert failed.exit_code == 2 and "neither an XBRL instance" in failed.stderr and "Traceback" not in failed.output
    blocked = INSTANCE / "gold.jsonl"  # under a file: cannot be created
    unwritable = CliRunner().invoke(app, ["gold", "from-xbrl", str(INSTANCE), "-o", str(blocked)])
    assert unwritable.exit_code == 2 and not isinstance(unwritable.exception, OSError)
    assert f"error: cannot write {blocked}: Not a directory" in unwritable.stderr and "wrote" not in unwritable.stderr
    shown = CliRunner().invoke(app, ["gold", "from-xbrl", "--help"])
    assert shown.exit_code == 0 and "extractor gold from-xbrl" in shown.stdout
