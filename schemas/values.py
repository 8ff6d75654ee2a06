"""Value objects shared by every schema: an amount with its unit, scale, period and source."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

Unit = Literal["shares", "USD", "USD/share", "pure", "years"]
# How an LLM's quote was placed in the text (extractor/llm/grounding.py), surest first: a table row
# named by the quote, the quote verbatim, after folding case/spaces/dashes, or most of its words near the number.
AlignmentMethod = Literal["table", "exact", "normalized", "fuzzy"]
SHAKY_ALIGNMENTS: frozenset[str] = frozenset({"normalized", "fuzzy"})  # the quote is not verbatim there: worth a look
AwardType = Literal["option", "sar", "rsu", "psu", "msu", "dsu", "restricted_stock", "espp", "other"]
OPTION_LIKE: frozenset[str] = frozenset({"option", "sar"})
SCALED_UNITS: frozenset[str] = frozenset(
    {"shares", "USD"}
)  # scale notes never apply to per-share prices, rates or terms


def printed_unit(unit: Unit, scale: int, percent: bool) -> tuple[Unit, int]:
    """The unit and power of ten a printed number takes: percentages become fractions, and a stated
    scale applies to counts and dollars only. One rule for every backend."""
    if percent:
        return "pure", -2
    return unit, scale if unit in SCALED_UNITS else 0


class SourceSpan(BaseModel):
    """Where a number stands in the document text: text == document.text[start:end]."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = Field(description="The number exactly as printed, without $, % or parentheses.")
    alignment: AlignmentMethod | None = Field(
        default=None,
        description="How an LLM quote was placed here; None when the backend read the offsets itself (rules, XBRL, a reviewer).",
    )

    @property
    def shaky(self) -> bool:
        """Placed only by a folded or fuzzy match of the quote: the number may not be the one the model meant."""
        return self.alignment in SHAKY_ALIGNMENTS

    @model_serializer(mode="wrap")
    def _alignment_only_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leaves `alignment` out when None, so rules output, gold files and queue rows stay byte-identical."""
        data: dict[str, Any] = handler(self)
        if self.alignment is None:
            data.pop("alignment", None)
        return data


class Period(BaseModel):
    """A balance is an instant; a flow has an end and usually a start."""

    instant: date | None = Field(default=None, description="For balances: 'outstanding as of' this date.")
    start: date | None = Field(default=None, description="First day of the period, for flows.")
    end: date | None = Field(default=None, description="Last day of the period, for flows.")

    @model_validator(mode="after")
    def _one_kind(self) -> Period:
        if (self.instant is None) == (self.end is None):
            raise ValueError("a period is either an instant or has an end date")
        return self

    @property
    def end_date(self) -> date:
        return self.instant or self.end  # type: ignore[return-value]

    @property
    def short_months(self) -> int | None:
        """3, 6 or 9 for a quarter or year-to-date flow; None for a balance, a year or a flow without start.

        A 10-Q prints a quarter and its year to date side by side with one end date: two facts, not one
        printed twice. Years stay None so a flow dated "fiscal 2024" and one dated Feb 1 - Jan 31 still meet."""
        if self.start is None or self.end is None:
            return None
        months = round((self.end - self.start).days / 30.44)
        return months if 0 < months < 11 else None

    @classmethod
    def at(cls, day: date) -> Period:
        return cls(instant=day)

    @classmethod
    def over(cls, start: date | None, end: date) -> Period:
        return cls(start=start, end=end)


class Amount(BaseModel):
    """One extracted number. `value` is fully scaled to base units ("6,994" thousand -> 6994000)."""

    value: Decimal = Field(description="The number in base units: shares, dollars, fractions for percentages.")
    unit: Unit
    scale: int = Field(default=0, description="Power of ten the printed number was multiplied by (3 = thousands).")
    decimals: int = Field(default=0, description="Digits printed after the decimal point.")
    period: Period
    source: SourceSpan | None = Field(default=None, description="The printed number's span; None if ungrounded.")
    quote: str | None = Field(default=None, description="Verbatim text around the number, as found in the filing.")
