"""Read every number of a sentence generically: find it, classify it by the cue phrases near it, date it.

The cues are data (schemas/lexicon/stock_compensation/prose.toml), not code. A number is read as the cue
nearest to it whose unit it can take: first in the text before it (back to the previous number of its
clause), then in the text after it (up to the next number). A number no cue claims is left out and counted
as unread, never guessed. Its period comes from the sentence's own date phrases (see prose_dates); without
one, balances are as of the latest fiscal period end and flows are its fiscal year.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias

from extractor.backends.rules.lexicon import (
    AWARD_PATTERNS,
    AWARD_PHRASES,
    AWARD_TYPES,
    LEXICON_DIR,
    UNITS,
    find_award,
    known,
)
from extractor.backends.rules.prose_dates import DatePhrase, Span, find_phrases, named_day
from extractor.backends.rules.prose_numbers import Number, find_numbers
from extractor.patterns import Screened, may_match, screen_text
from extractor.periods import FiscalCalendar
from extractor.regex_cache import regex
from extractor.schemas.stock_compensation import (
    AwardYearInfo,
    ExpenseItem,
    LineItem,
    PlanTerms,
    PreferredStock,
    ShareRepurchases,
    ShareRepurchaseYear,
    StockCompensationNote,
    UnrecognizedCost,
)
from extractor.schemas.values import Amount, AwardType, Period, SourceSpan, Unit
from extractor.tomlfile import parse_toml

LEXICON = LEXICON_DIR / "prose.toml"
# A cue's award: the clause's (or the paragraph's), none, the ESPP only when the sentence names it, or a fixed one.
CueAward: TypeAlias = Literal["clause", "none", "espp_only"] | AwardType
CUE_AWARDS: tuple[CueAward, ...] = ("clause", "none", "espp_only", *AWARD_TYPES)
# Aggregate dollars printed without a scale word below this are in a scale the sentence does not state
# ("$9 of total unrecognized compensation cost" in a note whose dollars are in millions): not read.
MIN_UNSCALED_USD = Decimal(1000)
_LIST_GAP = regex(r"^\)?[\s,]*(?:(?:and|or)\s*)?[\s$(]*$", re.I)  # ", ($117) and $126": a negative in the list
# ", and" after a number closes its clause: what stands before it ("… have been authorized for issuance under
# the Plan, and 2,381,450 shares were available") is the earlier number's cue, not this one's.
_CLAUSE_JOIN = regex(r",\s+and\s+", re.I)
_RESPECTIVELY = regex(r"\brespectively\b", re.I)
_PARALLEL_GAP = regex(r"^[^;,$]{0,60}\band\b[^;,$]{0,40}$", re.I)


# A piece of a sentence and its screen_text (the phrases its patterns need are looked for there).
Window: TypeAlias = tuple[str, str]


class Cue(NamedTuple):
    name: str
    target: str
    unit: Unit
    period: str
    award: CueAward
    cues: tuple[Screened, ...]
    after: tuple[Screened, ...] = ()
    vetoes: tuple[Screened, ...] = ()
    require: tuple[Screened, ...] = ()


@lru_cache(maxsize=4)
def load_cues(path: Path = LEXICON) -> tuple[Cue, ...]:
    """The cue entries of the lexicon file, checked: a wrong unit, period or target fails loudly."""
    data = parse_toml(path, path.read_text(encoding="utf-8"))
    cues: list[Cue] = []
    for entry in data.get("cue", []):
        name = entry.get("name", entry.get("target", "?"))
        period = entry.get("period", "instant")
        unit, award = known(entry["unit"], UNITS), known(entry.get("award", "clause"), CUE_AWARDS)
        if unit is None or period not in ("instant", "flow", "term"):
            raise ValueError(f"{path}: cue {name!r}: unit {entry['unit']!r} / period {period!r} unknown")
        if award is None:
            raise ValueError(f"{path}: cue {name!r}: award {entry.get('award')!r} unknown")
        if entry["target"].split(".")[0] not in TARGET_ROOTS:
            raise ValueError(f"{path}: cue {name!r}: target {entry['target']!r} unknown")
        patterns = {
            key: tuple(Screened(p, re.I) for p in entry.get(key, [])) for key in ("cues", "after", "not", "require")
        }
        cues.append(
            Cue(
                name,
                entry["target"],
                unit,
                period,
                award,
                patterns["cues"],
                patterns["after"],
                patterns["not"],
                patterns["require"],
            )
        )
    return tuple(cues)


TARGET_ROOTS = (
    "plans",
    "unrecognized_cost",
    "award_years",
    "expense",
    "share_repurchases",
    "preferred_stock",
    "line_items",
)


@dataclass
class ProseSentence:
    text: str
    start: int  # offset of the sentence in the document text
    paragraph: int
    paragraph_award: AwardType | None  # lead-in ("Restricted Stock Units.  ...") or the heading above the paragraph


@dataclass
class Reading:
    """What the reader did with the numbers of the prose: read (with the cue) and left unread (with why)."""

    read: list[tuple[str, str]] = field(default_factory=list)  # (cue name, printed text)
    unread: list[tuple[str, str]] = field(default_factory=list)  # (printed text, sentence excerpt)


@dataclass
class _State:
    note: StockCompensationNote
    calendar: FiscalCalendar
    fiscal_end: date
    used: set[tuple[int, int]]
    reading: Reading
    last_unrecognized: UnrecognizedCost | None = None
    last_paragraph: int = -1
    usd_scale: int = 0
    # The one day or month an earlier sentence of the paragraph named ("On February 19, 2025, we granted …"):
    # the date of a later flow that names none ("The fair value of the options granted was $79.53").
    paragraph_when: Span | None = None
    cues: tuple[Cue, ...] = field(default_factory=load_cues)
    # The cues of each set of units a number group may take, with their places in the lexicon (_nearest's
    # candidates): made once per note, not once per group.
    candidates: dict[frozenset[str], list[tuple[int, Cue]]] = field(default_factory=dict)


def _groups(numbers: list[Number], sentence: str) -> list[list[Number]]:
    """Numbers printed as one list ("$19.5 billion, $22.1 billion, and $22.8 billion") form a group."""
    groups: list[list[Number]] = []
    for number in numbers:
        if groups:
            last = groups[-1][-1]
            gap = sentence[last.tail_end : number.start]
            if _LIST_GAP.match(gap) and (last.units & number.units) and last.dollar == number.dollar:
                groups[-1].append(number)
                continue
        groups.append([number])
    for group in groups:  # "$0.6, $0.6, and $0.5 million": the last scale word scales the list
        if group[-1].scale and all(n.scale == 0 for n in group[:-1]):
            for n in group[:-1]:
                n.scale, n.units = group[-1].scale, set(group[-1].units)
    return groups


def _candidates(units: set[str], state: _State) -> list[tuple[int, Cue]]:
    """The cues of a unit the group may take, with their places in the lexicon (which break ties)."""
    key = frozenset(units)
    found = state.candidates.get(key)
    if found is None:
        found = state.candidates[key] = [(order, cue) for order, cue in enumerate(state.cues) if cue.unit in units]
    return found


def _nearest(
    candidates: list[tuple[int, Cue]], before_window: Window, after_window: Window, clause_window: Window
) -> Cue | None:
    """The cue nearest the number in the window before it (its last match), else in the one after it (its first). Whether a cue may
    claim the number here (its `require` and `not` patterns) is asked, nearest first, only of cues that
    match: most cues match nowhere near a number."""
    # A pattern runs only on a text holding one of its phrases (may_match): most cues are absent from most windows.
    (before, low_before), (after, low_after), (clause, low_clause) = before_window, after_window, clause_window

    def allowed(cue: Cue) -> bool:
        return all(may_match(r.phrases, low_clause) and r.pattern.search(clause) for r in cue.require) and not any(
            (may_match(v.phrases, low_before) and v.pattern.search(before))
            or (may_match(v.phrases, low_after) and v.pattern.search(after))
            for v in cue.vetoes
        )

    def first_allowed(found: list[tuple[int, int, Cue]]) -> Cue | None:
        return next((cue for _, _, cue in sorted(found, key=lambda f: f[:2]) if allowed(cue)), None)

    cue = first_allowed(
        [
            (len(before) - m.end(), order, cue)
            for order, cue in candidates
            for screen in cue.cues
            if may_match(screen.phrases, low_before)
            for m in screen.pattern.finditer(before)
        ]
    )
    if cue is not None:
        return cue
    found: list[tuple[int, int, Cue]] = []
    for order, cue in candidates:
        if any(may_match(p.phrases, low_after) and p.pattern.match(after) for p in cue.after):
            found.append((0, order, cue))
            continue
        hits = [
            m.start()
            for p in cue.cues
            if "$" not in p.source and may_match(p.phrases, low_after)
            for m in [p.pattern.search(after)]
            if m
        ]
        if hits:
            found.append((min(hits) + 1, order, cue))
    return first_allowed(found)


def _nearest_award(before_window: Window, after_window: Window) -> AwardType | None:
    """The award type named closest before the number ("$4.6 million related to stock options … 2.4 years"),
    else the first one named after it; at one place the most specific pattern wins."""
    best: tuple[int, int, AwardType] | None = None
    (before, low_before), (after, low_after) = before_window, after_window
    for order, ((award, pattern), phrases) in enumerate(zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True)):
        if not may_match(phrases, low_before):
            continue
        for match in pattern.finditer(before):
            if best is None or (match.end(), -order) > best[:2]:
                best = (match.end(), -order, award)
    if best:
        return best[2]
    hits = [
        (m.start(), order, award)
        for order, ((award, p), phrases) in enumerate(zip(AWARD_PATTERNS, AWARD_PHRASES, strict=True))
        if may_match(phrases, low_after)
        for m in [p.search(after)]
        if m
    ]
    return min(hits)[2] if hits else None


def _award(cue: Cue, before: Window, after: Window, clause: str, sentence: ProseSentence) -> AwardType | None:
    """The award type of the numbers a cue claims: the cue's own, else the one named nearest them (looked for
    only then), the clause's, or the paragraph's."""
    if cue.award == "none":
        return None
    if cue.award in AWARD_TYPES:
        return cue.award
    named = _nearest_award(before, after) or find_award(clause)
    if named is None:
        named = find_award(sentence.text) if cue.award == "espp_only" else None
    if named is None:
        named = sentence.paragraph_award
    if cue.award == "espp_only":
        return "espp" if named == "espp" else None
    return named


def _period(cue: Cue, span: Span | None, state: _State) -> Period:
    calendar, fiscal_end = state.calendar, state.fiscal_end
    if span is not None and span.end == date.min:  # "at the end of the year"
        span = Span(end=fiscal_end, instant=True)
    if cue.period == "term" or span is None:
        if cue.period == "flow":
            return calendar.period(calendar.year_of(fiscal_end))
        return Period.at(fiscal_end)
    if cue.period == "instant":
        day = span.end
        if span.instant and day.day == 1:  # "as of February 1, 2025": the close of the day before
            day -= timedelta(days=1)
        return Period.at(day)
    if span.start is not None:
        return Period.over(span.start, span.end)
    year = calendar.year_of(span.end)
    return calendar.period(year) if calendar.year_end(year) == span.end else Period.over(None, span.end)


def _spans_for(
    group: list[Number], phrases: list[DatePhrase], clause_start: int, respectively: bool
) -> list[Span | None]:
    """The period each number of the group takes: the nth of a phrase listing as many, else the nearest phrase."""
    n = len(group)
    if n > 1 or respectively:
        listing = [p for p in phrases if len(p.periods) == n]
        if n > 1 and listing:
            phrase = min(listing, key=lambda p: abs(p.start - group[0].start))
            return list(phrase.periods)
    following = [
        p for p in phrases if 0 <= p.start - group[-1].tail_end <= 12
    ]  # "$17.0 million for the three months ended …"
    if following and len(following[0].periods) == 1:
        return [following[0].periods[0]] * n
    before = [p for p in phrases if p.end <= group[0].start and p.start >= clause_start]
    after = [p for p in phrases if p.start >= group[-1].end]
    earlier = [p for p in phrases if p.end <= group[0].start]
    if before or earlier:
        phrase = (before or earlier)[-1]
    elif after:
        phrase = after[0]
    else:
        return [None] * n
    if len(phrase.periods) > 1:
        return [None] * n if n == 1 and not respectively else [phrase.periods[0]] * n
    return [phrase.periods[0]] * n


_SEMICOLON = regex(";")
_FOR_THE = regex(r"\b(?:for|in|during|as of|at) the\b")


def read_sentence(sentence: ProseSentence, state: _State) -> None:
    text = sentence.text
    if sentence.paragraph != state.last_paragraph:
        state.last_unrecognized, state.last_paragraph, state.paragraph_when = None, sentence.paragraph, None
    phrases = find_phrases(text, state.calendar)
    carried = state.paragraph_when if not phrases else None
    if phrases:
        state.paragraph_when = named_day(phrases)
    inside = [(p.start, p.end) for p in phrases]
    numbers = [n for n in find_numbers(text) if not any(s <= n.start < e for s, e in inside)]
    if not numbers:
        return  # most sentences: nothing to read
    screened = screen_text(text)  # sliced with the text: its windows' screens (it has the text's length)

    def window(start: int, end: int) -> Window:
        return text[start:end], screened[start:end]

    respectively = "respectively" in screened and bool(_RESPECTIVELY.search(text))
    clause_starts = [0] + [m.end() for m in _SEMICOLON.finditer(text)]
    groups = _groups(numbers, text)
    previous: tuple[Cue, list[Number]] | None = None
    group_units = [set.intersection(*(n.units for n in group)) for group in groups]  # the units all its numbers take
    for index, group in enumerate(groups):
        clause_start = max(s for s in clause_starts if s <= group[0].start)
        clause_end = min([s for s in clause_starts if s > group[-1].end] + [len(text)])
        units = group_units[index]
        # The window reaches back to the previous number that could compete for the same cue (one of the
        # same unit): "authorized shares of $0.10 par value common stock is 33.0 billion".
        earlier = [g for g, u in zip(groups[:index], group_units) if u & units]
        later = [g for g, u in zip(groups[index + 1 :], group_units[index + 1 :]) if u & units]
        window_start = max(clause_start, earlier[-1][-1].tail_end if earlier else 0)
        window_end = min(clause_end, later[0][0].start if later else len(text))
        joins = list(_CLAUSE_JOIN.finditer(text, window_start, group[0].start)) if earlier else []
        before = window(joins[-1].end() if joins else window_start, group[0].start)
        after = window(group[-1].tail_end, window_end)
        cue = _nearest(_candidates(units, state), before, after, window(clause_start, clause_end))
        if cue is None and previous and previous[0].unit in units:
            gap_start = previous[1][-1].tail_end
            gap = "".join(
                " " if any(p.start <= gap_start + i < p.end for p in phrases) else ch
                for i, ch in enumerate(text[gap_start : group[0].start])
            )
            gap = _FOR_THE.sub(" ", gap)
            if _PARALLEL_GAP.match(gap) or _LIST_GAP.match(
                gap
            ):  # "5,000 million shares of Class A … and 4,141 million shares of Class B"
                cue = previous[0]
        if cue is None:
            for number in group:
                if (sentence.start + number.start, sentence.start + number.end) not in state.used:
                    state.reading.unread.append(
                        (number.text, text[max(0, number.start - 60) : number.tail_end + 20].strip())
                    )
            continue
        previous = (cue, group)
        spans = _spans_for(group, phrases, clause_start, respectively)
        if carried and cue.period == "flow":
            spans = [carried] * len(group)
        award = _award(cue, before, after, text[clause_start:clause_end], sentence)
        for number, span in zip(group, spans):
            absolute = (sentence.start + number.start, sentence.start + number.end)
            if absolute in state.used:
                continue
            value, exponent = number.scaled(cue.unit)
            if cue.unit == "USD" and not number.scale and value < MIN_UNSCALED_USD and not state.usd_scale:
                state.reading.unread.append((number.text, "dollars without a stated scale"))
                continue
            amount = Amount(
                value=value,
                unit=cue.unit,
                scale=exponent,
                decimals=number.decimals,
                # a term of the grant the paragraph dated ("These stock options … expire ten years after the grant date")
                period=Period.at(carried.end) if carried and cue.period != "flow" else _period(cue, span, state),
                source=SourceSpan(start=absolute[0], end=absolute[1], text=number.text),
            )
            _place(cue, amount, award, state)
            state.used.add(absolute)
            state.reading.read.append((cue.name, number.text))


def _set(target: object, name: str, amount: Amount) -> bool:
    if getattr(target, name) is None:
        setattr(target, name, amount)
        return True
    return getattr(target, name).value == amount.value and getattr(target, name).period == amount.period


def _place(cue: Cue, amount: Amount, award: AwardType | None, state: _State) -> None:
    note = state.note
    root, _, name = cue.target.partition(".")
    if root == "line_items":
        note.line_items.append(LineItem(concept=name, label=cue.name, award=award, amount=amount))
    elif root == "expense":
        note.expense.append(ExpenseItem(award=award, amount=amount))
    elif root == "plans":
        if not any(p.award == award and _set(p, name, amount) for p in note.plans):
            note.plans.append(PlanTerms(award=award, **{name: amount}))
    elif root == "unrecognized_cost":
        if name == "recognition_period":
            pending = state.last_unrecognized
            if pending is not None and pending.recognition_period is None and (award is None or award == pending.award):
                pending.recognition_period = amount
                return
            note.unrecognized_cost.append(UnrecognizedCost(award=award, recognition_period=amount))
        else:
            state.last_unrecognized = UnrecognizedCost(award=award, amount=amount)
            note.unrecognized_cost.append(state.last_unrecognized)
    elif root == "award_years":
        year_end = state.calendar.year_end(state.calendar.year_of(amount.period.end_date))
        info = next(
            (
                i
                for i in note.award_years
                if i.award == award and i.fiscal_year_end == year_end and getattr(i, name) is None
            ),
            None,
        )
        if info is None:
            info = AwardYearInfo(award=award, fiscal_year_end=year_end)
            note.award_years.append(info)
        setattr(info, name, amount)
    elif root == "share_repurchases":
        program = note.share_repurchases = note.share_repurchases or ShareRepurchases()
        if name.startswith("years."):
            field_name = name.removeprefix("years.")
            year_end = amount.period.end_date
            year = next(
                (y for y in program.years if y.fiscal_year_end == year_end and getattr(y, field_name) is None), None
            )
            if year is None:
                year = ShareRepurchaseYear(fiscal_year_end=year_end)
                program.years.append(year)
            setattr(year, field_name, amount)
        elif not _set(program, name, amount):
            note.line_items.append(LineItem(concept=_REPURCHASE_CONCEPTS[name], label=cue.name, amount=amount))
    elif root == "preferred_stock":
        preferred = note.preferred_stock = note.preferred_stock or PreferredStock()
        _set(preferred, name, amount)


_REPURCHASE_CONCEPTS = {
    "authorized_amount": "StockRepurchaseProgramAuthorizedAmount1",
    "remaining_authorization": "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1",
}


def read_prose(
    note: StockCompensationNote,
    sentences: list[ProseSentence],
    calendar: FiscalCalendar,
    fiscal_end: date,
    used: set[tuple[int, int]],
    usd_scale: int = 0,
) -> Reading:
    """Read every sentence; numbers at `used` spans (already read by another rule) are skipped. Unscaled
    dollars are read only when the note's dollar scale is known (`usd_scale`, applied by the caller)."""
    state = _State(note, calendar, fiscal_end, set(used), Reading(), usd_scale=usd_scale)
    for sentence in sentences:
        read_sentence(sentence, state)
    return state.reading
