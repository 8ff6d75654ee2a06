"""A self-contained HTML report of one eval run: one file, no network, no JavaScript.

Drill-down is CSS only: each document is a section shown when the URL fragment names it (or
a fact inside it), so a report can be mailed, archived, or opened with `#doc-<id>` directly.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from extractor.document import LoadError
from extractor.evals.harness.compare import Change, Comparison
from extractor.evals.harness.metrics import Counts, ordered_groups
from extractor.evals.harness.outcomes import LABELS, FactOutcome, describe
from extractor.evals.harness.runner import EvalRun, Metrics
from extractor.evals.harness.store import RunSummary
from extractor.evals.harness.terminal import SCORE_COLUMNS, run_header
from extractor.loaders import load
from extractor.render import dims_text, period_text, short_concept
from extractor.suites import Suite

MAX_TEXT = 400_000  # characters of one document shown; beyond that the text is cut (and says so)

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header,main{padding:12px 24px} header{background:#1d2330;color:#fff} header a{color:#9cc4ff}
h1{font-size:20px;margin:4px 0} h2{font-size:16px;margin:18px 0 6px} h3{font-size:14px;margin:12px 0 4px}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px} th,td{border:1px solid #d8dce3;padding:3px 8px;text-align:right}
th:first-child,td:first-child,td.l{text-align:left} th{background:#eef0f4} tr.all td{font-weight:600}
.cards{display:flex;gap:10px;flex-wrap:wrap} .card{background:#fff;border:1px solid #d8dce3;padding:6px 12px;border-radius:6px}
.card b{display:block;font-size:20px}
.doc{display:none} .doc:target,.doc:has(:target){display:block} #index:has(~ .doc:target),#index:has(~ .doc :target){display:none}
.panes{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.pane{background:#fff;border:1px solid #d8dce3;max-height:70vh;overflow:auto}
.pane pre{margin:0;padding:8px;white-space:pre-wrap;word-break:break-word;font:12px/1.5 ui-monospace,monospace}
.pane h3{position:sticky;top:0;margin:0;padding:6px 8px;background:#eef0f4;border-bottom:1px solid #d8dce3}
mark{border-radius:2px;padding:0 1px;scroll-margin-top:3em} mark:target{outline:3px solid #1d6cff}
.correct{background:#c9f2cf} .wrong_value{background:#ffd79a} .missed{background:#ffb3b3} .extra{background:#dcc8ff}
td.correct,td.wrong_value,td.missed,td.extra{text-align:left}
.bad{color:#b00020} .good{color:#137333} .muted{color:#667}
.findings li.error{color:#b00020} .findings li.warning{color:#8a5a00}
svg text{font:11px system-ui,sans-serif;fill:#445}
"""


def render_report(
    run: EvalRun,
    metrics: Metrics,
    suite: Suite | None,
    history: list[RunSummary],
    comparison: Comparison | None = None,
) -> str:
    """The whole report as one HTML string."""
    documents = {d.id: d for d in suite.documents} if suite else {}
    anchors = _anchors([d.id for d in run.documents])
    same_suite = suite is not None and suite.fingerprint() == run.suite_fingerprint
    body = [
        f"<header><h1>Eval run {escape(str(run.id or ''))} · suite {escape(run.suite)}</h1>"
        f"<div>{escape(run_header(run))} · {escape(run.created)}</div></header><main>",
        '<div id="index">',
        _cards(metrics),
        _comparison(comparison, anchors) if comparison else "",
        "<h2>F1 across stored runs of this suite</h2>",
        _chart(history, run.id),
        _scores("By concept group", "group", ordered_groups(metrics.by_group), metrics.overall),
        _scores("By award type", "award", metrics.by_award),
        _scores("By document format", "format", metrics.by_format),
        _document_index(run, metrics, anchors),
        "</div>",
    ]
    for result in run.documents:
        rows = [r for r in run.outcomes if r.document == result.id]
        text, note = _document_text(documents.get(result.id), same_suite)
        body.append(
            _document_section(
                result, rows, metrics.by_document[result.id], text, note, documents.get(result.id), anchors[result.id]
            )
        )
    body.append("</main>")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Eval run {escape(str(run.id or ''))} · {escape(run.suite)}</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>"
    )


