"""Grounding: every value has a span in the document whose printed number reads back to it,
at the scale the document states there ("in thousands" over a table, "million" after a number).

This is the main defence against invented numbers: a value that no printed number yields is
an error, and so is one read at the wrong scale.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import NamedTuple

from extractor.document import Document
from extractor.findings import Finding
from extractor.numbers import (
    NUMBER_RE,
    PLAIN_NUMBER,
    SCALE_WORDS,
    months_after,
    parse_number,
    parse_word_number,
    scale_exponents,
    scale_word_after,
    tolerance,
)
from extractor.schemas.concepts import concept_words
from extractor.schemas.facts import Fact
from extractor.schemas.values import SCALED_UNITS
from extractor.tables import layout
from extractor.validator.factset import (
    SCALE_NAMES,
    FactSet,
    Located,
    award_label,
    finding,
    show,
)

# Powers of ten a printed number may be scaled by, per unit: scale notes apply to counts and
# dollars only; percentages divide by 100.
EXPONENTS: dict[str, tuple[int, ...]] = {
    "shares": (0, 3, 6, 9),
    "USD": (0, 3, 6, 9),
    "USD/share": (0,),
    "pure": (-2, 0),
    "years": (0,),
}


class StatedScale(NamedTuple):
    """What the document says about the scale at one number: the exponents it allows, and where it says so."""

    exponents: tuple[int, ...]
    why: str
    explicit: bool = True  # False when nothing is stated (a table with no scale note): only a warning then


@dataclass
class SourceText:
    """A document's text and the scale that applies at each printed number, built once per document."""

    text: str
    cell_scales: dict[int, StatedScale] = field(default_factory=dict)  # number start -> what its table states
    span: tuple[int, int] | None = None  # where the numbers that may ground a fact are (a filing's note); None: all

    @classmethod
    def of(cls, document: Document) -> SourceText:
        """Built once per document (the LLM backend's re-asks and the final validation share it)."""
        return document.derived("source_text", cls._build)

    @classmethod
    def _build(cls, document: Document) -> SourceText:
        source = cls(document.text, span=document.span)  # a whole filing's other notes ground nothing
        tables, _ = layout(document)
        for table in tables:
            table_note = table.scale_note and scale_exponents(table.scale_note)
            for row in table.rows:
                if scale_exponents(row.label):
                    stated = StatedScale(scale_exponents(row.label), f"row '{row.label}'")
                elif table_note:
                    stated = StatedScale(table_note, f"table note '{table.scale_note}'")
                else:
                    stated = StatedScale((0,), "no scale note over the table", explicit=False)
                for cell in row.cells:
                    for number in cell.numbers:
                        source.cell_scales[number.start] = stated
        return source

    @cached_property
    def numbers(self) -> list[tuple[int, Decimal]]:
        """Every printed number: (start, magnitude). Read only to place a fact that has no span (an LLM's),
        so built when first asked: a rules extraction never does."""
        lo, hi = self.span or (0, len(self.text))
        return [
            (match.start("digits"), Decimal(match.group("digits").replace(",", "")))
            for match in NUMBER_RE.finditer(self.text, lo, hi)
        ]

    def stated_scale(self, start: int, end: int) -> StatedScale:
        """The scale the document gives the number at this span: its table's, else a scale word after it."""
        if start in self.cell_scales:
            return self.cell_scales[start]
        word = scale_word_after(self.text, end)
        if word:
            return StatedScale((SCALE_WORDS[word],), f"'{word}' after the number")
        return StatedScale((0,), "no scale word after the number")

    def find(self, fact: Fact) -> int | None:
        """Where some printed number reads back to the fact's value, if anywhere (the first such number)."""
        if fact.unit == "years":  # a term may be printed in months ('18 months' is 1.5): every number is tried
            return next(
                (start for start, printed in self.numbers if readback_exponent(fact, printed) is not None), None
            )
        magnitude = abs(fact.value)
        starts = [self._first_printed.get(magnitude.scaleb(-exponent)) for exponent in EXPONENTS[fact.unit]]
        return min((start for start in starts if start is not None), default=None)

    @cached_property
    def _first_printed(self) -> dict[Decimal, int]:
        """Each printed magnitude and where it is first printed: one lookup per scale, not a pass over the text per fact."""
        first: dict[Decimal, int] = {}
        for start, printed in self.numbers:
            first.setdefault(printed, start)
        return first


