"""Pydantic schemas: the target of every extraction backend and the source of the facts mapping."""

from schemas.stock_compensation import StockCompensationNote
from schemas.values import Amount, AwardType, Period, SourceSpan, Unit

__all__ = ["StockCompensationNote", "Amount", "AwardType", "Period", "SourceSpan", "Unit"]
