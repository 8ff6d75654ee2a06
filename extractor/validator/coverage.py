"""Coverage: every number the note prints is used by an extracted fact or explained; the rest are
likely omissions, listed with their spans so a reviewer (or the LLM) can read them.

On real filings most errors are numbers left out, which no check of the extracted values can see.
Tables count by the cells of the rebuilt tables; prose counts the amounts of sentences that speak of
stock compensation. What is no omission (a year, a reference such as "ASC 718", a row of dividends
declared in a combined equity note) is explained by schemas/lexicon/stock_compensation/coverage.toml.

Thresholds were chosen on the real-filing suite and the seeds (README, "Coverage"): an extraction that
uses or explains under 60 % of what its note prints, or leaves a table in scope mostly unread, fails.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from extractor import schemas
from extractor.document import Document
from extractor.findings import Finding, Unexplained
from extractor.numbers import ANY_DIGIT, NUMBER_RE, WORD_NUMBERS
from extractor.patterns import any_of, ends_at, initials, may_match, required_phrases, screen_text, union
from extractor.regex_cache import regex
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period
from extractor.tables import Table, layout
from extractor.tables.assemble import is_year_cell
from extractor.tomlfile import parse_toml
from extractor.validator.factset import FactSet

_LEXICON = Path(schemas.__file__).resolve().parent / "lexicon" / "stock_compensation" / "coverage.toml"

NOTE_COVERAGE = Decimal("0.6")  # below this share of the note's numbers used or explained: the extraction fails
TABLE_READ = Decimal("0.5")  # a table in scope with less than this share read is "mostly unread": an error
MIN_TABLE_NUMBERS = 4  # a smaller table left unread is a warning (a two-number aside), not a failed note
MIN_NOTE_NUMBERS = 8  # a note printing fewer numbers is judged by its tables and sentences alone


class _Lexicon(NamedTuple):
    out_of_scope: tuple[tuple[str, re.Pattern[str]], ...]
    cues: re.Pattern[str]
    references: re.Pattern[str]


def _load() -> _Lexicon:
    data = parse_toml(_LEXICON, _LEXICON.read_bytes().decode())  # as tomllib.load reads a file
    return _Lexicon(
        out_of_scope=tuple((e["reason"], regex(e["pattern"], re.I)) for e in data["out_of_scope"]),
        cues=regex(data["prose"]["cues"], re.I),
        references=regex(data["prose"]["references"], re.I),
    )


LEXICON = _load()
_AFTER_REFERENCE = ends_at(LEXICON.references)  # the text before a number ends with "ASC", "Note", …
# The spaces after a sentence's ".", ";" or ":" before a capital, "(" or a bullet. Written from its first space: a
# pattern that begins with a character class is tried only at such characters, one that begins with a
# lookbehind at every position (the same matches as r"(?<=[.;:])\s+(?=[A-Z(•])", twice as fast).
_SENTENCE_END = regex(r"\s(?<=[.;:]\s)\s*(?=[A-Z(•])")
# "years" or "months" after a number make it a term ("over 4 years"), unless a period is named ("nine months ended")
_TERM = r"(?:years?|months?)\b(?!\s+(?:periods?\s+)?(?:ended|ending)\b)"
_TERM_AFTER = regex(r"[\s-]*" + _TERM, re.I)
# A term printed in words ("vest ratably over three years", "a four-year period"): a number too.
_TERM_WORDS = [w for w, n in WORD_NUMBERS.items() if n]
# The first-letter test passes over most positions at once (a word's first letter is where any match starts).
_WORD_TERM = regex(
    rf"(?={initials(_TERM_WORDS)})\b(" + "|".join(_TERM_WORDS) + r")(?=[\s-]+" + _TERM + ")",
    re.I,
)


@dataclass
class Printed:
    """One printed number of a block: used by a fact, explained (with why), or neither."""

    start: int
    end: int
    text: str
    row: str | None = None
    column: str | None = None
    column_index: int | None = None
    row_index: int | None = None
    explained: str | None = None
    used: bool = False


@dataclass
class Block:
    """A table or a paragraph: the unit a reviewer reads and an LLM is asked about."""

    kind: str  # "table" or "prose"
    index: int  # table number, or paragraph number, in document order
    start: int
    end: int
    label: str
    numbers: list[Printed] = field(default_factory=list)
    out_of_scope: str | None = None  # the whole block is outside the schema, and why

    @property
    def counted(self) -> list[Printed]:
        return [n for n in self.numbers if n.explained is None or n.used]

    @property
    def unexplained(self) -> list[Printed]:
        return [n for n in self.numbers if n.explained is None and not n.used]

    @property
    def ratio(self) -> Decimal:
        counted = self.counted
        return _share(sum(n.used for n in counted), len(counted)) if counted else Decimal(1)


def blocks(document: Document) -> list[Block]:
    """The note's tables and paragraphs with every number they print, each explained where it is no amount."""
    tables, paragraphs = layout(document)
    found = [_table_block(i, t) for i, t in enumerate(tables)]
    text = document.text
    found.extend(_prose_block(i, text, lo, hi) for i, (lo, hi) in enumerate(paragraphs))
    return [b for b in found if b.numbers]


