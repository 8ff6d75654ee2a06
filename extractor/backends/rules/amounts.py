"""Printed numbers to schema Amounts: scale, unit and span in one place."""

from __future__ import annotations

from decimal import Decimal

from extractor.numbers import apply_scale
from extractor.tables.model import PrintedNumber
from schemas.values import SCALED_UNITS, Amount, Period, SourceSpan, Unit



def amount(number: PrintedNumber, unit: Unit, period: Period, scale: int = 0) -> Amount:
    """An Amount from a printed number; percentages become fractions, counts and dollars are scaled."""
    exponent = scale if unit in SCALED_UNITS else 0
    if number.percent or unit == "pure":
        exponent = -2 if number.percent else 0
        unit = "pure"
    return Amount(
        value=apply_scale(number.magnitude, exponent),
        unit=unit,
        scale=exponent,
        decimals=number.decimals,
        period=period,
        source=SourceSpan(start=number.start, end=number.end, text=number.text),
    )


def word_amount(value: Decimal, text: str, start: int, unit: Unit, period: Period) -> Amount:
    """An Amount for a number printed as a word ("ten years", "No shares")."""
    return Amount(value=value, unit=unit, period=period, source=SourceSpan(start=start, end=start + len(text), text=text))
