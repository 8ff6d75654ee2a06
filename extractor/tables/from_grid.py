"""HTML table grids to Tables: header rows stacked into typed columns, one cell per column, nothing shifted.

The line-based rebuilder (assemble.py) serves R-page text and aligned plain text; HTML arrives with its
grid (extractor.grid), so here the rows and columns are read, not guessed. Both produce the same Table.
"""

from __future__ import annotations

import re

from extractor.backends.rules.lexicon import find_award
from extractor.document import Document
from extractor.grid import GridCell, TableGrid
from extractor.numbers import ANY_DIGIT, EMPTY_MARKERS, scale_exponent
from extractor.regex_cache import regex
from extractor.tables.assemble import is_year_cell
from extractor.tables.headers import column_scale, header_period, measure_kind
from extractor.tables.model import Cell, Column, Row, Table
from extractor.tables.tokens import Kind, classify_chunk

_FOOTNOTE_MARK = regex(r"(?:\s*(?:\(\w{1,2}\)|\*+|\u2020+))+$")
_SCALE_ONLY = regex(r"\(?(?:[\w ]{1,20} )?in (?:thousands|millions|billions)\b[^()]{0,40}\)?", re.I)
_SCALE_NOTE = regex(r"\b(?:thousands|millions|billions)\b", re.I)


def grid_tables(doc: Document, grids: list[TableGrid] | None = None) -> list[Table]:
    """Every data table of an HTML document (or of these of its grids), from its grids."""
    tables: list[Table] = []
    for grid in doc.grids if grids is None else grids:
        tables.extend(_tables(doc.text, grid))
    return tables


def _cell(text: str, cell: GridCell) -> Cell:
    raw = text[cell.start : cell.end]
    # a label or a mark: no number without a digit (most cells of a header or label column)
    if not ANY_DIGIT.search(raw):
        return Cell([], cell.start, cell.end)
    body = _FOOTNOTE_MARK.sub("", raw) or raw
    token = classify_chunk(body, cell.start)
    if token.kind is Kind.NUM:
        return Cell(list(token.numbers), cell.start, cell.start + len(body), years=token.years)
    return Cell([], cell.start, cell.end)


def _is_header_row(cells: list[Cell], texts: list[str]) -> bool:
    """No value but text over the value columns, or a row of years: a header level."""
    values = [c for c in cells if not c.empty]
    if values:
        return all(is_year_cell(c) for c in values) and not any(t and not _is_yearish(t) for t in texts)
    return any(texts)


_YEAR_HEADER = regex(r"(?:fiscal\s+|fy\s*)?(?:19|20)\d\d(?:\s*\([^)]{1,30}\))?", re.I)


def _is_yearish(text: str) -> bool:
    return bool(_YEAR_HEADER.fullmatch(text.strip()))  # '2011 (53 weeks)'


def _caption(text: str, start: int) -> str | None:
    """The paragraph just before the table: 'The following table summarizes ... RSU activity'."""
    before = text[max(0, start - 2000) : start].rstrip("\n").split("\n")
    for line in reversed(before):
        if line.strip():
            return line.strip() if "\t" not in line else None
    return None


def _tables(text: str, grid: TableGrid) -> list[Table]:
    by_row: dict[int, list[GridCell]] = {}
    for cell in grid.cells:
        by_row.setdefault(cell.row, []).append(cell)
    caption = _caption(text, grid.start)
    parsed = {id(cell): _cell(text, cell) for cell in grid.cells}  # each cell read once, asked about thrice
    tables: list[Table] = []
    header: list[list[GridCell]] = []  # header rows of the current block
    table: Table | None = None
    group: str | None = None
    wrapped: tuple[str, int] | None = None  # a label row with no values, which the next row may continue
    first = 0 if _no_label_column(text, by_row, parsed) else 1  # the first value column
    for r in range(grid.rows):
        cells = sorted(by_row.get(r, []), key=lambda c: c.col)
        label_cell = next((c for c in cells if c.col == 0 and (first or not parsed[id(c)].numbers)), None)
        label = text[label_cell.start : label_cell.end] if label_cell else ""
        values = [Cell([], 0, 0) for _ in range(grid.cols - first)]
        texts = ["" for _ in range(grid.cols - first)]
        for c in cells:
            if c.col < first or c is label_cell:
                continue
            values[c.col - first] = parsed[id(c)]
            printed = text[c.start : c.end].strip()
            texts[c.col - first] = printed if values[c.col - first].empty and printed not in EMPTY_MARKERS else ""
        if _is_header_row(values, texts):
            if table is not None:  # a header row below data rows starts the next block
                table, group, header = None, None, []
            header.append(cells)
            continue
        if not any(not v.empty for v in values):
            if table is None and _SCALE_ONLY.fullmatch(label.strip()):  # '(shares in thousands)' over the body
                header.append(cells)
                continue
            if label:  # a group heading ('Stock options:') or a row printed with dashes only
                group = label.rstrip(":").strip()
                wrapped = (label, label_cell.start) if label_cell else None
            continue
        label_start = label_cell.start if label_cell else cells[0].start
        if wrapped and label[:1].islower():  # 'Payments ... upon' / 'vesting (in millions)': one label
            label, label_start, group = f"{wrapped[0]} {label}", wrapped[1], None
        wrapped = None
        if table is None:
            table = _new_table(text, grid, header, caption, first)
            tables.append(table)
        row = Row(
            label=label.strip(),
            label_start=label_start,
            label_end=label_cell.end if label_cell else cells[0].start,
            cells=values,
            group=group,
        )
        table.rows.append(row)
        table.end = max(c.end for c in cells)
    return tables


