"""Rebuilt tables to schema parts: which table is which, and which row is which field."""

from __future__ import annotations

import calendar
import re
from dataclasses import replace
from datetime import date, timedelta

from extractor.backends.rules.amounts import amount
from extractor.backends.rules.lexicon import (
    ASSUMPTION_ROWS,
    EXPENSE_LINES,
    REPURCHASE_ROWS,
    TOTAL_ROW,
    VALUATION_MODELS,
    YEAR_INFO_ROWS,
    LexiconRowKind,
    LineItemRule,
    find_award,
    first_award,
    joined_award,
    line_item_rule,
    match_first,
    named_awards,
    row_kind,
    table_line_item_rule,
)
from extractor.numbers import scale_exponent
from extractor.periods import YEAR_DIGITS, FiscalCalendar, balance_date, find_dates, months_before
from extractor.regex_cache import regex
from extractor.schemas.concepts import PL, P
from extractor.schemas.stock_compensation import (
    AwardRollForward,
    AwardYearInfo,
    Basis,
    Bound,
    CashSettlementRange,
    ExpenseItem,
    LineItem,
    RollForwardRow,
    ShareRepurchases,
    ShareRepurchaseYear,
    StockCompensationNote,
    UnrecognizedCost,
    ValuationAssumptions,
)
from extractor.schemas.values import OPTION_LIKE, Amount, AwardType, Period, Unit
from extractor.tables.assemble import is_year_cell
from extractor.tables.model import Cell, Column, Row, Table
from extractor.tables.tokens import classify_chunk

# a row that is one fiscal year's repurchases: '2011 repurchases', 'Repurchases in fiscal 2012'
_YEAR_FLOW_ROW = regex(
    r"^(?:fiscal\s+)?((?:19|20)\d\d)\s+(?:share\s+)?(?:re)?purchases\b|^(?:share\s+)?repurchases (?:in|during) (?:fiscal\s+)?((?:19|20)\d\d)$",
    re.I,
)
COLUMN_UNITS: dict[str, Unit] = {
    "count": "shares",
    "price": "USD/share",
    "fair_value": "USD/share",
    "term": "years",
    "intrinsic": "USD",
    "cost": "USD",
    "min": "USD",
    "max": "USD",
}
ROW_MEASURE = {
    "count": "count",
    "price": "weighted_average_price",
    "fair_value": "weighted_average_price",
    "term": "remaining_term",
    "intrinsic": "intrinsic_value",
}
INFO_UNITS: dict[str, Unit] = {
    "granted_count": "shares",
    "vested_count": "shares",
    "granted_fair_value": "USD/share",
    "shares_purchased": "shares",
    "average_purchase_price": "USD/share",
}


def _column_groups(table: Table) -> list[tuple[AwardType | None, int | None, Table]]:
    """The table split where its header names award types ('RSUs | Shares, Fair Value' next to 'PSUs | ...')
    or years ('2013 | Shares, Price' next to '2012 | ...') over groups of measure columns."""
    awards = [c.award for c in table.columns]
    years = [c.year if c.kind != "year" else None for c in table.columns]
    several_awards, several_years = len({a for a in awards if a}) > 1, len({y for y in years if y}) > 1
    if not several_awards and not several_years:
        return [(next((a for a in awards if a), None), None, table)]
    keys = [(a if several_awards else None, y if several_years else None) for a, y in zip(awards, years)]
    groups: list[tuple[AwardType | None, int | None, Table]] = []
    for key in dict.fromkeys(k for k in keys if k != (None, None)):
        keep = [i for i, k in enumerate(keys) if k == key]
        award = key[0] or next((a for a in awards if a), None)
        groups.append((award, key[1], _columns_of(table, keep)))
    return groups


def _columns_of(table: Table, keep: list[int]) -> Table:
    """The table with only the columns at `keep`, every row cut the same way."""
    rows = [replace(row, cells=[row.cells[i] for i in keep if i < len(row.cells)]) for row in table.rows]
    return replace(table, columns=[table.columns[i] for i in keep], rows=rows)


def _scale_of(table: Table, column: Column) -> int:
    """A column's own scale ('Shares (in thousands)') before the table's."""
    return table.scale if column.scale is None else column.scale


