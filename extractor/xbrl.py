"""Gold facts from XBRL: an instance (.xml) or an inline XBRL filing (.htm) read into the facts format.

A filer's own XBRL tags say what each number is, so an XBRL filing yields gold for an eval suite
without hand labeling. The tags follow the taxonomy, the gold follows gold/README.md; this module
translates between the two and reports (never silently drops) what it cannot translate:

    result = read_gold(Path("filing.htm"))
    result.facts          # list[Fact], one per (concept, period end, dims), sources into load(path).text
    result.skipped        # Counter: why tagged facts were left out

    from extractor.xbrl import read_gold, write_facts
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Literal

from lxml import etree

from extractor.document import LoadError
from extractor.loaders import load
from extractor.numbers import WORD_NUMBERS, parse_number, parse_word_number
from schemas import concepts as schema_concepts
from schemas.facts import Fact
from schemas.values import Period, SourceSpan, Unit

__all__ = [
    "GoldFacts",
    "XbrlError",
    "award_of_member",
    "duration_years",
    "in_scope_concepts",
    "ix_number",
    "known_extension_concepts",
    "read_gold",
    "write_facts",
]

IX_NAMESPACES = ("http://www.xbrl.org/2013/inlineXBRL", "http://www.xbrl.org/2008/inlineXBRL")
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
ISO4217 = "http://www.xbrl.org/2003/iso4217"

# Why a tagged fact is not in the output; the keys are what reports print.
OUT_OF_SCOPE = "out of scope"
UNKNOWN_EXTENSION = "unknown extension"
OTHER_DIMENSIONS = "other dimensions"
UNSUPPORTED_UNIT = "unsupported unit"
UNREADABLE = "unreadable value"
NIL = "nil"
NO_PERIOD = "no dated period"

# Concepts concepts.md lists that no schema field carries (schemas/concepts.py spells the rest).
_SCOPE_WITHOUT_FIELD = (
    "ShareBasedCompensation",
    "AllocatedShareBasedCompensationExpenseNetOfTax",
    "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
    "TreasuryStockSharesAcquired",
    "PaymentsForRepurchaseOfCommonStock",
    f"{schema_concepts.PL}PurchasePriceOfCommonStockPercent",
)
_CONCEPT_NAME = re.compile(r"(?:ext:)?[A-Z][A-Za-z0-9]{15,}")


class XbrlError(Exception):
    """A file that cannot be read as XBRL; the message names the file and the problem."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


@dataclass
class GoldFacts:
    """What one XBRL file yields: the facts, and an account of every tagged fact left out."""

    path: str
    kind: Literal["instance", "inline"]
    facts: list[Fact]
    tagged: int = 0  # XBRL facts in the file
    duplicates: int = 0  # printings merged into another printing of the same fact
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> count
    skipped_concepts: dict[str, Counter[str]] = field(default_factory=dict)  # reason -> element names
    without_source: int = 0  # inline facts left without a span: hidden, not found, or printed as no number

    def skip(self, reason: str, name: str) -> None:
        self.skipped[reason] += 1
        self.skipped_concepts.setdefault(reason, Counter())[name] += 1

    def summary(self) -> str:
        """One line for people: written, skipped by reason, ungrounded."""
        out_of_scope = self.skipped[OUT_OF_SCOPE] + self.skipped[UNKNOWN_EXTENSION]
        other = sum(n for reason, n in self.skipped.items() if reason not in (OUT_OF_SCOPE, UNKNOWN_EXTENSION, OTHER_DIMENSIONS))
        parts = [
            f"{len(self.facts)} facts from {self.tagged} tagged ({self.duplicates} duplicate printings merged)",
            f"skipped {out_of_scope} out of scope ({self.skipped[UNKNOWN_EXTENSION]} unknown extensions)",
            f"{self.skipped[OTHER_DIMENSIONS]} with other dimensions",
        ]
        if other:
            parts.append(f"{other} unreadable (unit, nil, period or format)")
        parts.append(f"{self.without_source} without source" if self.kind == "inline" else "no sources (plain instance)")
        return "; ".join(parts)


@dataclass(frozen=True)
class _Context:
    id: str
    period: Period | None  # None for a 'forever' period: nothing gold can date
    members: tuple[tuple[str, str | None], ...]  # (axis "{ns}local", member "{ns}local" or None if typed)