def mark_used(found: Iterable[Block], facts: FactSet) -> None:
    """A number is used when an extracted fact's source span overlaps its digits."""
    covered = {o for _, f in facts.printings if f.source is not None for o in range(f.source.start, f.source.end)}
    for block in found:
        for number in block.numbers:
            number.used = not covered.isdisjoint(range(number.start, number.end))
        if block.out_of_scope and not any(n.used for n in block.numbers):
            for number in block.numbers:  # a dividends table of a combined equity note: all of it explained
                number.explained = number.explained or block.out_of_scope


@dataclass
class Coverage:
    """What the coverage rules found: their findings, and the share of the note's numbers used or explained."""

    findings: list[Finding]
    used: int
    counted: int

    @property
    def share(self) -> Decimal | None:
        return _share(self.used, self.counted) if self.counted else None


def _share(used: int, counted: int) -> Decimal:
    return (Decimal(used) / counted).quantize(Decimal("0.001"))


def check_coverage(facts: FactSet, document: Document) -> Coverage:
    """Findings for blocks with unexplained numbers, and for a note read under the threshold."""
    found = blocks(document)
    mark_used(found, facts)
    hints: _Hints | None = None  # built for the first block with numbers to explain: a clean note never needs it
    findings: list[Finding] = []
    for block in found:
        missing = block.unexplained
        if not missing:
            continue
        if hints is None:
            hints = _Hints(facts, found)
        mostly_unread = block.kind == "table" and len(block.counted) >= MIN_TABLE_NUMBERS and block.ratio < TABLE_READ
        shown = ", ".join(n.text for n in missing[:12]) + (", …" if len(missing) > 12 else "")
        what = f"{block.label}: {len(missing)} of its {len(block.counted)} numbers"
        findings.append(
            Finding(
                rule=f"coverage.{'table' if block.kind == 'table' else 'prose'}",
                severity="error" if mostly_unread else "warning",
                message=f"{what} were not extracted and nothing explains them"
                f"{' (the table is mostly unread)' if mostly_unread else ''}: {shown}",
                numbers=[hints.unexplained(block, n) for n in missing],
                coverage=block.ratio,
            )
        )
    counted = [n for b in found for n in b.counted]
    result = Coverage(findings, sum(n.used for n in counted), len(counted))
    share = result.share
    if share is not None and result.counted >= MIN_NOTE_NUMBERS and share < NOTE_COVERAGE:
        findings.append(
            Finding(
                rule="coverage.note",
                severity="error",
                message=f"only {share:.0%} of the {result.counted} numbers the note prints in its tables and "
                f"stock-compensation sentences were extracted or explained (at least {NOTE_COVERAGE:.0%} "
                "expected): its layout was not understood, or most of it is out of the schema",
                coverage=share,
            )
        )
    return result


def _out_of_scope(*texts: str | None) -> str | None:
    for text in texts:
        reason = _scope_of(text) if text else None
        if reason:
            return reason
    return None


_ANY_OUT_OF_SCOPE = any_of(pattern for _, pattern in LEXICON.out_of_scope)
_OUT_OF_SCOPE_PHRASES = union(required_phrases(pattern) for _, pattern in LEXICON.out_of_scope)


@lru_cache(maxsize=4096)  # a table's header and row labels are asked about once per cell
def _scope_of(text: str) -> str | None:
    """The first out-of-scope reason whose pattern the text matches (one joined scan rules most texts out)."""
    if not may_match(_OUT_OF_SCOPE_PHRASES, screen_text(text)):
        return None  # none of the phrases every out-of-scope match holds: no pattern is run
    if _ANY_OUT_OF_SCOPE is not None and not _ANY_OUT_OF_SCOPE.search(text):
        return None
    return next((reason for reason, pattern in LEXICON.out_of_scope if pattern.search(text)), None)


def _table_block(index: int, table: Table) -> Block:
    title = (table.title or table.caption or "").strip()
    label = f"table {index + 1}" + (f" ('{title[:60]}')" if title else "")
    block = Block("table", index, table.start, table.end, label)
    block.out_of_scope = _out_of_scope(table.title, table.caption)
    headers = [column.header.strip() for column in table.columns]  # each column's, read once, not once a cell
    header_reasons = [_out_of_scope(header) for header in headers]
    for r, row in enumerate(table.rows):
        row_reason = _out_of_scope(row.label, row.group)
        row_label = row.label.strip() or None
        for c, cell in enumerate(row.cells):
            if not cell.numbers:
                continue
            header, header_reason = (headers[c], header_reasons[c]) if c < len(headers) else (None, None)
            reason = ("a year" if is_year_cell(cell) else None) or row_reason or header_reason
            for number in cell.numbers:
                block.numbers.append(
                    Printed(number.start, number.end, number.text, row_label, header or None, c, r, reason)
                )
    return block


