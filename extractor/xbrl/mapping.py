"""From the taxonomy's terms to gold's: which concepts are in scope, and what a context's axes mean
as dims (award type, income-statement line, range bound, future year), following
evals/gold/README.md. None means gold has no key for it, and the caller counts why."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from functools import lru_cache
from typing import Literal

from lxml import etree

from extractor.regex_cache import regex
from extractor.schemas import concepts as schema_concepts
from extractor.xbrl.instance import Context, local

# Concepts concepts.md lists that no schema field carries (schemas/concepts.py spells the rest).
_SCOPE_WITHOUT_FIELD = (
    "ShareBasedCompensation",
    "AllocatedShareBasedCompensationExpenseNetOfTax",
    "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
    "TreasuryStockSharesAcquired",
    "PaymentsForRepurchaseOfCommonStock",
    f"{schema_concepts.PL}PurchasePriceOfCommonStockPercent",
)
_CONCEPT_NAME = regex(r"(?:ext:)?[A-Z][A-Za-z0-9]{15,}")
_AWARD_HEADS = (schema_concepts.P, schema_concepts.PL, schema_concepts.PP, "ext:")
_STANDARD_AWARDS = {
    "EmployeeStockOptionMember": "option",
    "StockOptionMember": "option",
    "ShareBasedPaymentArrangementOptionMember": "option",
    "StockAppreciationRightsSARSMember": "sar",
    "RestrictedStockUnitsRSUMember": "rsu",
    "PerformanceSharesMember": "psu",
    "RestrictedStockMember": "restricted_stock",
    "EmployeeStockMember": "espp",
}
# Checked in order against the member name in lower-case words: the specific kinds of unit first.
_AWARD_KEYWORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (regex(pattern), award)
    for pattern, award in (
        (r"\bphantom\b", "other"),
        (r"\bmarket (?:stock|share)s? units?\b|\bmarket[ -]based\b|\bmsus?\b", "msu"),
        (r"\bdeferred (?:stock|share)s? units?\b|\bdsus?\b", "dsu"),
        (r"\bperformance\b|\bpsus?\b|\bpsas?\b", "psu"),
        (r"\brestricted (?:stock|share)s? units?\b|\brsus?\b|\b(?:stock|share)s? units?\b", "rsu"),
        (r"\brestricted (?:stock|share)s?\b|\brsas?\b", "restricted_stock"),
        (r"\bstock appreciation rights?\b|\bsars?\b", "sar"),
        (r"\bemployee stock purchase\b|\bstock purchase plans?\b|\bespps?\b", "espp"),
        (r"\boptions?\b", "option"),
    )
)
_YEAR_MEMBER = regex(r"(?:Fiscal)?Year(\d{4})Member|FY(\d{4})Member")


# --- scope -------------------------------------------------------------------------------------


def _concept_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        if _CONCEPT_NAME.fullmatch(value):
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _concept_strings(item)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _concept_strings(item)


@lru_cache(maxsize=1)
def _project_concepts() -> frozenset[str]:
    """Every concept name schemas/concepts.py spells (its mapping tables and constants)."""
    names: set[str] = set()
    for attribute, value in vars(schema_concepts).items():
        if attribute.startswith("_") or attribute in ("P", "PL", "PP", "CONCEPT_PREFIXES"):
            continue  # name heads, not concepts
        if isinstance(value, (str, dict, tuple, list, set, frozenset)):
            names.update(_concept_strings(value))
    return frozenset(names)


def in_scope_concepts() -> frozenset[str]:
    """US GAAP local names in scope: the schema's concepts plus concepts.md's few without a field."""
    return frozenset(n for n in _project_concepts() if not n.startswith("ext:")) | frozenset(_SCOPE_WITHOUT_FIELD)


def known_extension_concepts() -> frozenset[str]:
    """The `ext:` names the project uses: a company extension maps to one only by this exact name."""
    return frozenset(n for n in _project_concepts() if n.startswith("ext:"))


@lru_cache(maxsize=1)
def balances_by_convention() -> frozenset[str]:
    """Concepts the taxonomy types as durations but gold records as instants at the period end
    (gold/README.md: remaining terms are balances; plan terms and unrecognized cost take the
    instant of the fiscal year end)."""
    c = schema_concepts
    terms = {concept for (_, _, measure), concept in c.OPTION_ROWS.items() if measure == "remaining_term"}
    return frozenset(terms | set(c.PLAN.values()) | {c.UNRECOGNIZED, c.UNRECOGNIZED_PERIOD})


def namespace_kind(namespace: str) -> Literal["us-gaap", "standard", "extension"]:
    """us-gaap, another standard taxonomy (srt, dei: never in scope), or a company's own."""
    if re.match(r"https?://(?:www\.)?fasb\.org/us-gaap/", namespace):
        return "us-gaap"
    if re.match(r"https?://(?:[\w-]+\.)*(?:fasb\.org|xbrl\.sec\.gov|sec\.gov|xbrl\.org)/", namespace):
        return "standard"  # srt, dei, country, currency...: never stock compensation facts in scope
    return "extension"


