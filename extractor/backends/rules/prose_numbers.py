"""Numbers in a sentence with their unit and scale word: "$5.1 million", "3.41 years", "15%", "four years".

Years used as dates, note and section numbers, rule numbers ("Rule 10b5-1"), plan names ("2015 Plan"),
dates and list markers ("(1)") are not numbers a reader would tag; they are skipped here. Every number kept
has the span of its printed digits (or word) in the sentence, so callers can ground it in the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from extractor.periods import MONTH_NAMES

SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
WORDS = {
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
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "eighteen": 18,
    "twenty": 20,
    "twenty-four": 24,
    "thirty": 30,
    "thirty-six": 36,
    "forty": 40,
    "forty-eight": 48,
    "fifty": 50,
    "sixty": 60,
}
FRACTIONS = {"half": 2, "third": 3, "fourth": 4, "quarter": 4, "fifth": 5}

_DIGITS = re.compile(r"(?<![\w.,/-])(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w/]|,\d|\.\d)")
_WORD = re.compile(r"(?<![\w-])(?P<word>" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")(?![\w])", re.I)
_FRACTION = re.compile(r"(?<![\w-])(?P<word>one|two|three)[- ](?P<den>half|thirds?|fourths?|quarters?|fifths?)\b", re.I)
_SCALE_AFTER = re.compile(r"\s*(thousand|million|billion|trillion)s?\b", re.I)
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per cent\b)", re.I)
_DURATION_AFTER = re.compile(r"(?:\s+|\s*-\s*)(years?|months?)\b", re.I)
_PER_SHARE_AFTER = re.compile(
    r"\s*(?:per|a|for each)\s+(?:share|unit|option|award|RSU|PSU|PRSU|stock unit|restricted stock unit)\b", re.I
)
_SHARES_AFTER = re.compile(
    r"\s+(?:(?:of\s+)?(?:our\s+|its\s+|the\s+company'?s\s+|the\s+company’s\s+)?(?:class [a-c]\s+)?"
    r"(?:(?:common|ordinary|capital|preferred)\s+)?(?:shares?|stock\b|units?\b|RSUs?|PSUs?|PRSUs?|options?\b|stock options?|"
    r"restricted|performance|premium-priced|awards?\b|investment shares))",
    re.I,
)
_SKIP_BEFORE = re.compile(
    r"(?:\b(?:note|notes|section|sections|rule|item|asc|asu|topic|form|class|level|tier|phase|no\.|number|schedule|"
    r"article|exhibit|part|fas|sfas|irc|code)\s*|[#§]\s*)$",
    re.I,
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_MONTH_BEFORE = re.compile(r"\b(?:" + MONTH_NAMES + r")\.?\s*(?:\d{1,2},?\s*)?$", re.I)
_MONTH_DAY_AFTER = re.compile(r"^,\s*(?:19|20)\d\d\b")


@dataclass
class Number:
    """A printed number: its value as printed (not yet scaled), what surrounds it, and its span in the sentence."""

    value: Decimal
    text: str
    start: int
    end: int
    units: set[str] = field(default_factory=set)  # units it may take: USD, USD/share, shares, pure, years
    scale: int = 0  # power of ten of a scale word after it ("million" -> 6)
    decimals: int = 0
    dollar: bool = False
    months: bool = False
    word: bool = False
    fraction: bool = False  # "one-third": already a fraction
    tail_end: int = 0  # end of the number with its unit words ("$5.1 million" ends after "million")

    def scaled(self, unit: str) -> tuple[Decimal, int]:
        """The value in base units for `unit`, with the exponent applied."""
        if unit == "pure":
            return (self.value if self.fraction else self.value.scaleb(-2).normalize()), -2
        if unit == "years" and self.months:
            return (self.value / Decimal(12)).quantize(Decimal("0.0001")).normalize(), 0
        exponent = self.scale if unit in ("USD", "shares") else 0
        value = self.value.scaleb(exponent)
        return (value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()), exponent


def _is_year_like(sentence: str, start: int, end: int, digits: str) -> bool:
    """A bare 19xx/20xx used as a year or a plan name ("in 2024", "2015 Plan", "fiscal 2023")."""
    if not _YEAR.fullmatch(digits):
        return False
    before = sentence[:start]
    return not before.rstrip().endswith("$")


def _in_date(sentence: str, start: int, end: int) -> bool:
    """The day of "March 1, 2024" or a number inside "12/31/2024"."""
    return (
        bool(_MONTH_BEFORE.search(sentence[:start]))
        and bool(_MONTH_DAY_AFTER.match(sentence[end:]))
        or bool(_MONTH_BEFORE.search(sentence[:start]) and _YEAR.fullmatch(sentence[start:end]))
    )


def find_numbers(sentence: str) -> list[Number]:
    """Every quantity printed in the sentence, in order, with the units it can take."""
    found: list[Number] = []
    for match in _DIGITS.finditer(sentence):
        digits, start, end = match.group("digits"), match.start("digits"), match.end("digits")
        before = sentence[:start]
        if _SKIP_BEFORE.search(before) or _in_date(sentence, start, end):
            continue
        if re.search(r"\(\s*$", before) and re.match(r"\s*\)", sentence[end:]) and len(digits) <= 2:
            continue  # list marker "(1)"
        if re.match(r"(?:st|nd|rd|th)\b|\(k\)|-\d|-for-", sentence[end:], re.I) or re.search(r"[A-Za-z]-$", before):
            continue  # "1st", "401(k)", "10b5-1", "one-for-one"
        dollar = bool(re.search(r"\$\s*\(?\s*$", before))
        if _is_year_like(sentence, start, end, digits) and not _PERCENT_AFTER.match(sentence, end):
            if not (_SCALE_AFTER.match(sentence, end) or _SHARES_AFTER.match(sentence, end)):
                continue
            if re.match(
                r"\s+(?:plan|program|stock|equity|incentive|omnibus|employee|share|long)", sentence[end:], re.I
            ):
                continue
        number = Number(value=Decimal(digits.replace(",", "")), text=digits, start=start, end=end, dollar=dollar)
        number.decimals = len(digits.split(".")[1]) if "." in digits else 0
        _units(sentence, number)
        if number.units:
            found.append(number)
    for match in _FRACTION.finditer(sentence):
        numerator = Decimal(WORDS[match.group("word").lower()])
        denominator = FRACTIONS[match.group("den").lower().rstrip("s")]
        value = (numerator / denominator).quantize(Decimal("0.0001")).normalize()
        number = Number(
            value=value, text=match.group(0), start=match.start(), end=match.end(), word=True, fraction=True
        )
        number.units, number.tail_end = {"pure"}, match.end()
        found.append(number)
    taken = [(n.start, n.end) for n in found]
    for match in _WORD.finditer(sentence):
        if any(s <= match.start() < e for s, e in taken):
            continue
        word = match.group("word")
        number = Number(value=Decimal(WORDS[word.lower()]), text=word, start=match.start(), end=match.end(), word=True)
        _units(sentence, number)
        if number.units & {"years", "pure"}:
            number.units &= {"years", "pure"}
            found.append(number)
    return sorted(found, key=lambda n: n.start)


def _units(sentence: str, number: Number) -> None:
    end = number.end
    scale = _SCALE_AFTER.match(sentence, end)
    if scale and not number.word:
        number.scale = SCALES[scale.group(1).lower()]
        end = scale.end()
    if (percent := _PERCENT_AFTER.match(sentence, number.end)) and not number.dollar:
        number.units, number.tail_end = {"pure"}, percent.end()
        return
    if (duration := _DURATION_AFTER.match(sentence, number.end)) and not number.dollar:
        number.units, number.tail_end = {"years"}, duration.end()
        number.months = duration.group(1).lower().startswith("month")
        return
    if number.word:
        return
    if number.dollar:
        if per := _PER_SHARE_AFTER.match(sentence, end):
            number.units, number.tail_end = {"USD/share"}, per.end()
        elif number.scale:
            number.units, number.tail_end = {"USD"}, end
        else:
            number.units, number.tail_end = {"USD", "USD/share"}, end
        return
    if shares := _SHARES_AFTER.match(sentence, end):
        number.units, number.tail_end = {"shares"}, shares.end()
        return
    if number.scale or "," in number.text:
        number.units, number.tail_end = {"shares"}, end  # "33.0 billion", "12,900,000": counts whose noun is elsewhere
