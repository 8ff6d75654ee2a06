"""The facts format of shared/spec/facts.md: one number, its meaning, period and source."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, Field

from extractor.schemas.values import Period, SourceSpan, Unit


class Fact(BaseModel):
    concept: str
    value: Decimal
    unit: Unit
    period: Period
    dims: dict[str, str] = Field(default_factory=dict)
    source: SourceSpan | None = None

    def key(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """Identity under the spec's matching rule (the period end is compared with ±1 day apart)."""
        return (self.concept, self.period.end_date.isoformat(), tuple(sorted(self.dims.items())))

    def to_json_dict(self) -> dict[str, Any]:
        """The output boundary: Decimal becomes a JSON number here and nowhere earlier."""
        value = self.value
        number: int | float = int(value) if value == value.to_integral_value() else float(value)
        period = {k: v.isoformat() for k, v in self.period.model_dump().items() if v is not None}
        out: dict[str, Any] = {
            "concept": self.concept,
            "value": number,
            "unit": self.unit,
            "period": period,
            "dims": self.dims,
        }
        if (
            self.source is not None
        ):  # the facts format's source is start, end and text (an LLM quote's alignment stays in the extraction)
            out["source"] = {"start": self.source.start, "end": self.source.end, "text": self.source.text}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Fact:
        return cls.model_validate(json.loads(line, parse_float=Decimal))


def read_facts(path: str) -> list[Fact]:
    with open(path, encoding="utf-8") as handle:
        return [Fact.from_json(line) for line in handle if line.strip()]


def printed_exponent(fact: Fact) -> int:
    """Exponent of the weight of the last printed digit, in base units ("1,601" thousands -> 3)."""
    if fact.source is None:  # nothing printed: the value is exact as written
        return int(fact.value.as_tuple().exponent)
    try:
        printed = Decimal(fact.source.text.replace(",", ""))
    except InvalidOperation:  # printed as a word: exact
        return int(fact.value.as_tuple().exponent)
    if printed == 0 or fact.value == 0:
        return int(printed.as_tuple().exponent)
    return (abs(fact.value) / printed).adjusted() + int(printed.as_tuple().exponent)


def values_agree(a: Fact, b: Fact) -> bool:
    """Equal after rounding the more precise value to the other's printed precision."""
    if a.value == b.value:
        return True
    fine, coarse = sorted((a, b), key=printed_exponent)
    quantum = Decimal(1).scaleb(printed_exponent(coarse))
    rounded = (fine.value / quantum).quantize(Decimal(1), rounding=ROUND_HALF_UP) * quantum
    return rounded == coarse.value
