"""Rebuilt tables: rows of (label, cells) under typed columns; every number keeps its span."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from extractor.schemas.values import AwardType


class PrintedNumber(NamedTuple):
    """One number as printed in a cell; `start`/`end` cover its digits in the document text. A tuple (a copy with
    a change is `_replace`): every number of every table makes one, in a fraction of a frozen dataclass's time."""

    magnitude: Decimal
    negative: bool
    percent: bool
    currency: bool
    decimals: int
    start: int
    end: int
    text: str


@dataclass
class Cell:
    """A value cell: one number, or two for a range ("26.8% - 32.6%"); none for a dash."""

    numbers: list[PrintedNumber]
    start: int
    end: int
    years: bool = False  # printed with a "years" suffix ("5.3 years")

    @property
    def empty(self) -> bool:
        return not self.numbers

    @property
    def is_range(self) -> bool:
        return len(self.numbers) == 2


@dataclass
class Row:
    """One table row: its label (with the label's offset in the document) and its cells, one per column."""

    label: str
    label_start: int
    label_end: int
    cells: list[Cell] = field(default_factory=list)
    indent: int = 0
    group: str | None = None  # the group heading a member row sits under ("Other share-based incentives")

    @property
    def values(self) -> list[Cell]:
        return [c for c in self.cells if not c.empty]


@dataclass
class Column:
    """One column: its header text as printed (stacked header rows joined), what kind of measure it holds,
    and the period and award its header names, when it names them."""

    header: str
    kind: str | None  # year, count, price, fair_value, term, intrinsic, cost, min, max
    year: int | None = None
    end: date | None = None  # a full date printed in the header ("June 30, 2025")
    months: int | None = None  # 3, 6, 9 or 12 when the header says "Three Months Ended" etc.
    month_day: tuple[int, int] | None = None  # "Fiscal Years Ended January 31," over bare years
    award: AwardType | None = None  # an award type named over this column ("Restricted Stock Units | Shares")
    scale: int | None = None  # a scale in this column's own header ("Shares (in millions)")


@dataclass
class Table:
    """A table rebuilt from any layout (HTML grid, R-page text, aligned text): title, caption, typed
    columns, rows of cells with their spans, and the scale it states. The rules backend maps it; the
    validator and coverage read it."""

    title: str | None
    caption: str | None
    header_lines: list[str]
    columns: list[Column]
    rows: list[Row]
    scale: int = 0  # power of ten for counts and amounts (never per-share prices, rates or terms)
    scale_note: str | None = None
    start: int = 0
    end: int = 0

    @property
    def context(self) -> str:
        """Title, caption and headers: where award types and scale are announced."""
        return " ".join(part for part in (self.title, self.caption, *self.header_lines) if part)

    @property
    def year_columns(self) -> bool:
        return bool(self.columns) and all(c.kind == "year" for c in self.columns)

    def cell_for(self, row: Row, kind: str) -> Cell | None:
        """The cell of `row` under the first column of `kind` (cells fill columns left to right)."""
        for index, column in enumerate(self.columns):
            if column.kind == kind:
                return row.cells[index] if index < len(row.cells) else None
        return None