def write_report(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def _cards(m: Metrics) -> str:
    o = m.overall
    cards = [
        ("F1", f"{o.f1:.3f}"),
        ("precision", f"{o.precision:.3f}"),
        ("recall", f"{o.recall:.3f}"),
        ("found F1", f"{o.found_f1:.3f}"),
        ("value accuracy", f"{o.value_accuracy:.3f}"),
        ("grounding", "—" if m.grounding_rate is None else f"{m.grounding_rate:.1%}"),
        ("validation passed", "—" if m.validation_pass_rate is None else f"{m.validation_pass_rate:.0%}"),
        ("documents", f"{m.documents} ({m.failed_documents} failed)"),
    ]
    if m.usage is not None:
        cost = "no price" if m.usage.cost_usd is None else f"${m.usage.cost_usd:.4f}"
        cards += [
            ("tokens in/out", f"{m.usage.prompt_tokens:,}/{m.usage.completion_tokens:,}"),
            ("cost", cost),
            ("LLM latency", f"{m.usage.latency_seconds:.1f} s"),
        ]
    return (
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in cards)
        + "</div>"
    )


def _scores(title: str, first: str, rows: dict[str, Counts], total: Counts | None = None) -> str:
    body = [_score_row(escape(name), c) for name, c in rows.items()]
    if total is not None:
        body.append(_score_row("ALL", total, ' class="all"'))
    return f"<h2>{escape(title)}</h2>" + _table((first, *SCORE_COLUMNS), body)