def _no_label_column(text: str, by_row: dict[int, list[GridCell]], parsed: dict[int, Cell]) -> bool:
    """A table whose first column holds numbers, not row labels ('7,500,000 | $0.0025' under 'Number of
    Warrants | Exercise Price'): every row with a value has a number (or nothing) in the first column."""
    numbered = 0
    for cells in by_row.values():
        first = next((c for c in cells if c.col == 0), None)
        if first is None or all(not parsed[id(c)].numbers or is_year_cell(parsed[id(c)]) for c in cells):
            continue  # no value, or a header row of years
        lead = parsed[id(first)]
        mark = _FOOTNOTE_MARK.fullmatch(text[first.start : first.end].strip())
        if not lead.numbers or is_year_cell(lead) or lead.is_range or mark:
            return False  # a price range or a footnote mark ('(1) | The aggregate intrinsic value ...') labels its row
        numbered += 1
    return numbered > 0


def _scale_over_all(text: str, cell: GridCell, width: int) -> bool:
    """'(shares in thousands)' spanning every value column: the table's scale note, no column's header."""
    return cell.colspan >= width > 1 and bool(_SCALE_ONLY.fullmatch(text[cell.start : cell.end].strip()))


_SCALE_IN_CAPTION = regex(r"\(?\bin (?:thousands|millions|billions)\b[^)]*\)?", re.I)


def _new_table(text: str, grid: TableGrid, header: list[list[GridCell]], caption: str | None, first: int = 1) -> Table:
    columns: list[Column] = []
    header_lines: list[str] = []
    notes = [c for level in header for c in level if _scale_over_all(text, c, grid.cols - first)]
    for level in header:
        for c in level:
            if (c.col == 0 and first == 1) or c in notes:
                header_lines.append(text[c.start : c.end])
    for col in range(first, grid.cols):
        parts = [
            text[c.start : c.end]
            for level in header
            for c in level
            if (c.col != 0 or first == 0) and c.col <= col < c.col + c.colspan and c not in notes
        ]
        period = header_period(parts)
        kind = measure_kind(parts)
        if kind is None and (period.year or period.end):
            kind = "year"
        awards = [find_award(p) for p in parts if measure_kind([p]) is None or len(parts) > 1]
        award = next((a for a in awards if a), None)
        columns.append(
            Column(
                header=" | ".join(parts),
                kind=kind,
                year=period.year,
                end=period.end,
                months=period.months,
                month_day=period.month_day,
                award=award,
                scale=column_scale(parts),
            )
        )
    scale_note = next((line for line in header_lines if _SCALE_NOTE.search(line)), None)
    note_in_caption = _SCALE_IN_CAPTION.search(caption or "")
    if (
        scale_note is None and note_in_caption
    ):  # only the note itself: '500 million shares ... (in thousands)' is thousands
        scale_note = note_in_caption.group()
    scale = (scale_exponent(scale_note) or 0) if scale_note else 0
    if scale_note is None:  # a scale every scaled column states ('Shares (in thousands)') is the table's
        stated = {col.scale for col in columns if col.scale is not None}
        unstated = [c for c in columns if c.scale is None and c.kind not in ("price", "fair_value", "term")]
        if len(stated) == 1 and not unstated:
            scale = stated.pop()
    title = next((line for line in header_lines if not _SCALE_NOTE.search(line)), None)
    if title is None and caption and len(caption) < 100 and not caption.rstrip().endswith((".", ":")):
        title = caption  # a heading line right above the table ('Stock Option Activity') names it
    start = min((c.start for level in header for c in level), default=grid.start)
    return Table(
        title=title,
        caption=caption,
        header_lines=header_lines + [col.header for col in columns if col.header],
        columns=columns,
        rows=[],
        scale=scale,
        scale_note=scale_note,
        start=start,
        end=start,
    )
