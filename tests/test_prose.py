"""Sentences of real filings (../shared/corpus/real/*/section.txt), read by the generic prose reader.

Each expected answer was checked against the filer's own XBRL (that filing's gold_facts.json): concept,
value, unit, period end and award type. The sentences are copied verbatim; only the reader is under test.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from extractor.backends.rules.implied_scale import apply_usd_scale
from extractor.backends.rules.prose import extract_prose
from extractor.backends.rules.prose_dates import find_phrases
from extractor.backends.rules.prose_numbers import find_numbers
from extractor.backends.rules.prose_reader import load_cues
from extractor.periods import FiscalCalendar
from extractor.schemas.concepts import to_facts
from extractor.schemas.stock_compensation import StockCompensationNote

P = "ShareBasedCompensationArrangementByShareBasedPaymentAward"
PL = "SharebasedCompensationArrangementBySharebasedPaymentAward"
UNRECOGNIZED = "EmployeeServiceShareBasedCompensationNonvestedAwardsTotalCompensationCostNotYetRecognized"


def read(sentence: str, fiscal_end: date):
    """The facts of one sentence read as a one-paragraph note, and what the reader left unread."""
    note = StockCompensationNote()
    reading = extract_prose(note, sentence, [(0, len(sentence))], FiscalCalendar.from_end(fiscal_end), fiscal_end)
    return to_facts(note), reading


def facts_of(facts, concept: str):
    return [f for f in facts if f.concept == concept]


# (filing, sentence, fiscal end, [(concept, value, unit, period end, award)])
CASES = [
    (
        "aaoi-10k-2013",
        "As of December 31, 2013, total compensation cost related to unvested stock options not yet recognized was $5.1 "
        "million, which is expected to be expensed over a weighted-average period of 3.41 years.",
        date(2013, 12, 31),
        [
            (UNRECOGNIZED, "5100000", "USD", date(2013, 12, 31), "option"),
            (f"{UNRECOGNIZED}PeriodForRecognition1", "3.41", "years", date(2013, 12, 31), "option"),
        ],
    ),
    (
        "ibm-10q-2025q2",
        "Total unrecognized compensation cost related to non-vested awards at June 30, 2025 was $2.5 billion and is "
        "expected to be recognized over a weighted-average period of approximately 2.4 years.",
        date(2025, 6, 30),
        [
            (UNRECOGNIZED, "2500000000", "USD", date(2025, 6, 30), None),
            (f"{UNRECOGNIZED}PeriodForRecognition1", "2.4", "years", date(2025, 6, 30), None),
        ],
    ),
    (
        "googl-10k-2024",
        "For the years ended December 31, 2022, 2023, and 2024, total SBC expense was $19.5 billion, $22.1 billion, and "
        "$22.8 billion, including amounts associated with awards we expect to settle in Alphabet stock of $18.8 billion, "
        "$21.7 billion, and $22.0 billion, respectively.",
        date(2024, 12, 31),
        [
            ("AllocatedShareBasedCompensationExpense", "19500000000", "USD", date(2022, 12, 31), None),
            ("AllocatedShareBasedCompensationExpense", "22100000000", "USD", date(2023, 12, 31), None),
            ("AllocatedShareBasedCompensationExpense", "22800000000", "USD", date(2024, 12, 31), None),
        ],
    ),
    (
        "googl-10k-2024",
        "As of December 31, 2024, there were 633 million shares of Class C stock reserved for future issuance under the "
        "Alphabet 2021 Stock Plan.",
        date(2024, 12, 31),
        [("CommonStockCapitalSharesReservedForFutureIssuance", "633000000", "shares", date(2024, 12, 31), None)],
    ),
    (
        "googl-10k-2024",
        "For the years ended December 31, 2022, 2023, and 2024, we recognized tax benefits on total SBC expense, which "
        "are reflected in the provision for income taxes in the Consolidated Statements of Income, of $3.9 billion, $4.5 "
        "billion, and $4.6 billion, respectively.",
        date(2024, 12, 31),
        [
            (
                "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
                "3900000000",
                "USD",
                date(2022, 12, 31),
                None,
            ),
            (
                "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
                "4600000000",
                "USD",
                date(2024, 12, 31),
                None,
            ),
        ],
    ),
    (
        "googl-10k-2024",
        "RSUs generally vest over four years contingent upon employment on the vesting date.",
        date(2024, 12, 31),
        [(f"{P}AwardVestingPeriod1", "4", "years", date(2024, 12, 31), "rsu")],
    ),
    (
        "crsr-10k-2024",
        "The total intrinsic value of options exercised for the years ended December 31, 2024, 2023 and 2022 was $2.0 "
        "million, $11.8 million and $7.7 million, respectively.",
        date(2024, 12, 31),
        [
            (f"{P}OptionsExercisesInPeriodTotalIntrinsicValue", "2000000", "USD", date(2024, 12, 31), "option"),
            (f"{P}OptionsExercisesInPeriodTotalIntrinsicValue", "11800000", "USD", date(2023, 12, 31), "option"),
            (f"{P}OptionsExercisesInPeriodTotalIntrinsicValue", "7700000", "USD", date(2022, 12, 31), "option"),
        ],
    ),
    (
        "crsr-10k-2024",
        "Stock options expire ten years from date of grant.",
        date(2024, 12, 31),
        [(f"{PL}ExpirationPeriod", "10", "years", date(2024, 12, 31), "option")],
    ),
    (
        "crsr-10k-2024",
        "As of December 31, 2024, there were 7,083,164 shares reserved for future issuance under the 2020 Plan.",
        date(2024, 12, 31),
        [("CommonStockCapitalSharesReservedForFutureIssuance", "7083164", "shares", date(2024, 12, 31), None)],
    ),
    (
        "meta-10k-2024",
        "The fair value as of the respective vesting dates of RSUs that vested during the years ended December 31, 2024, "
        "2023, and 2022 was $33.14 billion, $17.46 billion, and $9.44 billion, respectively.",
        date(2024, 12, 31),
        [
            (
                f"{P}EquityInstrumentsOtherThanOptionsVestedInPeriodTotalFairValue",
                "33140000000",
                "USD",
                date(2024, 12, 31),
                "rsu",
            ),
            (
                f"{P}EquityInstrumentsOtherThanOptionsVestedInPeriodTotalFairValue",
                "9440000000",
                "USD",
                date(2022, 12, 31),
                "rsu",
            ),
        ],
    ),
    (
        "meta-10k-2024",
        "The weighted-average grant date fair value per share of RSUs granted in the years ended December 31, 2023 and "
        "2022 was $202.46 and $195.66, respectively.",
        date(2024, 12, 31),
        [
            (
                f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriodWeightedAverageGrantDateFairValue",
                "202.46",
                "USD/share",
                date(2023, 12, 31),
                "rsu",
            ),
            (
                f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriodWeightedAverageGrantDateFairValue",
                "195.66",
                "USD/share",
                date(2022, 12, 31),
                "rsu",
            ),
        ],
    ),
    (
        "meta-10k-2024",
        "As of December 31, 2024, we are authorized to issue 5,000 million shares of Class A common stock and 4,141 "
        "million shares of Class B common stock, each with a par value of $0.000006 per share.",
        date(2024, 12, 31),
        [
            ("CommonStockSharesAuthorized", "5000000000", "shares", date(2024, 12, 31), None),
            ("CommonStockSharesAuthorized", "4141000000", "shares", date(2024, 12, 31), None),
            ("CommonStockParOrStatedValuePerShare", "0.000006", "USD/share", date(2024, 12, 31), None),
        ],
    ),
    (
        "meta-10k-2024",
        "As of December 31, 2024, $51.28 billion remained available and authorized for repurchases.",
        date(2024, 12, 31),
        [
            (
                "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1",
                "51280000000",
                "USD",
                date(2024, 12, 31),
                None,
            )
        ],
    ),
    (
        "hubs-10q-2025q2",
        "During the three months ended June 30, 2025, the Company repurchased 0.2 million shares of its common stock at an "
        "average price of $577.13 per share, for an aggregate repurchase amount of $125.0 million.",
        date(2025, 6, 30),
        [
            ("StockRepurchasedDuringPeriodShares", "200000", "shares", date(2025, 6, 30), None),
            ("TreasuryStockAcquiredAverageCostPerShare", "577.13", "USD/share", date(2025, 6, 30), None),
            ("StockRepurchasedDuringPeriodValue", "125000000", "USD", date(2025, 6, 30), None),
        ],
    ),
    (
        "hubs-10q-2025q2",
        "Capitalized software development costs excluded from stock-based compensation expense were $17.0 million for the "
        "three months ended June 30, 2025, $28.8 million for the six months ended June 30, 2025, $10.2 million for the "
        "three months ended June 30, 2024, and $19.0 million for the six months ended June 30, 2024.",
        date(2025, 6, 30),
        [
            (
                "EmployeeServiceShareBasedCompensationAllocationOfRecognizedPeriodCostsCapitalizedAmount",
                "17000000",
                "USD",
                date(2025, 6, 30),
                None,
            ),
            (
                "EmployeeServiceShareBasedCompensationAllocationOfRecognizedPeriodCostsCapitalizedAmount",
                "19000000",
                "USD",
                date(2024, 6, 30),
                None,
            ),
        ],
    ),
    (
        "wmt-10k-2025",
        "The total income tax benefit recognized for share-based compensation was $0.7 billion, $0.5 billion and $0.4 "
        "billion for fiscal 2025, 2024 and 2023, respectively.",
        date(2025, 1, 31),
        [
            (
                "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
                "700000000",
                "USD",
                date(2025, 1, 31),
                None,
            ),
            (
                "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
                "400000000",
                "USD",
                date(2023, 1, 31),
                None,
            ),
        ],
    ),
    (
        "wmt-10k-2025",
        "For grants made from fiscal 2020 through fiscal 2022, restricted stock units generally vest at a rate of 25% each "
        "year over a four year period from the date of the grant.",
        date(2025, 1, 31),
        [
            (f"{PL}AwardVestingRightsPercentage", "0.25", "pure", date(2025, 1, 31), "rsu"),
            (f"{P}AwardVestingPeriod1", "4", "years", date(2025, 1, 31), "rsu"),
        ],
    ),
    (
        "wmt-10k-2025",
        "The total authorized shares of $0.10 par value preferred stock is 0.1 billion; none of which were issued or "
        "outstanding for any period presented.",
        date(2025, 1, 31),
        [
            ("PreferredStockSharesAuthorized", "100000000", "shares", date(2025, 1, 31), None),
            ("PreferredStockParOrStatedValuePerShare", "0.1", "USD/share", date(2025, 1, 31), None),
        ],
    ),
    (
        "unh-10k-2024",
        "As of December 31, 2024, the Company had 48 million shares available for future grants of share-based awards "
        "under its share-based compensation plan, including, but not limited to, incentive or non-qualified stock options, "
        "SARs and up to 17 million of these 48 million available shares that can be awarded as restricted shares or "
        "restricted share units.",
        date(2024, 12, 31),
        [(f"{P}NumberOfSharesAvailableForGrant", "48000000", "shares", date(2024, 12, 31), None)],
    ),
    (
        "ba-10k-2024",
        "The Company has an employee stock purchase plan which permits eligible employees to purchase Boeing common stock "
        "at 95% of the fair market value on the last trading day of each three-month offering period.",
        date(2024, 12, 31),
        [(f"{PL}PurchasePriceOfCommonStockPercent", "0.95", "pure", date(2024, 12, 31), "espp")],
    ),
    (
        "sam-10k-2013",
        "The Company has reserved 550,000 shares of Class A Common Stock for issuance pursuant to the Non-Employee "
        "Director Plan, of which 115,269 shares were available for grant as of December 28, 2013.",
        date(2013, 12, 28),
        [
            (f"{P}NumberOfSharesAuthorized", "550000", "shares", date(2013, 12, 28), None),
            (f"{P}NumberOfSharesAvailableForGrant", "115269", "shares", date(2013, 12, 28), None),
        ],
    ),
    (
        "sam-10k-2013",  # grant counts: 'granted options to purchase N, N and N shares, respectively'
        "During fiscal 2013, 2012 and 2011, the Company granted options to purchase 40,925, 42,600 and 228,200 shares, "
        "respectively, of its Class A Common Stock to employees at market price on the grant dates.",
        date(2013, 12, 28),
        [
            (f"{P}OptionsGrantsInPeriodGross", "40925", "shares", date(2013, 12, 28), "option"),
            (f"{P}OptionsGrantsInPeriodGross", "42600", "shares", date(2012, 12, 28), "option"),
            (f"{P}OptionsGrantsInPeriodGross", "228200", "shares", date(2011, 12, 28), "option"),
        ],
    ),
    (
        "ba-10k-2024",  # grant counts dated by the months the sentence names, the award named after the numbers
        "In February 2024, 2023 and 2022, we granted to our executives 2,008,499, 327,523 and 1,804,541 restricted stock "
        "units (RSUs) as part of our long-term incentive program with grant date fair values of $204.",
        date(2024, 12, 31),
        [
            (f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", "2008499", "shares", date(2024, 2, 29), "rsu"),
            (f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", "327523", "shares", date(2023, 2, 28), "rsu"),
            (f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", "1804541", "shares", date(2022, 2, 28), "rsu"),
        ],
    ),
]


@pytest.mark.parametrize(
    "filing, sentence, fiscal_end, expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_real_sentence(filing: str, sentence: str, fiscal_end: date, expected) -> None:
    facts, _ = read(sentence, fiscal_end)
    for concept, value, unit, end, award in expected:
        candidates = [f for f in facts_of(facts, concept) if f.value == Decimal(value)]
        assert candidates, (filing, concept, value, [(f.concept, f.value) for f in facts])
        fact = candidates[0]
        assert fact.unit == unit
        assert fact.period.end_date == end
        assert fact.dims.get("award") == award
        assert fact.source and sentence[fact.source.start : fact.source.end] == fact.source.text


def test_real_sentence_deferred_compensation_with_a_negative_in_its_list() -> None:
    """ba-10k-2023: '($117)' between '$188' and '$126' stays in the list, so each year gets its own number;
    the note's dollars are in millions (implied_scale), passed as the known scale."""
    sentence = (
        "Total expense/(income) related to deferred compensation was $188, ($117) and $126 in 2023, 2022 and "
        "2021, respectively. As of December 31, 2023 and 2022, the deferred compensation liability which is "
        "being marked to market was $1,640 and $1,499."
    )
    note = StockCompensationNote()
    extract_prose(
        note, sentence, [(0, len(sentence))], FiscalCalendar.from_end(date(2023, 12, 31)), date(2023, 12, 31), 6
    )
    apply_usd_scale(note, 6, sentence)
    facts = to_facts(note)
    expense = {
        (f.period.end_date, f.value)
        for f in facts_of(facts, "DeferredCompensationArrangementWithIndividualCompensationExpense")
    }
    assert expense == {
        (date(2023, 12, 31), Decimal(188000000)),
        (date(2022, 12, 31), Decimal(117000000)),
        (date(2021, 12, 31), Decimal(126000000)),
    }
    liability = {
        (f.period.instant, f.value) for f in facts_of(facts, "DeferredCompensationLiabilityCurrentAndNoncurrent")
    }
    assert liability == {(date(2023, 12, 31), Decimal(1640000000)), (date(2022, 12, 31), Decimal(1499000000))}


