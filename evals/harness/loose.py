"""Loose matching against a filer's own XBRL tags, for real filings whose gold concepts and dims
are the filer's choice, not ours.

The strict rule (extractor.scoring) asks for our concept and dims; on real filings that mixes up
"read the wrong number" with "named it differently". Loose matching asks only whether the right
number was read for the right period (and award type): a gold fact is *found* when a prediction
has its |value| at printed precision, its period end (±1 day) and, when the gold's axes name an
award type, the same award class; a *concept hit* is a found fact whose concept also agrees up
to case, "Arrangement(s)" and trailing digits. *Tag-backed precision* counts predictions whose
|value| and period end match any fact the filer tagged at all.

Every rule here mirrors ../shared/tools/score_real.py (the independent cross-check) line for line,
so the two agree; tests/test_real_suite.py checks that on the same predictions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, computed_field

from extractor.schemas.facts import Fact
from extractor.suites import TaggedFact, end_of, read_tagged  # noqa: F401 - read_tagged: the harness's readers

# XBRL member local-name fragments -> award class, first match wins (score_real.py AWARD_WORDS).
AWARD_WORDS: tuple[tuple[str, str], ...] = (
    ("appreciation", "sar"),
    ("sar", "sar"),
    ("performance", "psu"),
    ("market", "msu"),
    ("deferred", "dsu"),
    ("restrictedstockunit", "rsu"),
    ("rsu", "rsu"),
    ("stockunit", "rsu"),
    ("purchase", "espp"),
    ("espp", "espp"),
    ("restrictedstock", "restricted_stock"),
    ("restrictedshare", "rsu"),
    ("option", "option"),
)
AWARD_AXES = ("awardtypeaxis", "plannameaxis", "equitycomponentsaxis")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


# -- the rules ------------------------------------------------------------------------------------


def award_of(member: str) -> str:
    """Award class of an XBRL member by name fragments; 'other' when none applies."""
    name = member.lower().replace("_", "")
    return next((cls for word, cls in AWARD_WORDS if word in name), "other")


def gold_award(dims: Iterable[tuple[str, str]]) -> str | None:
    """The award class the gold's axes name (AwardType / PlanName / EquityComponents / any *award* axis)."""
    for axis, member in dims:
        if axis.lower() in AWARD_AXES or "award" in axis.lower():
            award = award_of(member)
            if award != "other":
                return award
    return None


def norm_concept(concept: str) -> str:
    """Concept names that differ only by case, Arrangement(s) or a trailing version digit agree."""
    return re.sub(r"\d+$", "", concept.lower().replace("arrangements", "arrangement"))


def tol(value: Decimal) -> Decimal:
    """Half a unit of the gold value's last significant digit (1,909 million -> 500,000)."""
    normal = value.normalize()
    if normal == 0:
        return Decimal(0)
    return Decimal(5) * Decimal(10) ** (int(normal.as_tuple().exponent) - 1)


def printed_tol(value: Decimal, text: str | None) -> Decimal:
    """Half a unit of the last digit printed in the source text ("7,870" thousands -> 500)."""
    match = _NUMBER.search(str(text or ""))
    if not match or value == 0:
        return Decimal(0)
    digits = match.group().replace(",", "").replace(".", "").lstrip("0")
    if not digits:
        return Decimal(0)
    return Decimal(5) * Decimal(10) ** (value.copy_abs().adjusted() - len(digits))


def agree(predicted: Decimal, gold: Decimal, predicted_text: str | None = None) -> bool:
    """Equal within the coarser printed precision: the gold's own digits, or the prediction's source text."""
    return abs(predicted - gold) <= max(printed_tol(predicted, predicted_text), tol(gold), Decimal("1e-9"))


def near(a: str | None, b: str | None) -> bool:
    """Period ends at most one day apart."""
    try:
        return abs(date.fromisoformat(str(a)) - date.fromisoformat(str(b))) <= timedelta(days=1)
    except (TypeError, ValueError):
        return False


def visible(item: dict[str, Any]) -> bool:
    """score_real.py's gold filter: printed in the note, not known to be outside it, non-zero."""
    return bool(item.get("shown_in_section")) and item.get("in_note") is not False and item.get("value") != 0


# -- scoring --------------------------------------------------------------------------------------


class LooseCounts(BaseModel):
    """Loose recall, concept recall and tag-backed precision of one document, or summed over many."""

    gold: int = 0
    found: int = 0
    concept_found: int = 0
    predicted: int = 0  # non-zero predictions
    backed: int = 0  # of those, matched by some tag of the filing

    @computed_field  # type: ignore[prop-decorator]
    @property
    def loose_recall(self) -> float:
        return self.found / max(self.gold, 1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def concept_recall(self) -> float:
        return self.concept_found / max(self.gold, 1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tag_backed_precision(self) -> float:
        return self.backed / max(self.predicted, 1)

    def add(self, other: LooseCounts) -> None:
        self.gold += other.gold
        self.found += other.found
        self.concept_found += other.concept_found
        self.predicted += other.predicted
        self.backed += other.backed

    def totals(self) -> dict[str, float | int]:
        """The figures run_real.sh prints, rounded the same way."""
        return {
            "gold": self.gold,
            "loose_recall": round(self.loose_recall, 3),
            "concept_recall": round(self.concept_recall, 3),
            "tag_backed_precision": round(self.tag_backed_precision, 3),
            "predicted": self.predicted,
        }


@dataclass(frozen=True)
class LooseMiss:
    concept: str
    end: str | None
    printed: str


def loose_score(
    predicted: Sequence[Fact], gold: Sequence[TaggedFact], tagged: Sequence[TaggedFact]
) -> tuple[LooseCounts, list[LooseMiss]]:
    """Score one document: `gold` the visible facts, `tagged` every fact the filer tagged."""
    preds = [
        (abs(p.value), p.period.end_date.isoformat(), p.dims.get("award"), norm_concept(p.concept)) for p in predicted
    ]
    counts = LooseCounts(gold=len(gold))
    misses: list[LooseMiss] = []
    for g in gold:
        award, concept = gold_award(g.dims), norm_concept(g.concept)
        hits = [
            p for p in preds if near(p[1], g.end) and (award is None or p[2] == award) and agree(p[0], abs(g.value))
        ]
        if hits:
            counts.found += 1
            counts.concept_found += any(p[3] == concept for p in hits)
        else:
            misses.append(LooseMiss(g.concept, g.end, g.printed or str(g.value)))
    backing = [(abs(t.value), t.end) for t in tagged]
    for value, end, _, _ in preds:
        if value == 0:
            continue
        counts.predicted += 1
        counts.backed += any(near(end, t_end) and agree(value, t_value) for t_value, t_end in backing)
    return counts, misses
