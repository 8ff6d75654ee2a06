"""Score predicted facts against gold under the spec's matching rule (shared/spec/facts.md).

Two facts are the same fact when concept, dims and period end (±1 day) are equal; their values
agree when equal after rounding the more precise one to the precision printed in the filing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from extractor.schemas.facts import Fact, values_agree


@dataclass
class Score:
    gold: int = 0
    predicted: int = 0
    found: int = 0  # matched by concept, period and dims
    correct: int = 0  # found and the value agrees
    missed: list[Fact] = field(default_factory=list)
    extra: list[Fact] = field(default_factory=list)
    wrong_value: list[tuple[Fact, Fact]] = field(default_factory=list)  # (predicted, gold)
    right: list[tuple[Fact, Fact]] = field(default_factory=list)  # (predicted, gold), values agree

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: Score) -> None:
        self.gold += other.gold
        self.predicted += other.predicted
        self.found += other.found
        self.correct += other.correct
        self.missed += other.missed
        self.extra += other.extra
        self.wrong_value += other.wrong_value
        self.right += other.right


def _same(a: Fact, b: Fact) -> bool:
    return (
        a.concept == b.concept and a.dims == b.dims and abs(a.period.end_date - b.period.end_date) <= timedelta(days=1)
    )


def score(predicted: list[Fact], gold: list[Fact]) -> Score:
    """Match each gold fact to at most one predicted fact; the rest are misses and extras."""
    result = Score(gold=len(gold), predicted=len(predicted))
    unused = list(predicted)
    for gold_fact in gold:
        candidates = [p for p in unused if _same(p, gold_fact)]
        if not candidates:
            result.missed.append(gold_fact)
            continue
        best = next((p for p in candidates if values_agree(p, gold_fact)), candidates[0])
        unused.remove(best)
        result.found += 1
        if values_agree(best, gold_fact):
            result.correct += 1
            result.right.append((best, gold_fact))
        else:
            result.wrong_value.append((best, gold_fact))
    result.extra = unused
    return result


# -- which predictions go with which gold (extractor score) --------------------------------------

GOLD_SUFFIX = ".facts.jsonl"


def document_name(path: Path) -> str:
    """'002_x.facts.jsonl' and '002_x.jsonl' both name document '002_x'."""
    name = path.name
    for suffix in (GOLD_SUFFIX, ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def read_predictions(path: Path) -> dict[str | None, list[Fact]]:
    """Predicted facts by document. A file: its lines' 'document' keys (None for a line without one).
    A folder: one <document>.jsonl per extracted document, named by the file; an empty file is a
    document extracted with no facts, which still counts. Raises ValueError naming the line."""
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(".jsonl")) if path.is_dir() else [path]
    by_document: dict[str | None, list[Fact]] = {}
    for file in files:
        named = document_name(file) if path.is_dir() else None
        if named is not None:
            by_document.setdefault(named, [])  # counted even when it holds no fact
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, parse_float=Decimal)
                document = record.pop("document", None)
                fact = Fact.model_validate(record)
            except (ValueError, AttributeError) as error:
                raise ValueError(f"{file}:{number}: not a fact ({str(error).splitlines()[0]})") from error
            by_document.setdefault(named if named is not None else document, []).append(fact)
    return by_document


def gold_files(gold: Path) -> dict[str, Path]:
    """<document>.facts.jsonl gold files of a folder, or the one file given."""
    if gold.is_file():
        return {document_name(gold): gold}
    if gold.is_dir():
        return {document_name(p): p for p in sorted(gold.glob(f"*{GOLD_SUFFIX}"))}
    raise ValueError(f"{gold}: no such gold file or folder")