def gold_concept(namespace: str, name: str) -> str | None:
    """The concept gold writes for a tagged element, or None when it is out of scope: us-gaap by
    its name, a company extension only under a known `ext:` name."""
    kind = namespace_kind(namespace)
    if kind == "us-gaap" and name in in_scope_concepts():
        return name
    if kind == "extension" and f"ext:{name}" in known_extension_concepts():
        return f"ext:{name}"
    return None


# --- dimensions --------------------------------------------------------------------------------


def _words(name: str) -> str:
    """'RestrictedStockUnitsRSUMember' -> 'restricted stock units rsu member'."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return re.sub(r"[_\W]+", " ", spaced).strip().lower()


def award_of_member(member: str) -> str:
    """dims.award of an AwardTypeAxis member (local name): the standard members by name, a
    company's own by keywords ('MarketStockUnitsMember' -> msu), anything else 'other'."""
    if member in _STANDARD_AWARDS:
        return _STANDARD_AWARDS[member]
    words = _words(member.removesuffix("Member"))
    return next((award for pattern, award in _AWARD_KEYWORDS if pattern.search(words)), "other")


def _family(concept: str) -> str:
    """The concept's name after the award prefixes: 'OptionsOutstandingNumber', 'EquityInstruments...'."""
    return next((concept.removeprefix(head) for head in _AWARD_HEADS if concept.startswith(head)), "")


def award_not_stated(concept: str, dims: dict[str, str]) -> bool:
    """A fact of a unit concept (RSU, PSU, DSU...) without an award: gold always gives one, but
    without the axis nobody can tell which, so it is kept and counted for people to see."""
    family = _family(concept)
    return "award" not in dims and family.startswith(
        ("EquityInstrumentsOtherThanOptions", "NonOptionEquityInstruments")
    )


def _fiscal_year_end(year: int, month_day: tuple[int, int]) -> date:
    month, day = month_day
    if month == 2 and day >= 28:  # "Feb. 29, 2020", "Feb. 28, 2019": the last day of February
        return date(year, 3, 1) - timedelta(days=1)
    return date(year, month, day)


def row_caption(element: etree._Element) -> str | None:
    """The first cell of the table row holding the fact, lower-cased: gold's line_item."""
    row = next((a for a in element.iterancestors() if isinstance(a.tag, str) and local(a.tag).lower() == "tr"), None)
    if row is None:
        return None
    first = next((c for c in row if isinstance(c.tag, str) and local(c.tag).lower() in ("td", "th")), None)
    if first is None or element in first.iter():
        return None
    caption = re.sub(r"[ \t\r\n\f\v\u00a0]+", " ", "".join(first.itertext())).strip().rstrip(":").strip()
    return caption.lower() if re.search(r"[A-Za-z]", caption) else None


def gold_dims(
    concept: str, context: Context, element: etree._Element | None, month_day: tuple[int, int] | None
) -> tuple[str, dict[str, str]] | None:
    """The concept (a range end may change it) and dims of a fact; None for a breakdown gold has
    no key for. `element` is the inline fact, whose table row names its income-statement line."""
    dims: dict[str, str] = {}
    bound: str | None = None
    for axis, member in context.members:
        axis_name, member_name = local(axis), local(member) if member else None
        if member_name is None:
            return None
        if axis_name == "AwardTypeAxis":
            dims["award"] = award_of_member(member_name)
        elif axis_name == "IncomeStatementLocationAxis":
            dims["line_item"] = (row_caption(element) if element is not None else None) or _words(
                member_name.removesuffix("Member")
            )
        elif axis_name == "RangeAxis" and member_name in ("MinimumMember", "MaximumMember"):
            bound = "min" if member_name == "MinimumMember" else "max"
        elif (year := _YEAR_MEMBER.fullmatch(member_name)) and month_day:
            dims["year"] = _fiscal_year_end(int(year.group(1) or year.group(2)), month_day).isoformat()
        else:
            return None
    if bound:
        suffix = "Minimum" if bound == "min" else "Maximum"
        base = re.sub(r"(?:Minimum|Maximum)$", "", concept)
        if f"{base}{suffix}" in in_scope_concepts():
            concept = f"{base}{suffix}"
        else:
            dims["bound"] = bound
    if "award" not in dims and _family(concept).startswith("Options"):
        dims = {"award": "option", **dims}  # the options roll-forward: gold always names the award
    return concept, dims
