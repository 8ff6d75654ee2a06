"""What changed between two runs of one suite, fact by fact, and whether it is more than noise.

Significance is a paired bootstrap over documents: documents are resampled with replacement
and the F1 difference recomputed on each sample. Facts of one document rise and fall together
(one misread table moves twenty facts), so resampling facts would call a one-document wobble
progress; resampling documents does not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from extractor.evals.harness.metrics import Counts
from extractor.evals.harness.outcomes import FactKey, FactOutcome
from extractor.evals.harness.runner import EvalRun

# Below six documents, even every document moving the same way cannot reach p < 0.05 under a
# two-sided sign test (2 / 2**5 = 0.0625), and a bootstrap over so few has no spread to speak of.
MIN_DOCUMENTS = 6


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
    def enough_documents(self) -> bool:
        return self.documents >= MIN_DOCUMENTS

    @property
    def significant(self) -> bool:
        low, high = self.interval
        return self.enough_documents and (low > 0 or high < 0)

    @property
    def verdict(self) -> str:
        if not self.enough_documents:
            return f"too few documents to tell ({self.documents}; {MIN_DOCUMENTS} needed)"
        if self.significant:
            return "a real improvement" if self.delta_f1 > 0 else "a real regression"
        return "within noise (the interval includes 0)"


def compare(baseline: EvalRun, candidate: EvalRun, resamples: int = 2000, seed: int = 0) -> Comparison:
    """Fact-level changes and a paired document bootstrap of the F1 difference.

    Gold facts are matched across runs by key and gold value (gold may print one key twice);
    extras by key as counts, since a run can predict the same fact more than once.
    """
    result = Comparison(
        baseline=baseline, candidate=candidate, same_gold=baseline.suite_fingerprint == candidate.suite_fingerprint
    )
    before, after = _gold_rows(baseline), _gold_rows(candidate)
    for key in sorted(before.keys() | after.keys(), key=str):
        old, new = before.get(key), after.get(key)
        old_right, new_right = bool(old and old.outcome == "correct"), bool(new and new.outcome == "correct")
        if new_right and not old_right:
            result.newly_right.append(Change(key[0], old, new))
        elif old_right and not new_right:
            result.newly_wrong.append(Change(key[0], old, new))
    old_extras, new_extras = _extras(baseline), _extras(candidate)
    for extra in sorted(old_extras.keys() | new_extras.keys()):
        was, now = old_extras.get(extra, []), new_extras.get(extra, [])
        result.new_extras += [Change(extra, None, row) for row in now[len(was) :]]
        result.extras_gone += [Change(extra, row, None) for row in was[len(now) :]]
    documents = sorted({d.id for d in baseline.documents} & {d.id for d in candidate.documents})
    result.documents = len(documents)
    before_counts, after_counts = baseline.metrics().by_document, candidate.metrics().by_document
    per_document = [(before_counts[d], after_counts[d]) for d in documents]
    result.delta_f1 = _delta(per_document)
    result.interval, result.p_value = _bootstrap(per_document, resamples, seed)
    return result


def _gold_rows(run: EvalRun) -> dict[tuple[FactKey, str], FactOutcome]:
    return {(row.key, str(row.gold_value)): row for row in run.outcomes if row.is_gold}


def _extras(run: EvalRun) -> dict[FactKey, list[FactOutcome]]:
    extras: dict[FactKey, list[FactOutcome]] = {}
    for row in run.outcomes:
        if row.outcome == "extra":
            extras.setdefault(row.key, []).append(row)
    return extras


def _delta(pairs: list[tuple[Counts, Counts]]) -> float:
    return _pooled([b for _, b in pairs]).f1 - _pooled([a for a, _ in pairs]).f1


def _pooled(counts: list[Counts]) -> Counts:
    return Counts(
        gold=sum(c.gold for c in counts),
        predicted=sum(c.predicted for c in counts),
        found=sum(c.found for c in counts),
        correct=sum(c.correct for c in counts),
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
