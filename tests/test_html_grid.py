"""HTML table grids, end to end: real <table> fragments from the shared corpus (inline XBRL stripped, styles
and colspans kept) -> Document text and grids -> typed Table columns -> facts; plus header forms and periods.

The fragments at the bottom of this file are copied rows of real filings' tables (see each constant's note).
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from extractor.loaders import load_text
from extractor.periods import FiscalCalendar, fiscal_frame
from extractor.tables.from_grid import grid_tables
from extractor.tables.headers import header_dates, header_period, measure_kind

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "real"
SECTIONS = sorted(CORPUS.glob("*/section.html")) if CORPUS.is_dir() else []
needs_corpus = pytest.mark.skipif(not SECTIONS, reason="../shared/corpus/real is not here (not part of the repository)")


def strip_ix(raw: str) -> str:
    """What /work/shared/tools/strip_ix.py does: drop ix:header, unwrap every other ix: element."""
    raw = re.sub(r"<ix:header\b.*?</ix:header>", "", raw, flags=re.S | re.I)
    raw = re.sub(r"</?ix:[^>]*>", "", raw, flags=re.I)
    return re.sub(r"\s(?:contextref|unitref|decimals|scale|format|sign|continuedat)=\"[^\"]*\"", "", raw, flags=re.I)


def doc_of(fragment: str):
    return load_text(f"<html><body><p>The following table summarizes the activity.</p>{fragment}</body></html>")


def only_table(fragment: str):
    doc = doc_of(fragment)
    tables = grid_tables(doc)
    assert len(tables) == 1, [t.header_lines for t in tables]
    return doc, tables[0]


def row(table, label_start: str):
    return next(r for r in table.rows if r.label.startswith(label_start))


def value(cell):
    """(magnitude, negative, currency) of a one-number cell; None for an empty one."""
    if cell.empty:
        return None
    assert len(cell.numbers) == 1
    n = cell.numbers[0]
    return n.magnitude, n.negative, n.currency


def line_of(doc, label: str) -> list[str]:
    return next(line for line in doc.text.split("\n") if line.startswith(label)).split("\t")


# --- 1. a year header spanning several cells over `$` + number cells -------------------------------------


def test_colspan_year_header_gives_three_year_columns():
    doc, table = only_table(WMT_EXPENSE)
    assert [c.kind for c in table.columns] == ["year", "year", "year"]
    assert [c.year for c in table.columns] == [2025, 2024, 2023]
    assert all(c.month_day == (1, 31) for c in table.columns)
    assert all(c.months == 12 for c in table.columns)
    assert all("Fiscal Years Ended January 31," in c.header for c in table.columns)
    rsu = row(table, "Restricted stock units")
    assert [value(c) for c in rsu.cells] == [
        (Decimal("1909"), False, True),
        (Decimal("1258"), False, True),
        (Decimal("927"), False, True),
    ]
    assert table.scale == 6  # "(Amounts in millions)"


def test_colspan_header_grid_cell_covers_the_year_columns():
    doc = doc_of(WMT_EXPENSE)
    (grid,) = doc.grids
    assert grid.cols == 4  # label + three years: spacer and `$` columns dropped
    top = list(grid.row_cells(0))
    assert [(c.col, c.colspan, doc.text[c.start : c.end]) for c in top] == [(1, 3, "Fiscal Years Ended January 31,")]
    assert line_of(doc, "Restricted stock units") == ["Restricted stock units", "$ 1,909", "$ 1,258", "$ 927"]
    assert line_of(doc, "(Amounts in millions)") == ["(Amounts in millions)", "2025", "2024", "2023"]


# --- 2. a blank cell mid-row keeps later values in their own columns ------------------------------------


def test_dash_cells_mid_row_keep_later_values_in_place():
    doc, table = only_table(WMT_ACTIVITY)
    adj = row(table, "Adjustment for performance achievement")
    assert [value(c) for c in adj.cells] == [
        None,
        None,
        (Decimal("3661"), False, False),
        (Decimal("47.35"), False, False),
    ]
    assert line_of(doc, "Adjustment for performance achievement") == [
        "Adjustment for performance achievement(1)",
        "\u2014",
        "\u2014",
        "3,661",
        "47.35",
    ]


def test_empty_middle_year_cell_keeps_2023_under_2023():
    blanked = WMT_EXPENSE.replace(">609&#160;<", ">&#160;<")
    assert blanked != WMT_EXPENSE
    doc, table = only_table(blanked)
    rs = row(table, "Restricted stock and performance-based")
    assert [c.year for c in table.columns] == [2025, 2024, 2023]
    assert [value(c) for c in rs.cells] == [(Decimal("632"), False, False), None, (Decimal("444"), False, False)]
    # the text keeps the empty field, so the line still has four fields
    assert line_of(doc, "Restricted stock and performance-based") == [
        "Restricted stock and performance-based restricted stock units",
        "632",
        "",
        "444",
    ]


def test_hyphen_cells_before_values_in_year_over_measure_table():
    doc, table = only_table(AAME_OPTIONS)
    end = row(table, "Options outstanding, end of year")
    assert [value(c) for c in end.cells] == [
        None,
        None,
        (Decimal("77000"), False, False),
        (Decimal("1.59"), False, False),
    ]
    assert [(c.kind, c.year) for c, v in zip(table.columns, end.cells) if not v.empty] == [
        ("count", 2012),
        ("price", 2012),
    ]


# --- 3. `$` and `)` in their own cells --------------------------------------------------------------------


def test_close_paren_in_own_cell_merges_into_negative_number():
    doc, table = only_table(GOOG_OPTIONS)
    exercised = row(table, "Exercised")
    assert value(exercised.cells[0]) == (Decimal("1607444"), True, False)
    assert value(exercised.cells[1]) == (Decimal("202.17"), False, True)
    assert line_of(doc, "Exercised")[:3] == ["Exercised", "(1,607,444)", "$ 202.17"]  # trailing empties may drop
    (grid,) = doc.grids
    texts = [doc.text[c.start : c.end] for c in grid.cells]
    assert ")" not in texts and "$" not in texts


def test_dollar_in_own_cell_merges_into_currency_number():
    doc, table = only_table(WMT_ACTIVITY)
    outstanding = row(table, "Outstanding as of February 1, 2024")
    assert value(outstanding.cells[1]) == (Decimal("46.79"), False, True)
    assert value(outstanding.cells[0]) == (Decimal("49191"), False, False)
    assert line_of(doc, "Outstanding as of February 1, 2024")[2] == "$ 46.79"
    vested = row(table, "Vested/exercised")
    assert value(vested.cells[0]) == (Decimal("36974"), True, False)
    assert value(vested.cells[2]) == (Decimal("12353"), True, False)


# --- 4. N/A is an empty value -----------------------------------------------------------------------------


def test_na_cells_are_empty_values_not_rows_or_headers():
    doc, table = only_table(GOOG_VALUATION)
    assert [r.label for r in table.rows] == ["Risk-free interest rate", "Expected volatility"]
    rate = row(table, "Risk-free interest rate")
    assert [c.empty for c in rate.cells] == [True, True, False, True]
    n = rate.cells[2].numbers[0]
    assert (n.magnitude, n.percent) == (Decimal("0.9"), True)
    assert not any("N/A" in h for h in table.header_lines)
    assert [(c.year, c.months, c.month_day) for c in table.columns] == [
        (2013, 3, (6, 30)),
        (2014, 3, (6, 30)),
        (2013, 6, (6, 30)),
        (2014, 6, (6, 30)),
    ]


# --- 5. multi-level headers and award groups ---------------------------------------------------------------


def test_year_over_two_measures():
    doc, table = only_table(AAME_OPTIONS)
    assert [(c.kind, c.year) for c in table.columns] == [
        ("count", 2013),
        ("price", 2013),
        ("count", 2012),
        ("price", 2012),
    ]
    begin = row(table, "Options outstanding, beginning of year")
    assert value(begin.cells[2]) == (Decimal("231000"), False, False)
    assert value(begin.cells[3]) == (Decimal("1.68"), False, True)
    exercised = row(table, "Options exercised")
    assert value(exercised.cells[0]) == (Decimal("62500"), True, False)


def test_measure_over_several_years():
    parts = [["Weighted-Average Grant Date Fair Value", "2024"], ["Weighted-Average Grant Date Fair Value", "2023"]]
    assert [measure_kind(p) for p in parts] == ["fair_value", "fair_value"]
    assert [header_period(p).year for p in parts] == [2024, 2023]
    assert measure_kind(["2024", "Shares"]) == "count"
    assert measure_kind(["2024", "Weighted-Average Grant Date Fair Value"]) == "fair_value"


def test_side_by_side_award_groups_set_column_award():
    doc, table = only_table(WMT_ACTIVITY)
    assert [c.kind for c in table.columns] == ["count", "fair_value", "count", "fair_value"]
    awards = [c.award for c in table.columns]
    assert awards[0] == awards[1] == "rsu"
    assert awards[2] == awards[3] is not None
    assert awards[2] != "rsu"
    assert table.columns[0].header == "Restricted Stock Units | Shares"
    assert table.columns[2].header.startswith("Restricted Stock and Performance-based Restricted Stock Units | ")
    assert table.scale == 3  # "(Shares in thousands)"


def test_stacked_measure_headers_under_one_spanning_title():
    doc, table = only_table(GOOG_OPTIONS)
    assert [c.kind for c in table.columns] == ["count", "price", "term", "intrinsic"]
    assert all(c.award == "option" for c in table.columns)
    assert table.columns[3].scale == 6  # "Aggregate Intrinsic Value (in millions)"


def test_one_column_scale_does_not_scale_the_other_columns():
    doc, table = only_table(GOOG_OPTIONS)
    assert table.columns[0].scale is None
    assert table.scale == 0


# --- 6. header and date forms ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Jan 31, 2025", date(2025, 1, 31)),
        ("Jan. 31, 2025", date(2025, 1, 31)),
        ("January 31, 2025", date(2025, 1, 31)),
        ("12/31/2024", date(2024, 12, 31)),
        ("As of 6/30/25", date(2025, 6, 30)),
    ],
)
def test_header_dates_forms(text, expected):
    assert header_dates(text) == [expected]
    period = header_period([text])
    assert (period.end, period.year) == (expected, expected.year)


@pytest.mark.parametrize(
    "parts, year, months, month_day",
    [
        (["Fiscal 2024"], 2024, None, None),
        (["2024"], 2024, None, None),
        (["Three Months Ended June 30,", "2025"], 2025, 3, (6, 30)),
        (["Six Months Ended June 30,", "2025"], 2025, 6, (6, 30)),
        (["Six Months Ended", "2024"], 2024, 6, None),
        (["Year Ended December 31,", "2023"], 2023, 12, (12, 31)),
        (["Fiscal Years Ended January 31,", "2025"], 2025, 12, (1, 31)),
    ],
)
def test_header_period_forms(parts, year, months, month_day):
    period = header_period(parts)
    assert (period.end, period.year, period.months, period.month_day) == (None, year, months, month_day)


def test_header_period_full_date_under_months_phrase():
    period = header_period(["Nine Months Ended", "September 30, 2024"])
    assert (period.end, period.year, period.months) == (date(2024, 9, 30), 2024, 9)


# --- 7. quarter columns of a 10-Q become quarter and half-year facts ---------------------------------------


@needs_corpus
def test_hubs_10q_quarter_and_six_month_periods():
    from extractor.backends.rules import extract
    from extractor.schemas.concepts import to_facts

    path = CORPUS / "hubs-10q-2025q2" / "section.html"
    if not path.exists():
        pytest.skip("hubs-10q-2025q2 is not in the corpus")
    doc = load_text(strip_ix(path.read_text(encoding="utf-8", errors="replace")), path=str(path), doc_id="hubs")
    facts = [
        f
        for f in to_facts(extract(doc).note)
        if f.concept == "AllocatedShareBasedCompensationExpense" and f.dims.get("award") == "rsu"
    ]
    by_value = {f.value: f.period for f in facts}
    quarter = by_value[Decimal("128488000")]
    assert (quarter.start, quarter.end) == (date(2025, 4, 1), date(2025, 6, 30))
    half = by_value[Decimal("234428000")]
    assert (half.start, half.end) == (date(2025, 1, 1), date(2025, 6, 30))
    prior_quarter = by_value[Decimal("116913000")]
    assert (prior_quarter.start, prior_quarter.end) == (date(2024, 4, 1), date(2024, 6, 30))


@needs_corpus
def test_goog_10q_option_counts_are_not_scaled_by_intrinsic_value_header():
    from extractor.backends.rules import extract
    from extractor.schemas.concepts import to_facts

    path = CORPUS / "goog-10q-2014q2" / "section.html"
    if not path.exists():
        pytest.skip("goog-10q-2014q2 is not in the corpus")
    doc = load_text(strip_ix(path.read_text(encoding="utf-8", errors="replace")), path=str(path), doc_id="goog")
    counts = {
        f.period.instant: f.value
        for f in to_facts(extract(doc).note)
        if f.concept == "ShareBasedCompensationArrangementByShareBasedPaymentAwardOptionsOutstandingNumber"
    }
    assert counts[date(2013, 12, 31)] == Decimal("10065726")


# --- 8. every grid cell's span is the text at that span ----------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("path", SECTIONS, ids=[p.parent.name for p in SECTIONS])
def test_grid_cell_spans_match_text(path):
    doc = load_text(strip_ix(path.read_text(encoding="utf-8", errors="replace")), path=str(path))
    for grid in doc.grids:
        assert 0 <= grid.start <= grid.end <= len(doc.text)
        for cell in grid.cells:
            assert grid.start <= cell.start <= cell.end <= grid.end
            assert 0 <= cell.col < grid.cols and cell.col + cell.colspan <= grid.cols
            span = doc.text[cell.start : cell.end]
            assert span and span == span.strip(), (cell, span)
            assert "\n" not in span and "\t" not in span
            line_start = grid.row_starts[cell.row]
            assert doc.text.rfind("\n", 0, cell.start) + 1 == line_start, (cell, span)


def test_fragment_cell_spans_match_text():
    for fragment in (WMT_EXPENSE, WMT_ACTIVITY, GOOG_VALUATION, GOOG_OPTIONS, AAME_OPTIONS):
        doc = doc_of(fragment)
        (grid,) = doc.grids
        for cell in grid.cells:
            line = doc.text[grid.row_starts[cell.row] :].split("\n", 1)[0]
            fields = line.split("\t")
            assert doc.text[cell.start : cell.end] == fields[cell.col].strip()


# --- 9. the fiscal calendar is what the filing says --------------------------------------------------------


def test_fiscal_frame_reads_stated_year_end_not_bond_maturity():
    text = (
        "Share-based compensation expense for the fiscal years ended January 31, 2025, 2024 and 2023 is "
        "shown below. In fiscal 2025 we issued 5.50% bonds due April 15, 2053."
    )
    frame = fiscal_frame(text, None)
    assert (frame.calendar.month, frame.calendar.day) == (1, 31)
    assert frame.said
    assert frame.latest is not None and frame.latest.year != 2053
    assert frame.latest == date(2025, 1, 31)
    assert frame.calendar.year_end(2025) == date(2025, 1, 31)


def test_fiscal_frame_without_stated_end_ignores_far_future_maturity():
    text = "As of December 31, 2024 the notes due April 15, 2053 were outstanding. As of December 31, 2024 we had cash."
    frame = fiscal_frame(text, None)
    assert frame.latest == date(2024, 12, 31)
    assert (frame.calendar.month, frame.calendar.day) == (12, 31)


def test_anchored_52_53_week_calendar():
    cal = FiscalCalendar.anchored(12, 28, date(2013, 12, 28))
    assert cal.weekday == date(2013, 12, 28).weekday()
    assert cal.year_end(2013) == date(2013, 12, 28)
    assert cal.year_end(2012) == date(2012, 12, 29)
    assert cal.year_end(2011) == date(2011, 12, 31)
    assert cal.period(2013).start == date(2012, 12, 30)


def test_month_end_calendar_is_not_anchored():
    cal = FiscalCalendar.anchored(1, 31, date(2025, 1, 31))
    assert cal.weekday is None
    assert cal.year_end(2024) == date(2024, 1, 31)
    feb = FiscalCalendar.anchored(2, 29, date(2020, 2, 29))
    assert feb.year_end(2021) == date(2021, 2, 28)


# --- real fragments (inline XBRL stripped; rows dropped, markup otherwise as filed) -------------------------

# wmt-10k-2025: share-based compensation expense; the "Other" row dropped.
WMT_EXPENSE = """\
<table style="border-collapse:collapse;display:inline-table;margin-bottom:5pt;vertical-align:text-bottom;width:99.415%">
<tr><td style="width:1.0%"/><td style="width:58.752%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:11.694%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.535%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:11.841%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.535%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:11.843%"/><td style="width:0.1%"/></tr>
<tr><td colspan="3" style="padding:2px 1pt;text-align:left;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">&#160;</span></td><td colspan="15" style="padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Fiscal Years Ended January 31,</span></td></tr>
<tr><td colspan="3" style="padding:2px 1pt;text-align:left;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-style:italic;font-weight:400;line-height:100%">(Amounts in millions)</span></td><td colspan="3" style="border-top:1pt solid #000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">2025</span></td><td colspan="3" style="border-top:1pt solid #000000;padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">2024</span></td><td colspan="3" style="border-top:1pt solid #000000;padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">2023</span></td></tr>
<tr><td colspan="3" style="background-color:#cceeff;padding:2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">Restricted stock units</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">1,909&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">1,258&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">927&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
<tr><td colspan="3" style="background-color:#ffffff;padding:2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">Restricted stock and performance-based restricted stock units</span></td><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">632&#160;</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">609&#160;</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">444&#160;</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
<tr><td colspan="3" style="background-color:#ffffff;padding:2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Share-based compensation expense</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">2,769&#160;</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">2,093&#160;</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">1,578&#160;</span></td><td style="background-color:#ffffff;border-bottom:3pt double #000000;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
</table>
"""

# wmt-10k-2025: restricted stock activity; the Granted and Forfeited and closing rows dropped.
WMT_ACTIVITY = """\
<table style="border-collapse:collapse;display:inline-table;margin-bottom:5pt;vertical-align:text-bottom;width:100.000%">
<tr><td style="width:1.0%"/><td style="width:38.227%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.530%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:13.373%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.530%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:13.227%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.530%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:13.373%"/><td style="width:0.1%"/><td style="width:0.1%"/><td style="width:0.530%"/><td style="width:0.1%"/><td style="width:1.0%"/><td style="width:13.380%"/><td style="width:0.1%"/></tr>
<tr><td colspan="3" style="padding:0 1pt"/><td colspan="3" style="padding:0 1pt"/><td colspan="9" style="padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Restricted Stock Units</span></td><td colspan="3" style="padding:0 1pt"/><td colspan="9" style="padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Restricted Stock and <br/>Performance-based Restricted Stock Units</span></td></tr>
<tr><td colspan="3" style="padding:2px 1pt;text-align:left;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-style:italic;font-weight:400;line-height:100%">(Shares in thousands)</span></td><td colspan="3" style="padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Shares</span></td><td colspan="3" style="border-top:1pt solid #000000;padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Weighted-Average Grant-Date Fair Value Per Share</span></td><td colspan="3" style="padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Shares</span></td><td colspan="3" style="border-top:1pt solid #000000;padding:0 1pt"/><td colspan="3" style="border-top:1pt solid #000000;padding:2px 1pt;text-align:center;vertical-align:bottom"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:700;line-height:100%">Weighted-Average Grant-Date Fair Value Per Share</span></td></tr>
<tr><td colspan="3" style="background-color:#cceeff;padding:2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">Outstanding as of February 1, 2024</span></td><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">49,191&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">46.79&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">23,103&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0 2px 1pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">$</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 0;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">48.09&#160;</span></td><td style="background-color:#cceeff;border-top:1pt solid #000000;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
<tr><td colspan="3" style="background-color:#cceeff;padding:2px 1pt;text-align:left;vertical-align:middle"><div style="padding-left:18pt"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">Adjustment for performance achievement</span><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:5.2pt;font-weight:400;line-height:100%;position:relative;top:-2.8pt;vertical-align:baseline">(1)</span></div></td><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">&#8212;&#160;</span></td><td style="background-color:#cceeff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">&#8212;&#160;</span></td><td style="background-color:#cceeff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">3,661&#160;</span></td><td style="background-color:#cceeff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#cceeff;padding:0 1pt"/><td colspan="2" style="background-color:#cceeff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">47.35&#160;</span></td><td style="background-color:#cceeff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
<tr><td colspan="3" style="background-color:#ffffff;padding:2px 1pt 2px 19pt;text-align:left;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">Vested/exercised</span></td><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">(36,974)</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">49.99&#160;</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">(12,353)</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/><td colspan="3" style="background-color:#ffffff;padding:0 1pt"/><td colspan="2" style="background-color:#ffffff;padding:2px 0 2px 1pt;text-align:right;vertical-align:middle"><span style="color:#000000;font-family:'Times New Roman',sans-serif;font-size:8pt;font-weight:400;line-height:100%">48.62&#160;</span></td><td style="background-color:#ffffff;padding:2px 1pt 2px 0;text-align:right;vertical-align:middle"/></tr>
</table>
"""

# goog-10q-2014q2: option valuation assumptions; an empty row and three N/A rows dropped.
GOOG_VALUATION = """\
<table cellpadding="0" cellspacing="0" style="font-family:Times New Roman;font-size:10pt;width:100%;border-collapse:collapse;text-align:left;">
<tr><td colspan="8" rowspan="1"></td></tr>
<tr><td width="49%" rowspan="1" colspan="1"></td><td width="12%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="12%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="12%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="12%" rowspan="1" colspan="1"></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:middle;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Three Months Ended June 30,</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:middle;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Six Months Ended June 30,</font></div></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:8pt;"><font style="font-family:inherit;font-size:8pt;">&#160;</font></div></td><td style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">2013</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">2014</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">2013</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">2014</font></div></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">(unaudited)</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;border-top:1px solid #000000;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">(unaudited)</font></div></td></tr>
<tr><td style="vertical-align:top;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">Risk-free interest rate</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">0.9%</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td></tr>
<tr><td style="vertical-align:top;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">Expected volatility</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">29%</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">N/A</font></div></td></tr>
</table>
"""

# goog-10q-2014q2: option activity, `(1,607,444` and `)` in separate cells; later rows dropped.
GOOG_OPTIONS = """\
<table cellpadding="0" cellspacing="0" style="font-family:Times New Roman;font-size:10pt;margin-left:auto;margin-right:auto;width:100%;border-collapse:collapse;text-align:left;">
<tr><td colspan="13" rowspan="1"></td></tr>
<tr><td width="49%" rowspan="1" colspan="1"></td><td width="11%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="10%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="12%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td><td width="10%" rowspan="1" colspan="1"></td><td width="1%" rowspan="1" colspan="1"></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:8pt;"><font style="font-family:inherit;font-size:8pt;">&#160;</font></div></td><td colspan="12" style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Options Outstanding</font></div></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:8pt;"><font style="font-family:inherit;font-size:8pt;">&#160;</font></div></td><td colspan="2" style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Number of</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Shares</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Weighted-</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Average</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Exercise&#160;Price</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Weighted-</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Average</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Remaining</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Contractual</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Term</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">(in&#160;years)</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;border-bottom:1px solid #000000;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Aggregate</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Intrinsic</font></div><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">Value</font></div><div style="text-align:center;font-size:10pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">(in&#160;millions)</font><font style="font-family:Arial;font-size:8pt;font-weight:bold;"><sup style="vertical-align:top;line-height:120%;font-size:5pt">&#160;</sup></font><font style="font-family:Arial;font-size:10pt;font-weight:bold;"><sup style="vertical-align:top;line-height:120%;font-size:6pt">(1)</sup></font></div></td></tr>
<tr><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:8pt;"><font style="font-family:inherit;font-size:8pt;">&#160;</font></div></td><td colspan="12" style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;" rowspan="1"><div style="text-align:center;font-size:8pt;"><font style="font-family:Arial;font-size:8pt;font-weight:bold;">(unaudited)</font></div></td></tr>
<tr><td style="vertical-align:top;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">Balance as of December 31, 2013</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;" rowspan="1" colspan="1"><div style="text-align:right;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">10,065,726</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;"><br clear="none"/></font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;background-color:#cceeff;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">$</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-top:2px;padding-bottom:2px;" rowspan="1" colspan="1"><div style="text-align:right;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">215.50</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;"><br clear="none"/></font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td></tr>
<tr><td style="vertical-align:top;background-color:#cceeff;padding-left:28px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">Exercised</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;" rowspan="1" colspan="1"><div style="text-align:right;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">(1,607,444</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-right:2px;padding-top:2px;padding-bottom:2px;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">)</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;padding-left:2px;padding-top:2px;padding-bottom:2px;background-color:#cceeff;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">$</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-top:2px;padding-bottom:2px;" rowspan="1" colspan="1"><div style="text-align:right;font-size:10pt;"><font style="font-family:Arial;font-size:10pt;">202.17</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;" rowspan="1" colspan="1"><div style="text-align:left;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;"><br clear="none"/></font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1" colspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td><td colspan="3" style="vertical-align:bottom;background-color:#cceeff;padding-left:2px;padding-top:2px;padding-bottom:2px;padding-right:2px;" rowspan="1"><div style="overflow:hidden;font-size:10pt;"><font style="font-family:inherit;font-size:10pt;">&#160;</font></div></td></tr>
</table>
"""

# aame-10k-2013: option activity, a year over two measures; some rows dropped.
AAME_OPTIONS = """\
<table cellpadding="0" cellspacing="0" style="width: 100%; font-family: 'Times New Roman', Times, serif; font-size: 10pt;">
<tr><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;"><div>&#160;</div></td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="6" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">2013</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="6" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">2012</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td></tr>
<tr><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;"><div style="text-align: left; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;"><u>Options</u></div></td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="2" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Shares</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="2" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Weighted</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Average</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Exercise</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Price</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="2" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Shares</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 2px; vertical-align: bottom;">&#160;</td><td colspan="2" valign="bottom" style="border-bottom: #000000 2px solid; vertical-align: bottom;"><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Weighted</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Average</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Exercise</div><div style="text-align: center; font-family: ''Times New Roman'', Times, serif; font-size: 10pt; font-weight: bold;">Price</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 2px; vertical-align: bottom;">&#160;</td></tr>
<tr><td valign="bottom" style="background-color: #cceeff; width: 52%; vertical-align: bottom;"><div style="text-align: left; text-indent: -7.2pt; font-family: ''Times New Roman'', Times, serif; margin-left: 7.2pt; font-size: 10pt;">Options outstanding, beginning of year</div></td><td valign="bottom" style="background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #cceeff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">77,000</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">$</div></td><td valign="bottom" style="text-align: right; background-color: #cceeff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">1.59</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #cceeff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">231,000</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">$</div></td><td valign="bottom" style="text-align: right; background-color: #cceeff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">1.68</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #cceeff; width: 1%; vertical-align: bottom;">&#160;</td></tr>
<tr><td valign="bottom" style="background-color: #ffffff; width: 52%; vertical-align: bottom;"><div style="text-align: left; text-indent: -7.2pt; font-family: ''Times New Roman'', Times, serif; margin-left: 7.2pt; font-size: 10pt;">Options exercised</div></td><td valign="bottom" style="background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">(62,500</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">)</div></td><td valign="bottom" style="background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">1.59</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">(150,000</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">)</div></td><td valign="bottom" style="background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">1.73</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td></tr>
<tr><td valign="bottom" style="padding-bottom: 4px; background-color: #ffffff; width: 52%; vertical-align: bottom;"><div style="text-align: left; text-indent: -7.2pt; font-family: ''Times New Roman'', Times, serif; margin-left: 7.2pt; font-size: 10pt;">Options outstanding, end of year</div></td><td valign="bottom" style="padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="border-bottom: #000000 4px double; text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="border-bottom: #000000 4px double; text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">-</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; padding-bottom: 4px; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">-</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="border-bottom: #000000 4px double; text-align: left; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="border-bottom: #000000 4px double; text-align: right; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">77,000</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td><td valign="bottom" style="text-align: right; padding-bottom: 4px; background-color: #ffffff; width: 9%; vertical-align: bottom;"><div style="font-family: ''Times New Roman'', Times, serif; font-size: 10pt;">1.59</div></td><td nowrap="nowrap" valign="bottom" style="text-align: left; padding-bottom: 4px; background-color: #ffffff; width: 1%; vertical-align: bottom;">&#160;</td></tr>
</table>
"""
