"""Tables printed with years as rows ('2023 | 127 | 319.70 | 40,479') turned to years as columns, the way
most notes print them, so one set of mapping rules reads both."""

from __future__ import annotations

import re

from extractor.regex_cache import regex
from extractor.tables.model import Cell, Column, Row, Table

_YEAR_LABEL = regex(r"^(?:fiscal(?: year)?\s+|fy\s*)?((?:19|20)\d\d)$", re.I)


def row_year(label: str) -> int | None:
    """The year a row label is ('2023', 'Fiscal 2023'), or None."""
    match = _YEAR_LABEL.match(label.strip())
    return int(match.group(1)) if match else None


_YEAR_WORD = regex(r"\byear\b", re.I)


def years_as_columns(table: Table) -> Table:
    """The table turned when every row is a year and its columns are measures; otherwise the table as is.
    Cells (and so every number's span) are the same objects; only their arrangement changes."""
    years = [row_year(row.label) for row in table.rows]
    single = _YEAR_WORD.search(table.title or "")  # 'Grant Year | Expected Life | ...' over one row
    if (
        len(table.rows) < (1 if single else 2)
        or None in years
        or not table.columns
        or any(c.year or c.end for c in table.columns)
    ):
        return table
    columns = [Column(header=row.label, kind="year", year=year) for row, year in zip(table.rows, years)]
    rows = [
        Row(
            label=column.header,
            label_start=table.start,
            label_end=table.start,
            cells=[
                row.cells[index] if index < len(row.cells) else Cell([], row.label_end, row.label_end)
                for row in table.rows
            ],
        )
        for index, column in enumerate(table.columns)
    ]
    return Table(
        title=table.title,
        caption=table.caption,
        header_lines=table.header_lines,
        columns=columns,
        rows=rows,
        scale=table.scale,
        scale_note=table.scale_note,
        start=table.start,
        end=table.end,
    )