def _table(headers: tuple[str, ...], rows: list[str]) -> str:
    """A table from its header names and its already-rendered <tr> rows."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _score_row(name: str, c: Counts, attrs: str = "") -> str:
    cells = (
        c.gold,
        c.predicted,
        f"{c.found_f1:.3f}",
        f"{c.value_accuracy:.3f}",
        f"{c.precision:.3f}",
        f"{c.recall:.3f}",
        f"{c.f1:.3f}",
    )
    return f"<tr{attrs}><td>{name}</td>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>"


def _anchors(ids: list[str]) -> dict[str, str]:
    """Element ids for documents: letters, digits, '_', '.', '-' only (fragments are percent-decoded
    and CSS-sensitive), made unique when two document ids slug alike."""
    anchors: dict[str, str] = {}
    for document in ids:
        slug = "doc-" + re.sub(r"[^A-Za-z0-9_.-]", "-", document)
        anchors[document] = slug if slug not in anchors.values() else f"{slug}-{len(anchors)}"
    return anchors


def _document_index(run: EvalRun, metrics: Metrics, anchors: dict[str, str]) -> str:
    rows = []
    for d in run.documents:
        c = metrics.by_document[d.id]
        status = (
            "extracted" if d.status == "extracted" else f'<span class="bad">failed: {escape(d.reason or "")}</span>'
        )
        validation = (
            "—"
            if d.passed is None
            else ('<span class="good">passed</span>' if d.passed else '<span class="bad">failed</span>')
        )
        rows.append(
            f'<tr><td><a href="#{anchors[d.id]}">{escape(d.id)}</a></td><td class="l">{escape(d.format)}</td>'
            f'<td class="l">{status}</td><td class="l">{validation}</td><td>{c.gold}</td><td>{c.predicted}</td>'
            f"<td>{c.correct}</td><td>{c.f1:.3f}</td></tr>"
        )
    return "<h2>Documents</h2>" + _table(
        ("document (open)", "format", "status", "validation", "gold", "predicted", "right", "F1"), rows
    )


def _comparison(c: Comparison, anchors: dict[str, str]) -> str:
    lines = [
        f"<h2>Against run {c.baseline.id}</h2><p>{escape(run_header(c.baseline))}<br>"
        f"ΔF1 <b>{c.delta_f1:+.3f}</b> · 95% interval {c.interval[0]:+.3f} … {c.interval[1]:+.3f} · p = {c.p_value:.3f}"
        f" (paired bootstrap over {c.documents} documents): <b>{escape(c.verdict)}</b><br>"
        f"{len(c.newly_right)} newly right · {len(c.newly_wrong)} newly wrong · {len(c.new_extras)} new extras · "
        f"{len(c.extras_gone)} extras gone</p>"
    ]
    if not c.same_gold:
        lines.append('<p class="bad">The suite\'s documents or gold changed between these runs.</p>')
    for title, changes in (
        ("Newly wrong", c.newly_wrong),
        ("New extras", c.new_extras),
        ("Newly right", c.newly_right),
    ):
        if changes:
            lines.append(f"<h3>{title} ({len(changes)})</h3>" + _changes(changes, anchors))
    return "".join(lines)


def _changes(changes: list[Change], anchors: dict[str, str]) -> str:
    rows = []
    for change in changes:
        document, concept, end, dims = change.key
        after = change.after or change.before
        assert after is not None
        rows.append(
            f'<tr><td><a href="#{anchors.get(document, "index")}">{escape(document)}</a></td><td class="l">{escape(short_concept(concept))}</td>'
            f'<td class="l">{escape(dims_text(dims))}</td><td>{end}</td><td>{_num(after.gold_value)}</td>'
            f'<td class="l">{_state(change.before)}</td><td class="l">{_state(change.after)}</td></tr>'
        )
    return _table(("document", "concept", "dims", "period end", "gold", "before", "after"), rows)


def _state(row: FactOutcome | None) -> str:
    text = escape(describe(row))
    return f'<span class="{row.outcome}">{text}</span>' if row else text


def _chart(history: list[RunSummary], current: int | None) -> str:
    """F1 of every stored run of the suite, oldest to newest, as an inline SVG line."""
    if not history:
        return '<p class="muted">No stored runs yet.</p>'
    width, height, left, bottom = max(320, 60 * len(history) + 80), 180, 40, 30
    step = (width - left - 20) / max(1, len(history) - 1)

    def y(f1: float) -> float:
        return 10 + (1 - f1) * (height - bottom - 10)

    points = [(left + i * step, y(run.f1)) for i, run in enumerate(history)]
    parts = [f'<svg width="{width}" height="{height}" role="img" aria-label="F1 per run">']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e3e6eb"/>'
            f'<text x="4" y="{y(tick) + 4:.1f}">{tick:.2f}</text>'
        )
    parts.append(
        '<polyline fill="none" stroke="#1d6cff" stroke-width="2" points="'
        + " ".join(f"{x:.1f},{py:.1f}" for x, py in points)
        + '"/>'
    )
    for (x, py), run in zip(points, history):
        color = "#d93025" if run.id == current else "#1d6cff"
        what = " · ".join(filter(None, [run.backend, run.model, run.prompt_id, run.label]))
        parts.append(
            f'<circle cx="{x:.1f}" cy="{py:.1f}" r="5" fill="{color}"><title>run {run.id} · {escape(what)} · '
            f"F1 {run.f1:.3f} · {escape(run.created)}</title></circle>"
            f'<text x="{x - 8:.1f}" y="{height - 10}">#{run.id}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _document_text(document, same_suite: bool) -> tuple[str | None, str]:
    if document is None:
        return None, "This document is not in the suite as loaded now; its source text cannot be shown."
    try:
        text = load(document.path).text
    except LoadError as error:
        return None, f"The document cannot be loaded now: {error}"
    note = "" if same_suite else "The suite changed since this run: spans may no longer line up with the text."
    if len(text) > MAX_TEXT:
        note += f" Only the first {MAX_TEXT:,} of {len(text):,} characters are shown."
    return text[:MAX_TEXT], note.strip()


def _document_section(
    result, rows: list[FactOutcome], counts: Counts, text: str | None, note: str, document, anchor: str
) -> str:
    key = escape(result.id)
    meta = ""
    if document is not None:
        meta = f"{escape(document.format)} · {escape(', '.join(document.tags))} · {escape(document.source)}"
    status = (
        "" if result.status == "extracted" else f'<p class="bad">Extraction failed: {escape(result.reason or "")}</p>'
    )
    findings = "".join(
        f'<li class="{escape(f.severity)}"><b>{escape(f.rule)}</b> {escape(f.message)}</li>' for f in result.findings
    )
    verdict = "—" if result.passed is None else ("passed" if result.passed else "failed")
    marks_gold, marks_predicted, targets = _marks(anchor, rows)
    panes, drawn = "", set()
    if text is not None:
        gold_text, gold_drawn = _highlight(text, marks_gold)
        predicted_text, predicted_drawn = _highlight(text, marks_predicted)
        drawn = gold_drawn | predicted_drawn
        panes = (
            '<div class="panes"><div class="pane"><h3>Gold: '
            '<span class="correct">right</span> <span class="wrong_value">wrong value</span> <span class="missed">missed</span></h3>'
            f"<pre>{gold_text}</pre></div>"
            '<div class="pane"><h3>Predicted: '
            '<span class="correct">right</span> <span class="wrong_value">wrong value</span> <span class="extra">extra</span></h3>'
            f"<pre>{predicted_text}</pre></div></div>"
        )
    facts = _facts_table(rows, targets, drawn)
    return (
        f'<section class="doc" id="{anchor}"><h2>{key}</h2><p><a href="#index">← all documents</a> · {meta}</p>{status}'
        f"<p>F1 {counts.f1:.3f} · precision {counts.precision:.3f} · recall {counts.recall:.3f} · "
        f"validation {verdict}</p>"
        + (f'<h3>Validator findings</h3><ul class="findings">{findings}</ul>' if findings else "")
        + (f'<p class="muted">{escape(note)}</p>' if note else "")
        + panes
        + f"<h3>Facts ({len(rows)})</h3>{facts}</section>"
    )


Mark = tuple[int, int, str, str, str]  # start, end, css class, element id, tooltip


def _marks(
    anchor: str, rows: list[FactOutcome]
) -> tuple[list[Mark], list[Mark], dict[int, tuple[str | None, str | None]]]:
    """Highlights for both panes, and for each fact the ids of its gold and predicted marks."""
    gold: list[Mark] = []
    predicted: list[Mark] = []
    targets: dict[int, tuple[str | None, str | None]] = {}
    for n, row in enumerate(rows):
        tip = f"{LABELS[row.outcome]}: {short_concept(row.concept)} {dims_text(sorted(row.dims.items()))} {row.period.end_date} gold {_plain(row.gold_value)} predicted {_plain(row.predicted_value)}"
        gold_id = predicted_id = None
        if row.gold_source is not None:
            gold_id = f"g-{anchor}-{n}"
            gold.append((row.gold_source.start, row.gold_source.end, row.outcome, gold_id, tip))
        if row.predicted_source is not None:
            predicted_id = f"p-{anchor}-{n}"
            predicted.append((row.predicted_source.start, row.predicted_source.end, row.outcome, predicted_id, tip))
        targets[n] = (gold_id, predicted_id)
    return gold, predicted, targets


def _highlight(text: str, marks: list[Mark]) -> tuple[str, set[str]]:
    """The text with each span wrapped in a mark, and the ids drawn.

    Facts sharing one span nest (the innermost colour shows; each id is a link target). A span
    partly overlapping an earlier one, or past the end of the shown text, is not drawn.
    """
    out: list[str] = []
    drawn: set[str] = set()
    position = 0
    spans: dict[tuple[int, int], list[Mark]] = {}
    for mark in marks:
        spans.setdefault((mark[0], mark[1]), []).append(mark)
    for (start, end), group in sorted(spans.items()):
        if start < position or end > len(text):
            continue
        out.append(escape(text[position:start]))
        opening = "".join(f'<mark id="{escape(i)}" class="{css}" title="{escape(tip)}">' for _, _, css, i, tip in group)
        out.append(opening + escape(text[start:end]) + "</mark>" * len(group))
        drawn.update(mark[3] for mark in group)
        position = end
    out.append(escape(text[position:]))
    return "".join(out), drawn


def _facts_table(rows: list[FactOutcome], targets: dict[int, tuple[str | None, str | None]], drawn: set[str]) -> str:
    """Every fact of the document; values link to their marks in the panes (when drawn)."""
    body = []
    for n, row in enumerate(rows):
        gold_id, predicted_id = (t if t in drawn else None for t in targets[n])
        gold = _link(gold_id, _num(row.gold_value), row.gold_source.text if row.gold_source else None)
        predicted = _link(
            predicted_id, _num(row.predicted_value), row.predicted_source.text if row.predicted_source else None
        )
        if row.predicted_value is not None and row.predicted_source is None:
            predicted += ' <span class="bad">(ungrounded)</span>'
        body.append(
            f'<tr><td class="{row.outcome}">{LABELS[row.outcome]}</td><td class="l">{escape(row.group)}</td>'
            f'<td class="l">{escape(short_concept(row.concept))}</td><td class="l">{escape(dims_text(sorted(row.dims.items())))}</td>'
            f'<td>{period_text(row.period)}</td><td>{gold}</td><td>{predicted}</td><td class="l">{escape(row.unit)}</td></tr>'
        )
    return _table(("outcome", "group", "concept", "dims", "period", "gold", "predicted", "unit"), body)


def _link(target: str | None, value: str, printed: str | None) -> str:
    if target is None:
        return value
    return f'<a href="#{escape(target)}" title="printed {escape(printed or "")}">{value}</a>'


def _num(value) -> str:
    return escape(_plain(value))


def _plain(value) -> str:
    return "—" if value is None else f"{value:,}"
