"""The schema as the LLM fills it: every Amount becomes a QuotedAmount (printed text + verbatim quote).

Derived from the schema, not written twice: a model cannot be trusted with offsets or with scaling,
so it copies what it reads and the code computes values and finds spans (see `resolve`).
"""

from __future__ import annotations

import copy
import functools
import typing
import weakref
from collections.abc import Callable
from types import UnionType
from typing import Any, Literal, TypedDict

from instructor import OpenAISchema
from pydantic import BaseModel, Field, create_model, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticUndefined

from extractor.schemas.values import Amount, Period, Unit

# Views built and kept for reuse. Whole-note views repeat (one per set of parts); block views are one per
# block of one document, so an unbounded cache would grow with every document of a bulk run.
VIEW_CACHE = 512


class QuotedAmount(BaseModel):
    """One number as the model read it."""

    printed: str = Field(description="The number exactly as printed: '6,994', '(2,413)', '26.8%', '59.44', 'ten'.")
    quote: str = Field(
        description="Verbatim source of the number. Table cell: 'row label | cell as printed' (e.g. 'Granted | 1,601'). "
        "Sentence: five to fifteen words around the number, copied exactly."
    )
    unit: Unit
    scale: Literal[0, 3, 6, 9] = Field(
        default=0, description="3 if the table or sentence says 'in thousands', 6 for millions, 9 for billions, else 0."
    )
    period: Period


class CellAmount(QuotedAmount):
    """A QuotedAmount whose quote is chosen from the block's numbers (constrained decoding makes it one of
    them); `printed` is then read off the quote, so the model cannot write a number the block lacks."""

    printed: SkipJsonSchema[str] = ""

    @model_validator(mode="after")
    def _printed_from_quote(self) -> CellAmount:
        if not self.printed:  # a cell quote ends in the cell; a sentence quote in the number
            _, bar, cell = self.quote.rpartition("|")
            self.printed = cell.strip() if bar else self.quote.split()[-1]
        return self


@functools.lru_cache(maxsize=VIEW_CACHE)
def cell_amount(quotes: tuple[str, ...]) -> type[QuotedAmount]:
    """CellAmount with `quote` limited to `quotes` (JSON schema enum)."""
    quote_type: Any = Literal[quotes]
    return create_model(
        "CellAmount",
        __base__=CellAmount,
        quote=(quote_type, Field(description="The number to take, with its row label or the words before it.")),
    )


class AnswerSchema(OpenAISchema):
    """The base of a whole answer's view: instructor's schema base, its JSON schema built once per view.

    In json_schema, json and md_json modes instructor asks the response model for its JSON schema on every
    request: ~7 ms of CPU for the note's view, half of a document's work in a bulk worker. A view never
    changes, so the schema is built once and each caller gets its own copy (0.3 ms)."""

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        built = _schemas.setdefault(cls, {})
        key = (args, tuple(sorted(kwargs.items())))
        if key not in built:
            built[key] = super().model_json_schema(*args, **kwargs)
        return copy.deepcopy(built[key])


# view -> (arguments -> its JSON schema); a block's view goes with its block
_schemas: weakref.WeakKeyDictionary[type, dict[tuple[Any, ...], dict[str, Any]]] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=VIEW_CACHE)
def quoted_view(
    model: type[BaseModel],
    only: frozenset[str] | None = None,
    max_items: int | None = None,
    quotes: tuple[str, ...] | None = None,
) -> type[AnswerSchema]:
    """`model` with Amount replaced by QuotedAmount at any depth; `only` keeps just those top-level fields;
    `max_items` caps every list (JSON schema maxItems, which constrained decoding enforces: a small model
    asked about a six-row table cannot write sixty rows); `quotes` limits every quote to those strings
    (a block's numbers: the model picks where each value is printed instead of writing it).

    The view is a subclass of instructor's schema base: instructor then uses it as it is, with its
    cached JSON schema, instead of wrapping it in a new class and building the schema per request
    (AnswerSchema keeps it in the modes where instructor does not).
    """
    view = _view(model, only, AnswerSchema, max_items, cell_amount(quotes) if quotes else QuotedAmount)
    return typing.cast("type[AnswerSchema]", view)


class _ListBound(TypedDict, total=False):
    max_length: int  # a list field's JSON schema maxItems


@functools.lru_cache(maxsize=VIEW_CACHE)
def _view(
    model: type[BaseModel],
    only: frozenset[str] | None,
    base: type[BaseModel],
    max_items: int | None = None,
    amount: type[QuotedAmount] = QuotedAmount,
) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if only is not None and name not in only:
            continue
        default: Any = info.default if info.default is not PydanticUndefined else ...
        annotation = _swap(info.annotation, max_items, amount)
        bound: _ListBound = (
            {"max_length": max_items} if max_items is not None and typing.get_origin(annotation) is list else {}
        )
        if info.default_factory is not None:
            fields[name] = (
                annotation,
                Field(default_factory=info.default_factory, description=info.description, **bound),
            )
        else:
            fields[name] = (annotation, Field(default, description=info.description, **bound))
    return create_model(model.__name__, __doc__=model.__doc__, __base__=base, **fields)


def _swap(annotation: Any, max_items: int | None = None, amount: type[QuotedAmount] = QuotedAmount) -> Any:
    if annotation is Amount:
        return amount
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _view(annotation, None, BaseModel, max_items, amount)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return list[_swap(args[0], max_items, amount)]  # type: ignore[misc]
    if origin in (typing.Union, UnionType):
        return typing.Union[tuple(_swap(arg, max_items, amount) for arg in args)]  # noqa: UP007
    return annotation


Resolver = Callable[[QuotedAmount, str, bool], "Amount | None"]


def to_schema(answer: BaseModel, target: type[BaseModel], resolve: Resolver) -> BaseModel:
    """Rebuild `target` from a quoted answer; `resolve(quoted, path, signed)` turns each number into an Amount.

    `signed` is true inside an object whose `kind` is 'adjustment' (the one place a printed sign is kept).
    """
    return target.model_validate(_plain(answer, "", resolve))


def _plain(value: Any, path: str, resolve: Resolver, signed: bool = False) -> Any:
    """Models as dicts and numbers resolved, at any depth; a plain value (text, a date, None) is kept as it is,
    without building its path (most of an answer's fields)."""
    if isinstance(value, QuotedAmount):
        return resolve(value, path, signed)
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        # getattr with a default costs more: pydantic raises an AttributeError first on a model without it
        adjusting = "kind" in fields and getattr(value, "kind") == "adjustment"  # noqa: B009
        plain = {}
        for name in fields:
            item = getattr(value, name)
            nested = isinstance(item, (BaseModel, list))
            plain[name] = _plain(item, f"{path}.{name}" if path else name, resolve, adjusting) if nested else item
        return plain
    if isinstance(value, list):
        return [_plain(item, f"{path}[{index}]", resolve, signed) for index, item in enumerate(value)]
    return value
