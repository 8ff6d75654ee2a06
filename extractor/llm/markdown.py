"""A document section as the LLM reads it: tables rebuilt as compact Markdown, sentences as text, in order.

One row per line costs far fewer tokens than the one-cell-per-line text of an R page, and the row
label stays next to its numbers, which is what the model quotes back ('Granted | 1,601').
"""

from __future__ import annotations

from extractor.document import Document
from extractor.tables import Table


def flat(text: str) -> str:
    """Runs of whitespace as one space: how a table cell or a paragraph reads on one line. (str.split's
    whitespace is the regex engine's \\s, character for character; splitting and joining is C, a fifth of a sub.)"""
    return " ".join(text.split())


def table_markdown(document: Document, table: Table) -> str:
    """'Table: title', any header lines, a header row of the typed columns, then one line per row."""
    short = [text for text in (table.title, table.caption) if text and len(text) <= 200]  # long ones are prose
    lines = [f"Table: {flat(short[0]) if short else 'untitled'}"]
    if table.header_lines:
        lines.append("Header: " + " / ".join(flat(line) for line in table.header_lines))
    if table.columns:
        lines.append("| | " + " | ".join(flat(column.header) for column in table.columns) + " |")
    for row in table.rows:
        cells = [flat(document.text[cell.start : cell.end]) or "—" for cell in row.cells]
        label = f"{row.group}: {row.label}" if row.group else row.label
        lines.append(f"| {flat(label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_markdown(
    document: Document, tables: list[Table], paragraphs: list[tuple[int, int]], start: int = 0, end: int | None = None
) -> str:
    """Every table that starts inside [start, end) and the paragraphs' text inside it, in document order."""
    end = len(document.text) if end is None else end
    blocks: list[tuple[int, str]] = [(t.start, table_markdown(document, t)) for t in tables if start <= t.start < end]
    clipped = ((max(s, start), min(e, end)) for s, e in paragraphs)  # a paragraph longer than a part is cut
    blocks += [(s, flat(document.text[s:e])) for s, e in clipped if s < e and document.text[s:e].strip()]
    return "\n\n".join(text for _, text in sorted(blocks, key=lambda block: block[0]))
