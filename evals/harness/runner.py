"""Run one backend over a suite: load, extract, validate and score every document; nothing skipped.

A document that cannot be loaded or extracted is a failed document whose gold facts all count
as missed, so a backend cannot raise its score by failing on hard inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from extractor.attempt import attempt
from extractor.backends.choice import Extract
from extractor.code_version import code_version
from extractor.evals.harness.loose import LooseCounts, loose_score
from extractor.evals.harness.metrics import Counts, grounding_rate, tally, tally_by
from extractor.evals.harness.outcomes import FactOutcome, fact_outcomes
from extractor.extraction import Extraction
from extractor.llm.usage import Usage
from extractor.suites import Suite, SuiteDocument


class FindingSummary(BaseModel):
    rule: str
    severity: str
    message: str


class DocumentResult(BaseModel):
    id: str
    format: str = ""
    status: Literal["extracted", "failed"]
    reason: str | None = Field(default=None, description="Why a failed document failed.")
    passed: bool | None = Field(default=None, description="Validator verdict (None when not extracted).")
    findings: list[FindingSummary] = Field(default_factory=list)
    usage: Usage | None = None
    seconds: float = 0.0
    robustness: bool = Field(default=False, description="No gold: it only has to extract without error.")
    facts: int | None = Field(default=None, description="Facts predicted (None when not extracted).")
    loose: LooseCounts | None = Field(default=None, description="Loose scores against the filer's XBRL tags.")
    coverage: float | None = Field(default=None, description="Share of the note's printed numbers used or explained.")


class Metrics(BaseModel):
    overall: Counts
    by_group: dict[str, Counts]
    by_award: dict[str, Counts]
    by_document: dict[str, Counts]
    by_format: dict[str, Counts]
    grounding_rate: float | None
    validation_pass_rate: float | None
    documents: int
    failed_documents: int
    usage: Usage | None
    seconds: float
    loose: LooseCounts | None = None  # summed over the documents with XBRL gold, predicted or not
    robustness_documents: int = 0


class EvalRun(BaseModel):
    id: int | None = None
    created: str
    suite: str
    suite_fingerprint: str
    backend: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_hash: str | None = None
    code_version: str
    label: str | None = None
    documents: list[DocumentResult]
    outcomes: list[FactOutcome]

    def metrics(self) -> Metrics:
        extracted = [d for d in self.documents if d.status == "extracted"]
        formats = {d.id: d.format or "(unnamed)" for d in self.documents}
        per_document = tally_by(self.outcomes, lambda row: row.document)
        usages = [d.usage for d in self.documents if d.usage is not None]
        total_usage = None
        if usages:
            total_usage = Usage()
            for usage in usages:
                total_usage.add(usage)
        return Metrics(
            overall=tally(self.outcomes),
            by_group=tally_by(self.outcomes, lambda row: row.group),
            by_award=tally_by(self.outcomes, lambda row: row.award),
            by_document={d.id: per_document.get(d.id, Counts()) for d in self.documents},
            by_format=tally_by(self.outcomes, lambda row: formats.get(row.document, "")),
            grounding_rate=grounding_rate(self.outcomes),
            validation_pass_rate=sum(bool(d.passed) for d in extracted) / len(extracted) if extracted else None,
            documents=len(self.documents),
            failed_documents=len(self.documents) - len(extracted),
            usage=total_usage,
            seconds=sum(d.seconds for d in self.documents),
            loose=_loose_total(self.documents),
            robustness_documents=sum(d.robustness for d in self.documents),
        )


def _loose_total(documents: list[DocumentResult]) -> LooseCounts | None:
    scored = [d.loose for d in documents if d.loose is not None]
    if not scored:
        return None
    total = LooseCounts()
    for counts in scored:
        total.add(counts)
    return total


def run_suite(
    suite: Suite,
    extract: Extract,
    backend: str,
    *,
    model: str | None = None,
    prompt_id: str | None = None,
    prompt_hash: str | None = None,
    label: str | None = None,
    on_document: Callable[[SuiteDocument], None] | None = None,
) -> EvalRun:
    """Every document of the suite through `extract`; an EndpointError stops the run (nothing could pass)."""
    results: list[DocumentResult] = []
    outcomes: list[FactOutcome] = []
    for document in suite.documents:
        result, extraction = _run_one(document, extract)
        results.append(result)
        predicted = extraction.take_facts() if extraction else []
        result.facts = len(predicted) if extraction else None
        result.robustness = document.robustness
        if not document.robustness:  # no gold: its facts are neither right nor extra
            outcomes += fact_outcomes(document.id, predicted, list(document.gold_facts))
        if document.xbrl_gold_facts is not None:  # every gold document counts, extracted or not
            result.loose = loose_score(predicted, document.xbrl_gold_facts, document.tagged_facts)[0]
        if extraction is not None:  # the LLM's provenance, when it ran, names what was really used
            model = extraction.provenance.model or model
            prompt_id = extraction.provenance.prompt_id or prompt_id
            prompt_hash = extraction.provenance.prompt_hash or prompt_hash
        if on_document:
            on_document(document)
    return EvalRun(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        suite=suite.name,
        suite_fingerprint=suite.fingerprint(),
        backend=backend,
        model=model,
        prompt_id=prompt_id,
        prompt_hash=prompt_hash,
        code_version=code_version(),
        label=label,
        documents=results,
        outcomes=outcomes,
    )


def _run_one(document: SuiteDocument, extract: Extract) -> tuple[DocumentResult, Extraction | None]:
    started = time.perf_counter()
    tried = attempt(document.path, extract, validated=True, accepted=document.accepted_findings, keep_facts=True)
    extraction = tried.extraction
    if extraction is None or extraction.validation is None:
        result = DocumentResult(
            id=document.id,
            format=document.format,
            status="failed",
            reason=tried.reason,
            usage=tried.usage,
            seconds=time.perf_counter() - started,
        )
        return result, None
    validation = extraction.validation
    result = DocumentResult(
        id=document.id,
        format=document.format,
        status="extracted",
        passed=validation.passed,
        findings=[FindingSummary(rule=f.rule, severity=f.severity, message=f.message) for f in validation.findings],
        coverage=None if validation.coverage is None else float(validation.coverage),
        usage=extraction.usage,
        seconds=time.perf_counter() - started,
    )
    return result, extraction
