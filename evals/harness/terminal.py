"""The eval run and its comparison as rich terminal tables."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from extractor.evals.harness.compare import Change, Comparison
from extractor.evals.harness.loose import LooseCounts
from extractor.evals.harness.metrics import Counts, ordered_groups
from extractor.evals.harness.outcomes import describe
from extractor.evals.harness.runner import DocumentResult, EvalRun, Metrics
from extractor.render import dims_text, short_concept

SCORE_COLUMNS = ("gold", "predicted", "found F1", "value acc.", "precision", "recall", "F1")


def _score_table(title: str, first: str, rows: dict[str, Counts], total: Counts | None = None) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column(first)
    for column in SCORE_COLUMNS:
        table.add_column(column, justify="right")
    for name, counts in rows.items():
        table.add_row(escape(name), *_cells(counts))
    if total is not None:
        table.add_row("ALL", *_cells(total), style="bold")
    return table


def _cells(c: Counts) -> list[str]:
    return [
        str(c.gold),
        str(c.predicted),
        f"{c.found_f1:.3f}",
        f"{c.value_accuracy:.3f}",
        f"{c.precision:.3f}",
        f"{c.recall:.3f}",
        f"{c.f1:.3f}",
    ]


def run_header(run: EvalRun) -> str:
    prompt = f" · prompt {run.prompt_id} ({run.prompt_hash})" if run.prompt_id else ""
    model = f" · model {run.model}" if run.model else ""
    number = f"run {run.id} · " if run.id is not None else ""
    return f"{number}suite {run.suite} · backend {run.backend}{model}{prompt} · code {run.code_version}"


def run_report(run: EvalRun, metrics: Metrics) -> RenderableType:
    """Scores per concept group, award type and document, then the run's other figures."""
    documents = Table(title="Per document", title_justify="left")
    for column in ("document", "format", "status", "validation", "F1", "missed", "wrong", "extra"):
        documents.add_column(column, justify="right" if column in ("F1", "missed", "wrong", "extra") else "left")
    for result in run.documents:
        counts = metrics.by_document[result.id]
        validation = (
            "—"
            if result.passed is None
            else (
                "[green]passed[/green]"
                if result.passed
                else f"[red]failed[/red] ({sum(f.severity == 'error' for f in result.findings)} errors)"
            )
        )
        status = "extracted" if result.status == "extracted" else f"[red]failed[/red]: {escape(result.reason or '')}"
        documents.add_row(
            escape(result.id),
            escape(result.format),
            status,
            validation,
            f"{counts.f1:.3f}",
            str(counts.missed),
            str(counts.wrong),
            str(counts.extra),
        )
    grounding = "—" if metrics.grounding_rate is None else f"{metrics.grounding_rate:.1%}"
    passing = "—" if metrics.validation_pass_rate is None else f"{metrics.validation_pass_rate:.0%}"
    lines = [
        f"documents {metrics.documents} ({metrics.failed_documents} failed) · grounding rate {grounding} of predicted facts"
        f" · validation passed {passing} of extracted documents · {metrics.seconds:.1f} s",
    ]
    if metrics.usage is not None:
        lines.append(f"LLM usage: {metrics.usage.summary()}")
    if metrics.loose is not None:
        t = metrics.loose
        lines.append(
            f"against the filers' XBRL tags: loose recall {t.loose_recall:.3f} · concept recall {t.concept_recall:.3f}"
            f" · tag-backed precision {t.tag_backed_precision:.3f} · {t.gold} gold, {t.predicted} predicted"
        )
    return Group(
        Text(run_header(run), style="bold"),
        _score_table("By concept group", "group", ordered_groups(metrics.by_group), metrics.overall),
        _score_table("By award type", "award", metrics.by_award),
        _score_table("By document format", "format", metrics.by_format),
        documents,
        *_loose_tables(run, metrics),
        *(Text(line) for line in lines),
    )


LOOSE_COLUMNS = (
    "gold",
    "found",
    "loose recall",
    "concept recall",
    "backed",
    "predicted",
    "tag-backed precision",
    "coverage",
    "validation",
)
GATE_LOW, GATE_HIGH, GATE_PASS_SHARE = 0.5, 0.85, 0.7  # issue 19: the validator's verdict against recall


@dataclass(frozen=True)
class Gate:
    """The validator as a gate, judged by loose recall: every poor extraction (< 0.5) must fail, and most
    good ones (>= 0.85) pass. A gate that fails everything is no gate."""

    low: list[DocumentResult]  # loose recall under GATE_LOW: each must fail validation
    high: list[DocumentResult]  # GATE_HIGH or more: at least GATE_PASS_SHARE of them must pass

    @classmethod
    def of(cls, results: list[DocumentResult]) -> Gate:
        judged = [(r, r.loose) for r in results if r.loose is not None and r.passed is not None and r.loose.gold]
        return cls(
            [r for r, loose in judged if loose.loose_recall < GATE_LOW],
            [r for r, loose in judged if loose.loose_recall >= GATE_HIGH],
        )

    @property
    def caught(self) -> int:
        return sum(not r.passed for r in self.low)

    @property
    def passed(self) -> int:
        return sum(bool(r.passed) for r in self.high)

    @property
    def share(self) -> float:
        return self.passed / len(self.high) if self.high else 1.0

    @property
    def holds(self) -> bool:
        return self.caught == len(self.low) and self.share >= GATE_PASS_SHARE


