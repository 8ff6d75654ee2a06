"""Tokens to tables: rows from labels and their cells, tables from header runs and rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from extractor.document import Document
from extractor.numbers import scale_exponent
from extractor.regex_cache import regex
from extractor.tables.model import Cell, Column, PrintedNumber, Row, Table
from extractor.tables.tokens import Kind, Token, aligned_tokens, cell_per_line_tokens

# Column headers by their last words, as the bottom header row (or a whole header cell) ends.
COLUMN_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("intrinsic", regex(r"(intrinsic value|^value)$", re.I)),
    ("fair_value", regex(r"fair value( per (share|unit))?$", re.I)),
    ("price", regex(r"(exercise )?price( per share)?$", re.I)),
    ("term", regex(r"(term|life)( \(?in years\)?| \(years\))?$|^\(years\)$", re.I)),
    ("cost", regex(r"costs?$|unrecognized compensation( expense)?$", re.I)),
    ("min", regex(r"^minimum\b", re.I)),
    ("max", regex(r"^maximum\b", re.I)),
    ("count", regex(r"^(number of )?(shares|units|awards|options|sars|rsus)$", re.I)),
]
_SCALE_NOTE = regex(r"\bin (thousands|millions|billions)\b", re.I)
_YEAR_RE = regex(r"^(?:fiscal\s+)?((?:19|20)\d\d)$", re.I)
_PERIOD_PHRASE = regex(r"^(fiscal )?years? ended|^as of\b|^year ended", re.I)


_FOOTNOTE_MARK = regex(r"\s*\(\d\)\s*$")


def column_kind(header: str) -> str | None:
    text = _FOOTNOTE_MARK.sub("", header.strip())  # footnote markers: "Minimum (1)"
    for kind, pattern in COLUMN_KINDS:
        if pattern.search(text):
            return kind
    return None


def is_year_cell(cell: Cell) -> bool:
    if len(cell.numbers) != 1:
        return False
    number = cell.numbers[0]
    return (
        number.decimals == 0
        and not number.currency
        and not number.percent
        and not number.negative
        and "," not in number.text
        and 1990 <= number.magnitude <= 2060
    )


@dataclass
class _Run:
    """Label-only lines (and year rows) met since the last data row: headers, titles or groups."""

    rows: list[Row] = field(default_factory=list)

    def looks_like_header(self) -> bool:
        for row in self.rows:
            if row.cells and all(is_year_cell(c) for c in row.values):
                return True
            if _SCALE_NOTE.search(row.label) or column_kind(row.label) or _PERIOD_PHRASE.search(row.label):
                return True
        return len(self.rows) >= 2


def layout(doc: Document) -> tuple[list[Table], list[tuple[int, int]]]:
    """Tables and prose paragraph spans from one tokenization of the document (built once per
    document: the extractor, the LLM prompt and the validator all read them; treat them as read-only)."""
    return doc.derived("layout", _layout)


def _layout(doc: Document) -> tuple[list[Table], list[tuple[int, int]]]:
    if doc.grids:  # HTML: tables from the DOM grid, prose is every other line
        from extractor.tables.from_grid import grid_tables

        lo, hi = doc.span
        grids = [g for g in doc.grids if lo <= g.start < hi]
        tables, prose = grid_tables(doc, grids), _lines_outside(doc.text, [(g.start, g.end) for g in grids], lo, hi)
    else:
        tokens = _tokens(doc)
        tables, prose = _assemble(_rows_and_breaks(tokens)), _prose_spans(tokens, doc.format.endswith("aligned-text"))
    for table in tables:
        _mark_percent(table)
    return tables, prose


_PERCENT_MARK = regex(r"\(\s*(?:in\s+)?%\s*\)|\(in percent(?:ages?)?\)|\bin %|%\s*$")


def _mark_percent(table: Table) -> None:
    """Numbers under a '%' row label or column header ('Volatility (%)') are percentages printed without
    the sign: 3.46 there is 3.46 %, not 3.46."""
    marked_columns = [bool(_PERCENT_MARK.search(column.header)) for column in table.columns]
    for row in table.rows:
        marked_row = bool(_PERCENT_MARK.search(row.label))
        for index, cell in enumerate(row.cells):
            column_marked = index < len(marked_columns) and marked_columns[index]
            if (marked_row or column_marked) and not any(n.currency for n in cell.numbers):
                cell.numbers = [_with_percent(n) for n in cell.numbers]


def _lines_outside(text: str, regions: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """Spans of the non-empty lines of text[lo:hi] (lo at a line start) that lie outside every region (table grids)."""
    spans: list[tuple[int, int]] = []
    offset = lo
    regions = sorted(regions)
    for line in text[lo:hi].split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        if line.strip() and not any(a <= start < b for a, b in regions):
            spans.append((start, end))
    return spans


def rebuild_tables(doc: Document) -> list[Table]:
    """Every table in the document, whatever its layout."""
    return layout(doc)[0]


def prose_spans(doc: Document) -> list[tuple[int, int]]:
    """Paragraphs of running text (consecutive prose lines joined), outside any table."""
    return layout(doc)[1]


def _prose_spans(tokens: list[Token], aligned: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    last_kind = None
    for token in tokens:
        if token.kind is Kind.PROSE:
            if last_kind is Kind.PROSE and aligned:
                spans[-1] = (spans[-1][0], token.end)
            else:
                spans.append((token.start, token.end))
        if token.kind is not Kind.BLANK or not aligned:
            last_kind = token.kind
    return spans


def _tokens(doc: Document) -> list[Token]:
    lo, hi = doc.span
    tokenize = aligned_tokens if doc.format.endswith("aligned-text") else cell_per_line_tokens
    return tokenize(doc.text[lo:hi], lo)


def _rows_and_breaks(tokens: list[Token]) -> list[Row | str]:
    """Rows, with a prose string standing where a paragraph or footnote breaks the flow."""
    items: list[Row | str] = []
    current: Row | None = None
    pending: list[Token] = []
    skip_footnote_text = False

    def close() -> None:
        nonlocal current, pending
        if current is not None:
            current.cells = _cells(pending)
            items.append(current)
        current, pending = None, []

    for token in tokens:
        if token.kind is Kind.FOOTNOTE:
            close()
            items.append("")
            skip_footnote_text = True
            continue
        if token.kind in (Kind.TEXT, Kind.PROSE) and skip_footnote_text:
            skip_footnote_text = False
            continue
        if token.kind is Kind.PROSE:
            close()
            items.append(token.text)
            continue
        if token.kind is Kind.TEXT:
            close()
            current = Row(token.text.strip(), token.start, token.end, indent=token.indent)
            continue
        if token.kind is Kind.ROWEND:
            close()
            continue
        if token.kind is Kind.BLANK:
            pending.append(token)
            continue
        skip_footnote_text = False
        if current is None:  # values before any label: a row with no label
            current = Row("", token.start, token.start)
        pending.append(token)
    close()
    return items


def _cells(tokens: list[Token]) -> list[Cell]:
    """Glue '$', number, ')', '%' and range pieces into cells."""
    cells: list[Cell] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind is Kind.NUM:
            cell = Cell(list(token.numbers), token.start, token.end, years=token.years)
            index += 1
            while index < len(tokens):
                nxt = tokens[index]
                if nxt.kind in (Kind.CLOSE, Kind.PERCENT):
                    if nxt.kind is Kind.PERCENT:
                        cell.numbers[-1] = _with_percent(cell.numbers[-1])
                    cell.end = nxt.end
                    index += 1
                elif nxt.kind is Kind.DASH and len(cell.numbers) == 1:
                    after = _next_number(tokens, index + 1)
                    if after is None:
                        break
                    cell.numbers.append(tokens[after].numbers[0])
                    cell.end = tokens[after].end
                    index = after + 1
                else:
                    break
            if cell.is_range and cell.numbers[1].percent and not cell.numbers[0].percent:
                cell.numbers[0] = _with_percent(cell.numbers[0])
            cells.append(cell)
            continue
        if token.kind is Kind.DASH:
            cells.append(Cell([], token.start, token.end))
        index += 1
    return cells


def _next_number(tokens: list[Token], index: int) -> int | None:
    while index < len(tokens) and tokens[index].kind in (Kind.DOLLAR, Kind.BLANK):
        index += 1
    if index < len(tokens) and tokens[index].kind is Kind.NUM and len(tokens[index].numbers) == 1:
        return index
    return None


def _with_percent(number: PrintedNumber) -> PrintedNumber:
    return number._replace(percent=True)


def _assemble(items: list[Row | str]) -> list[Table]:
    tables: list[Table] = []
    table: Table | None = None
    run = _Run()
    caption: str | None = None
    group: str | None = None
    group_indent = 0

    for item in items:
        if isinstance(item, str):
            if item:
                caption = item
            table, run, group = None, _Run(), None
            continue
        row = item
        is_data = bool(row.values) and not all(is_year_cell(c) for c in row.values)
        if not is_data:
            run.rows.append(row)
            continue
        if table is None or run.looks_like_header():
            table = _new_table(run, caption)
            if not run.rows:  # no title or header lines: the table starts at its first row
                table.start = table.end = row.label_start
            tables.append(table)
            caption, group = None, None
        elif run.rows:
            heading = run.rows[-1]
            if row.label[:1].islower():  # a label wrapped over two rows
                row.label = f"{heading.label} {row.label}"
                row.label_start = heading.label_start
            elif heading.label.endswith(":") or row.indent > heading.indent:
                group, group_indent = heading.label.rstrip(":").strip(), heading.indent
            else:  # a row printed with no values ("Stock-settled deferred stock units  —")
                if group is not None and heading.indent > group_indent:
                    heading.group = group
                table.rows.append(heading)
        run = _Run()
        if group is not None:
            if row.indent > group_indent:
                row.group = group
            elif not row.label.lower().startswith("total"):
                group = None
        table.rows.append(row)
        table.end = max(table.end, row.cells[-1].end if row.cells else row.label_end)
    return tables


def _new_table(run: _Run, caption: str | None) -> Table:
    lines = [r for r in run.rows if r.label]
    title = None
    if (
        lines
        and not run.rows[0].cells
        and not (
            _SCALE_NOTE.search(lines[0].label) or column_kind(lines[0].label) or _PERIOD_PHRASE.search(lines[0].label)
        )
    ):
        title = lines[0].label
        lines = lines[1:]
    header_lines = [r.label for r in lines]
    year_row = next((r for r in run.rows if r.values and all(is_year_cell(c) for c in r.values)), None)
    scale_note = next((h for h in header_lines if _SCALE_NOTE.search(h)), None)
    if scale_note is None and caption and (caption_note := _SCALE_NOTE.search(caption)):
        scale_note = caption_note.group(0)
    if year_row is not None:
        columns = [Column(c.numbers[0].text, "year", int(c.numbers[0].magnitude)) for c in year_row.values]
    else:
        after_note = header_lines
        if scale_note in header_lines:
            after_note = header_lines[len(header_lines) - header_lines[::-1].index(scale_note) :]
        columns = [Column(h, column_kind(h)) for h in after_note if column_kind(h)]
    start = run.rows[0].label_start if run.rows else 0
    return Table(
        title=title,
        caption=caption,
        header_lines=header_lines,
        columns=columns,
        rows=[],
        scale=(scale_exponent(scale_note) or 0) if scale_note else 0,
        scale_note=scale_note,
        start=start,
        end=start,
    )
