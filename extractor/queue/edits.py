"""A reviewer's corrections, applied to an extraction by field name.

Field names are schema paths plus what is edited, the same in the review page's form, in
`queue resolve --set` and in the audit log:

    award_activity[0].rows[3].count.value       a number, in base units (shares, dollars, fractions)
    award_activity[0].rows[3].count.unit        shares, USD, USD/share, pure, years
    award_activity[0].rows[3].count.period.end  an ISO date (or .instant, .start; empty clears it)
    award_activity[0].award                     the award type of a whole table or group
    award_activity[0].rows[3].count.span        re-point: 'START:END' offsets into the document text
    award_activity[0].rows[3].count.delete      '1' removes the value (a list entry whose amount it is goes too)
    add[0].concept, add[0].value, add[0].unit,  a fact the extractor missed, kept as a line item with its
    add[0].span, add[0].period.end, ...         span; see `extractor.queue.facts`

Edits of existing values apply first, then additions, then deletions from the last path back,
so one form's field names all mean what the page showed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from extractor.errors import ExtractorError
from extractor.extraction import Extraction
from extractor.queue.facts import added_line_item, number_span, typed_date, typed_number
from extractor.queue.store import Change
from extractor.regex_cache import regex
from extractor.schemas.concepts import iter_located_facts
from extractor.schemas.facts import Fact
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.schemas.values import Amount, AwardType, Unit

UNITS: tuple[str, ...] = get_args(Unit)
AWARD_TYPES: tuple[str, ...] = get_args(AwardType)
PERIOD_PARTS = ("instant", "start", "end")
_STEP_RE = regex(r"([a-z_]+)(?:\[(\d+)\])?")


class EditError(ExtractorError, ValueError):
    """Corrections that cannot be applied; the message lists each field and why."""


@dataclass(frozen=True)
class ValueField:
    """One extracted number as the review page shows it: where it is, what it means, its group's owner."""

    path: str  # 'award_activity[0].rows[3].count'
    owner: str | None  # the object carrying its award type ('award_activity[0]'), if any
    fact: Fact
    amount: Amount


def value_fields(note: StockCompensationNote) -> list[ValueField]:
    """Every number of the note, in schema order, with the path of the object holding its award type."""
    fields = []
    for path, fact in iter_located_facts(note):
        steps = path_steps(path)
        owner = None
        for cut in range(len(steps) - 1, 0, -1):  # the nearest enclosing object with an award field
            holder = _walk(note, steps[:cut])
            if isinstance(holder, BaseModel) and "award" in type(holder).model_fields:
                owner = _path(steps[:cut])
                break
        fields.append(ValueField(path, owner, fact, _walk(note, steps)))
    return fields


def group_key(value: ValueField) -> str:
    """The group a value is listed in: the object holding its award type, else the part of the note."""
    return value.owner or str(path_steps(value.path)[0])


def check_first(fields: list[ValueField]) -> list[ValueField]:
    """The values in list order, so row numbers follow it: groups holding a shaky value first, shaky
    values first in their group, otherwise the note's order (a note without LLM quotes is unchanged)."""

    def shaky(value: ValueField) -> bool:
        return value.amount.source is not None and value.amount.source.shaky

    first: dict[str, int] = {}
    for index, value in enumerate(fields):
        first.setdefault(group_key(value), index)
    loose = {group_key(value) for value in fields if shaky(value)}
    return sorted(
        fields, key=lambda value: (group_key(value) not in loose, first[group_key(value)], not shaky(value))
    )  # stable


def apply_edits(
    extraction: Extraction, submitted: Mapping[str, str], text: str | None = None
) -> tuple[Extraction, list[Change]]:
    """The extraction with the submitted fields set, facts added and values deleted, and what
    changed (validation not re-run here). `text` is the document's text: spans are checked against
    it, so re-pointing or adding needs it. Fields equal to the saved value are no change; EditError
    lists every field that cannot be set."""
    note = extraction.note.model_dump()
    changes: list[Change] = []
    problems: list[str] = []
    additions: dict[str, dict[str, str]] = {}
    deletions: list[str] = []
    for name, raw in submitted.items():
        value = raw.strip()
        if name.startswith("add["):
            index, _, part = name.partition("].")
            additions.setdefault(index + "]", {})[part] = value
            continue
        if name.endswith(".delete"):
            if value:
                deletions.append(name.removesuffix(".delete"))
            continue
        try:
            change = _span(note, name, value, text) if name.endswith(".span") else _apply(note, name, value)
        except (KeyError, IndexError, TypeError):
            problems.append(f"{name}: no such field in this extraction")
            continue
        except ValueError as error:
            problems.append(f"{name}: {error}")
            continue
        if change is not None:
            changes.append(change)
    for key, parts in sorted(additions.items(), key=lambda pair: _add_index(pair[0])):
        if not any(parts.values()):  # an empty row of the form: nothing to add
            continue
        try:
            item = added_line_item(parts, text)
        except ValueError as error:
            problems.append(f"{key}: {error}")
            continue
        note["line_items"].append(item.model_dump())
        changes.append(
            Change(f"line_items[{len(note['line_items']) - 1}]", "", describe(item.amount, item.concept, item.award))
        )
    for path in sorted(set(deletions), key=path_steps, reverse=True):  # last first: earlier list indexes stay valid
        try:
            changes.append(_delete(extraction.note, note, path))
        except (KeyError, IndexError, TypeError):
            problems.append(f"{path}.delete: no such value in this extraction")
    if problems:
        raise EditError("; ".join(problems))
    try:
        corrected = StockCompensationNote.model_validate(note)
    except ValidationError as error:
        first = error.errors()[0]
        where = _path(list(first["loc"]))
        raise EditError(f"{where}: {first['msg']}") from error
    return extraction.model_copy(update={"note": corrected, "validation": None}), changes