def _plan_columns(table: Table) -> bool:
    """Two or more columns that name neither a measure, a period nor an award: plans or programs side by side
    ('Executive Long-Term Incentive Program | Employee Long-Term Incentive Program | Other')."""
    return len(table.columns) >= 2 and all(
        c.kind is None and not (c.year or c.end or c.award) and _WORD_OF_THREE.search(c.header) for c in table.columns
    )


def _count_rollforward_rows(table: Table) -> bool:
    """Balance and movement rows of unit counts: a group row or the caption says they are numbers of units."""
    kinds = [row_kind(row.label) for row in table.rows if row.values]
    said = " ".join([table.caption or "", *table.header_lines, *(row.group or "" for row in table.rows)])
    return "balance" in kinds and any(k not in (None, "balance") for k in kinds) and bool(_NUMBER_OF_UNITS.search(said))


EXPENSE_CONCEPT = "AllocatedShareBasedCompensationExpense"
_BEGINNING = regex(r"\bbeginning\b|\bopening\b", re.I)
_PRICE_RANGE = regex(r"^\$?\s*(\d[\d,]*(?:\.\d+)?)\s*(?:-|–|—|to)\s*\$?\s*(\d[\d,]*(?:\.\d+)?)\s*$", re.I)
_WORD_OF_THREE = regex(r"[A-Za-z]{3}")  # a column header in words, not a mark
_NUMBER_OF_UNITS = regex(r"\bnumber of (?:units|shares|awards)\b", re.I)
_GRANTED_OR_VESTED = regex(r"\b(granted|vested)\b", re.I)
_TOTAL_OTHER = regex(r"total other", re.I)
_TOTAL = regex(r"^total$", re.I)
_EXERCISABLE = regex(r"exercisable|vested", re.I)
_YEAR_IN_LABEL = regex(rf"\b({YEAR_DIGITS.pattern})\b")
_SPACES = regex(r"\s+")
PRICE_RANGE_LIMITS = (
    "ShareBasedCompensationSharesAuthorizedUnderStockOptionPlansExercisePriceRangeLowerRangeLimit",
    "ShareBasedCompensationSharesAuthorizedUnderStockOptionPlansExercisePriceRangeUpperRangeLimit",
)
PRICE_RANGE_CONCEPTS = {
    ("outstanding", "count"): f"{P}OptionsOutstandingNumber",
    ("outstanding", "price"): f"{P}OptionsOutstandingWeightedAverageExercisePrice",
    ("outstanding", "term"): f"{PL}OptionsOutstandingWeightedAverageRemainingContractualTerm2",
    ("outstanding", "intrinsic"): f"{P}OptionsOutstandingIntrinsicValue",
    ("exercisable", "count"): f"{P}OptionsExercisableNumber",
    ("exercisable", "price"): f"{P}OptionsExercisableWeightedAverageExercisePrice",
    ("exercisable", "term"): f"{PL}OptionsExercisableWeightedAverageRemainingContractualTerm1",
    ("exercisable", "intrinsic"): f"{PL}OptionsExercisableIntrinsicValue1",
}


def _rates_in_percent(row: Row) -> bool:
    """A volatility or interest-rate row printed without '%' ('Expected Volatility | 36.6') is in percent:
    no rate of 3,660 % is ever assumed. A row whose numbers are all at most 1 may be fractions; left as printed."""
    numbers = [n for cell in row.cells for n in cell.numbers]
    return bool(numbers) and not any(n.percent for n in numbers) and any(n.magnitude > 1 for n in numbers)


def _by_expense_line(table: Table) -> bool:
    """Rows that are income-statement lines ('Research and development', 'Cost of revenue, service'): the
    expense broken down by where it is recorded, whether or not a caption says so."""
    return sum(1 for row in table.rows if EXPENSE_LINES.search(row.label.strip())) >= 2


def _on(year: int, month_day: tuple[int, int]) -> date:
    month, day = month_day
    last = calendar.monthrange(year, month)[1]
    return date(year, month, min(day, last))


