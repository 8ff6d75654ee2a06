"""Layout-specific tokenizers: turn document text into one stream of cell tokens.

R-page text and rendered HTML hold one cell per line; aligned plain text holds a row per
line with columns separated by runs of spaces. Both become the same token kinds, so the
row and table assembly after this point does not depend on the layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from extractor.numbers import ANY_DIGIT, parse_number
from extractor.patterns import deferred
from extractor.regex_cache import regex
from extractor.tables.model import PrintedNumber


class Kind(Enum):
    TEXT = "text"  # a label or header line
    PROSE = "prose"  # a sentence or paragraph: ends any table
    NUM = "num"  # one number, or a range of two
    DOLLAR = "dollar"
    CLOSE = "close"  # ")" closing a negative opened in the previous cell
    PERCENT = "percent"
    DASH = "dash"  # a range separator between numbers, else an empty cell
    BLANK = "blank"
    FOOTNOTE = "footnote"  # "(1)" before its footnote text, "(A)" section letters
    ROWEND = "rowend"  # end of a physical row (aligned text only)


@dataclass
class Token:
    kind: Kind
    text: str
    start: int
    end: int
    indent: int = 0
    numbers: tuple[PrintedNumber, ...] = ()
    years: bool = False


_RANGE_RE = regex(r"^(?P<a>\(?\$?\s*[\d,]*\.?\d+\s*%?)\s*(?:-|–|—|to)\s*(?P<b>\$?\s*[\d,]*\.?\d+\s*%?\)?)$")
_YEARS_SUFFIX = regex(r"\s*(?:years?|yrs\.?)$", re.IGNORECASE)
_FOOTNOTE_RE = deferred(r"^\((?:\d{1,2}|[A-Za-z])\)$")
_RULE_RE = deferred(r"^[-=_\s]+$")
_PAGE_RE = deferred(r"^<PAGE>\s*\d*$|^-?\s*\d{1,3}\s*-?$", re.IGNORECASE)
_SPLIT_RE = regex(r"\S(?:.*?\S)??(?=\s{2,}|\s*$)")


def _printed(text: str, offset: int) -> PrintedNumber | None:
    parsed = parse_number(text)
    if parsed is None:
        return None
    return PrintedNumber(
        parsed.magnitude,
        parsed.negative,
        parsed.percent,
        parsed.currency,
        parsed.decimals,
        offset + parsed.digits_start,
        offset + parsed.digits_end,
        text[parsed.digits_start : parsed.digits_end],
    )


def _years_suffix(text: str) -> re.Match[str] | None:
    """`_YEARS_SUFFIX.search(text)`, started where its match can start: its word ("years", "yrs.", a line end
    after it) is in the last six characters, and only whitespace is before it. A label or a sentence is not
    searched at every one of its characters."""
    near_end = max(0, len(text) - 6)
    return _YEARS_SUFFIX.search(text, len(text[:near_end].rstrip()))


def classify_chunk(text: str, start: int) -> Token:
    """Classify one cell's text (already stripped of surrounding spaces)."""
    end = start + len(text)
    if text == "$":
        return Token(Kind.DOLLAR, text, start, end)
    if text == ")":
        return Token(Kind.CLOSE, text, start, end)
    if text == "%":
        return Token(Kind.PERCENT, text, start, end)
    if text in {"-", "–", "—", "--", "to"}:
        return Token(Kind.DASH, text, start, end)
    if ANY_DIGIT.search(text):  # a number, or a range of two, prints a digit: a label line is not parsed as one
        body = text
        years = False
        suffix = _years_suffix(body)
        if suffix and suffix.start() > 0:
            body, years = body[: suffix.start()], True
        single = _printed(body, start)
        if single:
            return Token(Kind.NUM, text, start, end, numbers=(single,), years=years)
        ranged = _RANGE_RE.match(body)
        if ranged:
            low = _printed(ranged.group("a"), start + ranged.start("a"))
            high = _printed(ranged.group("b"), start + ranged.start("b"))
            if low and high:
                if high.percent and not low.percent:
                    low = low._replace(percent=True)
                return Token(Kind.NUM, text, start, end, numbers=(low, high), years=years)
    if _FOOTNOTE_RE.match(text):
        return Token(Kind.FOOTNOTE, text, start, end)
    words = len(text.split())
    if len(text) >= 90 or (words >= 8 and text.rstrip().endswith((".", ":"))):
        return Token(Kind.PROSE, text, start, end)
    return Token(Kind.TEXT, text, start, end)


def cell_per_line_tokens(text: str, offset: int = 0) -> list[Token]:
    """R-page text and rendered HTML: each line is one cell (offsets start at `offset`: text is a slice)."""
    tokens: list[Token] = []
    for line in text.split("\n"):
        stripped = line.strip(" \t\u00a0")
        lead = len(line) - len(line.lstrip(" \t\u00a0"))
        if not stripped:
            tokens.append(Token(Kind.BLANK, line, offset, offset + len(line)))
        else:
            token = classify_chunk(stripped, offset + lead)
            token.indent = lead
            tokens.append(token)
        offset += len(line) + 1
    return _mark_footnotes(tokens)


def aligned_tokens(text: str, offset: int = 0) -> list[Token]:
    """Aligned plain text: split each line into chunks at runs of two or more spaces (offsets from `offset`)."""
    tokens: list[Token] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or _RULE_RE.match(stripped) or _PAGE_RE.match(stripped):
            tokens.append(Token(Kind.BLANK, line, offset, offset + len(line)))
        else:
            chunks = [(m.group(0), m.start()) for m in _SPLIT_RE.finditer(line)]
            lead = chunks[0][1]
            if len(chunks) == 1 and lead < 8 and len(stripped) > 45:
                tokens.append(Token(Kind.PROSE, stripped, offset + lead, offset + lead + len(stripped)))
            else:
                first = True
                for chunk, col in chunks:
                    for piece, piece_col in _split_currency(chunk, col):
                        token = classify_chunk(piece, offset + piece_col)
                        if first and token.kind in (Kind.NUM, Kind.DOLLAR):
                            tokens.append(Token(Kind.TEXT, "", offset, offset, indent=lead))
                        if token.kind is Kind.PROSE:
                            token.kind = Kind.TEXT
                        token.indent = lead if first else piece_col
                        tokens.append(token)
                        first = False
                tokens.append(Token(Kind.ROWEND, "", offset + len(line), offset + len(line)))
        offset += len(line) + 1
    return _mark_footnotes(tokens)


def _split_currency(chunk: str, col: int) -> list[tuple[str, int]]:
    """'$ 47.96' stays one cell; a label glued to '$' ('Granted $') is split."""
    if chunk.endswith(" $") and len(chunk) > 2:
        return [(chunk[:-2].rstrip(), col), ("$", col + len(chunk) - 1)]
    return [(chunk, col)]


_MARKER = regex(r"\(\d{1,2}\)")  # "(1)": a footnote marker or a small number in parentheses


def _mark_footnotes(tokens: list[Token]) -> list[Token]:
    """'(1)' followed by text is a footnote marker; followed by '$' or a number it is a value."""
    for index, token in enumerate(tokens):
        if token.kind is not Kind.NUM or len(token.numbers) != 1:
            continue
        if not _MARKER.fullmatch(token.text):
            continue
        nxt = next((t for t in tokens[index + 1 :] if t.kind not in (Kind.BLANK, Kind.ROWEND)), None)
        if nxt is None or nxt.kind in (Kind.TEXT, Kind.PROSE):
            token.kind = Kind.FOOTNOTE
            token.numbers = ()
    return tokens
