"""Find the stock-compensation note inside a whole filing, and cut a long note into chunks.

Only spans into `Document.text` come out, never new strings, so every number read from a
section or chunk keeps its offset into the original document.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from extractor.document import Document
from extractor.loaders.edgar import STOCK_COMP_TITLE
from extractor.tables import layout

_MAX_HEADING = 120  # a heading is a short line; prose lines run longer
# "NOTE 11 - STOCK-BASED COMPENSATION", "Note 12: Stock Compensation Plans", "Note 11" (title on the next line)
_NOTE = re.compile(r"note\s*(\d{1,2})(?:[A-Z]\b)?\s*[-–—:.]?\s*(.*)", re.IGNORECASE)
_DOT = re.compile(r"(\d{1,2})\.\s+([A-Za-z].*)")  # "11. Share-Based Compensation"
_PAREN = re.compile(r"\((\d{1,2})\)\s*([A-Za-z].*)")  # "(12) Stock-Based Compensation"
_ITEM = re.compile(r"item\s+\d{1,2}[A-Z]?\b", re.IGNORECASE)  # "Item 8." ends any note before it
_KEYWORDS = re.compile(
    r"\b(?:options?|grant(?:s|ed)?|exercis(?:ed|able)|exercise price|vest(?:ed|ing)|nonvested|forfeit(?:ed|ures?)|"
    r"expired|restricted (?:stock|share)s?|(?:stock|share)[- ]based|fair value|intrinsic value|awards?|"
    r"RSUs?|PSUs?|volatility|Black[- ]Scholes)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Section:
    """A span of `Document.text` with the reason it was chosen, for logs and warnings."""

    start: int
    end: int
    title: str | None
    why: str


@dataclass(frozen=True)
class _Heading:
    start: int
    style: str  # note, dot, paren (numbered notes), caps (an upper-case line), item
    number: int
    title: str


def find_note(document: Document) -> Section:
    """The stock-compensation note's span; the whole text when the document is already one section.

    Among headings whose title names stock compensation, the one whose body holds the most
    keyword hits wins, so a table-of-contents line or the accounting-policies paragraph loses
    to the note itself.
    """
    text = document.text
    heads = _headings(text)
    comp = [i for i, h in enumerate(heads) if h.style != "item" and STOCK_COMP_TITLE.search(h.title)]
    others = [h for h in heads if h.style == "item" or (h.style != "caps" and not STOCK_COMP_TITLE.search(h.title))]
    if not others:
        return Section(0, len(text), document.metadata.title, "whole document (no other note headings)")
    if not comp:
        why = f"no stock-based compensation note heading among {len(others)} other headings: read the whole text"
        return Section(0, len(text), document.metadata.title, why)
    hits = [m.start() for m in _KEYWORDS.finditer(text)]
    scored: list[tuple[int, int, _Heading, int]] = []
    for i in comp:
        head, end = heads[i], _body_end(heads, i, len(text))
        count = bisect_left(hits, end) - bisect_left(hits, head.start)
        scored.append((count, end - head.start, head, end))
    count, _, best, end = max(scored, key=lambda s: s[:2])
    why = f"heading {best.title!r} ({count} keyword hits" + (f", best of {len(comp)} candidates)" if len(comp) > 1 else ")")
    return Section(best.start, end, best.title, why)


def _headings(text: str) -> list[_Heading]:
    lines = text.split("\n")
    found: list[_Heading] = []
    offset = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and len(stripped) < _MAX_HEADING:
            kind = _classify(stripped, lines[i + 1].strip() if i + 1 < len(lines) else "")
            if kind:
                found.append(_Heading(offset + line.index(stripped[0]), *kind))
        offset += len(line) + 1
    return found


def _classify(line: str, next_line: str) -> tuple[str, int, str] | None:
    if _ITEM.match(line):
        return "item", 0, line
    for style, pattern in (("note", _NOTE), ("dot", _DOT), ("paren", _PAREN)):
        match = pattern.fullmatch(line)
        if match:
            if match.group(2):
                if line.endswith(".") and (style == "paren" or (style == "dot" and len(line.split()) > 6)):
                    return None  # a footnote sentence ('(2) Based on the U.S. Treasury yield curve ...')
                return style, int(match.group(1)), line
            if next_line and len(next_line) < _MAX_HEADING and next_line[0].isalpha():
                return style, int(match.group(1)), f"{line} {next_line}"  # HTML cells: "Note 11" / title
            return None
    if line.isupper() and re.search(r"[A-Z]{3}", line):
        return "caps", 0, line
    return None


def _body_end(heads: list[_Heading], index: int, text_end: int) -> int:
    """Up to the next note of the same numbering (footnote "(1)" inside note (12) is no end) or Item."""
    head = heads[index]
    for other in heads[index + 1 :]:
        if head.style == "caps" or other.style == "item":
            return other.start
        if other.style == head.style and other.number >= head.number:
            return other.start
    return text_end


def split(document: Document, section: Section, max_chars: int, overlap_chars: int) -> list[Section]:
    """Chunks of at most max_chars covering section, overlapping by about overlap_chars; never cut a table.

    Chunks start and end at line starts outside tables, preferring blank lines. A table longer
    than max_chars becomes a chunk of its own; a line longer than max_chars is cut where it must.
    """
    if section.end - section.start <= max_chars:
        return [section]
    text, lo, hi = document.text, section.start, section.end
    tables = _table_spans(document)
    starts = [t[0] for t in tables]

    def table_at(pos: int) -> tuple[int, int] | None:  # the table strictly containing pos
        i = bisect_right(starts, pos) - 1
        return tables[i] if i >= 0 and tables[i][0] < pos < tables[i][1] else None

    lines = [m.end() for m in re.finditer("\n", text[lo:hi])]
    bounds = sorted({lo + b for b in lines if not table_at(lo + b)} | {s for s in starts if lo < s < hi})
    paras = [b for b in bounds if text[text.rfind("\n", 0, b - 1) + 1 : b].strip() == ""]
    overlap = min(overlap_chars, max_chars // 2)  # so every chunk reaches past the previous cut
    spans: list[tuple[int, int]] = []
    pos = cut = lo
    while hi - pos > max_chars:
        limit, table = pos + max_chars, table_at(pos + max_chars)
        found = _last(paras, max(cut, pos + max_chars // 2), limit) or _last(bounds, cut, limit)
        j = bisect_right(bounds, limit)
        after = bounds[j] if j < len(bounds) else hi  # the next line start out of reach
        if table and not found:
            cut = min(table[1], hi)  # a table longer than max_chars: a chunk of its own
        elif not table and (not found or after - found > max_chars):
            cut = limit  # a line longer than max_chars must be cut somewhere
        else:
            cut = found
        spans.append((pos, cut))
        if cut >= hi:
            break
        i = bisect_left(starts, cut)
        table = tables[i] if i < len(tables) and starts[i] == cut else None  # the next chunk must hold it
        floor = max(pos + 1, cut - max_chars // 2, min(cut, table[1] - max_chars) if table else 0)
        target = max(cut - overlap, floor)
        j = bisect_left(bounds, target)
        pos = _last(bounds, floor - 1, target) or (bounds[j] if j < len(bounds) and bounds[j] <= cut else 0)
        if not pos:
            pos = cut if table_at(target) else target
    else:
        spans.append((pos, hi))
    n = len(spans)
    return [Section(s, e, section.title, f"part {i} of {n}") for i, (s, e) in enumerate(spans, 1)]


def _last(sorted_positions: list[int], after: int, upto: int) -> int | None:
    """The last position p with after < p <= upto."""
    i = bisect_right(sorted_positions, upto) - 1
    return sorted_positions[i] if i >= 0 and sorted_positions[i] > after else None


def _table_spans(document: Document) -> list[tuple[int, int]]:
    """Table spans widened to whole lines and merged where they overlap."""
    text, spans, merged = document.text, [], []
    for table in layout(document)[0]:
        start = text.rfind("\n", 0, table.start) + 1
        end = table.end if table.end == 0 or text[table.end - 1] == "\n" else text.find("\n", table.end) + 1 or len(text)
        spans.append((start, end))
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
