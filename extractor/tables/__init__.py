"""Table rebuilding: any layout in, rows of (label, cells) under typed columns out."""

from extractor.tables.assemble import layout, prose_spans, rebuild_tables
from extractor.tables.model import Cell, Column, PrintedNumber, Row, Table

__all__ = ["layout", "prose_spans", "rebuild_tables", "Cell", "Column", "PrintedNumber", "Row", "Table"]
