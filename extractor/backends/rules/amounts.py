"""Printed numbers to schema Amounts: scale, unit and span in one place."""

from __future__ import annotations

from decimal import Decimal

from extractor.numbers import apply_scale
from extractor.schemas.values import Amount, Period, SourceSpan, Unit, printed_unit
from extractor.tables.model import PrintedNumber


def amount(number: PrintedNumber, unit: Unit, period: Period, scale: int = 0) -> Amount:
    """An Amount from a printed number; percentages become fractions, counts and dollars are scaled."""
    unit, exponent = printed_unit(unit, scale, number.percent)
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
    return Amount(
        value=value, unit=unit, period=period, source=SourceSpan(start=start, end=start + len(text), text=text)
    )