def test_real_sentence_numbers_without_a_cue_are_left_unread_not_guessed() -> None:
    # googl-10k-2024: the second list ("awards we expect to settle in Alphabet stock") has no cue of its own.
    facts, reading = read(CASES[2][1], date(2024, 12, 31))
    assert not [f for f in facts if f.value in (Decimal("18800000000"), Decimal("21700000000"), Decimal("22000000000"))]
    assert {text for text, _ in reading.unread} >= {"18.8", "21.7", "22.0"}


def test_real_sentence_unscaled_dollars_are_not_read() -> None:
    # ba-10k-2024 prints dollars in millions without saying so in the sentence: "$0, $80 and $75" are not dollars.
    sentence = (
        "The total intrinsic value of options exercised during the years ended December 31, 2024, 2023 and 2022 "
        "was $0, $80 and $75, with a related tax benefit of $0, $18 and $17, respectively."
    )
    facts, reading = read(sentence, date(2024, 12, 31))
    assert not facts
    assert [text for text, _ in reading.unread].count("80") == 1


def test_real_sentence_recognition_period_takes_the_award_of_its_cost() -> None:
    # ba-10k-2024: gold EmployeeService…PeriodForRecognition1 3.1, award option, period ending 2024-12-31.
    sentence = (
        "At December 31, 2024, there was $9 of total unrecognized compensation cost related to options which "
        "is expected to be recognized over a weighted average period of 3.1 years."
    )
    facts, _ = read(sentence, date(2024, 12, 31))
    [period] = facts_of(facts, f"{UNRECOGNIZED}PeriodForRecognition1")
    assert period.value == Decimal("3.1") and period.dims.get("award") == "option"