class TableMapper:
    """Fills a StockCompensationNote from one document's tables."""

    def __init__(self, note: StockCompensationNote, calendar: FiscalCalendar, fiscal_end: date) -> None:
        self.note = note
        self.calendar = calendar
        self.fiscal_end = fiscal_end
        self.split_by_row: set[int] = set()  # tables whose rows name their award types (expense by award)
        self._awards: dict[tuple[str | None, str | None], AwardType | None] = {}  # (title, caption) -> _award
        self._periods: dict[tuple, Period] = {}  # a dated column's (end, year, month-day, months) -> column_period

    def map(self, table: Table) -> bool:
        """Map one table; False when it is not a table this schema knows."""
        kinds = {c.kind for c in table.columns}
        context = (table.title or "") + " " + " ".join(table.header_lines)
        if (
            "count" in kinds
            and kinds & {"price", "fair_value"}
            and any(row_kind(r.label) == "balance" for r in table.rows)
        ):
            return self._rollforward(table)
        if table.rows and not any(r.label for r in table.rows) and all(c.year and c.kind for c in table.columns):
            return self._unlabelled_year_info(table)
        if _plan_columns(table) and _count_rollforward_rows(table):
            return self._plan_rollforwards(table)
        if sum(1 for row in table.rows if _PRICE_RANGE.match(row.label.strip())) >= 2 and kinds & {"count", "price"}:
            return self._price_ranges(table)
        if (
            not table.year_columns
            and any(_YEAR_FLOW_ROW.search(r.label) for r in table.rows)
            and ("repurchase" in f"{table.caption or ''} {' '.join(r.label for r in table.rows)}".lower())
        ):
            return self._repurchase_rows(table)
        if table.year_columns:
            lowered = f"{table.title or ''} {table.caption or ''}".lower()
            labels = " ".join(r.label for r in table.rows).lower()
            if "assumption" in lowered or "volatility" in labels:
                return self._assumptions(table)
            if "repurchase" in lowered or "repurchased" in labels:
                return self._repurchases(table)
            if ("expense" in lowered and "unrecognized" not in lowered) or _by_expense_line(table):
                return self._expense(table)
            return self._information(table)
        if "cost" in kinds and "unrecognized" in (context + (table.caption or "")).lower():
            return self._unrecognized(table)
        if {"min", "max"} <= kinds and "settlement" in (context + (table.caption or "")).lower():
            return self._settlement(table)
        return False

    # -- helpers -----------------------------------------------------------------------------

    def _row_scale(self, row: Row, table: Table) -> int:
        row_scale = scale_exponent(row.label)
        return table.scale if row_scale is None else row_scale

    def _year_cells(self, table: Table, row: Row) -> list[tuple[date, Cell, Period]]:
        """(period end, cell, flow period) for each filled cell under a dated column."""
        out = []
        for col, cell in zip(table.columns, row.cells):
            if cell.empty or not (col.year or col.end):
                continue
            period = self.column_period(col)
            out.append((period.end_date, cell, period))
        return out

    def column_period(self, col: Column) -> Period:
        """The flow period a dated column stands for: a quarter is a quarter, a fiscal year a fiscal year
        (worked out once per column date: every row's cell under it asks)."""
        key = (col.end, col.year, col.month_day, col.months)
        if key not in self._periods:
            self._periods[key] = self._column_period(col)
        return self._periods[key]

    def _column_period(self, col: Column) -> Period:
        if col.end is not None:
            end = col.end
        else:
            assert col.year is not None, "a dated column has a year or a date"
            if col.month_day and col.months and col.months < 12:
                end = _on(col.year, col.month_day)
            else:
                end = self.calendar.year_end(col.year)
        if col.months and col.months < 12:
            return Period.over(months_before(end, col.months), end)
        if col.end is not None and self.calendar.year_end(end.year) != end and col.months is None:
            return Period.over(None, end)
        return self.calendar.period(self.calendar.year_of(end))

    # -- table kinds ---------------------------------------------------------------------------

    def _rollforward(self, table: Table) -> bool:
        # side by side, 'RSUs | Shares, Fair Value' next to 'PSUs | Shares, Fair Value', maps as one table per award
        return all([self._rollforward_one(part, award, year) for award, year, part in _column_groups(table)])  # noqa: C419 - map every group, not just up to the first that fails

    def _plan_rollforwards(self, table: Table) -> bool:
        """Unit counts by plan: 'Number of units' over 'Executive LTIP | Employee LTIP | Other' columns, one
        roll-forward per plan column."""
        counts = replace(table, columns=[replace(column, kind="count") for column in table.columns])
        for i, column in enumerate(table.columns):
            self._rollforward_one(_columns_of(counts, [i]), column.award, plan=column.header)
        return True

    def _rollforward_one(
        self, table: Table, column_award: AwardType | None, year: int | None = None, plan: str | None = None
    ) -> bool:
        award = column_award or self._award(table) or "option"
        context = f"{table.title or ''} {table.caption or ''}".lower()
        basis: Basis
        if award in OPTION_LIKE:
            basis = "nonvested" if ("nonvested" in context or "unvested" in context) else "outstanding"
        else:
            basis = "outstanding" if "deferred" in context and award == "dsu" else "nonvested"
        rows: list[tuple[Row, LexiconRowKind, date | None]] = []
        for row in table.rows:
            kind = row_kind(row.label)
            if kind and row.values:
                rows.append((row, kind, balance_date(row.label)))
        balances = [(i, d) for i, (_, kind, d) in enumerate(rows) if kind == "balance"]
        out = AwardRollForward(award=award, basis=basis, title=table.title or table.caption, plan=plan)
        year_end = self.calendar.year_end(year) if year else self.fiscal_end  # the column group's year, if any
        ending = max((d for _, d in balances if d), default=year_end)
        for index, (row, kind, day) in enumerate(rows):
            if kind == "balance":
                first = index == balances[0][0] and (len(balances) > 1 or _BEGINNING.search(row.label))
                kind = "beginning" if first else "ending"
                if day is None and kind == "beginning":  # 'at beginning of year': the prior fiscal year's end
                    day = self.calendar.year_end(self.calendar.year_of(ending) - 1)
                period = Period.at(day or year_end)
            elif kind in ("exercisable", "vested_and_expected_to_vest"):
                period = Period.at(day or max((d for _, d in balances if d), default=year_end))
            else:
                before = max((d for i, d in balances if i < index and d), default=None)
                after = min((d for i, d in balances if i > index and d), default=year_end)
                period = Period.over(before + timedelta(days=1) if before else None, after)
            out_row = RollForwardRow(kind=kind, label=row.label)
            for column, cell in zip(table.columns, row.cells):
                column_kind = column.kind or ""
                measure = ROW_MEASURE.get(column_kind)
                if measure and not cell.empty:
                    scale = _scale_of(table, column)
                    setattr(out_row, measure, amount(cell.numbers[0], COLUMN_UNITS[column_kind], period, scale))
            out.rows.append(out_row)
        self.note.award_activity.append(out)
        return True

    def _award(self, table: Table) -> AwardType | None:
        """The award a table is about, from its title or caption (asked of a table, its column groups and
        its leftovers: read once)."""
        key = (table.title, table.caption)
        if key not in self._awards:
            self._awards[key] = find_award(table.title) or joined_award(table.caption) or first_award(table.caption)
        return self._awards[key]

    def _information(self, table: Table) -> bool:
        award = self._award(table)
        named = named_awards(f"{table.title or ''} {table.caption or ''}")
        infos: dict[tuple, AwardYearInfo] = {}
        for row in table.rows:
            field = match_first(row.label, YEAR_INFO_ROWS)
            if field is None:
                continue
            unit = INFO_UNITS.get(field, "USD")
            row_award = (find_award(row.label) or award) if len(named) > 1 or award is None else award
            row_award = find_award(row.group) or row_award  # a 'Stock Options' group heading over its rows
            for end, cell, period in self._year_cells(table, row):
                info = infos.setdefault((row_award, end), AwardYearInfo(award=row_award, fiscal_year_end=end))
                if getattr(info, field) is None:
                    setattr(info, field, amount(cell.numbers[0], unit, period, self._row_scale(row, table)))
        self.note.award_years.extend(infos.values())
        return bool(infos)

    def _unlabelled_year_info(self, table: Table) -> bool:
        """A row with no label under 'Shares | Weighted average fair value' per year: the caption names what
        it counts ('The number and weighted average fair value of options granted in 2013, 2012 and 2011')."""
        verb = _GRANTED_OR_VESTED.search(table.caption or "")
        if verb is None:
            return False
        fields = {
            "count": f"{verb[1].lower()}_count",
            "fair_value": "granted_fair_value" if verb[1].lower() == "granted" else None,
        }
        award = self._award(table) or "option"
        infos: dict[date, AwardYearInfo] = {}
        for row in table.rows:
            for column, cell in zip(table.columns, row.cells):
                field = fields.get(column.kind or "")
                if field is None or cell.empty:
                    continue
                period = self.column_period(column)
                info = infos.setdefault(period.end_date, AwardYearInfo(award=award, fiscal_year_end=period.end_date))
                scale = _scale_of(table, column)
                setattr(info, field, amount(cell.numbers[0], INFO_UNITS[field], period, scale))
        self.note.award_years.extend(infos.values())
        return bool(infos)

    def _assumptions(self, table: Table) -> bool:
        award = self._award(table) or "option"
        model_match = VALUATION_MODELS.search(table.caption or "")
        by_year: dict[date, ValuationAssumptions] = {}
        info_rows = []  # 'Weighted-average fair value per option granted' printed under the assumptions
        for row in table.rows:
            field = match_first(row.label, ASSUMPTION_ROWS)
            if field is None:
                if match_first(row.label, YEAR_INFO_ROWS):
                    info_rows.append(row)
                continue
            percent_row = field != "expected_term" and _rates_in_percent(row)
            for year, cell, period in self._year_cells(table, row):
                if percent_row:
                    cell = replace(cell, numbers=[n._replace(percent=True) for n in cell.numbers])
                target = by_year.setdefault(
                    year,
                    ValuationAssumptions(
                        award=award,
                        fiscal_year_end=year,
                        model=model_match.group(1) if model_match else None,
                    ),
                )
                unit: Unit = "years" if field == "expected_term" else "pure"
                if cell.is_range and field in ("volatility", "risk_free_rate", "expected_term", "dividend_yield"):
                    setattr(target, f"{field}_min", amount(cell.numbers[0], unit, period))
                    setattr(target, f"{field}_max", amount(cell.numbers[1], unit, period))
                else:
                    setattr(target, field, amount(cell.numbers[0], unit, period))
        self.note.valuation_assumptions.extend(by_year.values())
        if info_rows:
            self._information(replace(table, rows=info_rows))
        return bool(by_year)

    def _repurchases(self, table: Table) -> bool:
        repurchases = self.note.share_repurchases or ShareRepurchases()
        years: dict[date, ShareRepurchaseYear] = {}
        for row in table.rows:
            field = match_first(row.label, REPURCHASE_ROWS)
            if field is None:
                continue
            units: dict[str, Unit] = {"shares_repurchased": "shares", "average_cost_per_share": "USD/share"}
            unit = units.get(field, "USD")
            for end, cell, flow in self._year_cells(table, row):
                period = Period.at(end) if field == "remaining_authorization" else flow
                target = years.setdefault(end, ShareRepurchaseYear(fiscal_year_end=end))
                setattr(target, field, amount(cell.numbers[0], unit, period, self._row_scale(row, table)))
        repurchases.years.extend(years.values())
        self.note.share_repurchases = repurchases
        return bool(years)

    def _repurchase_rows(self, table: Table) -> bool:
        """A cumulative repurchase table: 'Repurchased at December 25, 2010' balances between '2011
        repurchases' rows, measures as columns. The year rows are the flows; the balances stay line items."""
        repurchases = self.note.share_repurchases or ShareRepurchases()
        fields: dict[str, tuple[str, Unit]] = {
            "count": ("shares_repurchased", "shares"),
            "price": ("average_cost_per_share", "USD/share"),
            "cost": ("amount_paid", "USD"),
        }
        for row in table.rows:
            match = _YEAR_FLOW_ROW.search(row.label)
            if match is None or balance_date(row.label):
                continue
            period = self.calendar.period(int(match[1] or match[2]))
            year = ShareRepurchaseYear(fiscal_year_end=period.end_date)
            for column, cell in zip(table.columns, row.cells):
                if column.kind in fields and not cell.empty:
                    name, unit = fields[column.kind]
                    scale = _scale_of(table, column)
                    setattr(year, name, amount(cell.numbers[0], unit, period, scale))
            repurchases.years.append(year)
        self.note.share_repurchases = repurchases
        return bool(repurchases.years)

    def _expense(self, table: Table) -> bool:
        found = False
        self.split_by_row.add(id(table))  # its tax and net-of-tax rows are about all awards, whatever the caption names
        for row in table.rows:
            rule = line_item_rule(row.label)
            if rule is not None and rule.concept != EXPENSE_CONCEPT:
                continue  # 'Income tax benefit', 'Total net ... cost', 'Capitalized ...': line items of their own
            if TOTAL_ROW.search(row.label) and not _TOTAL_OTHER.search(row.label):
                award, line_item = None, None
            else:
                award = find_award(row.label)
                line_item = None if award else _SPACES.sub(" ", row.label).strip().lower()
            for _, cell, period in self._year_cells(table, row):
                value = amount(cell.numbers[0], "USD", period, self._row_scale(row, table))
                self.note.expense.append(ExpenseItem(line_item=line_item, award=award, amount=value))
                found = True
        return found

    def _unrecognized(self, table: Table) -> bool:
        instant = Period.at(next((d for d, _, _ in find_dates(table.context)), self.fiscal_end))
        found = False
        for row in table.rows:
            if not row.values:
                continue
            award = None if _TOTAL.match(row.label.strip()) else find_award(row.label)
            cost = table.cell_for(row, "cost")
            term = table.cell_for(row, "term")
            self.note.unrecognized_cost.append(
                UnrecognizedCost(
                    award=award,
                    amount=amount(cost.numbers[0], "USD", instant, table.scale) if cost and not cost.empty else None,
                    recognition_period=amount(term.numbers[0], "years", instant) if term and not term.empty else None,
                )
            )
            found = True
        return found

    def _price_ranges(self, table: Table) -> bool:
        """Options by exercise-price range ('$3.75–$92.23 | 22,905 | 2.2 | 68.89 | 22,905 | 68.89'): each row's
        outstanding and exercisable measures, and the range's own limits, at the table's date."""
        instant = Period.at(max((d for d, _, _ in find_dates(table.context)), default=self.fiscal_end))
        award = self._award(table) or "option"
        bases, basis = [], "outstanding"
        for column in table.columns:  # 'Options Exercisable' and every column after it
            basis = "exercisable" if _EXERCISABLE.search(column.header) else basis
            bases.append(basis)
        for row in table.rows:
            match = _PRICE_RANGE.match(row.label.strip())
            if not match and not TOTAL_ROW.search(row.label.strip()):
                continue
            price_range = None
            if match:  # the total row is all ranges together: no range of its own
                price_range = f"{match.group(1).replace(',', '')}-{match.group(2).replace(',', '')}"
                limits = classify_chunk(row.label, row.label_start).numbers  # the two prices, with their spans
                for limit, number in zip(PRICE_RANGE_LIMITS, limits):
                    self._line(limit, row, award, price_range, amount(number, "USD/share", instant))
            for column, cell, basis in zip(table.columns, row.cells, bases):
                column_kind = column.kind or ""
                concept = PRICE_RANGE_CONCEPTS.get((basis, column_kind))
                if concept and not cell.empty:
                    scale = _scale_of(table, column)
                    unit = COLUMN_UNITS[column_kind]
                    self._line(concept, row, award, price_range, amount(cell.numbers[0], unit, instant, scale))
        return True

    def _line(self, concept: str, row: Row, award: AwardType, price_range: str | None, value: Amount) -> None:
        self.note.line_items.append(
            LineItem(concept=concept, label=row.label, award=award, price_range=price_range, amount=value)
        )

    def _settlement(self, table: Table) -> bool:
        instant = Period.at(next((d for d, _, _ in find_dates(table.context)), self.fiscal_end))
        award = self._award(table) or "rsu"
        for row in table.rows:
            year_match = _YEAR_IN_LABEL.search(row.label)
            low, high = table.cell_for(row, "min"), table.cell_for(row, "max")
            self.note.cash_settlement_ranges.append(
                CashSettlementRange(
                    award=award,
                    year=self.calendar.year_end(int(year_match.group(1))) if year_match else None,
                    minimum=amount(low.numbers[0], "USD", instant, table.scale) if low and not low.empty else None,
                    maximum=amount(high.numbers[0], "USD", instant, table.scale) if high and not high.empty else None,
                )
            )
        return True


