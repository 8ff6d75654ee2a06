"""What the validator reports: findings a reviewer can act on, and the verdict."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from extractor.schemas.facts import Fact
from extractor.schemas.values import AwardType, Period, SourceSpan

Severity = Literal["error", "warning"]


class FactRef(BaseModel):
    """One fact a finding involves: where it sits in the schema (or the facts file) and in the text."""

    path: str | None = Field(default=None, description="Schema path ('award_activity[0].rows[3].count') or 'line N'.")
    concept: str
    period_end: date
    dims: dict[str, str] = Field(default_factory=dict)
    value: Decimal
    source: SourceSpan | None = None

    @classmethod
    def of(cls, path: str | None, fact: Fact) -> FactRef:
        return cls(
            path=path,
            concept=fact.concept,
            period_end=fact.period.end_date,
            dims=fact.dims,
            value=fact.value,
            source=fact.source,
        )

    def key(self) -> str:
        dims = ",".join(f"{k}={v}" for k, v in sorted(self.dims.items()))
        return f"{self.concept}@{self.period_end.isoformat()}[{dims}]"


class Unexplained(BaseModel):
    """A number the note prints that no extracted fact uses and nothing explains: a likely omission.

    `period` and `award` are what the facts extracted from the same column, row or table say (a
    reviewer's starting point when adding the fact), absent when no neighbour states them."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = Field(description="The number as printed.")
    where: str = Field(
        description="Where a reader finds it: \"table 2, row 'Granted', column '2024'\" or \"sentence\"."
    )
    table: int | None = Field(default=None, description="Index of the rebuilt table holding it; None in prose.")
    row: str | None = Field(default=None, description="The row label of its table cell.")
    column: str | None = Field(default=None, description="The column header of its table cell.")
    period: Period | None = None
    award: AwardType | None = None


class Finding(BaseModel):
    """One problem: which rule, how bad, what a reviewer should look at, expected vs found."""

    rule: str = Field(description="Rule id, 'family.rule': rollforward.count, totals.sum, grounding.readback, ...")
    severity: Severity
    message: str
    facts: list[FactRef] = Field(default_factory=list)
    expected: Decimal | None = None
    found: Decimal | None = None
    numbers: list[Unexplained] = Field(
        default_factory=list, description="Coverage findings: the printed numbers nothing extracted or explained."
    )
    coverage: Decimal | None = Field(
        default=None, description="Coverage findings: the share of the block's numbers used or explained (0-1)."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """Stable across runs: the rule and its facts' identities and values. A reviewer accepts a
        finding for the numbers they saw; once a value changes it is a new finding."""
        keys = "|".join(sorted(f"{ref.key()}={ref.value.normalize()}" for ref in self.facts))
        keys += "".join(f"|@{number.start}:{number.text}" for number in self.numbers)
        return f"{self.rule}:{hashlib.sha1(keys.encode()).hexdigest()[:10]}"

    @property
    def family(self) -> str:
        return self.rule.split(".", 1)[0]


class Validation(BaseModel):
    """The verdict on one extraction: it passes when no finding of error severity is left."""

    findings: list[Finding] = Field(default_factory=list)
    accepted: list[Finding] = Field(
        default_factory=list, description="Findings a reviewer accepted as true of the filing."
    )
    grounded_in_document: bool = Field(
        default=False, description="Spans and scales were checked against the document text."
    )
    coverage: Decimal | None = Field(
        default=None,
        description="Share of the numbers the note prints (tables, stock-compensation sentences) "
        "that facts use or the coverage lexicon explains; None without the document.",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


def read_accepted(path: str | Path) -> dict[str, str]:
    """Accepted findings (JSON Lines of {"id", "reason"}): what a reviewer confirmed is true of the filing."""
    accepted: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from error
        if not isinstance(record, dict) or "id" not in record:
            raise ValueError(f"{path}:{number}: an accepted finding is an object with an 'id'")
        accepted[record["id"]] = record.get("reason", "")
    return accepted