def _apply(note: dict[str, Any], name: str, text: str) -> Change | None:
    steps = path_steps(name)
    if steps[-1] == "award":
        owner = _walk(note, steps[:-1])
        if text and text not in AWARD_TYPES:
            raise ValueError(f"{text!r} is not an award type ({', '.join(AWARD_TYPES)})")
        return _set(owner, "award", text or None, name)
    if steps[-2:-1] == ["period"] and steps[-1] in PERIOD_PARTS:
        period = _walk(note, steps[:-1])
        return _set(period, str(steps[-1]), typed_date(text) if text else None, name)
    amount = _walk(note, steps[:-1])
    if not isinstance(amount, dict) or "value" not in amount:
        raise KeyError(name)
    if steps[-1] == "value":
        return _set(amount, "value", typed_number(text), name)
    if steps[-1] == "unit":
        if text not in UNITS:
            raise ValueError(f"{text!r} is not a unit ({', '.join(UNITS)})")
        return _set(amount, "unit", text, name)
    raise KeyError(name)


def _span(note: dict[str, Any], name: str, value: str, text: str | None) -> Change | None:
    """Re-point a value at another printed number: the span narrows to the number inside the selection."""
    amount = _walk(note, path_steps(name.removesuffix(".span")))
    if not isinstance(amount, dict) or "value" not in amount:
        raise KeyError(name)
    before = amount.get("source")
    if not value or (before and value == f"{before['start']}:{before['end']}"):  # the form sends every value's span
        return None
    start, end = number_span(value, text)
    if before and (before["start"], before["end"]) == (start, end):
        return None
    assert text is not None  # number_span refuses a missing text
    amount["source"] = {"start": start, "end": end, "text": text[start:end]}
    return Change(name, _span_words(before), _span_words(amount["source"]))


def _delete(model: StockCompensationNote, note: dict[str, Any], path: str) -> Change:
    """Remove one value: an optional amount becomes empty; a list entry that exists for its amount
    (an expense line, a line item) leaves its list."""
    steps = path_steps(path)
    owner = _walk(model, steps[:-1])
    name = steps[-1]
    if not isinstance(owner, BaseModel) or not isinstance(name, str) or not isinstance(getattr(owner, name), Amount):
        raise KeyError(path)
    amount: Amount = getattr(owner, name)
    before = describe(amount)
    if type(owner).model_fields[name].is_required():
        if not isinstance(steps[-2], int):
            raise KeyError(path)
        del _walk(note, steps[:-2])[steps[-2]]
    else:
        _walk(note, steps[:-1])[name] = None
    return Change(f"{path}.delete", before, "")


def describe(amount: Amount, concept: str | None = None, award: str | None = None) -> str:
    """One value in a line of the audit log: what, how much, when, where printed."""
    period = amount.period
    when = f"at {period.instant}" if period.instant else f"{period.start or '…'} to {period.end}"
    head = f"{concept} " if concept else ""
    head += f"[{award}] " if award else ""
    return f"{head}{_shown(amount.value)} {amount.unit} {when} @{_span_words(amount.source.model_dump() if amount.source else None)}"


def _span_words(source: dict[str, Any] | None) -> str:
    return f"{source['start']}:{source['end']} '{source['text']}'" if source else "no span"


def _add_index(key: str) -> int:
    digits = key.removeprefix("add[").removesuffix("]")
    return int(digits) if digits.isdigit() else 1 << 30


def _set(holder: dict[str, Any], key: str, value: Any, name: str) -> Change | None:
    before = holder[key]
    if before == value:
        return None
    holder[key] = value
    return Change(name, _shown(before), _shown(value))


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def path_steps(path: str) -> list[str | int]:
    """'award_activity[0].rows[3].count' -> ['award_activity', 0, 'rows', 3, 'count'] (KeyError if malformed)."""
    steps: list[str | int] = []
    for part in path.split("."):
        match = _STEP_RE.fullmatch(part)
        if match is None:
            raise KeyError(path)
        steps.append(match.group(1))
        if match.group(2) is not None:
            steps.append(int(match.group(2)))
    return steps


def _walk(root: Any, steps: list[str | int]) -> Any:
    node = root
    for step in steps:
        if isinstance(step, int) or isinstance(node, dict):
            node = node[step]
        else:
            node = getattr(node, step)
    if node is None:
        raise KeyError(_path(steps))
    return node


def _path(steps: list[Any]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out
