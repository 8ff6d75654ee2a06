"""Parse numbers as filings print them, exactly (Decimal), keeping what precision was printed.

Filings print "6,971.1", "(2,413", "(169)", "40.0%", "$1.55 billion", "ten years"; the
grounding check and the scorer both need the printed precision, so it is kept.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from extractor.patterns import folded
from extractor.regex_cache import regex

SCALE_WORDS: dict[str, int] = {
    "thousand": 3,
    "thousands": 3,
    "million": 6,
    "millions": 6,
    "billion": 9,
    "billions": 9,
}

WORD_NUMBERS: dict[str, int] = {
    "no": 0,
    "none": 0,
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
}

# Digits with thousands separators and decimals: "6,994", "57.96", ".5".
DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
PLAIN_NUMBER = regex(DIGITS)  # fullmatch: a text that is digits only (a span as the rules backend records it)
ANY_DIGIT = regex(r"\d")  # search: a text that prints a digit (no number is printed without one)
# One printed number: optional "(" and "$", digits with thousands separators, decimals,
# optional "%" and ")". Signs and currency are reported, not folded into the digits.
NUMBER_RE = regex(
    # Spaces only after a "$" or "(", never before optional parts: a run of spaces (aligned text)
    # then fails at once instead of being split every way between three optional \s*. Every match starts
    # with "$", "(", a sign, a digit or ".": a position without one is passed over by one test, not four.
    r"(?=[$(\-\u2212.\d])(?:(?P<lead_currency>\$)\s*)?(?:(?P<open>\()\s*)?(?:(?P<currency>\$)\s*)?(?P<sign>[-\u2212])?"
    rf"(?P<digits>{DIGITS})"
    r"(?:\s*(?P<percent>%))?(?:\s*(?P<close>\)))?(?:\s*(?P<trail_percent>%))?"
)

EMPTY_MARKERS = frozenset({"—", "–", "-", "--", "n/a", "N/A", "nm", "NM", "*"})


class ParsedNumber(NamedTuple):
    """A number as printed: its unsigned magnitude and what surrounded it. A tuple: a document's every cell and
    quote makes one, and a tuple is made in a fraction of a frozen dataclass's time."""

    magnitude: Decimal
    negative: bool
    percent: bool
    currency: bool
    decimals: int
    digits_start: int
    digits_end: int

    @property
    def signed(self) -> Decimal:
        return -self.magnitude if self.negative else self.magnitude


def parse_number(text: str) -> ParsedNumber | None:
    """Parse a cell or token that is a single number ("(2,413", "40.0%", "$ 57.96")."""
    stripped = text.strip().replace("\u00a0", " ")
    match = NUMBER_RE.fullmatch(stripped)
    if not match:
        return None
    lead = len(text) - len(text.lstrip())
    start, end = match.span("digits")
    digits = stripped[start:end]
    point = digits.find(".")
    open_, sign, percent, trail_percent, currency, lead_currency = match.group(
        "open", "sign", "percent", "trail_percent", "currency", "lead_currency"
    )
    return ParsedNumber(
        Decimal(digits.replace(",", "")),
        bool(open_ or sign),
        bool(percent or trail_percent),
        bool(currency or lead_currency),
        len(digits) - point - 1 if point >= 0 else 0,
        lead + start,
        lead + end,
    )


def parse_word_number(word: str) -> Decimal | None:
    """ "ten" -> 10; digits pass through; None for anything else."""
    word = word.strip().lower()
    if word in WORD_NUMBERS:
        return Decimal(WORD_NUMBERS[word])
    parsed = parse_number(word)
    return parsed.magnitude if parsed else None


_SCALE_WORD = regex(r"\b(thousands?|millions?|billions?)\b", re.IGNORECASE)
_SCALE_WORD_AFTER = regex(r"\s*(thousands?|millions?|billions?)\b", re.IGNORECASE)
_MONTHS_AFTER = regex(r"[\s-]*months?\b", re.IGNORECASE)


def scale_exponent(text: str) -> int | None:
    """The power of ten a scale note announces ("(In thousands)" -> 3), or None."""
    match = _SCALE_WORD.search(text)
    return SCALE_WORDS[folded(match.group(1))] if match else None


def scale_exponents(text: str) -> tuple[int, ...]:
    """Every scale a note names: "(In millions, except shares in thousands)" -> (3, 6)."""
    return tuple(sorted({SCALE_WORDS[folded(word)] for word in _SCALE_WORD.findall(text)}))


def scale_word_after(text: str, end: int) -> str | None:
    """The scale word printed right after a number ending at `end` ("$1.55 billion"), lower-cased."""
    match = _SCALE_WORD_AFTER.match(text, end)
    return folded(match.group(1)) if match else None


def months_after(text: str, end: int) -> bool:
    """Whether "months" follows a number ending at `end` ("18 months", "36-month"): a term printed in months."""
    return bool(_MONTHS_AFTER.match(text, end))


def apply_scale(value: Decimal, exponent: int) -> Decimal:
    """Scale exactly: Decimal shifts keep every printed digit (6,971.1 thousand -> 6971100)."""
    scaled = value.scaleb(exponent)
    return scaled.quantize(Decimal(1)) if scaled == scaled.to_integral_value() else scaled.normalize()


def tolerance(decimals: int, exponent: int) -> Decimal:
    """Half a unit of the last printed digit, in base units: the rounding a printed value hides."""
    return Decimal(5).scaleb(exponent - decimals - 1)


def to_json_number(value: Decimal) -> int | float:
    """The output boundary: exact ints stay ints; fractions become the shortest float repr."""
    if value == value.to_integral_value():
        return int(value)
    return float(value)
