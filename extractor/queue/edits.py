"""A reviewer's corrections, applied to an extraction by field name.

Field names are schema paths plus what is edited, the same in the review page's form, in
`queue resolve --set` and in the audit log:

    award_activity[0].rows[3].count.value       a number, in base units (shares, dollars, fractions)
    award_activity[0].rows[3].count.unit        shares, USD, USD/share, pure, years
    award_activity[0].rows[3].count.period.end  an ISO date (or .instant, .start; empty clears it)
    award_activity[0].award                     the award type of a whole table or group
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from extractor.extraction import Extraction
from extractor.queue.store import Change
from schemas.concepts import iter_located_facts
from schemas.facts import Fact
from schemas.stock_compensation import StockCompensationNote
from schemas.values import Amount, AwardType, Unit

UNITS: tuple[str, ...] = get_args(Unit)
AWARD_TYPES: tuple[str, ...] = get_args(AwardType)
PERIOD_PARTS = ("instant", "start", "end")
MAX_EXPONENT = 24
_STEP_RE = re.compile(r"([a-z_]+)(?:\[(\d+)\])?")


class EditError(ValueError):
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


def apply_edits(extraction: Extraction, submitted: Mapping[str, str]) -> tuple[Extraction, list[Change]]:
    """The extraction with the submitted fields set, and what changed (validation not re-run here).
    Fields equal to the saved value are no change; EditError lists every field that cannot be set."""
    note = extraction.note.model_dump()
    changes: list[Change] = []
    problems: list[str] = []
    for name, raw in submitted.items():
        text = raw.strip()
        try:
            change = _apply(note, name, text)
        except (KeyError, IndexError, TypeError):
            problems.append(f"{name}: no such field in this extraction")
            continue
        except ValueError as error:
            problems.append(f"{name}: {error}")
            continue
        if change is not None:
            changes.append(change)
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
        return _set(period, str(steps[-1]), _date(text) if text else None, name)
    amount = _walk(note, steps[:-1])
    if not isinstance(amount, dict) or "value" not in amount:
        raise KeyError(name)
    if steps[-1] == "value":
        return _set(amount, "value", _number(text), name)
    if steps[-1] == "unit":
        if text not in UNITS:
            raise ValueError(f"{text!r} is not a unit ({', '.join(UNITS)})")
        return _set(amount, "unit", text, name)
    raise KeyError(name)


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


def _number(text: str) -> Decimal:
    cleaned = text.replace(",", "").replace("_", "").replace(" ", "")
    if cleaned.startswith("(") and cleaned.endswith(")"):
        cleaned = "-" + cleaned[1:-1]
    try:
        number = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{text!r} is not a number")
    if number and not -MAX_EXPONENT <= number.adjusted() <= MAX_EXPONENT:
        raise ValueError(f"{text!r} is out of range (no amount in a filing has more than {MAX_EXPONENT} digits)")
    return number


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)") from None


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
        if isinstance(step, int):
            node = node[step]
        elif isinstance(node, dict):
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
