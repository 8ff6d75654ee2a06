"""What the review page shows for one item: the source text with every value's span marked, the
values grouped as the note groups them, and each finding next to the values it involves.

A whole 60 MB filing would make a page of hundreds of megabytes that no browser shows usefully:
past `SOURCE_CHARS` the source pane holds only the text around the marked values (`CONTEXT_CHARS`
each side), with the length of each gap said in its place; offsets and mark ids do not change."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from markupsafe import Markup

from extractor.extraction import Extraction
from extractor.queue.edits import ValueField, path_steps, value_fields
from extractor.validator import Finding
from schemas.concepts import concept_words

SOURCE_CHARS = 1_000_000  # a longer source is shown as excerpts around its marked values
CONTEXT_CHARS = 3_000  # text shown each side of a marked value in such a source


@dataclass
class Row:
    """One value: its form fields are named '<path>.value', '<path>.unit', '<path>.period.end'..."""

    number: int
    field: ValueField
    label: str
    mark: str | None  # the id of its span's <mark> in the source pane
    findings: list[int] = field(default_factory=list)  # indexes into ItemView.findings

    @property
    def path(self) -> str:
        return self.field.path

    @property
    def flagged(self) -> bool:
        return bool(self.findings)


@dataclass
class Group:
    key: str  # the owner path ('award_activity[0]') or the note part ('share_repurchases')
    title: str
    award: str | None  # None: the group has no award type to edit
    rows: list[Row] = field(default_factory=list)


@dataclass
class ItemView:
    groups: list[Group]
    findings: list[tuple[Finding, list[int]]]  # each finding with the numbers of its rows
    source: Markup


def item_view(extraction: Extraction, text: str | None) -> ItemView:
    """The page's parts; `text` None when the document cannot be read (values still shown)."""
    fields = value_fields(extraction.note)
    marks = _mark_ids(fields, text)
    rows = [Row(n, f, _label(extraction, f), marks.get((f.amount.source.start, f.amount.source.end)) if f.amount.source else None)
            for n, f in enumerate(fields, start=1)]  # fmt: skip
    by_path = {row.path: row for row in rows}
    findings: list[tuple[Finding, list[int]]] = []
    validation = extraction.validation
    ordered = sorted(validation.findings, key=lambda f: (f.severity != "error", f.rule)) if validation else []
    for index, finding in enumerate(ordered):
        involved = [by_path[ref.path].number for ref in finding.facts if ref.path in by_path]
        for number in involved:
            rows[number - 1].findings.append(index)
        findings.append((finding, involved))
    groups: dict[str, Group] = {}
    for row in rows:
        key = row.field.owner or str(path_steps(row.path)[0])
        if key not in groups:
            groups[key] = Group(key, _group_title(extraction, key), _owner_award(extraction, row.field))
        groups[key].rows.append(row)
    flagged = {row.mark for row in rows if row.flagged and row.mark}
    source = _highlight(text, fields, marks, flagged) if text is not None else Markup("")
    return ItemView(list(groups.values()), findings, source)


def _label(extraction: Extraction, value: ValueField) -> str:
    """A roll-forward value by its row as printed ('Vested · count'); others by their concept in words."""
    steps = path_steps(value.path)
    if steps[0] == "award_activity":  # ['award_activity', table, 'rows', row, measure]
        printed = extraction.note.award_activity[int(steps[1])].rows[int(steps[3])]
        return f"{printed.label or printed.kind} · {str(steps[4]).replace('_', ' ')}"
    dims = ", ".join(f"{k} {v}" for k, v in sorted(value.fact.dims.items()) if k != "award")
    return concept_words(value.fact.concept) + (f" ({dims})" if dims else "")


def _group_title(extraction: Extraction, key: str) -> str:
    note = extraction.note
    steps = path_steps(key)
    if steps[0] == "award_activity":
        table = note.award_activity[int(steps[1])]
        return f"{table.title or 'Activity'} · {table.basis}"
    part = str(steps[0]).replace("_", " ")
    return part[:1].upper() + part[1:]


def _owner_award(extraction: Extraction, value: ValueField) -> str | None:
    if value.owner is None:
        return None
    return value.fact.dims.get("award", "")


def _mark_ids(fields: list[ValueField], text: str | None) -> dict[tuple[int, int], str]:
    """An id per distinct span that lies inside the text and overlaps no earlier one."""
    if text is None:
        return {}
    ids: dict[tuple[int, int], str] = {}
    taken_until = -1
    spans = sorted({(f.amount.source.start, f.amount.source.end) for f in fields if f.amount.source})
    for start, end in spans:
        if start >= taken_until and end <= len(text) and start < end:
            ids[(start, end)] = f"m{start}"
            taken_until = end
    return ids


def _highlight(text: str, fields: list[ValueField], marks: dict[tuple[int, int], str], flagged: set[str | None]) -> Markup:
    paths: dict[str, list[str]] = {}
    for f in fields:
        if f.amount.source and (mark := marks.get((f.amount.source.start, f.amount.source.end))):
            paths.setdefault(mark, []).append(f.path)
    parts: list[str] = []
    at = 0
    for (start, end), mark in sorted(marks.items()):
        parts.append(_between(text, at, start))
        css = "value flagged" if mark in flagged else "value"
        parts.append(f'<mark id="{mark}" class="{css}" data-paths="{escape(" ".join(paths.get(mark, [])))}">'
                     f"{_between(text, start, end)}</mark>")  # fmt: skip
        at = end
    parts.append(_between(text, at, len(text)))
    return Markup("".join(parts))


def _between(text: str, start: int, end: int) -> str:
    """The escaped text from `start` to `end` (between two marks, or a mark's own); in an excerpted
    source only its edges: the text before the first mark shows its end, the text after the last
    its beginning, a source with no mark its first lines."""
    if len(text) <= SOURCE_CHARS or end - start <= 2 * CONTEXT_CHARS:
        return escape(text[start:end])
    head = 0 if start == 0 and end < len(text) else CONTEXT_CHARS
    tail = CONTEXT_CHARS if end < len(text) else 0
    gap = f'<span class="elided">[… {end - start - head - tail:,} characters not shown: the document is too long to show whole …]</span>'
    return escape(text[start : start + head]) + gap + escape(text[end - tail : end])