@dataclass(frozen=True)
class _Tagged:
    """One XBRL fact as tagged, before translation."""

    element: etree._Element
    namespace: str
    name: str
    context_ref: str
    unit_ref: str | None
    numeric: bool


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
def _balances_by_convention() -> frozenset[str]:
    """Concepts the taxonomy types as durations but gold records as instants at the period end
    (gold/README.md: remaining terms are balances; plan terms and unrecognized cost take the
    instant of the fiscal year end)."""
    c = schema_concepts
    terms = {concept for (_, _, measure), concept in c.OPTION_ROWS.items() if measure == "remaining_term"}
    return frozenset(terms | set(c.PLAN.values()) | {c.UNRECOGNIZED, c.UNRECOGNIZED_PERIOD})


# --- dimensions --------------------------------------------------------------------------------

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
    (re.compile(pattern), award)
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
_YEAR_MEMBER = re.compile(r"(?:Fiscal)?Year(\d{4})Member|FY(\d{4})Member")


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


def _line_item_of_member(member: str) -> str:
    return _words(member.removesuffix("Member"))


def _local(clark: str) -> str:
    return clark.rsplit("}", 1)[-1]


def _fiscal_year_end(year: int, month_day: tuple[int, int]) -> date:
    month, day = month_day
    if month == 2 and day >= 28:  # "Feb. 29, 2020", "Feb. 28, 2019": the last day of February
        return date(year, 3, 1) - timedelta(days=1)
    return date(year, month, day)


# --- numbers -----------------------------------------------------------------------------------

_WORDS = {**WORD_NUMBERS, "thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18,
          "nineteen": 19, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "a": 1, "an": 1}
_DURATION_UNITS = {"year": Decimal(1), "years": Decimal(1), "month": Decimal(12), "months": Decimal(12),
                   "week": Decimal("52.1775"), "weeks": Decimal("52.1775"), "day": Decimal("365.25"), "days": Decimal("365.25")}
_ISO_DURATION = re.compile(
    r"(?P<neg>-)?P(?:(?P<y>\d+(?:\.\d+)?)Y)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<w>\d+(?:\.\d+)?)W)?"
    r"(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:\d+(?:\.\d+)?[HMS])*)?"
)
_DAY_IN_YEARS = Decimal(1) / Decimal("365.25")
_ZERO_FORMATS = frozenset({"zerodash", "fixedzero", "fixedzeroes", "nocontent", "fixedempty"})
_DOT_FORMATS = frozenset({"numdotdecimal", "numcommadot", "numspacedot", "numdotdecimalin", "numunitdecimal", "numdotdecimalapos"})
_COMMA_FORMATS = frozenset({"numcommadecimal", "numdotcomma", "numspacecomma", "numcommadecimalapos"})
_DURATION_FORMATS = frozenset({"duryear", "durmonth", "durday", "durweek", "durwordsen", "durhour"})


def _format_key(fmt: str | None) -> str:
    """'ixt:num-dot-decimal', 'ixt:numdotdecimal', 'ixt-sec:numwordsen' -> 'numdotdecimal', 'numwordsen'."""
    return (fmt or "").rsplit(":", 1)[-1].replace("-", "").lower()


def _round_years(years: Decimal) -> Decimal:
    """The fewest decimals (up to 3) that stay within a day: P4Y3M18D -> 4.3, P5Y3M -> 5.25.

    Filers turn "4.3 years" into P4Y3M18D by 30-day months, so an exact conversion would show
    digits nobody printed."""
    for places in range(4):
        rounded = years.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if abs(rounded - years) <= _DAY_IN_YEARS:
            return rounded
    return years.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)


def duration_years(text: str) -> Decimal:
    """An ISO 8601 duration in years, as gold writes it: "P4Y3M18D" -> 4.3, "P10Y" -> 10."""
    match = _ISO_DURATION.fullmatch(text.strip())
    if not match or not any(match.group(k) for k in "ymwd"):
        raise ValueError(f"not an ISO 8601 duration: {text.strip()[:40]!r}")
    part = lambda key: Decimal(match.group(key) or 0)  # noqa: E731
    years = part("y") + part("m") / 12 + part("w") * 7 * _DAY_IN_YEARS + part("d") * _DAY_IN_YEARS
    years = _round_years(years)
    return -years if match.group("neg") else years


