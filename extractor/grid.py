"""A table as the HTML drew it: rows by logical columns, every cell a span of the document text.

HTML tables carry their structure in the DOM (row ends, empty cells, colspans); the loader keeps it here
so the table builder never guesses columns back from text. Spacer columns are dropped and `$`, `)` and
`%` cells are merged with their number before the grid is made, so `col` counts columns a reader sees.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class GridCell(BaseModel):
    """One non-empty cell: its place in the grid and its text span (`text[start:end]`) in the document."""

    row: int
    col: int
    colspan: int = Field(default=1, description="Logical columns the cell covers (header cells over several).")
    start: int
    end: int


class TableGrid(BaseModel):
    """One HTML table: `rows` lines of `cols` logical columns from `start` to `end` of the document text.

    A whole filing's tables outside its note keep only where they lie (no cells, no row starts): no stage reads
    them, and a 10-K draws 100,000 cells.
    """

    start: int
    end: int
    rows: int
    cols: int
    cells: list[GridCell] = Field(default_factory=list)
    row_starts: list[int] = Field(default_factory=list, description="Offset of each row's line in the text.")

    def row_cells(self, row: int) -> list[GridCell]:
        return [cell for cell in self.cells if cell.row == row]
