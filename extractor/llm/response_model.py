"""The schema as the LLM fills it: every Amount becomes a QuotedAmount (printed text + verbatim quote).

Derived from the schema, not written twice: a model cannot be trusted with offsets or with scaling,
so it copies what it reads and the code computes values and finds spans (see `resolve`).
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from types import UnionType
from typing import Any, Literal

from instructor import OpenAISchema
from pydantic import BaseModel, Field, create_model
from pydantic_core import PydanticUndefined

from schemas.values import Amount, Period, Unit


class QuotedAmount(BaseModel):
    """One number as the model read it."""

    printed: str = Field(description="The number exactly as printed: '6,994', '(2,413)', '26.8%', '59.44', 'ten'.")
    quote: str = Field(
        description="Verbatim source of the number. Table cell: 'row label | cell as printed' (e.g. 'Granted | 1,601'). "
        "Sentence: five to fifteen words around the number, copied exactly."
    )
    unit: Unit
    scale: Literal[0, 3, 6, 9] = Field(default=0, description="3 if the table or sentence says 'in thousands', 6 for millions, 9 for billions, else 0.")
    period: Period


@functools.cache
def quoted_view(model: type[BaseModel], only: frozenset[str] | None = None) -> type[BaseModel]:
    """`model` with Amount replaced by QuotedAmount at any depth; `only` keeps just those top-level fields.

    The view is a subclass of instructor's schema base: instructor then uses it as it is, with its
    cached JSON schema, instead of wrapping it in a new class and building the schema per request.
    """
    return _view(model, only, OpenAISchema)


@functools.cache
def _view(model: type[BaseModel], only: frozenset[str] | None, base: type[BaseModel]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if only is not None and name not in only:
            continue
        default: Any = info.default if info.default is not PydanticUndefined else ...
        if info.default_factory is not None:
            fields[name] = (_swap(info.annotation), Field(default_factory=info.default_factory, description=info.description))
        else:
            fields[name] = (_swap(info.annotation), Field(default, description=info.description))
    return create_model(model.__name__, __doc__=model.__doc__, __base__=base, **fields)


def _swap(annotation: Any) -> Any:
    if annotation is Amount:
        return QuotedAmount
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _view(annotation, None, BaseModel)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return list[_swap(args[0])]  # type: ignore[misc]
    if origin in (typing.Union, UnionType):
        return typing.Union[tuple(_swap(arg) for arg in args)]  # noqa: UP007
    return annotation


Resolver = Callable[[QuotedAmount, str, bool], "Amount | None"]


def to_schema(answer: BaseModel, target: type[BaseModel], resolve: Resolver) -> BaseModel:
    """Rebuild `target` from a quoted answer; `resolve(quoted, path, signed)` turns each number into an Amount.

    `signed` is true inside an object whose `kind` is 'adjustment' (the one place a printed sign is kept).
    """
    return target.model_validate(_plain(answer, "", resolve))


def _plain(value: Any, path: str, resolve: Resolver, signed: bool = False) -> Any:
    if isinstance(value, QuotedAmount):
        return resolve(value, path, signed)
    if isinstance(value, BaseModel):
        adjusting = getattr(value, "kind", None) == "adjustment"
        items = ((name, getattr(value, name)) for name in type(value).model_fields)
        return {name: _plain(item, f"{path}.{name}".lstrip("."), resolve, adjusting) for name, item in items}
    if isinstance(value, list):
        return [_plain(item, f"{path}[{index}]", resolve, signed) for index, item in enumerate(value)]
    return value