def _word_number(tokens: list[str]) -> Decimal | None:
    """'ten' -> 10, 'twenty five' -> 25, '4.5' -> 4.5; None when the tokens are not a number."""
    if len(tokens) == 1 and re.fullmatch(r"\d+(?:\.\d+)?", tokens[0]):
        return Decimal(tokens[0])
    if tokens and all(t in _WORDS for t in tokens):
        return Decimal(sum(_WORDS[t] for t in tokens))
    return None


def _words_duration(text: str) -> Decimal:
    """'ten years', 'three-year', 'five years, two months', '18 months' -> years."""
    tokens = re.findall(r"\d+(?:\.\d+)?|[a-z]+", text.lower().replace(",", ""))
    total, number, found = Decimal(0), [], False
    for token in tokens:
        unit = _DURATION_UNITS.get(token)
        if unit is not None and number:
            amount = _word_number(number)
            if amount is None:
                raise ValueError(f"not a duration in words: {text!r}")
            total += amount / unit
            number, found = [], True
        elif token not in ("and",):
            number.append(token)
    if not found:
        raise ValueError(f"not a duration in words: {text!r}")
    return total if total == total.to_integral_value() else _round_years(total)


def ix_number(text: str, fmt: str | None) -> Decimal:
    """The number an inline XBRL transformation reads from displayed text (before scale and sign).

    Raises ValueError for text the format does not read, and for formats this module does not know."""
    key = _format_key(fmt)
    shown = text.replace("\u00a0", " ").strip()
    if key in _ZERO_FORMATS:
        return Decimal(0)
    try:
        if key in ("", *_DOT_FORMATS):
            digits = re.sub(r"[^\d.]", "", shown)
            return Decimal(digits)
        if key in _COMMA_FORMATS:
            digits = re.sub(r"[^\d,]", "", shown).replace(",", ".")
            return Decimal(digits)
    except InvalidOperation as error:
        raise ValueError(f"{shown[:40]!r} is not a number in format {fmt or 'none'}") from error
    if key == "numwordsen":
        value = _word_number(re.findall(r"[a-z]+|\d+(?:\.\d+)?", shown.lower().replace("-", " ")))
        if value is None:
            raise ValueError(f"{shown[:40]!r} is not a number in words")
        return value
    if key in _DURATION_FORMATS:
        return _ix_duration(shown, key)
    raise ValueError(f"format {fmt} is not supported")


def _ix_duration(shown: str, key: str) -> Decimal:
    if key == "durwordsen":
        return _words_duration(shown)
    number = parse_number(shown) or parse_number(shown.split()[0] if shown.split() else "")
    if number is None:
        raise ValueError(f"{shown[:40]!r} is not a number of {key.removeprefix('dur')}s")
    per_year = {"duryear": Decimal(1), "durmonth": Decimal(12), "durweek": Decimal("52.1775"),
                "durday": Decimal("365.25"), "durhour": Decimal("8766")}[key]
    years = number.magnitude / per_year
    return years if per_year == 1 or years == years.to_integral_value() else _round_years(years)


def _printed_number(shown: str, key: str) -> str:
    """The number as printed, the way gold spans hold it: no $, %, parentheses or unit words."""
    text = re.sub(r"[ \t\r\n\f\v]+", " ", shown).strip(" \u00a0$()%")
    if key in _DURATION_FORMATS or key == "numwordsen":
        token = re.search(r"\d[\d,]*(?:\.\d+)?|[A-Za-z]+", text)
        return token.group(0) if token else ""
    return text


# --- parsing -----------------------------------------------------------------------------------


def _parse(path: Path) -> etree._Element:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise XbrlError(path, f"cannot be read ({error.strerror or error})") from error
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        head = data[:200_000].decode("utf-8", "replace")
        if re.search(r"<ix:non(?:Fraction|Numeric)\b|<xbrli?:context\b", head):
            raise XbrlError(path, f"is not well-formed XML, as inline XBRL (XHTML) and XBRL instances must be ({error})") from error
        raise XbrlError(path, "is neither an XBRL instance nor inline XBRL (not XML; no ix:nonFraction, ix:nonNumeric or xbrli:context)") from error


