"""Facts a reviewer adds: the concepts to choose from, and a line item built from what was typed.

A missed number becomes a `LineItem` of the note (concept, label, award, amount with its span):
the schema's place for numbers no typed field holds, which the facts format, the validator and
gold export already carry. Every added fact keeps its source span: a number nobody can find in
the filing is no gold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import get_args

from extractor.numbers import WORD_NUMBERS
from extractor.regex_cache import regex
from extractor.schemas import concepts as known
from extractor.schemas.concepts import concept_words
from extractor.schemas.stock_compensation import LineItem
from extractor.schemas.values import Amount, AwardType, Period, SourceSpan, Unit

UNITS: tuple[str, ...] = get_args(Unit)
AWARD_TYPES: tuple[str, ...] = get_args(AwardType)
CONCEPT_RE = regex(r"(?:ext:)?[A-Za-z][A-Za-z0-9]{2,200}")
DIGITS_RE = regex(r"\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+")
MAX_SPAN = 200  # a selection longer than this is no number
MAX_EXPONENT = 24  # no amount in a filing has more digits
EXTRA_CONCEPTS = (  # us-gaap names real notes print that no typed field holds (line items of the real suite's gold)
    "CommonStockCapitalSharesReservedForFutureIssuance",
    "SharesPaidForTaxWithholdingForShareBasedCompensation",
    "AdjustmentsToAdditionalPaidInCapitalSharebasedCompensationRequisiteServiceRecognizedValue",
    "SharebasedCompensationArrangementBySharebasedPaymentAwardAwardVestingRightsPercentage",
    "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
    "EmployeeServiceShareBasedCompensationAllocationOfRecognizedPeriodCostsCapitalizedAmount",
    "StockIssuedDuringPeriodSharesStockOptionsExercised",
    "CommonStockSharesAuthorized",
)


@dataclass(frozen=True)
class Concept:
    """A concept a reviewer may pick: its name, its words, and the unit its facts usually take."""

    name: str
    words: str
    unit: str


@cache
def schema_concepts() -> tuple[Concept, ...]:
    """Every concept the schema maps (roll-forward rows, per-year facts, assumptions, plan terms,
    expense, repurchases...), by their words: what the add-a-fact field searches."""
    names: set[str] = set()
    names.update(known.OPTION_ROWS.values(), known.OTHER_ROWS.values())
    names.update(name for pair in known.YEAR_INFO.values() for name in pair)
    names.update(name for name, _ in known.ASSUMPTIONS.values())
    for mapping in (known.PLAN, known.REPURCHASE_YEAR, known.REPURCHASES, known.PREFERRED):
        names.update(mapping.values())
    names.update((known.EXPENSE, known.UNRECOGNIZED, known.UNRECOGNIZED_PERIOD, known.CASH_SETTLEMENT))
    names.update(EXTRA_CONCEPTS)
    names.update(known._GROUP_OF)
    return tuple(sorted((Concept(n, concept_words(n), unit_of(n)) for n in names), key=lambda c: (c.words, c.name)))


def search_concepts(query: str, limit: int = 20) -> list[Concept]:
    """Concepts whose name or words hold every word of `query` (case-insensitive)."""
    words = query.lower().split()
    found = [c for c in schema_concepts() if all(w in c.words or w in c.name.lower() for w in words)]
    return found[:limit]


def unit_of(concept: str) -> str:
    """The unit a concept's facts take, guessed from its name: a starting point the reviewer can change."""
    tail = concept.removeprefix("ext:")
    if (
        re.search(r"Price|FairValue(?!Assumptions)|PerShare|CostPerShare|ParOrStated", tail)
        and "Total" not in tail
        and "VestedInPeriodFairValue" not in tail
    ):
        return "USD/share"
    if re.search(r"Rate|Percent", tail):
        return "pure"
    if re.search(r"Term|Period1$|VestingPeriod|ExpirationPeriod", tail):
        return "years"
    if re.search(r"Number|Shares|InPeriod$|InPeriodGross|GrantsInPeriod|Forfeited|VestedInPeriod$", tail):
        return "shares"
    return "USD"