@pytest.mark.parametrize(
    "sentence, value, award",
    [
        # ma-10k-2024: gold tags each amount on its award type (before: no award, three conflicting totals)
        (
            "As of December 31, 2024, there was $378 million of total unrecognized compensation cost related to non-vested "
            "RSUs.",
            Decimal(378000000),
            "rsu",
        ),
        (
            "As of December 31, 2024, there was $16 million of total unrecognized compensation cost related to non-vested "
            "Options.",
            Decimal(16000000),
            "option",
        ),
        # a note of the heterogeneous suite: two award types named, so it is the total of both
        (
            "As of September 30, 2023, there was $21.7 million of total unrecognized compensation cost related to nonvested "
            "stock options and RSUs, which is expected to be recognized over a weighted-average period of 1.9 years.",
            Decimal(21700000),
            None,
        ),
        # ibm-10q-2025q2: "non-vested awards" names no award type, so the total stays a total
        (
            "Total unrecognized compensation cost related to non-vested awards at June 30, 2025 was $2.5 billion and is "
            "expected to be recognized over a weighted-average period of approximately 2.4 years.",
            Decimal(2500000000),
            None,
        ),
    ],
)
def test_real_sentence_unrecognized_cost_takes_the_award_it_is_related_to(sentence: str, value: Decimal, award) -> None:
    facts, _ = read(sentence, date(2024, 12, 31) if "2024" in sentence else date(2025, 12, 31))
    [cost] = facts_of(facts, UNRECOGNIZED)
    assert cost.value == value and cost.dims.get("award") == award