def _resolve(qname: str, element: etree._Element, path: Path, what: str) -> str:
    """'us-gaap:Foo' -> '{http://fasb.org/us-gaap/2018-01-31}Foo', by the prefixes in scope there."""
    prefix, _, local = qname.strip().rpartition(":")
    namespace = element.nsmap.get(prefix or None)
    if namespace is None:
        raise XbrlError(path, f"{what} '{qname.strip()}' uses the undeclared prefix '{prefix}'")
    return f"{{{namespace}}}{local}"


def _xbrl_date(text: str, end_of_day: bool) -> date:
    """XBRL dates: a bare date in an instant or endDate means the end of that day (as in the spec);
    a dateTime at midnight means the end of the day before."""
    text = text.strip()
    try:
        if "T" in text:
            moment = datetime.fromisoformat(text.rstrip("Z"))
            day = moment.date()
            return day - timedelta(days=1) if end_of_day and moment.time() == datetime.min.time() else day
        return date.fromisoformat(text)
    except ValueError as error:
        raise ValueError(f"'{text}' is not a date") from error


def _contexts(root: etree._Element, path: Path) -> dict[str, _Context]:
    contexts: dict[str, _Context] = {}
    for element in root.iter(f"{{{XBRLI}}}context"):
        context_id = element.get("id", "")
        try:
            instant = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}instant")
            start = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}startDate")
            end = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}endDate")
            if instant:
                period = Period(instant=_xbrl_date(instant, end_of_day=True))
            elif end:
                period = Period(start=_xbrl_date(start, end_of_day=False) if start else None, end=_xbrl_date(end, end_of_day=True))
            else:
                period = None
        except ValueError as error:
            raise XbrlError(path, f"context '{context_id}' has an unusable period: {error}") from error
        members: list[tuple[str, str | None]] = []
        for explicit in element.iter(f"{{{XBRLDI}}}explicitMember"):
            axis = _resolve(explicit.get("dimension", ""), explicit, path, f"context '{context_id}' axis")
            members.append((axis, _resolve(explicit.text or "", explicit, path, f"context '{context_id}' member")))
        for typed in element.iter(f"{{{XBRLDI}}}typedMember"):
            members.append((_resolve(typed.get("dimension", ""), typed, path, f"context '{context_id}' axis"), None))
        contexts[context_id] = _Context(context_id, period, tuple(members))
    return contexts


def _measure(element: etree._Element | None, path: Path) -> str | None:
    if element is None:
        return None
    names = [_resolve(m.text or "", m, path, "unit measure") for m in element.iter(f"{{{XBRLI}}}measure")]
    return names[0] if len(names) == 1 else None


def _units(root: etree._Element, path: Path) -> dict[str, Unit | None]:
    """Unit id -> the facts format's unit, or None for a unit it has no name for (EUR, USD/hour)."""
    units: dict[str, Unit | None] = {}
    for element in root.iter(f"{{{XBRLI}}}unit"):
        divide = element.find(f"{{{XBRLI}}}divide")
        if divide is not None:
            numerator = _measure(divide.find(f"{{{XBRLI}}}unitNumerator"), path)
            denominator = _measure(divide.find(f"{{{XBRLI}}}unitDenominator"), path)
            per_share = numerator == f"{{{ISO4217}}}USD" and denominator is not None and _local(denominator).lower() in ("shares", "share")
            units[element.get("id", "")] = "USD/share" if per_share else None
            continue
        measure = _measure(element, path)
        local = _local(measure).lower() if measure else ""
        if measure == f"{{{ISO4217}}}USD":
            units[element.get("id", "")] = "USD"
        elif local in ("shares", "share"):
            units[element.get("id", "")] = "shares"
        elif local == "pure":
            units[element.get("id", "")] = "pure"
        elif local in ("y", "yr", "year", "years"):
            units[element.get("id", "")] = "years"
        else:
            units[element.get("id", "")] = None
    return units


def _is_ix(element: etree._Element, local: str) -> bool:
    return isinstance(element.tag, str) and element.tag in (f"{{{ns}}}{local}" for ns in IX_NAMESPACES)


