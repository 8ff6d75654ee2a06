"""Words filings use for award types, roll-forward rows and table rows: data, not per-filing code.

The patterns live in schemas/lexicon/stock_compensation/tables.toml (one folder per schema); this module
loads them once and answers the questions the table mapper asks.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias, TypeVar, get_args

from extractor import schemas
from extractor.patterns import any_of, may_match, required_phrases, screen_text, union
from extractor.regex_cache import regex
from extractor.schemas.stock_compensation import RowKind
from extractor.schemas.values import AwardType, Unit
from extractor.tomlfile import parse_toml

LEXICON_DIR = Path(schemas.__file__).resolve().parent / "lexicon" / "stock_compensation"

AWARD_TYPES: tuple[AwardType, ...] = get_args(AwardType)
UNITS: tuple[Unit, ...] = get_args(Unit)
# A roll-forward row as the lexicon names it: 'balance' rows become beginning or ending by their place.
LexiconRowKind: TypeAlias = Literal["balance"] | RowKind
LEXICON_ROW_KINDS: tuple[LexiconRowKind, ...] = ("balance", *get_args(RowKind))

Name = TypeVar("Name", bound=str)


def known(value: str, allowed: tuple[Name, ...]) -> Name | None:
    """`value` as one of the names a schema field allows (typed as the schema names them); None if it is none."""
    return next((name for name in allowed if name == value), None)


def one_of(value: str, allowed: tuple[Name, ...], where: str) -> Name:
    """`value` as one of the names a schema field allows; a lexicon entry naming anything else fails at load."""
    name = known(value, allowed)
    if name is None:
        raise ValueError(f"{where}: {value!r} is not one of {', '.join(allowed)}")
    return name


def _load(name: str) -> dict:
    path = LEXICON_DIR / name
    return parse_toml(path, path.read_bytes().decode())  # as tomllib.load reads a file


def _compiled(entries: list[dict], key: str) -> list[tuple[str, re.Pattern[str]]]:
    return [(entry[key], regex(entry["pattern"], re.I)) for entry in entries]


class LineItemRule(NamedTuple):
    """A row label that names a number no typed field holds: its concept, unit and period kind."""

    concept: str
    pattern: re.Pattern[str]
    unit: Unit
    period: str  # instant | flow
    context: re.Pattern[str] | None = None  # the rule holds only where the label or table context says this
    table: bool = False  # the rule may name a whole table from its caption ('shares reserved ... as follows')


_TABLES = _load("tables.toml")
_WHERE = LEXICON_DIR / "tables.toml"
AWARD_PATTERNS: list[tuple[AwardType, re.Pattern[str]]] = [
    (one_of(award, AWARD_TYPES, f"{_WHERE} [[awards]]"), pattern)
    for award, pattern in _compiled(_TABLES["awards"], "award")
]
ROW_KINDS: list[tuple[LexiconRowKind, re.Pattern[str]]] = [
    (one_of(kind, LEXICON_ROW_KINDS, f"{_WHERE} [[row_kinds]]"), pattern)
    for kind, pattern in _compiled(_TABLES["row_kinds"], "kind")
]
YEAR_INFO_ROWS: list[tuple[str, re.Pattern[str]]] = _compiled(_TABLES["year_info"], "field")
ASSUMPTION_ROWS: list[tuple[str, re.Pattern[str]]] = _compiled(_TABLES["assumptions"], "field")
REPURCHASE_ROWS: list[tuple[str, re.Pattern[str]]] = _compiled(_TABLES["repurchases"], "field")
LINE_ITEMS: list[LineItemRule] = [
    LineItemRule(
        e["concept"],
        regex(e["pattern"], re.I),
        one_of(e["unit"], UNITS, f"{_WHERE} [[line_items]] {e['concept']}"),
        e["period"],
        regex(e["context"], re.I) if "context" in e else None,
        e.get("table", False),
    )
    for e in _TABLES["line_items"]
]
VALUATION_MODELS = regex(_TABLES["patterns"]["valuation_models"], re.I)
TOTAL_ROW = regex(_TABLES["patterns"]["total_row"], re.I)
EXPENSE_LINES = regex(_TABLES["patterns"]["expense_lines"], re.I)


# What each award pattern's matches contain (patterns.required_phrases): a text without it is not searched.
AWARD_PHRASES: list[tuple[str, ...]] = [required_phrases(pattern) for _, pattern in AWARD_PATTERNS]


@lru_cache(maxsize=4096)  # a note asks about its column headers, row labels and years again and again
def find_award(text: str | None) -> AwardType | None:
    """The award type a phrase names, most specific pattern first."""
    if not text:
        return None
    lowered = screen_text(text)
    for (award, pattern), phrases in zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True):
        if may_match(phrases, lowered) and pattern.search(text):
            return award
    return None


_NAMED_AWARDS = [(award, pattern) for award, pattern in AWARD_PATTERNS if award != "other"]
_NAMED_PHRASES = union(p for (award, _), p in zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True) if award != "other")
_ANY_NAMED_AWARD = any_of([pattern for _, pattern in _NAMED_AWARDS])


def first_award(text: str | None) -> AwardType | None:
    """The award type named earliest in a longer text (a caption sentence); at one place, the first in name order."""
    if not text:
        return None
    if not may_match(_NAMED_PHRASES, screen_text(text)):
        return None
    if _ANY_NAMED_AWARD is not None:  # one scan finds the earliest place any award is named
        first = _ANY_NAMED_AWARD.search(text)
        if first is None:
            return None
        return min(award for award, p in _NAMED_AWARDS if p.match(text, first.start()))
    hits = [(m.start(), award) for award, p in _NAMED_AWARDS for m in [p.search(text)] if m]
    return min(hits)[1] if hits else None


def named_awards(text: str | None) -> set[AwardType]:
    """Every award type a text names, each phrase counted once ('market stock units' is an MSU, not an RSU too)."""
    found: set[AwardType] = set()
    rest = text or ""
    lowered = screen_text(rest)
    for (award, pattern), phrases in zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True):
        if may_match(phrases, lowered) and pattern.search(rest):
            found.add(award)
            rest = pattern.sub(" ", rest)
            lowered = screen_text(rest)
    return found


UNIT_AWARDS = frozenset({"rsu", "psu", "msu", "dsu", "restricted_stock"})
_JOINED = regex(r"^(?:s|'s)?\s*(?:,|and|&|/|or)\s*(?:the\s+)?$", re.I)


def joined_award(text: str | None) -> AwardType | None:
    """The award class of one table over unit awards named together ('RSUs and PSUs', 'restricted stock
    units/performance share units'): the most specific of them, as a combined taxonomy member
    ('RestrictedStockUnitsAndPerformanceRestrictedStockUnitsMember') is classed."""
    spans: list[tuple[int, int, AwardType]] = []
    rest = text or ""
    lowered = screen_text(rest)
    for (award, pattern), phrases in zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True):
        if not may_match(phrases, lowered):
            continue  # no match: nothing to add or blank out
        for m in pattern.finditer(rest):
            spans.append((m.start(), m.end(), award))
        rest = pattern.sub(lambda m: " " * len(m.group()), rest)
        lowered = screen_text(rest)
    spans.sort()
    joined = {
        award
        for (_, end, first), (start, _, second) in pairwise(spans)
        if first != second and {first, second} <= UNIT_AWARDS and _JOINED.match(rest[end:start])
        for award in (first, second)
    }
    return next((award for award, _ in AWARD_PATTERNS if award in joined), None)


def row_kind(label: str) -> LexiconRowKind | None:
    for kind, pattern in ROW_KINDS:
        if pattern.search(label):
            return kind
    return None


_LINE_ITEM_PHRASES = [required_phrases(rule.pattern) for rule in LINE_ITEMS]  # a label without them is not searched


def line_item_rule(label: str, context: str = "") -> LineItemRule | None:
    """The line-item rule a row label matches, first in the lexicon's order (a rule with a context holds only
    where the label or the table's caption says it: 'Shares issued' is an ESPP purchase under an ESPP table)."""
    screened = screen_text(label)
    for rule, phrases in zip(LINE_ITEMS, _LINE_ITEM_PHRASES, strict=True):
        if (
            may_match(phrases, screened)
            and rule.pattern.search(label)
            and (rule.context is None or rule.context.search(f"{label} {context}"))
        ):
            return rule
    return None


def table_line_item_rule(caption: str) -> LineItemRule | None:
    """The rule a table's caption gives all its rows ('shares of common stock reserved ... are as follows')."""
    for rule in LINE_ITEMS:
        if rule.table and rule.pattern.search(caption):
            return rule
    return None


def match_first(label: str, table: list[tuple[str, re.Pattern[str]]]) -> str | None:
    for name, pattern in table:
        if pattern.search(label):
            return name
    return None
