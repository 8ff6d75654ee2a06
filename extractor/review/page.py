"""What the review page shows for one item: the source text with every value's span marked and
the numbers nobody extracted marked apart, the values grouped as the note groups them, and each
finding once, with links to the values it involves.

The source pane shows a table as a table: the document text of HTML holds one table row per line,
its cells tab-separated, so a run of lines with tabs becomes rows and columns, and a reviewer sees
which number belongs to which column. Every piece of text carries its offset (`data-at`), so a
selection in the pane names a span of the document text.

A value is painted red only when a finding blames it: a finding about at most `BLAME_LIMIT` values
(a misread number, two values that disagree). A relation over a whole table (a roll-forward that
does not add up) involves every row without saying which is wrong: its values are outlined, not red.
A value whose LLM quote was placed only by a folded or fuzzy match (`SourceSpan.shaky`) is marked
shaky and listed first, its group first: its span may not be the number the model meant.

A whole 60 MB filing would make a page of hundreds of megabytes that no browser shows usefully:
past `SOURCE_CHARS` the source pane holds only the text around the marked values (`CONTEXT_CHARS`
each side), with the length of each gap said in its place; offsets and mark ids do not change."""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import date, timedelta
from html import escape

from markupsafe import Markup

from extractor.extraction import Extraction
from extractor.findings import Unexplained
from extractor.periods import find_dates
from extractor.queue.edits import ValueField, check_first, group_key, path_steps, value_fields
from extractor.schemas.concepts import concept_words
from extractor.schemas.values import Period
from extractor.validator import Finding

SOURCE_CHARS = 1_000_000  # a longer source is shown as excerpts around its marked values
CONTEXT_CHARS = 3_000  # text shown each side of a marked value in such a source
BLAME_LIMIT = 2  # a finding about this many values or fewer says which are wrong
LINKS_SHOWN = 12  # a finding lists this many of its values or numbers, then how many more


@dataclass
class Row:
    """One value: its form fields are named '<path>.value', '<path>.unit', '<path>.period.end'..."""

    number: int
    field: ValueField
    label: str
    mark: str | None  # the id of its span's <mark> in the source pane
    findings: list[int] = dataclasses.field(
        default_factory=list
    )  # indexes into ItemView.findings ('field' is a Row attribute here)
    blamed: bool = False  # a finding says this value is wrong

    @property
    def path(self) -> str:
        return self.field.path

    @property
    def flagged(self) -> bool:
        return self.blamed

    @property
    def shaky(self) -> str | None:
        """How the quote was loosely placed ('normalized', 'fuzzy'), None when it was placed surely or by offsets."""
        source = self.field.amount.source
        return source.alignment if source is not None and source.shaky else None

    @property
    def span(self) -> str:
        source = self.field.amount.source
        return f"{source.start}:{source.end}" if source else ""


@dataclass
class Missed:
    """A printed number a coverage finding says nobody extracted, with what 'add a fact' starts from."""

    number: Unexplained
    finding: int  # index into ItemView.findings
    mark: str | None  # its <mark> in the source pane (None when a value's mark covers it)
    unit: str  # the unit and scale of the nearest value in the same table column or block
    scale: int
    label: str
    percent: bool = False  # printed with a % sign: a fraction
    period: Period | None = None  # the finding's hint, else the nearest value's period
    award: str | None = None


@dataclass
class Group:
    key: str  # the owner path ('award_activity[0]') or the note part ('share_repurchases')
    title: str
    award: str | None  # None: the group has no award type to edit
    rows: list[Row] = field(default_factory=list)


@dataclass
class Shown:
    """One finding as listed: its rows and unexplained numbers, the first LINKS_SHOWN of each linked."""

    finding: Finding
    rows: list[int]
    missed: list[Missed]
    blames: bool


@dataclass
class ItemView:
    groups: list[Group]
    findings: list[Shown]
    missed: list[Missed]
    source: Markup

    @property
    def to_accept(self) -> list[Shown]:
        """Findings an accept may take one by one: errors, and coverage findings (which need a reason each)."""
        return [s for s in self.findings if s.finding.severity == "error" or s.finding.family == "coverage"]


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    table: bool