def _tagged(root: etree._Element, path: Path) -> tuple[Literal["instance", "inline"], list[_Tagged]]:
    """Every XBRL fact of the file in document order, and whether the file is inline XBRL."""
    if root.tag == f"{{{XBRLI}}}xbrl":
        facts = []
        for element in root:
            if not isinstance(element.tag, str) or element.get("contextRef") is None:
                continue
            qname = etree.QName(element)
            facts.append(_Tagged(element, qname.namespace or "", qname.localname, element.get("contextRef", ""),
                                 element.get("unitRef"), element.get("unitRef") is not None))
        return "instance", facts
    facts = []
    for element in root.iter():
        numeric = _is_ix(element, "nonFraction")
        if not (numeric or _is_ix(element, "nonNumeric")):
            continue
        concept = _resolve(element.get("name", ""), element, path, "fact name")
        facts.append(_Tagged(element, concept[1:].split("}")[0], _local(concept), element.get("contextRef", ""),
                             element.get("unitRef"), numeric))
    return "inline", facts


def _namespace_kind(namespace: str) -> Literal["us-gaap", "standard", "extension"]:
    if re.match(r"https?://(?:www\.)?fasb\.org/us-gaap/", namespace):
        return "us-gaap"
    if re.match(r"https?://(?:[\w-]+\.)*(?:fasb\.org|xbrl\.sec\.gov|sec\.gov|xbrl\.org)/", namespace):
        return "standard"  # srt, dei, country, currency...: never stock compensation facts in scope
    return "extension"


# --- translation -------------------------------------------------------------------------------