def printed_magnitude(text: str) -> Decimal | None:
    """The number a span prints: digits ("6,994") or a word ("ten", "No")."""
    if PLAIN_NUMBER.fullmatch(text):  # most spans: digits alone, nothing around them to read
        return Decimal(text.replace(",", ""))
    parsed = parse_number(text)
    return parsed.magnitude if parsed else parse_word_number(text)


def readback_exponent(fact: Fact, printed: Decimal, months: bool | None = None) -> int | None:
    """The power of ten that turns the printed number into the fact's value (sign aside), if one is allowed.

    Years may be printed as months ("18 months" is 1.5, "20 months" 1.67), read within the rounding
    of the value's last digit. `months` says whether the document prints "months" after the number;
    when unknown (no document), only a whole number of months is taken as one.
    """
    magnitude = abs(fact.value)
    for exponent in EXPONENTS[fact.unit]:
        if printed.scaleb(exponent) == magnitude:
            return exponent
    plausible_months = months if months is not None else printed == printed.to_integral_value()
    if fact.unit == "years" and plausible_months and magnitude and printed > magnitude:
        slack = (
            12 * tolerance(0, int(magnitude.as_tuple().exponent)) if magnitude != magnitude.to_integral_value() else 0
        )
        if abs(magnitude * 12 - printed) <= slack:
            return 0
    return None


def check_grounding(facts: FactSet, source: SourceText | None) -> Iterator[Finding]:
    """Every printing of every fact: has a span, the span is the document's text, and it reads back."""
    for pair in facts.printings:
        yield from _check_printing(pair, source)


def _what(fact: Fact) -> str:
    """How a finding names the fact: written only for a finding (most printings have none)."""
    return f"{concept_words(fact.concept)} ({award_label(fact.dims)}, {fact.period.end_date.isoformat()}) = {show(fact.value)}"


def _check_printing(pair: Located, source: SourceText | None) -> Iterator[Finding]:
    fact = pair[1]
    if fact.source is None:
        what = _what(fact)
        where = source.find(fact) if source else None
        hint = (
            f"; the value is printed at offset {where}"
            if where is not None
            else "; no printed number in the document reads back to it"
            if source
            else ""
        )
        yield finding("grounding.missing", "error", f"{what} has no source span{hint}", [pair], found=fact.value)
        return
    span = fact.source
    if source is not None and source.text[span.start : span.end] != span.text:
        what = _what(fact)
        actual = (
            source.text[span.start : span.end] if span.end <= len(source.text) else "(beyond the end of the document)"
        )
        yield finding(
            "grounding.span",
            "error",
            f"{what}: its span {span.start}-{span.end} claims '{span.text}' but the document has '{actual}' there",
            [pair],
            found=fact.value,
        )
        return
    printed = printed_magnitude(span.text)
    months = months_after(source.text, span.end) if source is not None else None
    exponent = readback_exponent(fact, printed, months) if printed is not None else None
    if printed is None or exponent is None:
        what = _what(fact)
        scales = ", ".join(SCALE_NAMES.get(e, f"×10^{e}") for e in EXPONENTS[fact.unit])
        yield finding(
            "grounding.readback",
            "error",
            f"{what} does not read back from the printed '{span.text}' at offset {span.start} "
            f"(as {fact.unit} it may be printed in {scales})",
            [pair],
            expected=printed,
            found=fact.value,
        )
        return
    if source is None or fact.unit not in SCALED_UNITS or fact.value == 0:
        return  # zero reads back at every scale
    stated = source.stated_scale(span.start, span.end)
    if exponent not in stated.exponents:
        what = _what(fact)
        expected = printed.scaleb(stated.exponents[0])
        names = " or ".join(SCALE_NAMES.get(e, str(e)) for e in stated.exponents)
        yield finding(
            "scale.context",
            "error" if stated.explicit else "warning",
            f"{what} reads '{span.text}' at offset {span.start} in {SCALE_NAMES.get(exponent, exponent)}, "
            f"but the document states {names} there ({stated.why}): {show(expected)} expected",
            [pair],
            expected=expected,
            found=fact.value,
        )
