"""Table kinds real notes print beyond the roll-forward, read by the rules backend: each test is rows copied from
a corpus filing (named in its docstring), laid out as the filer's HTML lays them out, with the facts a reader
(and the filer's own XBRL) takes from them."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from extractor.backends.rules import extract
from extractor.loaders import load_text
from extractor.schemas.concepts import to_facts

P = "ShareBasedCompensationArrangementByShareBasedPaymentAward"
PL = "SharebasedCompensationArrangementBySharebasedPaymentAward"


def row(label: str, *cells: str) -> str:
    return "<tr><td>" + label + "</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def facts_of(html: str):
    extraction = extract(load_text(f"<html><body>{html}</body></html>"))
    return to_facts(extraction.note), extraction


def find(facts, concept: str, **dims: str):
    return {
        (f.period.end_date, f.value)
        for f in facts
        if f.concept == concept and all(f.dims.get(k) == v for k, v in dims.items())
    }


def test_percent_in_the_row_label_makes_the_cells_percentages() -> None:
    """hubs-10k-2023: 'Risk-free interest rate (%) | 3.46-4.37' is 3.46 % to 4.37 %, not 346 % to 437 %."""
    facts, _ = facts_of(
        "<p>Stock Options - The fair value of employee options is estimated using the Black-Scholes option-pricing"
        " model with the following assumptions:</p><table>"
        + row("", "Year Ended December 31,").replace("<td>Year", '<td colspan="2">Year')
        + row("", "2023", "2022")
        + row("Risk-free interest rate (%)", "3.46-4.37", "1.70-3.00")
        + row("Volatility (%)", "52.72-55.06", "43.19-50.58")
        + "</table>"
    )
    low = find(facts, f"{P}FairValueAssumptionsRiskFreeInterestRateMinimum", award="option")
    assert low == {(date(2023, 12, 31), Decimal("0.0346")), (date(2022, 12, 31), Decimal("0.017"))}
    assert (date(2023, 12, 31), Decimal("0.5506")) in find(
        facts, f"{P}FairValueAssumptionsExpectedVolatilityRateMaximum"
    )


def test_expense_by_income_statement_line_needs_no_caption() -> None:
    """hubs-10k-2023: the second of 'the following two tables' has no caption of its own; its rows are
    income-statement lines, so it is the expense by line."""
    facts, _ = facts_of(
        "<p>The following two tables show stock compensation expense by award type and where it is recorded:</p>"
        "<table>"
        + row("", "2023", "2022")
        + row("Options", "$ 11,555", "$ 9,713")
        + row("RSUs", "391,810", "253,838")
        + row("Total stock-based compensation", "$ 403,365", "$ 263,551")
        + "</table>"
        "<table>"
        + row("", "2023", "2022")
        + '<tr><td></td><td colspan="2">(in thousands)</td></tr>'
        + row("Research and development", "198,953", "107,517")
        + row("Sales and marketing", "140,362", "107,640")
        + row("General and administrative", "64,050", "48,394")
        + row("Total stock-based compensation", "$ 403,365", "$ 263,551")
        + "</table>"
    )
    by_line = find(facts, "AllocatedShareBasedCompensationExpense", line_item="research and development")
    assert by_line == {(date(2023, 12, 31), Decimal(198953000)), (date(2022, 12, 31), Decimal(107517000))}
    assert not [f for f in facts if f.concept.startswith("ext:")]


def test_options_by_exercise_price_range() -> None:
    """goog-10k-2013: options outstanding and exercisable by range of exercise prices, as of the year end."""
    facts, _ = facts_of(
        "<p>The following table summarizes additional information regarding outstanding, and vested and exercisable"
        " stock options as of December 31, 2013:</p><table>"
        + row(
            "",
            "Options Outstanding",
            "Options Outstanding",
            "Options Outstanding",
            "Options Exercisable",
            "Options Exercisable",
        )
        + row(
            "Range of Exercise Prices",
            "Number of Shares",
            "Weighted- Average Remaining Life (in years)",
            "Weighted- Average Exercise Price",
            "Number of Shares",
            "Weighted- Average Exercise Price",
        )
        + row("$3.75–$92.23", "22,905", "2.2", "$ 68.89", "22,905", "$ 68.89")
        + row("$300.97–$399.00", "2,098,774", "3.5", "$ 309.82", "2,066,572", "$ 309.83")
        + "</table>"
    )
    end = date(2013, 12, 31)
    assert find(facts, f"{P}OptionsOutstandingNumber", award="option", price_range="300.97-399.00") == {
        (end, Decimal(2098774))
    }
    assert find(facts, f"{P}OptionsExercisableWeightedAverageExercisePrice", price_range="300.97-399.00") == {
        (end, Decimal("309.83"))
    }
    assert find(facts, f"{PL}OptionsOutstandingWeightedAverageRemainingContractualTerm2", price_range="3.75-92.23") == {
        (end, Decimal("2.2"))
    }
    lower = "ShareBasedCompensationSharesAuthorizedUnderStockOptionPlansExercisePriceRangeLowerRangeLimit"
    assert find(facts, lower, price_range="3.75-92.23") == {(end, Decimal("3.75"))}


def test_years_as_rows_and_columns_named_for_the_espp() -> None:
    """hubs-10k-2023: the ESPP table prints years as rows; each column names what its numbers are."""
    facts, _ = facts_of(
        "<p>The following table summarizes the activity related to ESPP:</p><table>"
        + row(
            "", "Shares Issued (in thousands)", "Weighted- Average Purchase Price", "Total Cash Proceeds (in thousands)"
        )
        + row("2023", "127", "$ 319.70", "$ 40,479")
        + row("2022", "121", "$ 272.72", "$ 33,046")
        + "</table>"
    )
    assert find(facts, "StockIssuedDuringPeriodSharesEmployeeStockPurchasePlans") == {
        (date(2023, 12, 31), Decimal(127000)),
        (date(2022, 12, 31), Decimal(121000)),
    }
    assert (date(2022, 12, 31), Decimal("272.72")) in find(facts, f"{P}PerShareWeightedAveragePriceOfSharesPurchased")
    assert (date(2022, 12, 31), Decimal(33046000)) in find(facts, "ProceedsFromStockPlans")


def test_shares_reserved_named_by_the_caption_at_the_dates_over_the_columns() -> None:
    """hubs-10k-2023: '500 million shares' in the caption is no scale note; '(in thousands)' is. The columns are
    balance dates, the caption says what every row is."""
    facts, _ = facts_of(
        "<p>Common Stock Reserved - As of December 31, 2023 and 2022, the Company has authorized 500 million shares of"
        " common stock. The number of shares of common stock reserved for the vesting of RSUs, PSUs, and exercise of"
        " common stock options are as follows (in thousands):</p><table>"
        + row("", "December 31, 2023", "December 31, 2022")
        + row("RSUs", "1,902", "1,580")
        + row("Common stock options", "470", "462")
        + row("", "2,372", "2,042")
        + "</table>"
    )
    reserved = "CommonStockCapitalSharesReservedForFutureIssuance"
    assert find(facts, reserved, award="rsu") == {
        (date(2023, 12, 31), Decimal(1902000)),
        (date(2022, 12, 31), Decimal(1580000)),
    }
    assert [f.period.instant for f in facts if f.concept == reserved and f.value == Decimal(2042000)] == [
        date(2022, 12, 31)
    ]


def test_a_roll_forward_with_a_column_group_per_year() -> None:
    """aame-10k-2013: '2013 | Shares, Price' beside '2012 | Shares, Price': each year is its own roll-forward."""
    facts, _ = facts_of(
        "<p>A summary of the status of the Company's stock options at December 31, 2013 and 2012 is as follows:</p>"
        "<table>"
        + row("", "2013", "2013", "2012", "2012")
        + row("Options", "Shares", "Weighted Average Exercise Price", "Shares", "Weighted Average Exercise Price")
        + row("Options outstanding, beginning of year", "77,000", "$ 1.59", "231,000", "$ 1.68")
        + row("Options exercised", "(62,500)", "1.59", "(150,000)", "1.73")
        + row("Options canceled or expired", "(14,500)", "1.59", "(4,000)", "1.59")
        + row("Options outstanding, end of year", "-", "-", "77,000", "1.59")
        + row("Options available for future grant", "1,800,000", "", "2,000,000", "")
        + "</table>"
    )
    outstanding = find(facts, f"{P}OptionsOutstandingNumber", award="option")
    assert outstanding == {(date(2012, 12, 31), Decimal(77000)), (date(2011, 12, 31), Decimal(231000))}
    assert find(facts, f"{P}OptionsExercisesInPeriod") == {
        (date(2013, 12, 31), Decimal(62500)),
        (date(2012, 12, 31), Decimal(150000)),
    }
    assert (date(2013, 12, 31), Decimal(1800000)) in find(facts, f"{P}NumberOfSharesAvailableForGrant")


BOEING_LIKE = (  # ba-10k-2024: the note states no scale; 'Dollars in millions' is printed once, above all the notes
    "<p>Stock option activity for the year ended December 31, 2024 was as follows:</p><table>"
    + row("", "Shares", "Weighted Average Exercise Price Per Option")
    + row("Outstanding at beginning of year", "792,662", "$ 252.35")
    + row("Granted", "124,374", "200.83")
    + row("Outstanding at end of year", "903,999", "$ 245.76")
    + "</table>"
    "<p>Share-based plans expense is primarily included in General and administrative expense as follows:</p><table>"
    + row("Years ended December 31,", "2024", "2023")
    + row("Restricted stock units and other awards", "$ 409", "$ 697")
    + "</table>"
)


def test_dollars_of_a_note_that_states_no_scale_take_the_only_plausible_one() -> None:
    """$409 of expense next to 903,999 options at $245.76 ($222 million): the dollars are in millions."""
    facts, extraction = facts_of(BOEING_LIKE)
    assert find(facts, "AllocatedShareBasedCompensationExpense") >= {(date(2024, 12, 31), Decimal(409000000))}
    assert any("read in millions" in w for w in extraction.warnings)
    assert find(facts, f"{P}OptionsOutstandingWeightedAverageExercisePrice") >= {
        (date(2024, 12, 31), Decimal("245.76"))
    }


def test_a_stated_scale_or_plausible_dollars_are_left_as_printed() -> None:
    stated = BOEING_LIKE.replace("as follows:", "as follows (in thousands):")
    facts, extraction = facts_of(stated)
    assert find(facts, "AllocatedShareBasedCompensationExpense") >= {(date(2024, 12, 31), Decimal(409000))}
    small = BOEING_LIKE.replace("$ 409", "$ 40,900,000")
    facts, extraction = facts_of(small)
    assert (date(2024, 12, 31), Decimal(40900000)) in find(facts, "AllocatedShareBasedCompensationExpense")
    assert not any("read in" in w for w in extraction.warnings)


def test_one_roll_forward_over_rsus_and_psus_together_is_classed_performance() -> None:
    """hubs-10k-2023: 'the activity related to RSUs and PSUs' is one table over both; the filer's member
    (RestrictedStockUnitsAndPerformanceRestrictedStockUnitsMember) is classed by its most specific award."""
    facts, _ = facts_of(
        "<p>The following table summarizes the activity related to RSUs and PSUs for the year ended December 31,"
        " 2023:</p><table>"
        + row("", "Shares (in thousands)", "Weighted- Average Grant Date Fair Value Per Share")
        + row("Unvested and outstanding at January 1, 2023", "1,580", "$ 378.12")
        + row("Granted", "1,666", "410.65")
        + row("Vested", "(1,063)", "360.31")
        + row("Forfeited", "(223)", "389.82")
        + row("Unvested and outstanding at December 31, 2023", "1,960", "$ 414.11")
        + "</table>"
    )
    granted = find(facts, f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", award="psu")
    assert granted == {(date(2023, 12, 31), Decimal(1666000))}
    assert not find(facts, f"{P}EquityInstrumentsOtherThanOptionsGrantsInPeriod", award="rsu")


def test_a_cumulative_repurchase_table_with_a_row_per_year() -> None:
    """sam-10k-2013: balances 'Repurchased at <date>' between '2012 repurchases' rows; 'Aggregate Purchase
    Price (in thousands)' is dollars, not a price per share, and each year row is that fiscal year's flow."""
    facts, _ = facts_of(
        "<p>For the fiscal year ended December 28, 2013, the Company has repurchased a cumulative total of"
        " approximately 10.9 million shares as follows:</p><table>"
        + row("", "Number of Shares", "Aggregate Purchase Price (in thousands)")
        + row("Repurchased at December 31, 2011", "10,531,539", "$ 251,896")
        + row("2012 repurchases", "165,192", "18,047")
        + row("Repurchased at December 29, 2012", "10,696,731", "$ 269,943")
        + row("2013 repurchases", "195,728", "29,585")
        + row("Repurchased at December 28, 2013", "10,892,459", "$ 299,528")
        + "</table>"
    )
    assert find(facts, "StockRepurchasedDuringPeriodShares") == {
        (date(2012, 12, 29), Decimal(165192)),
        (date(2013, 12, 28), Decimal(195728)),
    }
    assert (date(2013, 12, 28), Decimal(29585000)) in find(facts, "PaymentsForRepurchaseOfCommonStock")
    cumulative = {(f.period.instant, f.value) for f in facts if f.concept.startswith("ext:")}
    assert (date(2012, 12, 29), Decimal(10696731)) in cumulative  # the balances are kept, at their dates


def test_a_dividend_yield_range_gives_both_ends() -> None:
    """unh-10k-2024: 'Expected dividend yield | 1.4-1.5%' has no Minimum/Maximum element: two facts with bounds."""
    facts, _ = facts_of(
        "<p>The principal assumptions the Company used in calculating grant-date fair value for stock options"
        " were as follows:</p><table>"
        + row("", "2024", "2023")
        + row("Risk-free interest rate", "3.6 - 4.4%", "3.8 - 4.6%")
        + row("Expected dividend yield", "1.4 - 1.5%", "1.3 - 1.5%")
        + "</table>"
    )
    dividend = f"{P}FairValueAssumptionsExpectedDividendRate"
    assert find(facts, dividend, bound="max") == {
        (date(2024, 12, 31), Decimal("0.015")),
        (date(2023, 12, 31), Decimal("0.015")),
    }
    assert (date(2024, 12, 31), Decimal("0.014")) in find(facts, dividend, bound="min")


def test_unit_counts_by_plan_are_one_roll_forward_per_plan_column() -> None:
    """ba-10k-2023: 'Number of units' over three program columns: each column is its own RSU roll-forward
    (dims.plan keeps them apart), and the rows under it (unrecognized cost) stay with their plan."""
    facts, _ = facts_of(
        "<p>RSU activity for the year ended December 31, 2023 was as follows:</p><table>"
        + row("", "Executive Long-Term Incentive Program", "Employee Long-Term Incentive Program", "Other")
        + row("Number of units:")
        + row("Outstanding at beginning of year", "6,117,900", "4,373,807", "958,694")
        + row("Granted", "411,134", "", "142,711")
        + row("Forfeited", "(229,226)", "(106,087)", "(32,253)")
        + row("Distributed", "(950,318)", "(4,242,199)", "(303,642)")
        + row("Outstanding at end of year", "5,349,490", "25,521", "765,510")
        + row("Unrecognized compensation cost (in millions)", "$ 366", "", "$ 55")
        + "</table>"
    )
    nonvested = f"{P}EquityInstrumentsOtherThanOptionsNonvestedNumber"
    assert find(facts, nonvested, award="rsu", plan="Other") == {
        (date(2022, 12, 31), Decimal(958694)),
        (date(2023, 12, 31), Decimal(765510)),
    }
    assert find(
        facts, f"{P}EquityInstrumentsOtherThanOptionsVestedInPeriod", plan="Employee Long-Term Incentive Program"
    ) == {(date(2023, 12, 31), Decimal(4242199))}
    unrecognized = "EmployeeServiceShareBasedCompensationNonvestedAwardsTotalCompensationCostNotYetRecognized"
    assert find(facts, unrecognized, plan="Other") == {(date(2023, 12, 31), Decimal(55000000))}


def test_a_table_whose_first_column_holds_numbers_has_no_row_labels() -> None:
    """aaoi-10k-2013: '2013 | Shares, Weighted average fair value' per year and one row of numbers with no
    label; the caption says they are options granted, and '(shares in thousands)' scales the counts."""
    facts, _ = facts_of(
        "<p>The number and weighted average fair value of options granted in 2013 and 2012 is as follows:</p><table>"
        + '<tr><td colspan="2">2013</td><td colspan="2">2012</td></tr>'
        + "<tr><td>Shares</td><td>Weighted average fair value</td><td>Shares</td><td>Weighted average fair value</td></tr>"
        + '<tr><td colspan="4">(shares in thousands)</td></tr>'
        + "<tr><td>1,099</td><td>$ 4.9986</td><td>88</td><td>$ 4.9260</td></tr></table>"
    )
    assert find(facts, f"{P}OptionsGrantsInPeriodGross", award="option") == {
        (date(2013, 12, 31), Decimal(1099000)),
        (date(2012, 12, 31), Decimal(88000)),
    }
    assert (date(2012, 12, 31), Decimal("4.9260")) in find(
        facts, f"{P}OptionsGrantsInPeriodWeightedAverageGrantDateFairValue"
    )


def test_a_footnote_mark_or_a_price_range_in_the_first_column_is_still_a_label() -> None:
    """goog-10q-2014q2 / gahc-10q-2024q3: '(1) | The aggregate intrinsic value ...' is a footnote, not a value
    of 1; '7,500,000 | 0.00250' under 'Number of Warrants | Exercise Price' is two values."""
    _, extraction = facts_of(
        "<table><tr><td>(1)</td><td>The aggregate intrinsic value is calculated as the difference.</td></tr></table>"
        "<p>The exercise price for warrants outstanding on September 30, 2024:</p><table>"
        + row("Number of Warrants", "Exercise Price")
        + "<tr><td>7,500,000</td><td>$ 0.00250</td></tr><tr><td>1,077,812,876</td><td>0.00100</td></tr></table>"
    )
    values = {item.amount.value for item in extraction.note.line_items}
    assert Decimal(1) not in values
    assert {Decimal(7500000), Decimal(1077812876), Decimal("0.0025")} <= values


def test_a_fair_value_row_under_the_assumptions_is_the_years_grant_fair_value() -> None:
    """ma-10k-2024: 'Weighted-average fair value per Option granted' is printed as the last row of the
    Black-Scholes assumptions table; it is the grant-date fair value of the year's options, no ext: line."""
    facts, _ = facts_of(
        "<p>The fair value of options granted is estimated using a Black-Scholes valuation model with the following"
        " assumptions:</p><table>"
        + row("", "2024", "2023")
        + row("Expected volatility", "28.7 %", "29.5 %")
        + row("Weighted-average fair value per Option granted", "$ 164.66", "$ 123.22")
        + "</table>"
    )
    assert find(facts, f"{P}OptionsGrantsInPeriodWeightedAverageGrantDateFairValue", award="option") == {
        (date(2024, 12, 31), Decimal("164.66")),
        (date(2023, 12, 31), Decimal("123.22")),
    }
    assert not [f for f in facts if f.concept.startswith("ext:")]


