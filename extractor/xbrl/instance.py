"""Reading an XBRL file as XBRL: the tagged facts (of an instance, or of inline XBRL in XHTML),
their contexts and units, and the namespaces they resolve to. Nothing here knows about gold;
a file that breaks XBRL's own rules is an XbrlError that names the file and the problem."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

from lxml import etree

from extractor.errors import ExtractorError
from extractor.schemas.values import Period, Unit

IX_NAMESPACES = ("http://www.xbrl.org/2013/inlineXBRL", "http://www.xbrl.org/2008/inlineXBRL")
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
ISO4217 = "http://www.xbrl.org/2003/iso4217"


class XbrlError(ExtractorError):
    """A file that cannot be read as XBRL; the message names the file and the problem."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


@dataclass(frozen=True)
class Context:
    id: str
    period: Period | None  # None for a 'forever' period: nothing gold can date
    members: tuple[tuple[str, str | None], ...]  # (axis "{ns}local", member "{ns}local" or None if typed)


@dataclass(frozen=True)
class Tagged:
    """One XBRL fact as tagged, before translation."""

    element: etree._Element
    namespace: str
    name: str
    context_ref: str
    unit_ref: str | None
    numeric: bool


def local(clark: str) -> str:
    """'{ns}Name' -> 'Name': gold keys on local names, the taxonomy year of a namespace is noise."""
    return clark.rsplit("}", 1)[-1]


def is_ix(element: etree._Element, name: str) -> bool:
    """Whether the element is the inline XBRL element `name`, in either inline XBRL version."""
    return isinstance(element.tag, str) and element.tag in (f"{{{ns}}}{name}" for ns in IX_NAMESPACES)


def parse(path: Path) -> etree._Element:
    """The file's XML root; a file that is not XML says whether it looked like XBRL at all."""
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
            raise XbrlError(
                path, f"is not well-formed XML, as inline XBRL (XHTML) and XBRL instances must be ({error})"
            ) from error
        raise XbrlError(
            path,
            "is neither an XBRL instance nor inline XBRL (not XML; no ix:nonFraction, ix:nonNumeric or xbrli:context)",
        ) from error


def _resolve(qname: str, element: etree._Element, path: Path, what: str) -> str:
    """'us-gaap:Foo' -> '{http://fasb.org/us-gaap/2018-01-31}Foo', by the prefixes in scope there."""
    prefix, _, name = qname.strip().rpartition(":")
    namespace = element.nsmap.get(prefix or None)
    if namespace is None:
        raise XbrlError(path, f"{what} '{qname.strip()}' uses the undeclared prefix '{prefix}'")
    return f"{{{namespace}}}{name}"


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


def contexts(root: etree._Element, path: Path) -> dict[str, Context]:
    """Context id -> its period and dimension members, which give a fact its period and dims."""
    found: dict[str, Context] = {}
    for element in root.iter(f"{{{XBRLI}}}context"):
        context_id = element.get("id", "")
        try:
            instant = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}instant")
            start = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}startDate")
            end = element.findtext(f"{{{XBRLI}}}period/{{{XBRLI}}}endDate")
            if instant:
                period = Period(instant=_xbrl_date(instant, end_of_day=True))
            elif end:
                period = Period(
                    start=_xbrl_date(start, end_of_day=False) if start else None, end=_xbrl_date(end, end_of_day=True)
                )
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
        found[context_id] = Context(context_id, period, tuple(members))
    return found


def _measure(element: etree._Element | None, path: Path) -> str | None:
    if element is None:
        return None
    names = [_resolve(m.text or "", m, path, "unit measure") for m in element.iter(f"{{{XBRLI}}}measure")]
    return names[0] if len(names) == 1 else None


def _unit(element: etree._Element, path: Path) -> Unit | None:
    divide = element.find(f"{{{XBRLI}}}divide")
    if divide is not None:
        numerator = _measure(divide.find(f"{{{XBRLI}}}unitNumerator"), path)
        denominator = _measure(divide.find(f"{{{XBRLI}}}unitDenominator"), path)
        per_share = (
            numerator == f"{{{ISO4217}}}USD"
            and denominator is not None
            and local(denominator).lower() in ("shares", "share")
        )
        return "USD/share" if per_share else None
    measure = _measure(element, path)
    name = local(measure).lower() if measure else ""
    if measure == f"{{{ISO4217}}}USD":
        return "USD"
    if name in ("shares", "share"):
        return "shares"
    if name == "pure":
        return "pure"
    return "years" if name in ("y", "yr", "year", "years") else None


def units(root: etree._Element, path: Path) -> dict[str, Unit | None]:
    """Unit id -> the facts format's unit, or None for a unit it has no name for (EUR, USD/hour)."""
    return {element.get("id", ""): _unit(element, path) for element in root.iter(f"{{{XBRLI}}}unit")}


def tagged(root: etree._Element, path: Path) -> tuple[Literal["instance", "inline"], list[Tagged]]:
    """Every XBRL fact of the file in document order, and whether the file is inline XBRL."""
    facts = []
    if root.tag == f"{{{XBRLI}}}xbrl":
        for element in root:
            if not isinstance(element.tag, str) or element.get("contextRef") is None:
                continue
            qname = etree.QName(element)
            facts.append(
                Tagged(
                    element,
                    qname.namespace or "",
                    qname.localname,
                    element.get("contextRef", ""),
                    element.get("unitRef"),
                    element.get("unitRef") is not None,
                )
            )
        return "instance", facts
    for element in root.iter():
        numeric = is_ix(element, "nonFraction")
        if not (numeric or is_ix(element, "nonNumeric")):
            continue
        concept = _resolve(element.get("name", ""), element, path, "fact name")
        facts.append(
            Tagged(
                element,
                concept[1:].split("}")[0],
                local(concept),
                element.get("contextRef", ""),
                element.get("unitRef"),
                numeric,
            )
        )
    return "inline", facts


def fiscal_year_end(facts: list[Tagged], contexts: dict[str, Context]) -> tuple[int, int] | None:
    """The fiscal year's end (month, day), which dates year members: dei:CurrentFiscalYearEndDate
    ('--07-31'), else the latest end date of a context without dimensions."""
    for item in facts:
        if item.name == "CurrentFiscalYearEndDate":
            match = re.search(r"--(\d{2})-(\d{2})", "".join(item.element.itertext()))
            if match:
                return int(match.group(1)), int(match.group(2))
    ends = [c.period.end_date for c in contexts.values() if c.period and not c.members]
    if not ends:
        return None
    latest = max(ends)
    return latest.month, latest.day