def test_numbers_with_units_and_scale_words() -> None:
    sentence = (
        "$5.1 million over 3.41 years, 2.2 billion shares, 15% and 85 percent, four years, one-third, "
        "18 months, in 2024 under the 2015 Plan, Rule 10b5-1, Note 12, on March 1, 2024."
    )
    found = {n.text: n for n in find_numbers(sentence)}
    assert set(found) == {"5.1", "3.41", "2.2", "15", "85", "four", "one-third", "18"}
    assert found["5.1"].scaled("USD") == (Decimal("5100000"), 6)
    assert found["2.2"].scaled("shares")[0] == Decimal("2200000000")
    assert found["15"].scaled("pure")[0] == Decimal("0.15")
    assert found["18"].scaled("years")[0] == Decimal("1.5")
    assert found["one-third"].scaled("pure")[0] == Decimal("0.3333")


def test_quarter_and_year_to_date_phrases() -> None:
    calendar = FiscalCalendar.from_end(date(2024, 12, 31))
    [quarter, half] = find_phrases(
        "the three months ended June 30, 2025 and the six months ended June 30, 2025", calendar
    )
    assert (quarter.periods[0].start, quarter.periods[0].end) == (date(2025, 4, 1), date(2025, 6, 30))
    assert (half.periods[0].start, half.periods[0].end) == (date(2025, 1, 1), date(2025, 6, 30))
    [years] = find_phrases("for the years ended December 31, 2024, 2023 and 2022", calendar)
    assert [p.end for p in years.periods] == [date(2024, 12, 31), date(2023, 12, 31), date(2022, 12, 31)]


