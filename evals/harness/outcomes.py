"""Per-fact outcomes: each gold fact right, wrong in value, or missed; each unmatched prediction extra.

Outcomes, not just counts, are what a run stores: they let two runs be compared fact by fact
("newly right", "newly wrong") and let a report show every miss next to its source.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel

from extractor.schemas.concepts import concept_group
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period, SourceSpan
from extractor.scoring import score

Outcome = Literal["correct", "wrong_value", "missed", "extra"]
LABELS: dict[str, str] = {"correct": "right", "wrong_value": "wrong value", "missed": "missed", "extra": "extra"}
FactKey = tuple[str, str, str, tuple[tuple[str, str], ...]]


class FactOutcome(BaseModel):
    document: str
    concept: str
    period: Period
    dims: dict[str, str]
    unit: str
    group: str
    outcome: Outcome
    gold_value: Decimal | None = None
    predicted_value: Decimal | None = None
    gold_source: SourceSpan | None = None
    predicted_source: SourceSpan | None = None

    @property
    def award(self) -> str:
        return self.dims.get("award", "(none)")

    @property
    def key(self) -> FactKey:
        """Identity across runs of one suite: the document and the fact's identity under the spec."""
        return (self.document, self.concept, self.period.end_date.isoformat(), tuple(sorted(self.dims.items())))

    @property
    def is_gold(self) -> bool:
        return self.outcome != "extra"

    @property
    def is_predicted(self) -> bool:
        return self.outcome != "missed"


def describe(row: FactOutcome | None) -> str:
    """A fact's state in one run, for a reader: 'right 9,000', 'wrong value 12', 'missed', 'absent'."""
    if row is None:
        return "absent"
    if row.outcome == "missed":
        return LABELS["missed"]
    return f"{LABELS[row.outcome]} {row.predicted_value:,}"


def fact_outcomes(document: str, predicted: list[Fact], gold: list[Fact]) -> list[FactOutcome]:
    """Match under the spec's rule (extractor.scoring) and keep one outcome per gold and extra fact."""
    result = score(predicted, gold)
    rows: list[FactOutcome] = []
    rows += [_outcome(document, "correct", gold_fact, predicted_fact) for predicted_fact, gold_fact in result.right]
    rows += [
        _outcome(document, "wrong_value", gold_fact, predicted_fact) for predicted_fact, gold_fact in result.wrong_value
    ]
    rows += [_outcome(document, "missed", gold_fact, None) for gold_fact in result.missed]
    rows += [_outcome(document, "extra", None, predicted_fact) for predicted_fact in result.extra]
    return sorted(rows, key=_position)


def _outcome(document: str, outcome: Outcome, gold: Fact | None, predicted: Fact | None) -> FactOutcome:
    named = gold or predicted
    assert named is not None
    return FactOutcome(
        document=document,
        concept=named.concept,
        period=named.period,
        dims=named.dims,
        unit=named.unit,
        group=concept_group(named),
        outcome=outcome,
        gold_value=gold.value if gold else None,
        predicted_value=predicted.value if predicted else None,
        gold_source=gold.source if gold else None,
        predicted_source=predicted.source if predicted else None,
    )


def _position(row: FactOutcome) -> tuple[int, str]:
    source = row.gold_source or row.predicted_source
    return (source.start if source else 1 << 62, row.concept)
