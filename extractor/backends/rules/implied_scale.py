"""The scale of dollar amounts a note prints without stating it.

Large filers often say "(Dollars in millions, except per share data)" once, at the top of all the notes, so
a note cut out of the filing prints "$409" of expense and "$353" of unrecognized cost with no scale in sight.
The note's own share counts and per-share values carry no scale, so their product (the value of the awards
outstanding) tells which power of ten makes the dollar amounts plausible. Nothing is inferred when the note
states any scale itself or the evidence is not clear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

from pydantic import BaseModel

from extractor.numbers import apply_scale, scale_word_after
from extractor.patterns import finditer_from, screen_text
from extractor.regex_cache import regex
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.schemas.values import Amount

_STATED = regex(r"\b(?:thousands?|millions?|billions?)\b|\$\s?\d[\d,.]*\s?[mkb]n?\b", re.I)
_STATED_STARTS = ("thousand", "million", "billion", "$")  # what every match begins with
# Aggregate dollars (expense, unrecognized cost) over the value of the awards outstanding: a year's expense or
# the cost not yet recognized is a sizeable fraction of it (about a third is typical), never a thousandth.
SCALE_NAMES = {3: "thousands", 6: "millions"}
_IMPLAUSIBLE_BELOW = Decimal("0.001")
_TYPICAL = Decimal("0.3")


def implied_usd_scale(note: StockCompensationNote, text: str) -> int:
    """0, 3 or 6: the power of ten unscaled dollar amounts of this note stand for (0 unless as printed they
    are implausibly small next to the awards they are about)."""
    if next(finditer_from(_STATED, text, screen_text(text), _STATED_STARTS), None) is not None:
        return 0
    award_value = max(
        (
            row.count.value * price.value
            for table in note.award_activity
            for row in table.rows
            if row.kind in ("beginning", "ending") and row.count is not None
            for price in [row.weighted_average_price]
            if price is not None
        ),
        default=Decimal(0),
    )
    dollars = [a.value for a in _amounts(note) if a.unit == "USD" and a.scale == 0 and a.value > 0]
    if award_value <= 0 or not dollars:
        return 0
    ratio = max(dollars) / award_value
    if ratio >= _IMPLAUSIBLE_BELOW:
        return 0
    return min((3, 6), key=lambda e: abs((ratio.scaleb(e) / _TYPICAL).log10()))


def apply_usd_scale(note: StockCompensationNote, exponent: int, text: str) -> None:
    """Scale every dollar amount printed without a scale word of its own."""
    if not exponent:
        return
    for amount in _amounts(note):
        printed_scale = amount.source is not None and scale_word_after(text, amount.source.end)
        if amount.unit == "USD" and amount.scale == 0 and not printed_scale:
            amount.value = apply_scale(amount.value, exponent)
            amount.scale = exponent


def _amounts(model: BaseModel) -> Iterator[Amount]:
    for name in type(model).model_fields:
        yield from _walk(getattr(model, name))


def _walk(value) -> Iterator[Amount]:
    if isinstance(value, Amount):
        yield value
    elif isinstance(value, BaseModel):
        yield from _amounts(value)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
