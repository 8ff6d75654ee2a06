"""Terminal rendering with rich: facts of one extraction, and eval scores."""

from __future__ import annotations

from collections.abc import Iterable

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from extractor.extraction import Extraction
from extractor.findings import Validation
from extractor.schemas.concepts import CONCEPT_PREFIXES
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period
from extractor.scoring import Score


def short_concept(concept: str) -> str:
    """Concept names are long; the shared prefix says nothing a reader of this note needs."""
    for prefix in CONCEPT_PREFIXES:
        if concept.startswith(prefix):
            return "…" + concept[len(prefix) :]
    return concept


def period_text(p: Period) -> str:
    return str(p.instant) if p.instant else f"{p.start or '…'} → {p.end}"


def dims_text(dims: dict[str, str] | Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{k}={v}" for k, v in (dims.items() if isinstance(dims, dict) else dims))


def facts_table(extraction: Extraction, facts: list[Fact]) -> Table:
    filing = extraction.filing
    said = [
        filing.company,
        filing.form,
        f"CIK {filing.cik}" if filing.cik else None,
        f"period ended {filing.fiscal_period_end}" if filing.fiscal_period_end else None,
    ]
    who = "".join(f" · {escape(part)}" for part in said if part)
    meta = f"{extraction.document_path}{who} · backend {extraction.provenance.backend} · {len(facts)} facts · {extraction.tables_found} tables"
    table = Table(title=meta, title_justify="left", show_lines=False)
    for column in ("concept", "dims", "period", "value", "unit", "printed"):
        table.add_column(column, overflow="fold", justify="right" if column == "value" else "left")
    for fact in facts:
        printed = f"{fact.source.text} @{fact.source.start}" if fact.source else "[red]ungrounded[/red]"
        table.add_row(
            short_concept(fact.concept),
            dims_text(fact.dims),
            period_text(fact.period),
            f"{fact.value:,}",
            fact.unit,
            printed,
        )
    return table


def score_table(results: dict[str, Score], total: Score, show_errors: bool) -> Table:
    table = Table(title="Facts vs gold (spec matching rule)", title_justify="left")
    for column in ("document", "gold", "predicted", "correct", "precision", "recall", "F1"):
        table.add_column(column, justify="left" if column == "document" else "right")
    for name, result in [*results.items(), ("ALL", total)]:
        table.add_row(
            name,
            str(result.gold),
            str(result.predicted),
            str(result.correct),
            f"{result.precision:.3f}",
            f"{result.recall:.3f}",
            f"{result.f1:.3f}",
            style="bold" if name == "ALL" else None,
        )
    if show_errors:
        for name, result in results.items():
            for fact in result.missed:
                table.add_row(name, "[red]missed[/red]", short_concept(fact.concept), str(fact.value), "", "", "")
            for fact in result.extra:
                table.add_row(name, "[yellow]extra[/yellow]", short_concept(fact.concept), str(fact.value), "", "", "")
            for predicted, gold in result.wrong_value:
                table.add_row(
                    name,
                    "[red]wrong value[/red]",
                    short_concept(gold.concept),
                    f"{predicted.value} ≠ {gold.value}",
                    "",
                    "",
                    "",
                )
    return table


def findings_table(title: str, validation: Validation) -> Table | Text:
    """Findings worst first, each with the schema paths (or facts-file lines) and printed spans involved."""
    verdict = "[green]passed[/green]" if validation.passed else "[red]FAILED[/red]"
    counts = f"{len(validation.errors)} errors, {len(validation.warnings)} warnings"
    if validation.accepted:
        counts += f", {len(validation.accepted)} accepted"
    if not validation.grounded_in_document:
        counts += " · spans not checked against the document"
    heading = f"{escape(title)} · validation {verdict} · {counts}"
    if not validation.findings:
        return Text.from_markup(heading)
    table = Table(title=heading, title_justify="left", show_lines=True)
    for column in ("severity", "rule", "finding", "facts"):
        table.add_column(column, overflow="fold")
    ordered = sorted(validation.findings, key=lambda f: (f.severity != "error", f.rule))
    for finding in ordered:
        style = "red" if finding.severity == "error" else "yellow"
        where = "\n".join(
            (ref.path or short_concept(ref.concept)) + (f" @{ref.source.start}" if ref.source else "")
            for ref in finding.facts[:6]
        ) + (f"\n… {len(finding.facts) - 6} more" if len(finding.facts) > 6 else "")
        table.add_row(f"[{style}]{finding.severity}[/{style}]", finding.rule, escape(finding.message), escape(where))
    return table
