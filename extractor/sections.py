"""Find the stock-compensation note inside a whole filing, and cut a long note into chunks.

Only spans into `Document.text` come out, never new strings, so every number read from a
section or chunk keeps its offset into the original document.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import NamedTuple

from extractor.document import Document, LoadError, NoteSpan
from extractor.patterns import deferred
from extractor.regex_cache import regex
from extractor.tables import layout

# A title that names stock compensation (also how an EDGAR submission picks its R page).
STOCK_COMP_TITLE = deferred(
    r"stock[- ]based|share[- ]based|stock compensation|stock incentive|equity compensation|"
    r"stock option|stock plan|incentive plan",
    re.IGNORECASE,
)
_MAX_HEADING = 120  # a heading is a short line; prose lines run longer
# "Note 13. Stockholders' Equity", "NOTE 11 - STOCK-BASED COMPENSATION", "Note K – Stock Plans", "Note 11" (title on the next line)
_NOTE = regex(r"note\s+(\d{1,2}|(?-i:[A-Z])(?![A-Za-z]))(?:[A-Z]\b)?\s*[-–—:.]?\s*(.*)", re.IGNORECASE)
_DOT = regex(r"(\d{1,2})\.\s*([A-Za-z].*)")  # "11. Share-Based Compensation", "11.\xa0\xa0Share-Based ..."
_PAREN = regex(r"\((\d{1,2})\)\s*([A-Za-z].*)")  # "(12) Stock-Based Compensation"
_LETTER = regex(r"([A-Z])\.\s+([A-Za-z].*)")  # "K. Stock Compensation Plans" (only as part of an A, B, C... run)
_ITEM = regex(r"item\s+(\d{1,2})[A-Z]?\b", re.IGNORECASE)  # "Item 8." ends any note before it
_SIGNATURES = regex(r"signatures?|exhibit index", re.IGNORECASE)
_KEYWORDS = deferred(
    r"\b(?:options?|grant(?:s|ed)?|exercis(?:ed|able)|exercise price|vest(?:ed|ing)|nonvested|forfeit(?:ed|ures?)|"
    r"expired|restricted (?:stock|share)s?|(?:stock|share)[- ]based|fair value|intrinsic value|awards?|"
    r"RSUs?|PSUs?|volatility|Black[- ]Scholes)\b",
    re.IGNORECASE,
)
# What a note's title says of it: a stock-compensation note by name, or a note that often holds one (a combined
# equity note, "Compensation Plans", "Employee Benefit Plans") which must then show it in its body.
_NAMED = deferred(
    STOCK_COMP_TITLE.pattern + r"|share[- ]based payments?|equity[- ]based|equity (?:incentive|award)s?|stock awards?|"
    r"long[- ]term incentive|employee stock (?:purchase|ownership)|stock purchase plan|(?:stock|share) (?:option|award)s?",
    re.IGNORECASE,
)
_HOLDER = deferred(
    r"compensation|benefit plans?|(?:stock|share)holders[’']? equity|owners[’']? equity|\bequity\b|capital stock|"
    r"common stock|share capital|capital",
    re.IGNORECASE,
)
_MIN_NAMED_HITS = 5  # keyword hits a note named for stock compensation shows (a table-of-contents line shows none)
_MIN_HOLDER_HITS = 15  # ... and a combined note must show: grants, vesting, fair values, not one passing mention
# What a heading's line can start with (past spaces): "Note", "Item", "Signatures" or "Exhibit index" (with the
# patterns' own IGNORECASE, so every character those letters match case-insensitively matches here too), a digit,
# "(", or a capital and a period.
_STARTS = r"[^\S\n]*(?:(?i:[nise])|\d|\(|[A-Z]\.)"
_HEADING_START = regex(_STARTS)
_HEADING_START_AFTER = regex("\n" + _STARTS)
_MIN_RUN = 3  # numbered headings in a row that make a document a whole filing (with no Items printed)


class NoNoteFound(LoadError):
    """A whole filing with no stock-compensation note: nothing to extract (never facts from other notes)."""


@dataclass(frozen=True)
class Section:
    """A span of `Document.text` with the reason it was chosen, for logs and warnings."""

    start: int
    end: int
    title: str | None
    why: str


class _Heading(NamedTuple):
    start: int  # the line's start
    style: str  # note, dot, paren, letter (numbered notes), item, end (signatures, exhibit index)
    number: int
    title: str


def focus(document: Document) -> Document:
    """The document as the backends should read it: a whole filing narrowed to its stock-compensation note.

    A document that is not a whole filing (a note, an R page) is returned as it is. A whole filing
    without such a note raises NoNoteFound, naming what was looked for.
    """
    section = find_note(document)
    if section is None:
        heads = _headings(document.text)
        notes = sum(len(run) for run in _runs(heads) if len(run) >= _MIN_RUN)
        raise NoNoteFound(
            document.path,
            f"no stock-compensation note found: a whole filing ({notes} note headings, "
            f"{len({h.number for h in heads if h.style == 'item'})} items) with no note titled for stock-based "
            "compensation, share-based payments or equity incentive plans, and no equity or compensation note "
            "that discusses grants, vesting and fair values",
        )
    if (section.start, section.end) == (0, len(document.text)):
        return document
    note = NoteSpan(start=section.start, end=section.end, heading=section.title, why=section.why)
    return document.model_copy(update={"note": note})


def find_note(document: Document) -> Section | None:
    """The stock-compensation note's span; the whole text when the document is not a whole filing; None
    when it is one and no note qualifies.

    A whole filing prints its notes as a numbered (or lettered) run of headings, or its Items. Among the
    notes named for stock compensation, the one whose body holds the most keyword hits wins (a table-of-
    contents line has no body); failing that, an equity or compensation note that shows many of them.

    Found once per text: loading a document (`focus`) and the LLM backend's questions both ask.
    """
    if document.note is not None:
        return Section(document.note.start, document.note.end, document.note.heading, document.note.why)
    return document.derived("note", _find_note)


def _find_note(document: Document) -> Section | None:
    text = document.text
    heads = _headings(text)
    runs = _runs(heads)
    items = {h.number for h in heads if h.style == "item"}
    if not any(len(run) >= _MIN_RUN for run in runs) and len(items) < 2:
        return Section(0, len(text), document.metadata.title, "whole document (no other note headings)")
    ends = [h.start for h in heads if h.style in ("item", "end")]
    titled: list[tuple[bool, _Heading, int]] = []  # notes whose title may make them the one, with their ends
    for run in runs:
        for i, head in enumerate(run):
            end = run[i + 1].start if i + 1 < len(run) else _next(ends, head.start, len(text))
            if _NAMED.search(head.title):
                titled.append((True, head, end))
            elif _HOLDER.search(head.title):
                titled.append((False, head, end))
    hits = _keyword_hits(text, [(head.start, end) for _, head, end in titled])
    named: list[tuple[int, int, _Heading, int]] = []
    holders: list[tuple[int, int, _Heading, int]] = []
    for is_named, head, end in titled:
        count = bisect_left(hits, end) - bisect_left(hits, head.start)
        if is_named and count >= _MIN_NAMED_HITS:
            named.append((count, end - head.start, head, end))
        elif not is_named and count >= _MIN_HOLDER_HITS:
            holders.append((count, end - head.start, head, end))
    candidates = named or holders
    if not candidates:
        return None
    count, _, best, end = max(candidates, key=lambda c: c[:2])
    kind = "" if named else "a combined note, "
    why = f"heading {best.title!r} ({kind}{count} keyword hits" + (
        f", best of {len(candidates)})" if len(candidates) > 1 else ")"
    )
    return Section(best.start, end, best.title, why)


def _keyword_hits(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """Where keywords start inside the spans (notes that start on a line), each part of the text scanned once:
    not the whole filing. A scan from a line start finds what a scan of the whole text does, as no keyword
    runs over a line break."""
    hits: list[int] = []
    covered = 0
    for start, end in sorted(spans):
        for match in _KEYWORDS.finditer(text, max(start, covered)):
            if match.start() >= end:
                break
            hits.append(match.start())
        covered = max(covered, end)
    return hits


def _next(positions: list[int], after: int, default: int) -> int:
    i = bisect_right(positions, after)
    return positions[i] if i < len(positions) else default


def _runs(heads: list[_Heading]) -> list[list[_Heading]]:
    """Runs of two or more note headings numbered 1, 2, 3... (or A, B, C...) in one style: the lists of notes.

    A run may skip one number (a note left out of a 10-Q). Footnote markers restart at (1) under
    every table and list items rarely reach three, so both stay out.
    """
    open_runs: dict[tuple[str, int], list[_Heading]] = {}
    runs: list[list[_Heading]] = []
    for head in heads:
        if head.style not in ("note", "dot", "paren", "letter"):
            continue
        run = open_runs.pop((head.style, head.number - 1), None) or open_runs.pop((head.style, head.number - 2), None)
        if run is None:
            run = []
            runs.append(run)
        run.append(head)
        open_runs[(head.style, head.number)] = run
    return [run for run in runs if len(run) >= 2]


def _headings(text: str) -> list[_Heading]:
    found: list[_Heading] = []
    seen: dict[str, int] = {}
    for start in _heading_starts(text):
        end = _line_end(text, start)
        stripped = text[start:end].strip()
        if len(stripped) < _MAX_HEADING:
            kind = _classify(stripped, text[end + 1 : _line_end(text, end + 1)].strip() if end < len(text) else "")
            if kind:
                found.append(_Heading(start, *kind))
                if kind[0] == "item":
                    key = " ".join(stripped.casefold().split())
                    seen[key] = seen.get(key, 0) + 1
    # An Item line printed on every page ("ITEM 8. FINANCIAL STATEMENTS ... - NOTES TO ...") is a running header,
    # not the start of the next Item: it ends nothing.
    running = {key for key, count in seen.items() if count > 2}
    return [h for h in found if h.style != "item" or " ".join(h.title.casefold().split()) not in running]


def _heading_starts(text: str) -> list[int]:
    """Starts of the lines _classify may take: those whose first character (past spaces) can begin one of its
    patterns. A table row or a paragraph of a 10-K mostly cannot, and the scan for a line break is done in C."""
    first = [0] if _HEADING_START.match(text) else []
    return first + [match.start() + 1 for match in _HEADING_START_AFTER.finditer(text)]


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _classify(line: str, next_line: str) -> tuple[str, int, str] | None:
    item = _ITEM.match(line)
    if item:
        return "item", int(item.group(1)), line
    if _SIGNATURES.fullmatch(line.rstrip(":")):
        return "end", 0, line
    for style, pattern in (("note", _NOTE), ("dot", _DOT), ("paren", _PAREN), ("letter", _LETTER)):
        match = pattern.fullmatch(line)
        if not match:
            continue
        label = match.group(1)
        number = int(label) if label.isdigit() else ord(label.upper()) - ord("A") + 1
        title = match.group(2)
        if title:
            if _not_a_title(title, style):
                return None
            return style, number, line
        if style == "note" and next_line and len(next_line) < _MAX_HEADING and next_line[0].isalpha():
            return style, number, f"{line} {next_line}"  # HTML cells: "Note 11" / title
        break  # a heading number with no title: no other style reads it either
    return None


_PAGE_NUMBER = regex(r"\t\s*\d+\s*$")


def _not_a_title(title: str, style: str) -> bool:
    """A sentence, a footnote or a table-of-contents entry rather than a note's title."""
    if _PAGE_NUMBER.search(title):  # "Stockholders' Equity\t112": a page number after a tab
        return True
    if title.endswith(".") and (style != "note" or len(title.split()) > 6):
        return True  # '(2) Based on the U.S. Treasury yield curve ...', '1. Consolidated Financial Statements ...'
    return len(title.split()) > 14


_LINE_BREAK = regex("\n")


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

    lines = [m.end() for m in _LINE_BREAK.finditer(text[lo:hi])]
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
        elif not found or (not table and after - found > max_chars):
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
    text = document.text
    spans: list[tuple[int, int]] = []
    merged: list[tuple[int, int]] = []
    for table in layout(document)[0]:
        start = text.rfind("\n", 0, table.start) + 1
        end = (
            table.end if table.end == 0 or text[table.end - 1] == "\n" else text.find("\n", table.end) + 1 or len(text)
        )
        spans.append((start, end))
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
