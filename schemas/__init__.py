"""Pydantic schemas: the target of every extraction backend and the source of the facts mapping."""

from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.schemas.values import Amount, AwardType, Period, SourceSpan, Unit

__all__ = ["StockCompensationNote", "Amount", "AwardType", "Period", "SourceSpan", "Unit"]