_MEASURE_WORDS = {
    "count": "Number",
    "price": "WeightedAveragePrice",
    "fair_value": "WeightedAverageFairValue",
    "term": "RemainingTerm",
    "intrinsic": "IntrinsicValue",
    "cost": "Cost",
    "min": "Minimum",
    "max": "Maximum",
}


_NOT_WORDS = regex(r"\(\w{1,2}\)|\bin (?:thousands|millions|billions)\b")
_WORDS = regex(r"[A-Za-z]+")


def _camel(label: str) -> str:
    words = _WORDS.findall(_NOT_WORDS.sub(" ", label))
    return "".join(w[:1].upper() + w[1:].lower() for w in words[:12]) or "UnlabelledNumber"


class LeftoverMapper:
    """Every table number no typed field took becomes a line item: its concept from the lexicon where a
    row label names one, else `ext:` plus the label in words. Nothing the note prints is silently dropped."""

    def __init__(self, mapper: TableMapper) -> None:
        self.mapper = mapper

    def map(self, table: Table, consumed: set[int]) -> None:
        caption = f"{table.caption or ''} {table.title or ''}"
        # a caption naming several award types ('reserved for RSUs, PSUs and options') names none for a row
        table_award = self.mapper._award(table) if len(named_awards(caption)) < 2 else None
        if id(table) in self.mapper.split_by_row:
            table_award = None
        context_dates = [d for d, _, _ in find_dates(caption)]
        caption_rule = table_line_item_rule(caption)
        by_plan = _plan_columns(table)
        for row in table.rows:
            for column, cell in zip(table.columns, row.cells):
                if cell.empty or cell.numbers[0].start in consumed or is_year_cell(cell):
                    continue  # a year printed among the values labels a row (years as rows), it is no amount
                subject = row.label or column.header
                rule = (line_item_rule(subject, f"{caption} {row.group or ''}") if subject else None) or caption_rule
                unit = self._unit(rule, column, cell)
                period = self._period(rule, table, row, column, context_dates)
                award = find_award(row.label) or column.award or find_award(row.group) or table_award
                plan = column.header if by_plan else None
                concept = rule.concept if rule else f"ext:{_camel(subject)}{_MEASURE_WORDS.get(column.kind or '', '')}"
                scale = column.scale if column.scale is not None else self.mapper._row_scale(row, table)
                bounds: tuple[Bound | None, ...] = ("min", "max") if cell.is_range else (None,)
                for number, bound in zip(cell.numbers, bounds):
                    self.mapper.note.line_items.append(
                        LineItem(
                            concept=concept,
                            label=subject,
                            award=award,
                            bound=bound,
                            plan=plan,
                            amount=amount(number, unit, period, scale),
                        )
                    )

    @staticmethod
    def _unit(rule: LineItemRule | None, column: Column, cell: Cell) -> Unit:
        number = cell.numbers[0]
        if number.percent:
            return "pure"
        if cell.years or column.kind == "term":
            return "years"
        if rule is not None:
            return rule.unit
        if column.kind in COLUMN_UNITS:
            return COLUMN_UNITS[column.kind]
        return "USD" if number.currency else "shares"

    def _period(
        self, rule: LineItemRule | None, table: Table, row: Row, column: Column, context_dates: list[date]
    ) -> Period:
        instant = rule is not None and rule.period == "instant"
        if column.year or column.end:
            if column.end is not None and column.months is None and (instant or rule is None):
                return Period.at(column.end)  # a bare date over the column ('December 31, 2023') is a balance date
            flow = self.mapper.column_period(column)
            return Period.at(flow.end_date) if instant else flow
        day = balance_date(row.label)
        if day is not None:
            return Period.at(day)
        if context_dates:
            return Period.at(max(context_dates))
        end = self.mapper.fiscal_end
        if instant or row_kind(row.label) in ("balance", "exercisable", "vested_and_expected_to_vest"):
            return Period.at(end)
        return self.mapper.calendar.period_ending(end)