def test_the_lexicon_is_data_and_loads() -> None:
    cues = load_cues()
    targets = {c.target for c in cues}
    assert {
        "unrecognized_cost.amount",
        "unrecognized_cost.recognition_period",
        "plans.shares_available",
        "line_items.CommonStockCapitalSharesReservedForFutureIssuance",
        "expense",
    } <= targets


def test_real_sentence_a_grant_date_dates_the_later_sentences_of_its_paragraph() -> None:
    # ba-10q-2025q2 (fiscal year to December, quarter to June 2025): gold dates the fair value 2025-02-19, the
    # grant date the paragraph's first sentence names, not the fiscal year the 10-Q is part of.
    paragraph = (
        "On February 19, 2025, we granted 2,244,444 restricted stock units (RSU) to our executives as part of "
        "our long-term incentive program. The RSUs granted under this program have a grant date fair value of "
        "$184.53 per unit and will generally vest in three approximately equal installments."
    )
    facts, _ = read(paragraph, date(2025, 12, 31))
    [granted] = facts_of(facts, f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod")
    [fair_value] = facts_of(
        facts, f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriodWeightedAverageGrantDateFairValue"
    )
    assert granted.period.end_date == fair_value.period.end_date == date(2025, 2, 19)
    assert fair_value.value == Decimal("184.53") and fair_value.dims.get("award") == "rsu"


def test_real_sentence_a_carried_date_stops_at_the_next_date_phrase() -> None:
    # sam-10k-2013: the second sentence names its own years, so the January 1, 2014 grant date no longer applies.
    paragraph = (
        "On January 1, 2014, the Company granted performance based options to purchase an aggregate of 7,090 "
        "shares of the Company's Class A Common Stock with a weighted average fair value of $110.40 per share. "
        "During fiscal 2013, 2012 and 2011, the Company granted 11,987, 16,375 and 17,687 shares, respectively, "
        "of restricted stock awards to certain senior managers and key employees."
    )
    facts, _ = read(paragraph, date(2013, 12, 28))
    grants = {
        (f.value, f.period.end_date) for f in facts_of(facts, f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod")
    }
    assert (Decimal(11987), date(2013, 12, 28)) in grants and (Decimal(17687), date(2011, 12, 28)) in grants
