"""Merge schema instances read from overlapping chunks of one note, resolving duplicates.

Objects in a list are the same object when their identifying fields agree (award, basis, kind,
label, fiscal year, line item: every field that is not an amount, an object or a list) and their
own amounts are dated alike. Two values
for the same number keep the first and record the disagreement, so nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel

from extractor.schemas.values import Amount

M = TypeVar("M", bound=BaseModel)


def merge(first: M, second: BaseModel, conflicts: list[str], path: str = "") -> M:
    """`first` completed by `second`; disagreements on a number are appended to `conflicts`."""
    update: dict[str, Any] = {}
    for name in type(first).model_fields:
        here = f"{path}.{name}".lstrip(".")
        a, b = getattr(first, name), getattr(second, name)
        if a is None or a == [] or a == "":
            update[name] = b
        elif isinstance(a, Amount) and isinstance(b, Amount):
            if a.source is None and b.source is not None and a.value == b.value:
                update[name] = b  # the same number, grounded
            elif a.value != b.value or a.period != b.period:
                conflicts.append(f"{here}: {a.value} kept, {b.value} from a later part of the note set aside")
        elif isinstance(a, BaseModel) and isinstance(b, BaseModel):
            update[name] = merge(a, b, conflicts, here)
        elif isinstance(a, list) and isinstance(b, list):
            update[name] = _merge_lists(a, b, conflicts, here)
    return first.model_copy(update=update)


def _identity(item: Any) -> Any:
    """Identifying fields, plus the dates of the object's own amounts: two 'Granted' rows of one
    roll-forward differ only by the year their numbers belong to."""
    if not isinstance(item, BaseModel):
        return item
    values = [getattr(item, name) for name in type(item).model_fields]
    scalars = tuple(v for v in values if not isinstance(v, (BaseModel, list)) and v is not None)
    dates = tuple(sorted({v.period.end_date for v in values if isinstance(v, Amount)}))
    return scalars, dates


def _merge_lists(first: list[Any], second: list[Any], conflicts: list[str], path: str) -> list[Any]:
    merged = list(first)
    where = {_identity(item): index for index, item in enumerate(merged)}
    for item in second:
        key = _identity(item)
        if key not in where:
            where[key] = len(merged)
            merged.append(item)
        elif isinstance(item, BaseModel):
            index = where[key]
            merged[index] = merge(merged[index], item, conflicts, f"{path}[{index}]")
    return merged


def merge_all(parts: list[M], conflicts: list[str]) -> M:
    result = parts[0]
    for part in parts[1:]:
        result = merge(result, part, conflicts)
    return result


def amounts(value: Any) -> Iterator[Amount]:
    """Every Amount inside `value`, at any depth."""
    if isinstance(value, Amount):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from amounts(getattr(value, name))
    elif isinstance(value, list):
        for item in value:
            yield from amounts(item)


def prune(model: M, drop: Callable[[Amount], bool]) -> M | None:
    """`model` without the amounts `drop` picks. An object that loses a required amount, or in a list is
    left with none, goes too (None for `model` itself): no row of labels without numbers is kept."""
    update: dict[str, Any] = {}
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, (Amount, BaseModel)):
            kept = _kept(value, drop)
            if kept is None and info.is_required():
                return None
            update[name] = kept
        elif isinstance(value, list):
            update[name] = [kept for item in value if (kept := _kept(item, drop)) is not None]
    return model.model_copy(update=update)


def _kept(value: Any, drop: Callable[[Amount], bool]) -> Any:
    if isinstance(value, Amount):
        return None if drop(value) else value
    if not isinstance(value, BaseModel):
        return value
    kept = prune(value, drop)
    emptied = kept is not None and next(amounts(value), None) is not None and next(amounts(kept), None) is None
    return None if emptied else kept
