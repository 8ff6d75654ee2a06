"""Ground an LLM's answer: align each quote to the document, find the number in it, compute the value.

Alignment tries, in order: the rebuilt table row named by a 'label | cell' quote, the exact quote,
the quote after normalizing case, spaces, dashes and quote marks, then a fuzzy match of the quote's
words around each place the number is printed. The method that placed a quote stays on the value's
span (`SourceSpan.alignment`), so review can put the shaky ones (normalized, fuzzy) first. A value whose
quote cannot be placed keeps no span, so the validator reports it (grounding.missing) instead of it
passing as trusted.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from typing import Literal, NamedTuple

from extractor.document import Document
from extractor.llm.response_model import QuotedAmount
from extractor.numbers import DIGITS, apply_scale, months_after, parse_number, parse_word_number
from extractor.patterns import finditer_from, screen_text
from extractor.regex_cache import regex
from extractor.schemas.values import AlignmentMethod, Amount, SourceSpan, printed_unit
from extractor.tables import Table

# characters folded to a plain one, each one for one (no target is itself folded), so str.replace in turn does
# what str.translate would at once, in a tenth of its time on a whole filing: it scans in C. After them,
# str.lower keeps a text's length, so a place in the folded text is a place in the original.
_MARKS = (
    ("\u00a0", " "),
    ("\u2019", "'"),
    ("\u2018", "'"),
    ("\u201c", '"'),
    ("\u201d", '"'),
    ("\u2013", "-"),
    ("\u2014", "-"),
    ("\u2212", "-"),
    ("\u0130", "i"),  # the one character whose lower case is two: str.lower would shift every offset after it
)
# every match starts with a digit or ".": said first, a position without one is passed over by one test
_DIGITS = regex(rf"(?=[\d.])(?:{DIGITS})")
_WORDS = regex(r"[a-z]+|\d[\d,.]*")
_PERCENT_AFTER = regex(r"\s?(?:%|percent\b)", re.IGNORECASE)
_LEADING_NUMBER = regex(r"\s*\$?\s*\(?\s*[\d.,]*\d\s*\)?\s*%?")
_MONTHS = regex(r"\bmonths?\b", re.IGNORECASE)
FUZZY_MIN = 0.75  # share of the quote's words found around the number


class Printed(NamedTuple):
    """What the model says is printed: magnitude, digits after the point, and the marks around it."""

    magnitude: Decimal
    decimals: int
    negative: bool
    percent: bool
    word: str | None = None  # "ten", "no": numbers printed as words
    digits: str = ""  # as printed, separators kept ("2,019")

    @classmethod
    def parse(cls, text: str) -> Printed | None:
        parsed = parse_number(text)
        if parsed is None and (lead := _LEADING_NUMBER.match(text)):  # "5.3 years", "$13.1 million"
            parsed = parse_number(lead.group())
        if parsed:
            digits = text[parsed.digits_start : parsed.digits_end] if parsed.digits_end <= len(text) else ""
            return cls(parsed.magnitude, parsed.decimals, parsed.negative, parsed.percent, None, digits)
        word = parse_word_number(text)
        return cls(word, 0, False, False, text.strip().lower()) if word is not None else None


class Alignment(NamedTuple):
    span: SourceSpan | None  # its `alignment` is `method` when placed
    method: AlignmentMethod | Literal["unaligned"]
    why: str = ""


_LONG_SPACES = regex(r"\s{2,}")  # the only runs of spaces that move what follows them when folded to one


def _fold_marks(text: str) -> str:
    """The text with `_MARKS` folded: curly quotes, dashes and minus signs, no-break spaces, dotted capital I."""
    for mark, plain in _MARKS:
        if mark in text:
            text = text.replace(mark, plain)
    return text


class _Folded:
    """A text lower-cased with runs of spaces folded to one, and where each of its characters stands in the original.

    The places are kept per run of two or more spaces (two ints a run, found with bisect), not per character:
    a whole 10-K's 400 KB made a list of 400,000 ints per document, for the first quote that needed it. The
    text is made with str.split (whose whitespace is the regex engine's \\s), three times faster than a regex."""

    def __init__(self, text: str) -> None:
        lowered = _fold_marks(text).lower()
        words = " ".join(lowered.split())
        lead = " " if lowered[:1].isspace() else ""
        self.text = lead + words + (" " if words and lowered[-1:].isspace() else "")
        runs = [run.span() for run in _LONG_SPACES.finditer(lowered)]
        self.ends = [end for _, end in runs]
        dropped = itertools.accumulate((end - start - 1 for start, end in runs), initial=0)  # one more than runs
        self.spaces = [start - gone for (start, _), gone in zip(runs, dropped, strict=False)]  # each run's " " here

    def offset(self, index: int) -> int:
        """Where the folded text's character at `index` stands in the original (a run's space: where the run starts).
        After a run's space the places go on one for one from the run's end, up to and including the next run's
        space, which stands where that run starts."""
        run = bisect.bisect_left(self.spaces, index) - 1
        return index if run < 0 else self.ends[run] + index - self.spaces[run] - 1


def _fold(text: str) -> str:
    """`_Folded`'s text alone, stripped: for quotes and labels, compared, never pointed into.
    (str.split's whitespace is the regex engine's \\s, character for character.)"""
    return " ".join(_fold_marks(text).lower().split())


class Aligner:
    """One document's text, tables and printed numbers, indexed once for many quotes."""

    def __init__(self, document: Document, tables: list[Table]) -> None:
        self.text = document.text
        self.rows = [  # (normalized label, its numbers' spans): labels normalized once, not per quote
            (_fold(row.label), [(n.start, n.end) for cell in row.cells for n in cell.numbers])
            for table in tables
            for row in table.rows
        ]
        # normalized label -> its rows, in order: a quote's label looked up, not scanned for
        self.labelled: dict[str, list[int]] = {}
        for index, (label, _) in enumerate(self.rows):
            self.labelled.setdefault(label, []).append(index)
        self._words: dict[str, list[tuple[int, int]]] = {}  # a number printed as a word -> where (_word_places)
        # a magnitude -> where it is printed: (start, end, digits after the point, the digits as printed)
        self.numbers: dict[Decimal, list[tuple[int, int, int, str]]] = {}
        for match in _DIGITS.finditer(self.text):
            digits = match.group()
            point = digits.find(".")
            decimals = len(digits) - point - 1 if point >= 0 else 0
            place = (match.start(), match.end(), decimals, digits)
            self.numbers.setdefault(Decimal(digits.replace(",", "")), []).append(place)

    @functools.cached_property
    def _printed_in(self) -> dict[tuple[int, int], list[int]]:
        """A number's span -> the rows printing it, in order: built for the first quote whose label names no row
        (most name one), whose label is then compared with those rows only."""
        rows: dict[tuple[int, int], list[int]] = {}
        for index, (_, spans) in enumerate(self.rows):
            for span in spans:
                rows.setdefault(span, []).append(index)
        return rows

    @functools.cached_property
    def _folded(self) -> _Folded:
        """The folded text and its offsets: built for the first quote that is neither a table row
        nor verbatim (most are one or the other)."""
        return _Folded(self.text)

    def align(self, quote: str, printed: Printed, within: tuple[int, int] | None = None) -> Alignment:
        """The span of the printed number the quote points at, or why there is none.

        Places inside `within` (the part of the note the model read) are tried first, so a quote
        about the note is not grounded in another note of the same 10-K that prints the same words.
        """
        places = self._places(printed)
        if not places:
            return Alignment(None, "unaligned", f"the number '{_show(printed)}' is printed nowhere in the document")
        nearby = [p for p in places if within and within[0] <= p[0] < within[1]]
        for candidates in (nearby, places) if nearby else (places,):
            for method, finder in FINDERS:
                found = finder(self, quote, candidates)
                if found is not None:
                    start, end = found
                    return Alignment(
                        SourceSpan(start=start, end=end, text=self.text[start:end], alignment=method), method
                    )
        return Alignment(None, "unaligned", f"the quote '{quote}' is not in the document")

    def _places(self, printed: Printed) -> list[tuple[int, int]]:
        """Where the number is printed: same digits and separators first ("2,019" is not the year 2019)."""
        if printed.word is not None:
            return self._word_places(printed.word)
        same = self.numbers.get(printed.magnitude, ())
        exact = [place for place in same if place[2] == printed.decimals] or same
        as_printed = [(start, end) for start, end, _, digits in exact if digits == printed.digits]
        return as_printed + [(start, end) for start, end, _, digits in exact if digits != printed.digits]

    def _word_places(self, word: str) -> list[tuple[int, int]]:
        """Where a number printed as a word ("three", "ten") stands as a whole word, in any case: once per word and
        document (a note quotes "three years" often), the case-blind pattern tried only where str.find sees the
        word (patterns.finditer_from: Python tried it at each of a 10-K's 400,000 positions, 7 ms a quote)."""
        places = self._words.get(word)
        if places is None:
            # a document's own word: re.compile (re's in-process cache), not kept between runs by regex_cache
            pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)  # noqa: TID251
            ascii_word = word.isascii()  # finditer_from's starts are lower-case ASCII (the word is lower-cased)
            matches = (
                finditer_from(pattern, self.text, self._screened, (word,))
                if ascii_word
                else pattern.finditer(self.text)
            )
            places = self._words[word] = [match.span() for match in matches]
        return places

    @functools.cached_property
    def _screened(self) -> str:
        """The text as finditer_from looks for a word in it (screen_text): made for the first word quoted."""
        return screen_text(self.text)

    def _in_table(self, quote: str, places: list[tuple[int, int]]) -> tuple[int, int] | None:
        # the quote's label parts: the last part is the cell
        labels = [label for part in quote.split("|")[:-1] if (label := _fold(part))]
        if not labels:
            return None
        wanted = set(places)
        # A row the quote names exactly first: "RSUs granted" is the RSU row, not the options' "Granted".
        for index in sorted({index for part in labels for index in self.labelled.get(part, ())}):
            found = next((span for span in self.rows[index][1] if span in wanted), None)
            if found is not None:
                return found
        # else the first row whose label and the quote's overlap, of the rows printing one of the places
        for index in sorted({index for span in places for index in self._printed_in.get(span, ())}):
            label, spans = self.rows[index]
            if any(_overlapping_label(part, label) for part in labels):
                return next(span for span in spans if span in wanted)
        return None

    def _exact(self, quote: str, places: list[tuple[int, int]]) -> tuple[int, int] | None:
        return _first_inside(places, _occurrences(self.text, quote.strip()))

    def _normalized(self, quote: str, places: list[tuple[int, int]]) -> tuple[int, int] | None:
        needle = _fold(quote)
        folded = self._folded
        spans = [
            (folded.offset(start), folded.offset(start + len(needle) - 1) + 1) for start in _starts(folded.text, needle)
        ]
        return _first_inside(places, spans)

    def _fuzzy(self, quote: str, places: list[tuple[int, int]]) -> tuple[int, int] | None:
        words = Counter(_WORDS.findall(_fold(quote.replace("|", " "))))
        if sum(words.values()) < 2:
            return None  # a bare number is no quote: nothing to tell its places apart
        reach = len(quote) + 20
        best, best_score = None, FUZZY_MIN
        for start, end in places:
            window = Counter(_WORDS.findall(_fold(self.text[max(0, start - reach) : end + reach])))
            score = sum((words & window).values()) / sum(words.values())
            if score > best_score or (best is None and score >= best_score):
                best, best_score = (start, end), score
        return best