def item_view(extraction: Extraction, text: str | None) -> ItemView:
    """The page's parts; `text` None when the document cannot be read (values still shown)."""
    fields = check_first(value_fields(extraction.note))
    marks = _mark_ids(fields, text)
    rows = [
        Row(
            n,
            f,
            _label(extraction, f),
            marks.get((f.amount.source.start, f.amount.source.end)) if f.amount.source else None,
        )
        for n, f in enumerate(fields, start=1)
    ]
    by_path = {row.path: row for row in rows}
    validation = extraction.validation
    ordered = sorted(validation.findings, key=lambda f: (f.severity != "error", f.rule)) if validation else []
    blocks = _blocks(text) if text is not None else []
    shown: list[Shown] = []
    missed: list[Missed] = []
    for index, finding in enumerate(ordered):
        involved = list(dict.fromkeys(by_path[ref.path].number for ref in finding.facts if ref.path in by_path))
        blames = 0 < len(involved) <= BLAME_LIMIT
        for number in involved:
            rows[number - 1].findings.append(index)
            rows[number - 1].blamed |= blames
        numbers = [_missed(n, index, fields, blocks, text) for n in finding.numbers] if text is not None else []
        missed += numbers
        shown.append(Shown(finding, involved, numbers, blames))
    groups: dict[str, Group] = {}
    for row in rows:
        key = group_key(row.field)
        if key not in groups:
            groups[key] = Group(key, _group_title(extraction, key), _owner_award(extraction, row.field))
        groups[key].rows.append(row)
    source = Markup("")
    if text is not None:
        missed_marks = _missed_marks(missed, marks, len(text))
        source = _render(text, blocks, _spans(rows, marks, missed_marks))
    return ItemView(list(groups.values()), shown, missed, source)


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


def _blocks(text: str) -> list[Block]:
    """The text as runs of prose lines and runs of table lines (lines holding a tab), in order."""
    blocks: list[Block] = []
    at = 0
    for line in text.splitlines(keepends=True):
        table = "\t" in line
        if blocks and blocks[-1].table == table:
            blocks[-1] = Block(blocks[-1].start, at + len(line), table)
        else:
            blocks.append(Block(at, at + len(line), table))
        at += len(line)
    return blocks


def _column(text: str, block: Block, at: int) -> int | None:
    """The cell index of offset `at` in a table block's line (None in prose)."""
    if not block.table:
        return None
    line_start = text.rfind("\n", block.start, at) + 1 or block.start
    return text.count("\t", line_start, at)


def _missed(number: Unexplained, finding: int, fields: list[ValueField], blocks: list[Block], text: str) -> Missed:
    """An unexplained number with the unit and scale of its nearest extracted neighbour: the same
    column of the same table first, else anywhere in its block (a table's scale note covers it)."""
    starts = [b.start for b in blocks]
    block = blocks[max(0, bisect_right(starts, number.start) - 1)] if blocks else Block(0, len(text), False)
    column = _column(text, block, number.start)
    near = [f for f in fields if f.amount.source and block.start <= f.amount.source.start < block.end]
    same_column = [f for f in near if column is not None and _column(text, block, f.amount.source.start) == column]  # type: ignore[union-attr]
    pool = same_column or near
    nearest = min(pool, key=lambda f: abs(f.amount.source.start - number.start), default=None)  # type: ignore[union-attr]
    unit, scale = (nearest.amount.unit, nearest.amount.scale) if nearest else ("USD", 0)
    label = number.row or ""
    percent = text[number.end : number.end + 3].lstrip(" )").startswith("%")
    period = number.period or (None if block.table else _sentence_period(text, number.start))
    period = period or (
        nearest.amount.period if nearest else None
    )  # the finding's hint, the sentence's date, the neighbour's
    award = number.award or (nearest.fact.dims.get("award") if nearest else None)
    return Missed(number, finding, None, unit, scale, label, percent, period, award)


def _missed_marks(
    missed: list[Missed], marks: dict[tuple[int, int], str], length: int
) -> dict[tuple[int, int], Missed]:
    """A mark id for each unexplained number inside the text that overlaps no value's mark."""
    taken = sorted(marks)
    starts = [s for s, _ in taken]
    chosen: dict[tuple[int, int], Missed] = {}
    for item in sorted(missed, key=lambda m: m.number.start):
        start, end = item.number.start, item.number.end
        if not 0 <= start < end <= length or (start, end) in chosen:
            continue
        before = bisect_right(starts, start) - 1
        overlaps = (before >= 0 and taken[before][1] > start) or (
            before + 1 < len(taken) and taken[before + 1][0] < end
        )
        if not overlaps:
            item.mark = f"x{start}"
            chosen[(start, end)] = item
    return chosen


def _spans(
    rows: list[Row], marks: dict[tuple[int, int], str], missed: dict[tuple[int, int], Missed]
) -> list[tuple[int, int, str]]:
    """Every mark of the source pane as (start, end, opening tag), in order: values, then numbers nobody extracted."""
    paths: dict[str, list[str]] = {}
    flagged: set[str] = set()
    involved: set[str] = set()
    shaky: set[str] = set()
    for row in rows:
        if row.mark:
            paths.setdefault(row.mark, []).append(row.path)
            if row.shaky:
                shaky.add(row.mark)
            if row.blamed:
                flagged.add(row.mark)
            elif row.findings:
                involved.add(row.mark)
    out = []
    for (start, end), mark in marks.items():
        css = "value flagged" if mark in flagged else ("value involved" if mark in involved else "value")
        css += " shaky" if mark in shaky else ""
        out.append(
            (
                start,
                end,
                f'<mark id="{mark}" class="{css}" data-at="{start}" data-paths="{escape(" ".join(paths.get(mark, [])))}">',
            )
        )
    for (start, end), item in missed.items():
        n, period = item.number, item.period
        if item.percent and item.unit != "pure":
            item.unit, item.scale = "pure", 0
        data = {
            "finding": item.finding,
            "start": n.start,
            "end": n.end,
            "text": n.text,
            "where": n.where,
            "unit": item.unit,
            "scale": item.scale,
            "award": item.award or "",
            "label": item.label,
            "percent": "1" if item.percent else "",
            "instant": period.instant if period and period.instant else "",
            "from": period.start if period and period.start else "",
            "to": period.end if period and period.end else "",
        }
        attributes = " ".join(f'data-{key}="{escape(str(value))}"' for key, value in data.items())
        out.append(
            (
                start,
                end,
                f'<mark id="{item.mark}" class="missed" data-at="{start}" title="not extracted: {escape(n.where)} '
                f'(click to add it)" {attributes}>',
            )
        )
    return sorted(out)