def test_the_intrinsic_value_of_units_at_a_balance_date() -> None:
    """ma-10k-2024: 'Outstanding at December 31, 2024 | 3 | $ 336 | 1.4 | $ 1,081' in an RSU table: the units'
    aggregate intrinsic value and remaining term have taxonomy elements of their own."""
    facts, _ = facts_of(
        "<p>The following table summarizes the Company's RSU activity:</p><table>"
        + row(
            "",
            "Units (in millions)",
            "Weighted-Average Grant-Date Fair Value",
            "Weighted-Average Remaining Contractual Term (in years)",
            "Aggregate Intrinsic Value (in millions)",
        )
        + row("Outstanding at January 1, 2024", "3", "$ 320", "", "")
        + row("Granted", "1", "447", "", "")
        + row("Converted", "(1)", "303", "", "")
        + row("Outstanding at December 31, 2024", "3", "$ 336", "1.4", "$ 1,081")
        + "</table>"
    )
    assert find(facts, f"{PL}EquityInstrumentsOtherThanOptionsAggregateIntrinsicValueOutstanding", award="rsu") == {
        (date(2024, 12, 31), Decimal(1081000000))
    }
    assert find(facts, f"{P}EquityInstrumentsOtherThanOptionsOutstandingWeightedAverageRemainingContractualTerms") == {
        (date(2024, 12, 31), Decimal("1.4"))
    }
