"""Scores from outcomes: value-right and found-the-fact precision/recall/F1, per slice of the suite."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import BaseModel, computed_field

from extractor.evals.harness.outcomes import FactOutcome
from extractor.schemas.concepts import GROUPS


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class Counts(BaseModel):
    """Two questions: did it find the fact (concept, period, dims) and did it get its value right."""

    gold: int = 0
    predicted: int = 0
    found: int = 0
    correct: int = 0

    @property
    def missed(self) -> int:
        return self.gold - self.found

    @property
    def wrong(self) -> int:
        return self.found - self.correct

    @property
    def extra(self) -> int:
        return self.predicted - self.found

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float:
        return _ratio(self.correct, self.predicted)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float:
        return _ratio(self.correct, self.gold)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def found_f1(self) -> float:
        """F1 of finding the facts, whatever their values."""
        return _f1(_ratio(self.found, self.predicted), _ratio(self.found, self.gold))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def value_accuracy(self) -> float:
        """Of the facts found, the share whose value agrees with gold."""
        return _ratio(self.correct, self.found)


def tally(outcomes: Iterable[FactOutcome]) -> Counts:
    counts = Counts()
    for row in outcomes:
        counts.gold += row.is_gold
        counts.predicted += row.is_predicted
        counts.found += row.outcome in ("correct", "wrong_value")
        counts.correct += row.outcome == "correct"
    return counts


def tally_by(outcomes: Iterable[FactOutcome], key: Callable[[FactOutcome], str]) -> dict[str, Counts]:
    groups: dict[str, list[FactOutcome]] = {}
    for row in outcomes:
        groups.setdefault(key(row), []).append(row)
    return {name: tally(rows) for name, rows in sorted(groups.items())}


def ordered_groups(by_group: dict[str, Counts]) -> dict[str, Counts]:
    """Concept groups in the note's order (schemas.concepts.GROUPS), any others after."""
    order = [*GROUPS, *sorted(set(by_group) - set(GROUPS))]
    return {g: by_group[g] for g in order if g in by_group}


def grounding_rate(outcomes: Iterable[FactOutcome]) -> float | None:
    """Share of predicted facts that carry a source span (None when nothing was predicted)."""
    predicted = [row for row in outcomes if row.is_predicted]
    return _ratio(sum(row.predicted_source is not None for row in predicted), len(predicted)) if predicted else None