def _render(text: str, blocks: list[Block], spans: list[tuple[int, int, str]]) -> Markup:
    """The source pane: prose as text, tables as tables, every mark in place."""
    if len(text) > SOURCE_CHARS:
        return _excerpts(text, spans)
    starts = [s for s, _, _ in spans]
    parts: list[str] = []
    for block in blocks:
        if not block.table:
            parts.append(f'<div class="prose">{_inline(text, block.start, block.end, spans, starts)}</div>')
            continue
        parts.append('<table class="src">')
        line_start = block.start
        for line in text[block.start : block.end].splitlines(keepends=True):
            line_end = line_start + len(line.rstrip("\r\n"))
            parts.append("<tr>")
            cell_start = line_start
            for cell in text[line_start:line_end].split("\t"):
                cell_end = cell_start + len(cell)
                css = ' class="num"' if cell.strip()[:1] in "$(0123456789" and cell.strip() else ""
                parts.append(f"<td{css}>{_inline(text, cell_start, cell_end, spans, starts)}</td>")
                cell_start = cell_end + 1
            parts.append("</tr>")
            line_start += len(line)
        parts.append("</table>")
    return Markup("".join(parts))


def _inline(text: str, start: int, end: int, spans: list[tuple[int, int, str]], starts: list[int]) -> str:
    """The text from `start` to `end` with the marks lying wholly inside it; each piece knows its offset."""
    parts: list[str] = []
    at = start
    index = bisect_right(starts, start - 1)
    while index < len(spans) and spans[index][0] < end:
        mark_start, mark_end, tag = spans[index]
        index += 1
        if mark_start < at or mark_end > end:
            continue
        if mark_start > at:
            parts.append(f'<span data-at="{at}">{escape(text[at:mark_start])}</span>')
        parts.append(f"{tag}{escape(text[mark_start:mark_end])}</mark>")
        at = mark_end
    if at < end:
        parts.append(f'<span data-at="{at}">{escape(text[at:end])}</span>')
    return "".join(parts)


def _excerpts(text: str, spans: list[tuple[int, int, str]]) -> Markup:
    """A source too long to show whole: the marks with the text around them, gaps said in their place."""
    parts: list[str] = ['<div class="prose">']
    at = 0
    for start, end, tag in spans:
        if start < at:
            continue
        parts.append(_between(text, at, start))
        parts.append(f"{tag}{_between(text, start, end)}</mark>")
        at = end
    parts.append(_between(text, at, len(text)))
    parts.append("</div>")
    return Markup("".join(parts))


def _between(text: str, start: int, end: int) -> str:
    """The escaped text from `start` to `end` (between two marks), in an excerpted source only its
    edges: the text before the first mark shows its end, the text after the last its beginning, a
    source with no mark its first lines."""
    if end - start <= 2 * CONTEXT_CHARS:
        return f'<span data-at="{start}">{escape(text[start:end])}</span>' if end > start else ""
    head = 0 if start == 0 and end < len(text) else CONTEXT_CHARS
    tail = CONTEXT_CHARS if end < len(text) else 0
    gap = f'<span class="elided">[… {end - start - head - tail:,} characters not shown: the document is too long to show whole …]</span>'
    return (
        f'<span data-at="{start}">{escape(text[start : start + head])}</span>'
        + gap
        + f'<span data-at="{end - tail}">{escape(text[end - tail : end])}</span>'
    )


def _sentence_period(text: str, at: int) -> Period | None:
    """The last date the sentence names before offset `at`: 'As of December 31, 2024' is an instant,
    'year ended December 31, 2024' a year's flow. None when it names none."""
    line_start = text.rfind("\n", 0, at) + 1
    sentence_start = max(line_start, text.rfind(". ", line_start, at) + 1)
    found = find_dates(text[sentence_start:at])
    if not found:
        return None
    day, start, _ = found[-1]
    start += sentence_start
    if re.search(r"\bend(?:ed|ing)\b", text[max(sentence_start, start - 45) : start], re.IGNORECASE):
        return Period(
            start=date(day.year - 1, day.month, day.day) + timedelta(days=1)
            if (day.month, day.day) != (2, 29)
            else None,
            end=day,
        )
    return Period(instant=day)