# (aligner, quote, places) -> the place the quote points at
Finder = Callable[[Aligner, str, list[tuple[int, int]]], tuple[int, int] | None]
# In the order they are tried. The class's functions, not each aligner's bound methods: an aligner holding its
# own methods was a reference cycle, left with its rows and numbers (some 480 objects a document) for the
# cyclic collector: a bulk LLM worker's collections took 2.0-2.5 s of CPU per 2,048 documents with it and
# 0.4-1.0 s without (tests/test_no_cycles.py).
FINDERS: tuple[tuple[AlignmentMethod, Finder], ...] = (
    ("table", Aligner._in_table),
    ("exact", Aligner._exact),
    ("normalized", Aligner._normalized),
    ("fuzzy", Aligner._fuzzy),
)


def _starts(haystack: str, needle: str) -> list[int]:
    if not needle:
        return []
    found, at = [], haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _occurrences(text: str, quote: str) -> list[tuple[int, int]]:
    return [(start, start + len(quote)) for start in _starts(text, quote)]


def _first_inside(places: list[tuple[int, int]], spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    for low, high in spans:
        for start, end in places:
            if low <= start and end <= high:
                return start, end
    return None


def _show(printed: Printed) -> str:
    return printed.word or f"{printed.magnitude:,}"


class Grounder:
    """Turns QuotedAmounts into Amounts with spans, keeping a note of every value it could not ground."""

    def __init__(self, document: Document, aligner: Aligner, within: tuple[int, int] | None = None) -> None:
        self.aligner = aligner
        self.within = within
        self.text = document.text
        self.problems: list[str] = []

    def __call__(self, quoted: QuotedAmount, path: str, signed: bool) -> Amount | None:
        printed = Printed.parse(quoted.printed)
        if printed is None:
            self.problems.append(f"{path}: printed '{quoted.printed}' is not a number; left out")
            return None
        alignment = self.aligner.align(quoted.quote, printed, self.within)
        if alignment.span is None:
            self.problems.append(f"{path}: {alignment.why}; kept without a source span (ungrounded)")
        end = alignment.span.end if alignment.span else None
        percent = printed.percent or (end is not None and bool(_PERCENT_AFTER.match(self.text, end)))
        months = quoted.unit == "years" and bool(
            months_after(self.text, end) if end is not None else _MONTHS.search(quoted.quote)
        )
        unit, exponent = printed_unit(quoted.unit, quoted.scale, percent)
        value = apply_scale(printed.magnitude, exponent)
        if months:
            value = (printed.magnitude / 12).quantize(Decimal("0.01")).normalize()
        if signed and printed.negative:
            value = -value
        return Amount(
            value=value,
            unit=unit,
            scale=exponent,
            decimals=2 if months else printed.decimals,
            period=quoted.period,
            source=alignment.span,
            quote=quoted.quote,
        )


def _overlapping_label(part: str, label: str) -> bool:
    return len(part) >= 4 and (part in label or label in part)