def gate_line(results: list[DocumentResult]) -> str:
    g = Gate.of(results)
    return (
        f"validation as a gate: {g.caught} of {len(g.low)} extractions with loose recall < {GATE_LOW} fail, "
        f"{g.passed} of {len(g.high)} with loose recall >= {GATE_HIGH} pass ({g.share:.0%}; "
        f">= {GATE_PASS_SHARE:.0%} wanted) → {'[green]holds[/green]' if g.holds else '[red]does not hold[/red]'}"
    )


def _loose_tables(run: EvalRun, metrics: Metrics) -> list[RenderableType]:
    """Loose scores against the filer's tags per document (every gold document, extracted or not), and
    the robustness documents with what they gave: real filings are judged on these, not on our names."""
    tables: list[RenderableType] = []
    scored = [d for d in run.documents if d.loose is not None]
    if scored and metrics.loose is not None:
        table = Table(title="Against the filers' XBRL tags (loose: value, period end, award)", title_justify="left")
        table.add_column("document")
        for column in LOOSE_COLUMNS:
            table.add_column(column, justify="right")
        for result in scored:
            assert result.loose is not None
            name = escape(result.id) + ("" if result.status == "extracted" else " [red](failed)[/red]")
            coverage = "—" if result.coverage is None else f"{result.coverage:.2f}"
            verdict = "—" if result.passed is None else ("passed" if result.passed else "[red]failed[/red]")
            table.add_row(name, *_loose_cells(result.loose), coverage, verdict)
        table.add_row("ALL", *_loose_cells(metrics.loose), "", "", style="bold")
        tables.append(table)
        tables.append(Text.from_markup(gate_line(scored)))
    robust = [d for d in run.documents if d.robustness]
    if robust:
        table = Table(title="Robustness documents (no gold: each must extract without error)", title_justify="left")
        for column in ("document", "status", "facts", "validation"):
            table.add_column(column, justify="right" if column == "facts" else "left")
        for result in robust:
            status = "extracted" if result.status == "extracted" else f"[red]error[/red]: {escape(result.reason or '')}"
            validation = (
                "—"
                if result.passed is None
                else (
                    "passed"
                    if result.passed
                    else f"failed ({sum(f.severity == 'error' for f in result.findings)} errors)"
                )
            )
            table.add_row(escape(result.id), status, "—" if result.facts is None else str(result.facts), validation)
        tables.append(table)
    return tables


def _loose_cells(c: LooseCounts) -> list[str]:
    return [
        str(c.gold),
        str(c.found),
        f"{c.loose_recall:.3f}",
        f"{c.concept_recall:.3f}",
        str(c.backed),
        str(c.predicted),
        f"{c.tag_backed_precision:.3f}",
    ]


def comparison_report(comparison: Comparison, limit: int = 25) -> RenderableType:
    """ΔF1 with its bootstrap interval, then the facts newly right, newly wrong and new extras."""
    c = comparison
    style = ("green" if c.delta_f1 > 0 else "red") if c.significant else "yellow"
    verdict = f"[{style}]{c.verdict}[/{style}]"
    parts: list[RenderableType] = [
        Text.from_markup(
            f"[bold]vs run {c.baseline.id}[/bold] ({escape(run_header(c.baseline))})\n"
            f"ΔF1 {c.delta_f1:+.3f} · 95% interval {c.interval[0]:+.3f} … {c.interval[1]:+.3f} · p = {c.p_value:.3f}"
            f" (paired bootstrap over {c.documents} documents) → {verdict}\n"
            f"{len(c.newly_right)} facts newly right · {len(c.newly_wrong)} newly wrong · "
            f"{len(c.new_extras)} new extras · {len(c.extras_gone)} extras gone"
        )
    ]
    if not c.same_gold:
        parts.append(
            Text(
                "note: the suite's documents or gold changed between these runs; fact changes may come from the gold",
                style="yellow",
            )
        )
    for title, changes, style in (
        ("Newly wrong", c.newly_wrong, "red"),
        ("New extras", c.new_extras, "red"),
        ("Newly right", c.newly_right, "green"),
    ):
        if changes:
            parts.append(_changes_table(f"{title} ({len(changes)})", changes, style, limit))
    return Group(*parts)


def _changes_table(title: str, changes: list[Change], style: str, limit: int) -> Table:
    table = Table(title=title, title_justify="left", title_style=style)
    for column in ("document", "concept", "dims", "period end", "gold", "before", "after"):
        table.add_column(column, overflow="fold")
    for change in changes[:limit]:
        document, concept, end, dims = change.key
        shown = change.after or change.before
        assert shown is not None, "a change has a before or an after"
        gold = shown.gold_value
        table.add_row(
            escape(document),
            escape(short_concept(concept)),
            escape(dims_text(dims)),
            end,
            "—" if gold is None else f"{gold:,}",
            escape(describe(change.before)),
            escape(describe(change.after)),
        )
    if len(changes) > limit:
        table.add_row(f"… {len(changes) - limit} more (see the HTML report)", "", "", "", "", "", "")
    return table
