"""Values as XBRL writes them, read as gold writes them: inline XBRL transformations (the number a
displayed text stands for), ISO 8601 durations in years, and the reported precision."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from extractor.numbers import WORD_NUMBERS, parse_number
from extractor.regex_cache import regex

_WORDS = {
    **WORD_NUMBERS,
    "thirteen": 13,
    "fourteen": 14,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "a": 1,
    "an": 1,
}
_DURATION_UNITS = {
    "year": Decimal(1),
    "years": Decimal(1),
    "month": Decimal(12),
    "months": Decimal(12),
    "week": Decimal("52.1775"),
    "weeks": Decimal("52.1775"),
    "day": Decimal("365.25"),
    "days": Decimal("365.25"),
}
_ISO_DURATION = regex(
    r"(?P<neg>-)?P(?:(?P<y>\d+(?:\.\d+)?)Y)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<w>\d+(?:\.\d+)?)W)?"
    r"(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:\d+(?:\.\d+)?[HMS])*)?"
)
# "5 dollars 25 cents", "1,234 Euro 5": the unit words stand for the decimal point, the last one
# or two digits are the fraction (in hundredths: "5 cents" is .05)
_UNIT_DECIMAL = regex(r"(\d[\d,.' ]*?)\s*[^\d\s.,'][^\d]*?(\d{1,2})\D*")
_DAY_IN_YEARS = Decimal(1) / Decimal("365.25")
_ZERO_FORMATS = frozenset({"zerodash", "fixedzero", "fixedzeroes", "nocontent", "fixedempty"})
_DOT_FORMATS = frozenset({"numdotdecimal", "numcommadot", "numspacedot", "numdotdecimalin", "numdotdecimalapos"})
_COMMA_FORMATS = frozenset({"numcommadecimal", "numdotcomma", "numspacecomma", "numcommadecimalapos"})
_DURATION_FORMATS = frozenset({"duryear", "durmonth", "durday", "durweek", "durwordsen", "durhour"})
_PER_YEAR = {
    "duryear": Decimal(1),
    "durmonth": Decimal(12),
    "durweek": Decimal("52.1775"),
    "durday": Decimal("365.25"),
    "durhour": Decimal(8766),
}


def format_key(fmt: str | None) -> str:
    """'ixt:num-dot-decimal', 'ixt:numdotdecimal' -> 'numdotdecimal': the transformation registries
    spell one format several ways, so formats are compared by this key."""
    return (fmt or "").rsplit(":", 1)[-1].replace("-", "").lower()


def _round_years(years: Decimal) -> Decimal:
    """The fewest decimals (up to 3) that stay within a day: P4Y3M18D -> 4.3, P5Y3M -> 5.25.

    Filers turn "4.3 years" into P4Y3M18D by 30-day months, so an exact conversion would show
    digits nobody printed."""
    for places in range(4):
        rounded = years.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if abs(rounded - years) <= _DAY_IN_YEARS:
            return rounded
    return years.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)


def duration_years(text: str) -> Decimal:
    """An ISO 8601 duration in years, as gold writes it: "P4Y3M18D" -> 4.3, "P10Y" -> 10."""
    match = _ISO_DURATION.fullmatch(text.strip())
    if not match or not any(match.group(k) for k in "ymwd"):
        raise ValueError(f"not an ISO 8601 duration: {text.strip()[:40]!r}")

    def part(key: str) -> Decimal:
        return Decimal(match.group(key) or 0)

    years = part("y") + part("m") / 12 + part("w") * 7 * _DAY_IN_YEARS + part("d") * _DAY_IN_YEARS
    years = _round_years(years)
    return -years if match.group("neg") else years


def _word_number(tokens: list[str]) -> Decimal | None:
    """'ten' -> 10, 'twenty five' -> 25, '4.5' -> 4.5; None when the tokens are not a number."""
    if len(tokens) == 1 and re.fullmatch(r"\d+(?:\.\d+)?", tokens[0]):
        return Decimal(tokens[0])
    if tokens and all(t in _WORDS for t in tokens):
        return Decimal(sum(_WORDS[t] for t in tokens))
    return None


def _words_duration(text: str) -> Decimal:
    """'ten years', 'three-year', 'five years, two months', '18 months' -> years."""
    tokens = re.findall(r"\d+(?:\.\d+)?|[a-z]+", text.lower().replace(",", ""))
    total, found = Decimal(0), False
    number: list[str] = []  # the words of the number before a unit
    for token in tokens:
        unit = _DURATION_UNITS.get(token)
        if unit is not None and number:
            amount = _word_number(number)
            if amount is None:
                raise ValueError(f"not a duration in words: {text!r}")
            total += amount / unit
            number, found = [], True
        elif token not in ("and",):
            number.append(token)
    if not found:
        raise ValueError(f"not a duration in words: {text!r}")
    return total if total == total.to_integral_value() else _round_years(total)


def _duration(shown: str, key: str) -> Decimal:
    if key == "durwordsen":
        return _words_duration(shown)
    number = parse_number(shown) or parse_number(shown.split()[0] if shown.split() else "")
    if number is None:
        raise ValueError(f"{shown[:40]!r} is not a number of {key.removeprefix('dur')}s")
    per_year = _PER_YEAR[key]
    years = number.magnitude / per_year
    return years if per_year == 1 or years == years.to_integral_value() else _round_years(years)


def ix_number(text: str, fmt: str | None) -> Decimal:
    """The number an inline XBRL transformation reads from displayed text (before scale and sign).

    Raises ValueError for text the format does not read, and for formats this module does not know."""
    key = format_key(fmt)
    shown = text.replace("\u00a0", " ").strip()
    if key in _ZERO_FORMATS:
        return Decimal(0)
    try:
        if key in ("", *_DOT_FORMATS):
            return Decimal(re.sub(r"[^\d.]", "", shown))
        if key in _COMMA_FORMATS:
            return Decimal(re.sub(r"[^\d,]", "", shown).replace(",", "."))
    except InvalidOperation as error:
        raise ValueError(f"{shown[:40]!r} is not a number in format {fmt or 'none'}") from error
    if key == "numunitdecimal":
        match = _UNIT_DECIMAL.fullmatch(shown)
        if match is None:
            raise ValueError(f"{shown[:40]!r} is not a number with a unit for its decimal point")
        return Decimal(f"{re.sub(r'[^0-9]', '', match.group(1))}.{match.group(2):0>2}")
    if key == "numwordsen":
        value = _word_number(re.findall(r"[a-z]+|\d+(?:\.\d+)?", shown.lower().replace("-", " ")))
        if value is None:
            raise ValueError(f"{shown[:40]!r} is not a number in words")
        return value
    if key in _DURATION_FORMATS:
        return _duration(shown, key)
    raise ValueError(f"format {fmt} is not supported")


def printed_number(shown: str, fmt: str | None) -> str:
    """The number as printed, the way gold spans hold it: no $, %, parentheses or unit words."""
    key = format_key(fmt)
    text = re.sub(r"[ \t\r\n\f\v]+", " ", shown).strip(" \u00a0$()%")
    if key in _DURATION_FORMATS or key == "numwordsen":
        token = re.search(r"\d[\d,]*(?:\.\d+)?|[A-Za-z]+", text)
        return token.group(0) if token else ""
    return text


def with_decimals(value: Decimal, decimals: str | None) -> Decimal:
    """Carry the reported precision (decimals="-3": thousands) so scoring rounds to it."""
    if not decimals or decimals.strip().upper() == "INF":
        return value
    try:
        quantized = value.quantize(Decimal(1).scaleb(-int(decimals)))
    except (ValueError, InvalidOperation):
        return value
    return quantized if quantized == value else value