@dataclass
class _Reader:
    path: Path
    contexts: dict[str, _Context]
    units: dict[str, Unit | None]
    month_day: tuple[int, int] | None
    result: GoldFacts
    text: str | None = None  # the rendered document text, for inline XBRL
    cursor: int = 0
    spans: dict[etree._Element, SourceSpan] = field(default_factory=dict)

    def concept(self, tagged: _Tagged) -> str | None:
        kind = _namespace_kind(tagged.namespace)
        if kind == "us-gaap" and tagged.name in in_scope_concepts():
            return tagged.name
        if kind == "extension" and f"ext:{tagged.name}" in known_extension_concepts():
            return f"ext:{tagged.name}"
        self.result.skip(UNKNOWN_EXTENSION if kind == "extension" else OUT_OF_SCOPE, tagged.name)
        return None

    def dims(self, concept: str, context: _Context, element: etree._Element | None) -> tuple[str, dict[str, str]] | None:
        """The concept (a range end may change it) and dims of a fact; None for a breakdown gold has no key for."""
        dims: dict[str, str] = {}
        bound: str | None = None
        for axis, member in context.members:
            axis_name, member_name = _local(axis), _local(member) if member else None
            if member_name is None:
                return None
            if axis_name == "AwardTypeAxis":
                dims["award"] = award_of_member(member_name)
            elif axis_name == "IncomeStatementLocationAxis":
                dims["line_item"] = (_row_caption(element) if element is not None else None) or _line_item_of_member(member_name)
            elif axis_name == "RangeAxis" and member_name in ("MinimumMember", "MaximumMember"):
                bound = "min" if member_name == "MinimumMember" else "max"
            elif (year := _YEAR_MEMBER.fullmatch(member_name)) and self.month_day:
                dims["year"] = _fiscal_year_end(int(year.group(1) or year.group(2)), self.month_day).isoformat()
            else:
                return None
        if bound:
            suffix = "Minimum" if bound == "min" else "Maximum"
            base = re.sub(r"(?:Minimum|Maximum)$", "", concept)
            if f"{base}{suffix}" in in_scope_concepts():
                concept = f"{base}{suffix}"
            else:
                dims["bound"] = bound
        return concept, dims

    def value(self, tagged: _Tagged) -> tuple[Decimal, str | None]:
        """The value in base units, and the number as printed (inline only)."""
        element = tagged.element
        shown = "".join(element.itertext())
        if self.result.kind == "instance":
            if tagged.numeric:
                value = Decimal(shown.strip())
                return _with_decimals(value, element.get("decimals")), None
            return duration_years(shown), None
        key = _format_key(element.get("format"))
        if tagged.numeric:
            number = ix_number(shown, element.get("format"))
            value = number.scaleb(int(element.get("scale", "0") or 0))
            return (-value if element.get("sign") == "-" else value), _printed_number(shown, key)
        if key:
            return ix_number(shown, element.get("format")), _printed_number(shown, key)
        return duration_years(shown), None  # an ISO duration as displayed: nothing a reader prints

    def unit(self, tagged: _Tagged) -> Unit | None:
        if not tagged.numeric:
            return "years"  # in-scope non-numeric facts are durations
        if tagged.unit_ref not in self.units:
            raise XbrlError(self.path, f"fact {tagged.name} (context '{tagged.context_ref}') refers to the unknown unit '{tagged.unit_ref}'")
        return self.units[tagged.unit_ref]

    def source(self, element: etree._Element, printed: str | None) -> SourceSpan | None:
        """Where the printed number stands in the rendered text: the next occurrence after the
        previous fact's (the renderer keeps document order) that the same words precede, else the
        next occurrence; a fact nested in another shares its span."""
        if self.text is None or not printed or parse_word_number(printed) is None or _hidden(element):
            return None
        for ancestor in element.iterancestors():
            if ancestor in self.spans and self.spans[ancestor].text == printed:
                return self.spans[ancestor]
        pattern = re.compile(r"(?<![\w.])(?<!\d,)" + re.escape(printed) + r"(?!\w)(?![.,]\d)")
        context = _text_before(element)
        first: re.Match[str] | None = None
        chosen: re.Match[str] | None = None
        for match in pattern.finditer(self.text, self.cursor, self.cursor + _SEARCH_WINDOW):
            first = first or match
            before = _NO_SPACE.sub("", self.text[max(0, match.start() - 4 * _CONTEXT_CHARS) : match.start()])
            if before.endswith(context):
                chosen = match
                break
        chosen = chosen or first or pattern.search(self.text, self.cursor)
        if chosen is None:
            return None
        self.cursor = chosen.end()
        span = SourceSpan(start=chosen.start(), end=chosen.end(), text=printed)
        self.spans[element] = span
        return span

    def read(self, tagged: _Tagged) -> Fact | None:
        context = self.contexts.get(tagged.context_ref)
        if context is None:
            raise XbrlError(self.path, f"fact {tagged.name} refers to the unknown context '{tagged.context_ref}'")
        unit = self.unit(tagged)
        concept = self.concept(tagged)
        if concept is None:
            return None
        if tagged.element.get(XSI_NIL) == "true":
            self.result.skip(NIL, tagged.name)
            return None
        if unit is None:
            self.result.skip(UNSUPPORTED_UNIT, tagged.name)
            return None
        if context.period is None:
            self.result.skip(NO_PERIOD, tagged.name)
            return None
        mapped = self.dims(concept, context, tagged.element if self.result.kind == "inline" else None)
        if mapped is None:
            self.result.skip(OTHER_DIMENSIONS, tagged.name)
            return None
        concept, dims = mapped
        try:
            value, printed = self.value(tagged)
        except (ValueError, InvalidOperation):
            self.result.skip(UNREADABLE, tagged.name)
            return None
        period = context.period
        if period.instant is None and concept in _balances_by_convention():
            period = Period(instant=period.end)
        source = self.source(tagged.element, printed)
        return Fact(concept=concept, value=value, unit=unit, period=period, dims=dims, source=source)


def _with_decimals(value: Decimal, decimals: str | None) -> Decimal:
    """Carry the reported precision (decimals="-3": thousands) so scoring rounds to it."""
    if not decimals or decimals.strip().upper() == "INF":
        return value
    try:
        quantized = value.quantize(Decimal(1).scaleb(-int(decimals)))
    except (ValueError, InvalidOperation):
        return value
    return quantized if quantized == value else value


_BLOCKS = frozenset("p div td th li tr table tbody thead body html h1 h2 h3 h4 h5 h6 section br".split())
_NO_SPACE = re.compile(r"\s+")
_CONTEXT_CHARS = 16
_SEARCH_WINDOW = 50_000  # characters looked through for a printing with the right words before it