def _prose_block(index: int, text: str, lo: int, hi: int) -> Block:
    paragraph = text[lo:hi]
    numbers: list[Printed] = []
    offset = 0
    for sentence in _SENTENCE_END.split(paragraph):
        begin = paragraph.find(sentence, offset)
        offset = begin + len(sentence)
        lowered = sentence.lower()  # a term in words is followed by "years" or "months": most sentences name neither
        terms = "year" in lowered or "month" in lowered
        if not (terms or ANY_DIGIT.search(sentence)) or not LEXICON.cues.search(sentence):
            continue  # no number printed, or no stock-compensation cue
        scope = _out_of_scope(sentence)  # "declared a quarterly cash dividend of $0.50 per share"
        for match in NUMBER_RE.finditer(sentence):
            start, end = lo + begin + match.start("digits"), lo + begin + match.end("digits")
            reason = _no_amount(match, sentence, text, end)
            if reason is None and scope:
                reason = scope
            if reason == "skip":
                continue
            numbers.append(Printed(start, end, match.group("digits"), explained=reason))
        if terms:
            for match in _WORD_TERM.finditer(sentence):
                start = lo + begin + match.start(1)
                numbers.append(Printed(start, start + len(match[1]), match[1], explained=scope))
    numbers.sort(key=lambda number: number.start)
    label = f"paragraph {index + 1} ('{_clip(paragraph)}')" if numbers else ""  # a block without numbers is dropped
    return Block("prose", index, lo, hi, label, numbers)


def _no_amount(match: re.Match[str], sentence: str, text: str, end: int) -> str | None:
    """'skip' for what reads as no number at all (a day, a year, "two plans" as digits); a reason for a
    printed reference; None for an amount."""
    digits = match.group("digits")
    marked = (
        match.group("currency")
        or match.group("lead_currency")
        or match.group("percent")
        or match.group("trail_percent")
    )
    if _AFTER_REFERENCE(sentence, match.start()):
        return "a reference"
    if marked or "," in digits or "." in digits:
        return None
    if len(digits) == 4 and digits[:2] in ("19", "20"):
        return "skip"  # a year
    if len(digits) < 3 and not _TERM_AFTER.match(text, end):
        return "skip"  # a day of a date, a note number, a small count of things
    return None


def _clip(text: str, width: int = 50) -> str:
    """The text's start on one line, at most `width` characters: only its first `width` words are joined (as many
    words print more than `width` characters), not a whole paragraph for a label."""
    words = text.split(None, width)
    flat = " ".join(words[:width])
    return flat if len(words) <= width and len(flat) <= width else flat[: width - 1] + "…"


def _period(instant: date | None, start: date | None, end: date | None) -> Period:
    return Period(instant=instant, start=start, end=end)


class _Hints:
    """Period and award type for an unexplained number from the facts around it: the same table column
    gives the period, the same row (or the whole table, when it is about one award type) the award."""

    def __init__(self, facts: FactSet, found: list[Block]) -> None:
        by_start: dict[int, Fact] = {}
        for _, printed in facts.printings:
            if printed.source is not None:
                by_start.setdefault(printed.source.start, printed)
        # defaultdicts: setdefault(key, Counter()) built a Counter for every number, used or not
        self.column: dict[tuple[int, int], Counter] = defaultdict(Counter)
        self.row: dict[tuple[int, int], Counter] = defaultdict(Counter)
        self.awards: dict[tuple[str, int], Counter] = defaultdict(Counter)
        self.periods: dict[tuple[str, int], Counter] = defaultdict(Counter)
        for block in found:
            key = (block.kind, block.index)
            for number in block.numbers:
                fact = by_start.get(number.start)
                if fact is None:
                    continue
                period = (fact.period.instant, fact.period.start, fact.period.end)  # the Period, hashable
                award = fact.dims.get("award")
                self.awards[key][award] += 1
                self.periods[key][period] += 1
                if number.column_index is not None:
                    self.column[(block.index, number.column_index)][period] += 1
                if number.row_index is not None:
                    self.row[(block.index, number.row_index)][award] += 1

    def unexplained(self, block: Block, number: Printed) -> Unexplained:
        key = (block.kind, block.index)
        in_table = block.kind == "table"
        periods = (
            self.column.get((block.index, number.column_index))
            if in_table and number.column_index is not None
            else None
        )
        periods = periods or (self.periods.get(key) if block.kind == "prose" else None)
        awards = self.row.get((block.index, number.row_index)) if in_table and number.row_index is not None else None
        table_awards = self.awards.get(key)
        if not awards and table_awards and len(table_awards) == 1:
            awards = table_awards
        period = _period(*periods.most_common(1)[0][0]) if periods else None
        award = awards.most_common(1)[0][0] if awards else None
        where = (
            block.label
            if block.kind == "prose"
            else ", ".join(
                part
                for part in (
                    block.label,
                    f"row '{number.row}'" if number.row else None,
                    f"column '{number.column}'" if number.column else None,
                )
                if part
            )
        )
        return Unexplained(
            start=number.start,
            end=number.end,
            text=number.text,
            where=where,
            table=block.index if block.kind == "table" else None,
            row=number.row,
            column=number.column,
            period=period,
            award=award,
        )
