"""What changed between two runs of one suite, fact by fact, and whether it is more than noise.

Significance is a paired bootstrap over documents: documents are resampled with replacement
and the F1 difference recomputed on each sample. Facts of one document rise and fall together
(one misread table moves twenty facts), so resampling facts would call a one-document wobble
progress; resampling documents does not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from evals.harness.metrics import Counts, tally
from evals.harness.outcomes import FactKey, FactOutcome
from evals.harness.runner import EvalRun


@dataclass
class Change:
    key: FactKey
    before: FactOutcome | None  # None: not in the baseline (a new extra)
    after: FactOutcome | None  # None: gone (an extra no longer predicted)


@dataclass
class Comparison:
    baseline: EvalRun
    candidate: EvalRun
    newly_right: list[Change] = field(default_factory=list)
    newly_wrong: list[Change] = field(default_factory=list)  # gold facts right before, not now
    new_extras: list[Change] = field(default_factory=list)
    extras_gone: list[Change] = field(default_factory=list)
    delta_f1: float = 0.0
    interval: tuple[float, float] = (0.0, 0.0)  # 95% bootstrap interval of delta_f1
    p_value: float = 1.0  # two-sided: how often resampled documents give the opposite sign or zero
    documents: int = 0
    same_gold: bool = True

    @property
    def regressions(self) -> int:
        return len(self.newly_wrong) + len(self.new_extras)

    @property
    def significant(self) -> bool:
        low, high = self.interval
        return low > 0 or high < 0


def compare(baseline: EvalRun, candidate: EvalRun, resamples: int = 2000, seed: int = 0) -> Comparison:
    """Fact-level changes and a paired document bootstrap of the F1 difference."""
    before = {row.key: row for row in baseline.outcomes}
    after = {row.key: row for row in candidate.outcomes}
    result = Comparison(baseline=baseline, candidate=candidate, same_gold=baseline.suite_fingerprint == candidate.suite_fingerprint)
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        old_right, new_right = bool(old and old.outcome == "correct"), bool(new and new.outcome == "correct")
        old_extra, new_extra = bool(old and old.outcome == "extra"), bool(new and new.outcome == "extra")
        if new_right and not old_right:
            result.newly_right.append(Change(key, old, new))
        elif old_right and not new_right:
            result.newly_wrong.append(Change(key, old, new))
        if new_extra and not old_extra:
            result.new_extras.append(Change(key, old, new))
        elif old_extra and not new_extra:
            result.extras_gone.append(Change(key, old, new))
    documents = sorted({d.id for d in baseline.documents} & {d.id for d in candidate.documents})
    result.documents = len(documents)
    per_document = [(_counts(baseline, d), _counts(candidate, d)) for d in documents]
    result.delta_f1 = _delta(per_document)
    result.interval, result.p_value = _bootstrap(per_document, resamples, seed)
    return result


def _counts(run: EvalRun, document: str) -> Counts:
    return tally(row for row in run.outcomes if row.document == document)


def _delta(pairs: list[tuple[Counts, Counts]]) -> float:
    return _pooled([b for _, b in pairs]).f1 - _pooled([a for a, _ in pairs]).f1


def _pooled(counts: list[Counts]) -> Counts:
    return Counts(
        gold=sum(c.gold for c in counts), predicted=sum(c.predicted for c in counts),
        found=sum(c.found for c in counts), correct=sum(c.correct for c in counts),
    )


def _bootstrap(pairs: list[tuple[Counts, Counts]], resamples: int, seed: int) -> tuple[tuple[float, float], float]:
    if not pairs:
        return (0.0, 0.0), 1.0
    rng = random.Random(seed)  # fixed seed: the same two runs always give the same figure
    observed = _delta(pairs)
    deltas = sorted(_delta(rng.choices(pairs, k=len(pairs))) for _ in range(resamples))
    interval = (deltas[int(0.025 * resamples)], deltas[int(0.975 * resamples) - 1])
    if observed == 0:
        return interval, 1.0
    against = sum(1 for d in deltas if (d <= 0 if observed > 0 else d >= 0))
    return interval, min(1.0, 2 * against / resamples)
