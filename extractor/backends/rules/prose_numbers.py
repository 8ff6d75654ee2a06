"""Numbers in a sentence with their unit and scale word: "$5.1 million", "3.41 years", "15%", "four years".

Years used as dates, note and section numbers, rule numbers ("Rule 10b5-1"), plan names ("2015 Plan"),
dates and list markers ("(1)") are not numbers a reader would tag; they are skipped here. Every number kept
has the span of its printed digits (or word) in the sentence, so callers can ground it in the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from extractor.patterns import deferred, folded, initials, may_match, required_phrases, screen_text, union
from extractor.periods import MONTH_NAMES, YEAR_DIGITS
from extractor.regex_cache import regex

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

_DIGITS = regex(r"(?=[\d.])(?<![\w.,/-])(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w/]|,\d|\.\d)")
# Each scan first tests the character a match must start with (a digit or ".", a number word's first letter):
# most positions of a sentence are passed over by that one test.
_WORD = regex(
    rf"(?={initials(WORDS)})(?<![\w-])(?P<word>" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")(?![\w])",
    re.I,
)
_FRACTION = regex(
    r"(?=[ot])(?<![\w-])(?P<word>one|two|three)[- ](?P<den>half|thirds?|fourths?|quarters?|fifths?)\b", re.I
)
_FRACTION_PHRASES = required_phrases(_FRACTION)  # its denominators
_SCALE_AFTER = regex(r"\s*(thousand|million|billion|trillion)s?\b", re.I)
_PERCENT_AFTER = regex(r"\s*(?:%|percent\b|per cent\b)", re.I)
_DURATION_AFTER = regex(r"(?:\s+|\s*-\s*)(years?|months?)\b", re.I)
# what a number word needs after it to be kept (a percentage or a term): '%', 'percent', 'year', 'month'
_KEPT_WORD_PHRASES = union(required_phrases(after) for after in (_PERCENT_AFTER, _DURATION_AFTER))
_PER_SHARE_AFTER = regex(
    r"\s*(?:per|a|for each)\s+(?:share|unit|option|award|RSU|PSU|PRSU|stock unit|restricted stock unit)\b", re.I
)
_SHARES_AFTER = regex(
    r"\s+(?:(?:of\s+)?(?:our\s+|its\s+|the\s+company'?s\s+|the\s+company’s\s+)?(?:class [a-c]\s+)?"
    r"(?:(?:common|ordinary|capital|preferred)\s+)?(?:shares?|stock\b|units?\b|RSUs?|PSUs?|PRSUs?|options?\b|stock options?|"
    r"restricted|performance|premium-priced|awards?\b|investment shares))",
    re.I,
)
# Words a reference number follows ("Note 12", "Rule 10b5-1", "Form 10-K", "No. 3"), then spaces.
_SKIP_WORDS = (
    "note|notes|section|sections|rule|item|asc|asu|topic|form|class|level|tier|phase|no\\.|number|schedule|"
    "article|exhibit|part|fas|sfas|irc|code"
)
_SKIP_WORD_AT_END = regex(r"(?:\b(?:" + _SKIP_WORDS + r")|[#§])\Z", re.I)
_SKIP_REACH = max(len(word.replace("\\", "")) for word in _SKIP_WORDS.split("|"))
_MONTH_AT_END = regex(r"\b(?:" + MONTH_NAMES + r")\Z", re.I)
_MONTH_REACH = max(len(name) for name in MONTH_NAMES.split("|"))
# What may follow a number, matched where it ends (never on a copy of the rest of the sentence).
_MONTH_DAY_AFTER = deferred(r",\s*(?:19|20)\d\d\b")
_CLOSE_AFTER = regex(r"\s*\)")
_ORDINAL_AFTER = deferred(r"(?:st|nd|rd|th)\b|\(k\)|-\d|-for-", re.I)  # "1st", "401(k)", "10b5-1", "one-for-one"
_PLAN_AFTER = regex(r"\s+(?:plan|program|stock|equity|incentive|omnibus|employee|share|long)", re.I)
_LETTER_HYPHEN_BEFORE = regex(r"[A-Za-z]-$")


# The checks on what precedes a number look at its last few characters, never at the whole start of the
# sentence again (a sentence of n numbers would be rescanned n times): each is exact, the spaces before
# the number skipped first, then a bounded search ending there.


def _skip_spaces_back(sentence: str, end: int) -> int:
    """Where the run of whitespace (regex \\s) that ends at `end` begins."""
    while end and sentence[end - 1].isspace():
        end -= 1
    return end


def _printed_before(sentence: str, at: int) -> str:
    """The last character before `at` that is not whitespace ("" when there is none)."""
    end = _skip_spaces_back(sentence, at)
    return sentence[end - 1] if end else ""


def _after_reference_word(sentence: str, start: int) -> bool:
    """Text before `start` ends with a reference word or '#'/'§', then spaces: "Note 12", "Rule 10b5-1"."""
    end = _skip_spaces_back(sentence, start)
    if not end or not (sentence[end - 1].isalpha() or sentence[end - 1] in ".#§"):
        return False  # a reference ends in a letter, "." ("No."), "#" or "§": "$5", "(3" or "1, 2" need no search
    return bool(_SKIP_WORD_AT_END.search(sentence, max(0, end - _SKIP_REACH), end))


def _month_ends_at(sentence: str, end: int) -> bool:
    """A month name, or one with a period ("Sept."), ends at `end`."""
    if not end:
        return False
    if sentence[end - 1] == ".":
        return bool(_MONTH_AT_END.search(sentence, max(0, end - 1 - _MONTH_REACH), end - 1))
    # a month name ends in a letter: a digit, "$" or "(" before a number needs no search
    return sentence[end - 1].isalpha() and bool(_MONTH_AT_END.search(sentence, max(0, end - _MONTH_REACH), end))


def _after_month(sentence: str, start: int) -> bool:
    """Text before `start` ends with a month name, then maybe its day: "March ", "Mar. 1, " (so the number
    is a day or a year of a date)."""
    end = _skip_spaces_back(sentence, start)
    if _month_ends_at(sentence, end):
        return True
    digits_end = end - 1 if end and sentence[end - 1] == "," else end
    digits_start = digits_end
    while digits_start and digits_end - digits_start < 3 and sentence[digits_start - 1].isdecimal():
        digits_start -= 1
    if not 1 <= digits_end - digits_start <= 2:
        return False  # no day (or a run of three digits or more, which no month precedes)
    return _month_ends_at(sentence, _skip_spaces_back(sentence, digits_start))


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
    if not YEAR_DIGITS.fullmatch(digits):
        return False
    return _printed_before(sentence, start) != "$"


def _in_date(sentence: str, start: int, end: int) -> bool:
    """The day of "March 1, 2024", or the year of "March 1, 2024" or "March 2024". What follows the number and
    its digits are asked first: most numbers are followed by no ", 2024" and are no year, and need no look back."""
    return bool(_MONTH_DAY_AFTER.match(sentence, end) or YEAR_DIGITS.fullmatch(sentence, start, end)) and _after_month(
        sentence, start
    )


def find_numbers(sentence: str) -> list[Number]:
    """Every quantity printed in the sentence, in order, with the units it can take."""
    found: list[Number] = []
    for match in _DIGITS.finditer(sentence):
        digits, start, end = match.group("digits"), match.start("digits"), match.end("digits")
        if _after_reference_word(sentence, start) or _in_date(sentence, start, end):
            continue
        mark = _skip_spaces_back(sentence, start)  # just after the printed character before the number
        before = sentence[mark - 1] if mark else ""
        if before == "(" and _CLOSE_AFTER.match(sentence, end) and len(digits) <= 2:
            continue  # list marker "(1)"
        if _ORDINAL_AFTER.match(sentence, end) or _LETTER_HYPHEN_BEFORE.search(sentence, max(0, start - 3), start):
            continue  # "1st", "401(k)", "10b5-1", "one-for-one"
        dollar = before == "$" or (before == "(" and _printed_before(sentence, mark - 1) == "$")  # "$5", "$ (5"
        if _is_year_like(sentence, start, end, digits) and not _PERCENT_AFTER.match(sentence, end):
            if not (_SCALE_AFTER.match(sentence, end) or _SHARES_AFTER.match(sentence, end)):
                continue
            if _PLAN_AFTER.match(sentence, end):
                continue
        number = Number(value=Decimal(digits.replace(",", "")), text=digits, start=start, end=end, dollar=dollar)
        number.decimals = len(digits.split(".")[1]) if "." in digits else 0
        _units(sentence, number)
        if number.units:
            found.append(number)
    # Fractions and number words are looked for only in a sentence that can hold one that is kept: a
    # fraction names its denominator, and a number word is kept only as a term or a percentage.
    screened = screen_text(sentence)
    fractions = _FRACTION.finditer(sentence) if may_match(_FRACTION_PHRASES, screened) else ()
    for match in fractions:
        numerator = Decimal(WORDS[folded(match.group("word"))])
        denominator = FRACTIONS[folded(match.group("den")).rstrip("s")]
        value = (numerator / denominator).quantize(Decimal("0.0001")).normalize()
        number = Number(
            value=value, text=match.group(0), start=match.start(), end=match.end(), word=True, fraction=True
        )
        number.units, number.tail_end = {"pure"}, match.end()
        found.append(number)
    taken = [(n.start, n.end) for n in found]
    for match in _WORD.finditer(sentence) if may_match(_KEPT_WORD_PHRASES, screened) else ():
        if any(s <= match.start() < e for s, e in taken):
            continue
        word = match.group("word")
        number = Number(value=Decimal(WORDS[folded(word)]), text=word, start=match.start(), end=match.end(), word=True)
        _units(sentence, number)
        if number.units & {"years", "pure"}:
            number.units &= {"years", "pure"}
            found.append(number)
    return sorted(found, key=lambda n: n.start)


def _units(sentence: str, number: Number) -> None:
    end = number.end
    scale = _SCALE_AFTER.match(sentence, end)
    if scale and not number.word:
        number.scale = SCALES[folded(scale.group(1))]
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
