"""Tagged facts translated into gold facts, one per scoring key, with an account of every tagged
fact left out (the scorer and people both need to know what the gold does not hold)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

from extractor.document import LoadError
from extractor.loaders import load
from extractor.schemas import concepts as schema_concepts
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period, Unit
from extractor.xbrl import instance, mapping
from extractor.xbrl.formats import (
    duration_years,
    format_key,
    ix_number,
    printed_number,
    with_decimals,
)
from extractor.xbrl.instance import XSI_NIL, Context, Tagged, XbrlError
from extractor.xbrl.spans import Printings

# Why a tagged fact is not in the output; the keys are what reports print.
OUT_OF_SCOPE = "out of scope"
UNKNOWN_EXTENSION = "unknown extension"
OTHER_DIMENSIONS = "other dimensions"
UNSUPPORTED_UNIT = "unsupported unit"
UNREADABLE = "unreadable value"
NIL = "nil"
NO_PERIOD = "no dated period"
SHORTER_PERIOD = "shorter period, same end"
CONFLICTING = "conflicting duplicates"
_SHOWN_APART = (OUT_OF_SCOPE, UNKNOWN_EXTENSION, OTHER_DIMENSIONS, SHORTER_PERIOD, CONFLICTING)


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
    award_not_stated: int = 0  # unit facts (RSU, PSU...) kept without an award: no axis said which

    def skip(self, reason: str, name: str) -> None:
        self.skipped[reason] += 1
        self.skipped_concepts.setdefault(reason, Counter())[name] += 1

    def summary(self) -> str:
        """One line for people: written, skipped by reason, kept with a flaw."""
        skipped = self.skipped
        unreadable = sum(n for reason, n in skipped.items() if reason not in _SHOWN_APART)
        parts = [
            f"{len(self.facts)} facts from {self.tagged} tagged"
            + f" ({self.duplicates} duplicate printings merged, {skipped[CONFLICTING]} conflicting duplicates: first kept)",
            f"skipped {skipped[OUT_OF_SCOPE] + skipped[UNKNOWN_EXTENSION]} out of scope ({skipped[UNKNOWN_EXTENSION]} unknown extensions)",
            f"{skipped[OTHER_DIMENSIONS]} with other dimensions",
        ]
        if skipped[SHORTER_PERIOD]:
            parts.append(f"{skipped[SHORTER_PERIOD]} {SHORTER_PERIOD}")
        if unreadable:
            parts.append(f"{unreadable} unreadable (unit, nil, period or format)")
        if self.award_not_stated:
            parts.append(f"{self.award_not_stated} award type not stated")
        parts.append(
            f"{self.without_source} without source" if self.kind == "inline" else "no sources (plain instance)"
        )
        return "; ".join(parts)


@dataclass
class _Reader:
    path: Path
    contexts: dict[str, Context]
    units: dict[str, Unit | None]
    month_day: tuple[int, int] | None
    result: GoldFacts
    printings: Printings | None  # for inline XBRL: the rendered text to find sources in

    def value(self, tagged: Tagged) -> tuple[Decimal, str | None]:
        """The value in base units, and the number as printed (inline only)."""
        element = tagged.element
        shown = "".join(element.itertext())
        fmt = element.get("format")
        if self.printings is None:
            if tagged.numeric:
                return with_decimals(Decimal(shown.strip()), element.get("decimals")), None
            return duration_years(shown), None
        if tagged.numeric:
            value = ix_number(shown, fmt).scaleb(int(element.get("scale", "0") or 0))
            return (-value if element.get("sign") == "-" else value), printed_number(shown, fmt)
        if format_key(fmt):
            return ix_number(shown, fmt), printed_number(shown, fmt)
        return duration_years(shown), None  # an ISO duration as displayed: nothing a reader prints

    def unit(self, tagged: Tagged) -> Unit | None:
        if not tagged.numeric:
            return "years"  # in-scope non-numeric facts are durations
        if tagged.unit_ref not in self.units:
            raise XbrlError(
                self.path,
                f"fact {tagged.name} (context '{tagged.context_ref}') refers to the unknown unit '{tagged.unit_ref}'",
            )
        return self.units[tagged.unit_ref]

    def read(self, tagged: Tagged) -> Fact | None:
        """The gold fact of one tagged fact, or None after counting why there is none."""
        context = self.contexts.get(tagged.context_ref)
        if context is None:
            raise XbrlError(self.path, f"fact {tagged.name} refers to the unknown context '{tagged.context_ref}'")
        unit = self.unit(tagged)
        concept = mapping.gold_concept(tagged.namespace, tagged.name)
        period = context.period
        mapped = None
        if concept is None:
            reason = UNKNOWN_EXTENSION if mapping.namespace_kind(tagged.namespace) == "extension" else OUT_OF_SCOPE
        elif tagged.element.get(XSI_NIL) == "true":
            reason = NIL
        elif unit is None:
            reason = UNSUPPORTED_UNIT
        elif period is None:
            reason = NO_PERIOD
        else:
            reason = OTHER_DIMENSIONS  # when the dimensions do not map
            mapped = mapping.gold_dims(concept, context, tagged.element if self.printings else None, self.month_day)
        if mapped is None or unit is None or period is None:  # (a unit and a period come with every mapped fact)
            self.result.skip(reason, tagged.name)
            return None
        concept, dims = mapped
        try:
            value, printed = self.value(tagged)
        except (ValueError, InvalidOperation):
            self.result.skip(UNREADABLE, tagged.name)
            return None
        if period.instant is None and concept in mapping.balances_by_convention():
            period = Period(instant=period.end)
        source = self.printings.source(tagged.element, printed) if self.printings else None
        return Fact(concept=concept, value=value, unit=unit, period=period, dims=dims, source=source)


def _days(period: Period) -> int:
    return (period.end - period.start).days if period.start and period.end else 0


def _one_per_key(read: list[tuple[Tagged, Fact]], result: GoldFacts) -> list[Fact]:
    """One fact per scoring key (concept, period end, dims), since the scorer matches one: the
    longest period of those ending the same day (the year, not the quarter), then printings of
    one value merged (the most precise kept), then of values still disagreeing the first kept."""
    longest: dict[tuple, int] = {}
    for _, fact in read:
        longest[fact.key()] = max(longest.get(fact.key(), 0), _days(fact.period))
    printings: list[tuple[str, Fact]] = []
    for index, (tagged, fact) in enumerate(read):
        if _days(fact.period) < longest[fact.key()]:
            result.skip(SHORTER_PERIOD, tagged.name)
        else:
            printings.append((str(index), fact))
    merged = schema_concepts.merge_printings(printings)
    result.duplicates = len(printings) - len(merged)
    first: dict[tuple, int] = {}
    for label, fact in merged:
        first[fact.key()] = min(first.get(fact.key(), int(label)), int(label))
    kept = []
    for label, fact in merged:
        if first[fact.key()] == int(label):
            kept.append(fact)
        else:
            result.skip(CONFLICTING, read[int(label)][0].name)
    return kept


def read_gold(path: str | Path) -> GoldFacts:
    """Gold facts of an XBRL instance or inline XBRL file, for the concepts in scope.

    Inline facts carry spans into `load(path).text` (the text every backend reads), so the
    gold is checked by the validator like hand labels; a plain instance has no text to point into.
    Raises XbrlError for a file that is not XBRL or refers to contexts or units it does not define.
    """
    path = Path(path)
    root = instance.parse(path)
    kind, tagged = instance.tagged(root, path)
    if not tagged:
        raise XbrlError(path, "holds no XBRL facts (no ix:nonFraction or ix:nonNumeric, no facts with a contextRef)")
    contexts = instance.contexts(root, path)
    result = GoldFacts(path=str(path), kind=kind, facts=[], tagged=len(tagged))
    printings = None
    if kind == "inline":
        try:
            printings = Printings(load(path).text)
        except LoadError as error:
            raise XbrlError(path, f"the document text cannot be rendered ({error.reason})") from error
    reader = _Reader(
        path, contexts, instance.units(root, path), instance.fiscal_year_end(tagged, contexts), result, printings
    )
    read = [(item, fact) for item in tagged if (fact := reader.read(item)) is not None]
    result.facts = _one_per_key(read, result)
    result.award_not_stated = sum(1 for fact in result.facts if mapping.award_not_stated(fact.concept, fact.dims))
    if kind == "inline":
        result.without_source = sum(1 for fact in result.facts if fact.source is None)
    return result


def write_facts(facts: Iterable[Fact], path: str | Path) -> None:
    """A facts file as gold holds them: one JSON object per line, no 'document' key.
    Raises OSError when the file cannot be written."""
    lines = [fact.to_json() for fact in facts]
    target = Path(path)
    if not target.parent.exists():  # a file in its place fails below as "Not a directory"
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
