"""A note cut into blocks (one rebuilt table, or one paragraph) for prompts that ask one block at a time.

Small models cannot hold the whole schema and a whole note at once. A block is sent with the parts
of the schema it can fill: the parts whose signal words (schemas.stock_compensation.PART_SIGNALS)
it says most often. So a roll-forward table is asked for `award_activity` alone, and a sentence on
unrecognized cost for `unrecognized_cost` alone. Blocks with no number, or naming no part, are not
sent, unless the hybrid backend chose them for the numbers rules left unread there.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from extractor.document import Document
from extractor.llm.markdown import flat, table_markdown
from extractor.regex_cache import regex
from extractor.schemas.stock_compensation import PART_SIGNALS
from extractor.tables import Table

_NUMBER = regex(r"\d[\d,.]*")
# Characters llama-cpp-python's schema-to-grammar conversion does not escape in enum strings: a quote
# holding one makes a grammar the server cannot parse (and, in 0.3.36, a crash). Cell labels drop them
# (the aligner matches labels loosely); a sentence quote starts after the last one.
_UNSAFE = regex(r'["\\]')
_WORD = regex(r"(?<!\S)\S")  # where each word starts
_SIGNALS = {part: regex(pattern, re.IGNORECASE) for part, pattern in PART_SIGNALS.items()}
ALL_PARTS = frozenset(PART_SIGNALS)


@dataclass(frozen=True)
class Block:
    """One table or paragraph: its span, its text as the model reads it, and the parts it is asked for."""

    start: int
    end: int
    kind: str  # table or paragraph
    content: str
    parts: frozenset[str]
    items: int  # the most entries any list of the answer can need: the table's rows, or the paragraph's numbers
    quotes: tuple[
        str, ...
    ]  # every number of the block as the answer may quote it: 'row label | cell', or the words before it


def block_parts(text: str) -> frozenset[str]:
    """The parts `text` speaks of most (ties kept)."""
    counts = {part: len(signal.findall(text)) for part, signal in _SIGNALS.items()}
    best = max(counts.values(), default=0)
    return frozenset(part for part, count in counts.items() if count == best) if best else frozenset()


def note_blocks(
    document: Document,
    tables: list[Table],
    paragraphs: list[tuple[int, int]],
    start: int,
    end: int,
    spans: Collection[tuple[int, int]] | None = None,
) -> list[Block]:
    """The tables and paragraphs inside [start, end) that hold a number and speak of a part, in order.

    With `spans` (the hybrid backend's choice), only the blocks overlapping one of them; such a block
    is sent even when it names no part, asked for every part: its numbers were left unread."""

    def chosen(low: int, high: int) -> bool:
        return spans is None or any(low < b and a < high for a, b in spans)

    def asked(text: str) -> frozenset[str]:
        return block_parts(text) or (ALL_PARTS if spans is not None else frozenset())

    blocks = []
    for table in tables:
        if start <= table.start < end and chosen(table.start, table.end):
            content = table_markdown(document, table)
            parts = asked(content)
            if parts and any(cell.numbers for row in table.rows for cell in row.cells):
                blocks.append(
                    Block(
                        table.start, table.end, "table", content, parts, len(table.rows), _cell_quotes(document, table)
                    )
                )
    for low, high in paragraphs:
        low, high = max(low, start), min(high, end)
        if low >= high or not chosen(low, high):
            continue
        text = flat(document.text[low:high])
        parts = asked(text)
        if parts and (quotes := _sentence_quotes(text)):
            blocks.append(Block(low, high, "paragraph", text, parts, len(quotes), quotes))
    return sorted(blocks, key=lambda block: block.start)


def _cell_quotes(document: Document, table: Table) -> tuple[str, ...]:
    cells = (
        f"{_UNSAFE.sub('', flat(row.label))} | {flat(document.text[cell.start : cell.end])}"
        for row in table.rows
        for cell in row.cells
        if cell.numbers
    )
    return tuple(dict.fromkeys(cells))


def _sentence_quotes(text: str) -> tuple[str, ...]:
    """Each number with up to six words before it: enough for the aligner to tell its places apart."""
    quotes = []
    for match in _NUMBER.finditer(text):
        words = [word.start() for word in _WORD.finditer(text, 0, match.start())][-6:]
        end = match.start() + len(match.group().rstrip(".,"))
        quote = text[words[0] if words else match.start() : end]
        quotes.append(_UNSAFE.split(quote)[-1].strip())  # the words after a '"': still verbatim
    return tuple(dict.fromkeys(quotes))