def _text_before(element: etree._Element) -> str:
    """Up to 16 characters (spaces dropped) printed before the element in its paragraph or cell:
    tells "No shares" from the "No" that starts the sentence."""
    pieces: list[str] = []
    node = element
    while sum(map(len, pieces)) < 4 * _CONTEXT_CHARS:
        for sibling in node.itersiblings(preceding=True):
            if sibling.tail:
                pieces.append(sibling.tail)
            if isinstance(sibling.tag, str) and _local(sibling.tag).lower() in _BLOCKS:
                return _NO_SPACE.sub("", "".join(reversed(pieces)))[-_CONTEXT_CHARS:]
            pieces.append("".join(sibling.itertext()))
        parent = node.getparent()
        if parent is None:
            break
        if parent.text:
            pieces.append(parent.text)
        if not isinstance(parent.tag, str) or _local(parent.tag).lower() in _BLOCKS:
            break
        node = parent
    return _NO_SPACE.sub("", "".join(reversed(pieces)))[-_CONTEXT_CHARS:]


def _hidden(element: etree._Element) -> bool:
    return any(_is_ix(a, "header") or _is_ix(a, "hidden") for a in element.iterancestors())


def _row_caption(element: etree._Element) -> str | None:
    """The first cell of the table row holding the fact, lower-cased: gold's line_item."""
    row = next((a for a in element.iterancestors() if isinstance(a.tag, str) and _local(a.tag).lower() == "tr"), None)
    if row is None:
        return None
    first = next((c for c in row if isinstance(c.tag, str) and _local(c.tag).lower() in ("td", "th")), None)
    if first is None or element in first.iter():
        return None
    caption = re.sub(r"[ \t\r\n\f\v\u00a0]+", " ", "".join(first.itertext())).strip().rstrip(":").strip()
    return caption.lower() if re.search(r"[A-Za-z]", caption) else None


def _month_day(tagged: list[_Tagged], contexts: dict[str, _Context]) -> tuple[int, int] | None:
    """The fiscal year's end (month, day), for year members: dei:CurrentFiscalYearEndDate
    ('--07-31'), else the latest end date of a context without dimensions."""
    for item in tagged:
        if item.name == "CurrentFiscalYearEndDate":
            match = re.search(r"--(\d{2})-(\d{2})", "".join(item.element.itertext()))
            if match:
                return int(match.group(1)), int(match.group(2))
    ends = [c.period.end_date for c in contexts.values() if c.period and not c.members]
    if not ends:
        return None
    latest = max(ends)
    return latest.month, latest.day


def read_gold(path: str | Path) -> GoldFacts:
    """Gold facts of an XBRL instance or inline XBRL file, for the concepts in scope.

    Inline facts carry spans into `load(path).text` (the text every backend reads), so the
    gold is checked by the validator like hand labels; a plain instance has no text to point into.
    Raises XbrlError for a file that is not XBRL or refers to contexts or units it does not define.
    """
    path = Path(path)
    root = _parse(path)
    kind, tagged = _tagged(root, path)
    if not tagged:
        raise XbrlError(path, "holds no XBRL facts (no ix:nonFraction or ix:nonNumeric, no facts with a contextRef)")
    contexts = _contexts(root, path)
    result = GoldFacts(path=str(path), kind=kind, facts=[], tagged=len(tagged))
    reader = _Reader(path, contexts, _units(root, path), _month_day(tagged, contexts), result)
    if kind == "inline":
        try:
            reader.text = load(path).text
        except LoadError as error:
            raise XbrlError(path, f"the document text cannot be rendered ({error.reason})") from error
    printings: list[tuple[str, Fact]] = []
    for item in tagged:
        fact = reader.read(item)
        if fact is not None:
            printings.append((f"{item.name}@{item.context_ref}", fact))
    merged = schema_concepts.merge_printings(printings)
    result.facts = [fact for _, fact in merged]
    result.duplicates = len(printings) - len(merged)
    if kind == "inline":
        result.without_source = sum(1 for fact in result.facts if fact.source is None)
    return result


def write_facts(facts: Iterable[Fact], path: str | Path) -> None:
    """A facts file as gold holds them: one JSON object per line, no 'document' key."""
    lines = [fact.to_json() for fact in facts]
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