def number_span(selected: str, text: str | None) -> tuple[int, int]:
    """'START:END' offsets of a selection, made the printed number it selects most of ('$ 1,234' -> '1,234';
    '23' of '2023' -> '2023')."""
    if text is None:
        raise ValueError("the document cannot be read, so no span can be checked against it")
    start_text, colon, end_text = selected.partition(":")
    if not (colon and start_text.isdigit() and end_text.isdigit()):
        raise ValueError(f"{selected!r} is not a span (START:END, offsets into the document text)")
    start, end = int(start_text), int(end_text)
    if not 0 <= start < end <= len(text):
        raise ValueError(f"{selected!r} is outside the document text (0:{len(text)})")
    if end - start > MAX_SPAN:
        raise ValueError(f"{selected!r} is {end - start} characters long: select the number only")
    reach = 30  # a selection that cut a number short takes the whole number
    overlapping = [
        m
        for m in DIGITS_RE.finditer(text, max(0, start - reach), min(len(text), end + reach))
        if m.start() < end and m.end() > start
    ]
    if not overlapping:
        word = text[start:end].strip()
        if word.lower() in WORD_NUMBERS:  # 'three' (years), 'No' (shares outstanding)
            at = text.index(word, start)
            return at, at + len(word)
        raise ValueError(f"{text[start:end]!r} holds no number")
    best = max(overlapping, key=lambda m: (min(end, m.end()) - max(start, m.start()), m.end() - m.start()))
    return best.start(), best.end()


def added_line_item(parts: Mapping[str, str], text: str | None) -> LineItem:
    """The line item a reviewer's 'add a fact' fields describe; ValueError naming what is wrong."""
    concept = parts.get("concept", "").strip()
    if not CONCEPT_RE.fullmatch(concept):
        raise ValueError(f"{concept!r} is not a concept (a us-gaap name such as {known.EXPENSE}, or ext:CamelCaseName)")
    unit = parts.get("unit", "")
    if unit not in UNITS:
        raise ValueError(f"{unit!r} is not a unit ({', '.join(UNITS)})")
    award = parts.get("award", "") or None
    if award is not None and award not in AWARD_TYPES:
        raise ValueError(f"{award!r} is not an award type ({', '.join(AWARD_TYPES)})")
    start, end = number_span(parts.get("span", ""), text)
    assert text is not None
    raw = parts.get("value", "")
    try:
        value = typed_number(raw)
    except ValueError as error:
        raise ValueError(f"value {error} (in base units: shares, dollars, fractions for percentages)") from None
    scale = int(parts["scale"]) if parts.get("scale", "").lstrip("-").isdigit() else 0
    # unit and award are checked against their vocabularies above; model_validate types them
    amount = Amount.model_validate(
        {
            "value": value,
            "unit": unit,
            "scale": scale,
            "period": _period(parts),
            "source": SourceSpan(start=start, end=end, text=text[start:end]),
        }
    )
    return LineItem.model_validate(
        {"concept": concept, "label": parts.get("label", "").strip(), "award": award, "amount": amount}
    )


def typed_number(text: str) -> Decimal:
    """A number a reviewer typed ("1,234", "(2,413)"), exactly; ValueError when it is none or out of range."""
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


def typed_date(text: str) -> date:
    """A date a reviewer typed, YYYY-MM-DD; ValueError otherwise."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _period(parts: Mapping[str, str]) -> Period:
    days = {}
    for key in ("instant", "start", "end"):
        raw = parts.get(f"period.{key}", "").strip()
        try:
            days[key] = typed_date(raw) if raw else None
        except ValueError as error:
            raise ValueError(f"period.{key} {error}") from None
    if (days["instant"] is None) == (days["end"] is None):
        raise ValueError(
            "give the period as a date (a balance: period.instant) or an end (a flow: period.end, with period.start)"
        )
    if days["instant"] is not None:
        return Period(instant=days["instant"])
    return Period(start=days["start"], end=days["end"])
