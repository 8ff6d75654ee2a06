"""Numbers stated in sentences: plan terms, balances, per-year lists ("…, respectively").

Each rule is a pattern plus the schema field it fills; award types come from the sentence or
from the paragraph's lead-in ("Cash-Settled Restricted Stock Units.  Also referred to …").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from extractor.backends.rules.amounts import word_amount
from extractor.backends.rules.lexicon import find_award, first_award, named_awards
from extractor.backends.rules.prose_dates import find_phrases, named_day
from extractor.backends.rules.prose_reader import ProseSentence, Reading, read_prose
from extractor.numbers import ANY_DIGIT, SCALE_WORDS, apply_scale, parse_word_number
from extractor.patterns import deferred, screen_text
from extractor.periods import YEAR_DIGITS, FiscalCalendar, find_dates
from extractor.regex_cache import regex
from extractor.schemas.concepts import iter_located_amounts
from extractor.schemas.stock_compensation import (
    AwardRollForward,
    AwardYearInfo,
    Basis,
    PlanTerms,
    PreferredStock,
    RollForwardRow,
    ShareRepurchases,
    StockCompensationNote,
    UnrecognizedCost,
)
from extractor.schemas.values import Amount, AwardType, Period, SourceSpan, Unit

NUM = r"[\d,]*\d(?:\.\d+)?"
WORD = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
SCALE = r"(?:\s(?:thousand|million|billion))?"


@dataclass
class Sentence:
    text: str
    start: int
    paragraph_award: AwardType | None


@dataclass
class Context:
    note: StockCompensationNote
    calendar: FiscalCalendar
    fiscal_end: date
    paragraph_day: date | None = None  # the one day or month an earlier sentence of the paragraph named (named_day)
    carried: date | None = None  # that day, while reading a sentence that names no date of its own
    award: AwardType | None = None  # the award an earlier sentence named, as of the sentences in `unread`
    unread: list[str] = dataclasses.field(
        default_factory=list
    )  # later sentences that may name one: read when it is asked for

    @property
    def previous_award(self) -> AwardType | None:
        """The award the latest earlier sentence naming one named first ("These options …" refers to it).
        Asked of a few sentences a note: the sentences before are read for it only then, latest first."""
        for text in reversed(self.unread):
            if (named := first_award(text)) is not None:
                self.award = named
                break
        self.unread.clear()
        return self.award

    @previous_award.setter
    def previous_award(self, award: AwardType | None) -> None:
        self.award, self.unread = award, []


def _term_period(ctx: Context) -> Period:
    """A plan term's date: the grant date the paragraph named when the sentence names none ("These stock
    options … expire ten years after the grant date"), else the latest fiscal period end."""
    return Period.at(ctx.carried or ctx.fiscal_end)


_SCALE_AFTER = regex(r"\s(thousand|million|billion)\b")


def _number(match: re.Match[str], group: str, sentence: Sentence, unit: Unit, period: Period) -> Amount | None:
    """The Amount for a regex group; a scale word right after it ("4.4 million") scales it."""
    raw = match.group(group)
    if raw is None:
        return None
    start = sentence.start + match.start(group)
    value = parse_word_number(raw)
    if value is None:
        return None
    tail = sentence.text[match.end(group) : match.end(group) + 10].lower()
    scale_match = _SCALE_AFTER.match(tail)
    exponent = SCALE_WORDS[scale_match.group(1)] if scale_match and unit in ("shares", "USD") else 0
    if unit == "pure":
        value, exponent = value / 100, 0
    amount = word_amount(apply_scale(value, exponent) if unit != "pure" else value, raw, start, unit, period)
    amount.scale = exponent
    amount.decimals = len(raw.split(".")[1]) if "." in raw else 0
    return amount


def _as_of(sentence: Sentence, ctx: Context) -> Period:
    dates = find_dates(sentence.text)
    return Period.at(dates[0][0] if dates else ctx.fiscal_end)


def _award(sentence: Sentence, *spans: str) -> AwardType | None:
    for text in spans:
        award = find_award(text)
        if award:
            return award
    return sentence.paragraph_award


def _plan(ctx: Context, award: AwardType | None) -> PlanTerms:
    for plan in ctx.note.plans:
        if plan.award == award:
            return plan
    plan = PlanTerms(award=award)
    ctx.note.plans.append(plan)
    return plan


def _set_once(target: object, field: str, value: Amount | None) -> None:
    if value is not None and getattr(target, field) is None:
        setattr(target, field, value)


# -- handlers: each receives the match, the sentence and the context ------------------------------


def _preferred(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    preferred = ctx.note.preferred_stock or PreferredStock()
    period = Period.at(ctx.fiscal_end)
    _set_once(preferred, "shares_authorized", _number(m, "shares", s, "shares", period))
    _set_once(preferred, "par_value", _number(m, "par", s, "USD/share", period))
    ctx.note.preferred_stock = preferred


def _preferred_none(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    preferred = ctx.note.preferred_stock or PreferredStock()
    _set_once(preferred, "shares_outstanding", _number(m, "none", s, "shares", Period.at(ctx.fiscal_end)))
    ctx.note.preferred_stock = preferred


def _repurchase_program(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    program = ctx.note.share_repurchases or ShareRepurchases()
    period = _as_of(s, ctx)
    _set_once(program, "authorized_amount", _number(m, "total", s, "USD", period))
    _set_once(program, "remaining_authorization", _number(m, "left", s, "USD", period))
    ctx.note.share_repurchases = program


def _authorized(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    award: AwardType | None = "espp" if s.paragraph_award == "espp" else None
    plan = _plan(ctx, award)
    period = _as_of(s, ctx) if award is None else Period.at(ctx.fiscal_end)
    _set_once(plan, "shares_authorized", _number(m, "shares", s, "shares", period))
    if "available" in m.groupdict():
        _set_once(plan, "shares_available", _number(m, "available", s, "shares", period))


def _available(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    award: AwardType | None = "espp" if s.paragraph_award == "espp" else None
    _set_once(_plan(ctx, award), "shares_available", _number(m, "shares", s, "shares", _as_of(s, ctx)))


_MOST_OR_ALL = regex(r"\bmost awards\b|\ball\b", re.I)


def _vesting(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    award = _award(s, m.group("subject") or "")
    if m.group("subject") and _MOST_OR_ALL.search(m.group("subject")):
        award = None
    _set_once(_plan(ctx, award), "vesting_period", _number(m, "years", s, "years", _term_period(ctx)))


_ALL = regex(r"\ball\b", re.I)


def _expiry(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    subject = m.group("subject") or ""
    award = None if _ALL.search(subject) else _award(s, subject)
    _set_once(_plan(ctx, award), "expiration_period", _number(m, "years", s, "years", _term_period(ctx)))


def _prose_balance(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    award = s.paragraph_award or first_award(s.text)
    if award is None:
        return
    period = _as_of(s, ctx)
    basis: Basis = "outstanding" if award == "dsu" else "nonvested"
    row = RollForwardRow(
        kind="ending",
        label=s.text[m.start() : m.end()],
        count=_number(m, "count", s, "shares", period),
        weighted_average_price=_number(m, "price", s, "USD/share", period),
    )
    ctx.note.award_activity.append(AwardRollForward(award=award, basis=basis, title="stated in text", rows=[row]))


def _espp_limit(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    _set_once(_plan(ctx, "espp"), "max_subscription_rate", _number(m, "pct", s, "pure", Period.at(ctx.fiscal_end)))


def _espp_purchases(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    year = int(m.group("year"))
    period = ctx.calendar.period(year)
    info = _year_info(ctx, "espp", year)
    _set_once(info, "shares_purchased", _number(m, "shares", s, "shares", period))
    _set_once(info, "average_purchase_price", _number(m, "price", s, "USD/share", period))


def _year_info(ctx: Context, award: AwardType | None, year: int) -> AwardYearInfo:
    end = ctx.calendar.year_end(year)
    for info in ctx.note.award_years:
        if info.award == award and info.fiscal_year_end == end:
            return info
    info = AwardYearInfo(award=award, fiscal_year_end=end)
    ctx.note.award_years.append(info)
    return info


def _granted_in_year(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    award = _award(s, m.group("what"))
    year = ctx.calendar.year_of(find_dates(m.group("when"))[0][0])
    info = _year_info(ctx, award, year)
    period = ctx.calendar.period(year)
    _set_once(info, "granted_count", _number(m, "count", s, "shares", period))
    _set_once(info, "granted_fair_value", _number(m, "price", s, "USD/share", period))


_RELATED_TO = deferred(r"\s*related to ([^.;,]*)", re.I)


def _unrecognized_total(m: re.Match[str], s: Sentence, ctx: Context) -> None:
    """ "... of total unrecognized compensation cost related to non-vested RSUs": the award the phrase names."""
    related = _RELATED_TO.match(s.text, m.end())
    named = named_awards(related[1]) if related else set()
    award = next(iter(named)) if len(named) == 1 else None  # "stock options and RSUs": the total of both
    ctx.note.unrecognized_cost.append(
        UnrecognizedCost(award=award, amount=_number(m, "total", s, "USD", _as_of(s, ctx)))
    )


# Lists resolved with "respectively": (phrase, field, unit); the award comes from the phrase.
RESPECTIVELY_MEASURES: list[tuple[re.Pattern[str], str, Unit]] = [
    (
        deferred(r"grant[- ]date (?:estimated )?fair value of (?P<what>[\w\s-]+?) granted", re.I),
        "granted_fair_value",
        "USD/share",
    ),
    (deferred(r"intrinsic value of (?P<what>[\w\s-]+?) exercised", re.I), "intrinsic_value_exercised", "USD"),
    (deferred(r"\d (?P<what>[A-Za-z][\w\s-]*?) that vested", re.I), "vested_count", "shares"),
    (deferred(r"(?P<what>these \w+) had a total (?:estimated )?fair value", re.I), "vested_fair_value", "USD"),
    (deferred(r"tax benefit realized", re.I), "tax_benefit_realized", "USD"),
    (
        deferred(r"(?P<what>expense) is expected to be recognized in the (?:fiscal )?years ending", re.I),
        "unrecognized_by_year",
        "USD",
    ),
]
_YEAR_LIST = deferred(
    r"(?:fiscal )?years? (?:ended|ending)\s+(?P<month>[A-Z][a-z]+\.?\s+\d{1,2}),\s+(?P<years>(?:19|20)\d\d(?:,?\s+(?:and\s+)?(?:19|20)\d\d)*)"
)
_VALUE = deferred(
    r"(?P<dollar>\$)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<scale>\s(?:thousand|million|billion))?"
)


def _respectively(s: Sentence, ctx: Context) -> None:
    years_match = _YEAR_LIST.search(s.text)
    if not years_match:
        return
    years = [int(y) for y in YEAR_DIGITS.findall(years_match.group("years"))]
    anchor = find_dates(years_match.group(0))
    if anchor:
        ctx_calendar = FiscalCalendar.from_end(anchor[0][0])
    else:
        ctx_calendar = ctx.calendar
    for pattern, field, unit in RESPECTIVELY_MEASURES:
        measure = pattern.search(s.text)
        if not measure:
            continue
        what = measure.groupdict().get("what") or ""
        award = (
            None
            if field in ("tax_benefit_realized", "unrecognized_by_year")
            else (ctx.previous_award if what.lower().startswith("these") else find_award(what))
        )
        values = [
            v
            for v in _VALUE.finditer(s.text)
            if not (years_match.start() <= v.start() < years_match.end())
            and not YEAR_DIGITS.fullmatch(v.group("num"))
            and (v.group("dollar") if unit != "shares" else True)
        ]
        if field == "unrecognized_by_year":
            values = [v for v in values if v.start() > s.text.find("of which")]
        if len(values) != len(years):
            continue
        for year, value in zip(years, values):
            end = ctx_calendar.year_end(year)
            magnitude = Decimal(value.group("num").replace(",", ""))
            exponent = SCALE_WORDS[value.group("scale").strip()] if value.group("scale") else 0
            start = s.start + value.start("num")
            src = SourceSpan(start=start, end=start + len(value.group("num")), text=value.group("num"))
            if field == "unrecognized_by_year":
                amount = Amount(
                    value=apply_scale(magnitude, exponent), unit=unit, scale=exponent, period=_as_of(s, ctx), source=src
                )
                ctx.note.unrecognized_cost.append(UnrecognizedCost(year=end, amount=amount))
                continue
            period = ctx.calendar.period(ctx.calendar.year_of(end))
            amount = Amount(
                value=apply_scale(magnitude, exponent), unit=unit, scale=exponent, period=period, source=src
            )
            _set_once(_year_info(ctx, award, ctx.calendar.year_of(end)), field, amount)
        if award:
            ctx.previous_award = award
        return


class SubjectRule:
    """A pattern `(?P<subject>[chars]*?)tail` (the words before a cue phrase: "Restricted stock units vest
    over four years") found in time linear in the sentence. As one regex, the lazy subject is retried from
    every position of the sentence; here the tail is found first and the subject's start worked out from it,
    so the matches (and their groups) are exactly the regex's."""

    def __init__(self, chars: str, tail: str) -> None:
        self.pattern = deferred(rf"(?P<subject>{chars}*?){tail}", re.I)
        self._tail = regex(tail, re.I)
        self._char = deferred(chars)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        start = 0
        while (tail := self._tail.search(text, start)) is not None:
            # The regex's first match begins where the run of subject characters before the tail begins
            # (never before the end of its previous match), and its lazy subject stops at this tail.
            begin = tail.start()
            while begin > start and self._char.match(text, begin - 1):
                begin -= 1
            match = self.pattern.match(text, begin)
            if match is None:  # cannot happen: the subject run reaches the tail
                break
            yield match
            start = match.end() if match.end() > match.start() else match.end() + 1


Finder = re.Pattern[str] | SubjectRule

# Each rule: what finds it, what it fills, and a phrase every match contains (lower case, ASCII, plain characters
# of its pattern): a sentence whose screen_text lacks it is not searched by the rule.
RULES: list[tuple[Finder, Callable[[re.Match[str], Sentence, Context], None], str]] = [
    (
        regex(rf"authorized (?P<shares>{NUM}) shares of preferred stock, \$(?P<par>{NUM}) par value", re.I),
        _preferred,
        "preferred stock",
    ),
    (
        regex(r"\b(?P<none>No) shares of preferred stock are (?:currently )?outstanding", re.I),
        _preferred_none,
        "preferred stock",
    ),
    (
        regex(
            rf"a total of \$(?P<total>{NUM}){SCALE} of board authorizations for repurchases.*?of which \$(?P<left>{NUM}){SCALE} remained available",
            re.I,
        ),
        _repurchase_program,
        "board authorizations for repurchases",
    ),
    (
        regex(
            rf"authorized up to (?P<shares>{NUM}) shares of common stock with a total of (?P<available>{NUM}) shares remaining available",
            re.I,
        ),
        _authorized,
        "authorized up to",
    ),
    (
        regex(
            rf"(?:a total of|up to) (?P<shares>{NUM}){SCALE} shares of (?:our )?common stock (?:had been|have been|could be|may be|are|were) (?:authorized|issued)",
            re.I,
        ),
        _authorized,
        "common stock",
    ),
    (
        regex(rf"reserved for future grants?[^.]*? (?:was|were) (?P<shares>{NUM})", re.I),
        _available,
        "reserved for future grant",
    ),
    (
        regex(
            rf"(?P<shares>{NUM}){SCALE} (?:shares|share based awards|share-based awards|awards) (?:were|are|remain) available (?:to be granted|for (?:future )?grants?)",
            re.I,
        ),
        _available,
        "available",
    ),
    (
        SubjectRule(r"[\w\s-]", rf"\bvest (?:annually |ratably )?(?:in equal amounts )?over (?P<years>{WORD}) years"),
        _vesting,
        "vest ",
    ),
    (regex(rf"(?P<subject>)\b(?P<years>{WORD})-year vesting period", re.I), _vesting, "-year vesting period"),
    (SubjectRule(r"[\w\s-]", rf"\bexpire (?P<years>{WORD}) years after"), _expiry, "expire "),
    (SubjectRule(r"[\w\s()-]", rf"\bhave a life of (?P<years>{WORD}) years"), _expiry, "have a life of"),
    (
        regex(
            rf"(?P<count>{NUM}) (?:units|shares) (?:were|was) outstanding at a weighted average grant date fair value (?:per share )?of \$(?P<price>{NUM})",
            re.I,
        ),
        _prose_balance,
        "outstanding at a weighted average grant date",
    ),
    (
        regex(
            rf"there (?:were|was) (?P<count>{NUM}) shares outstanding at a (?:weighted average )?grant date (?:fair )?value of \$(?P<price>{NUM})",
            re.I,
        ),
        _prose_balance,
        "shares outstanding at a",
    ),
    (
        regex(r"limited to (?P<pct>\d+(?:\.\d+)?)% of (?:their )?eligible compensation", re.I),
        _espp_limit,
        "eligible compensation",
    ),
    (
        regex(
            rf"(?P<shares>{NUM}) shares at an average price per share of \$(?P<price>{NUM}) during fiscal (?P<year>(?:19|20)\d\d)",
            re.I,
        ),
        _espp_purchases,
        "shares at an average price per share of $",
    ),
    (
        regex(
            rf"granted (?P<count>{NUM}) (?P<what>[\w\s-]+?) during the (?:fiscal )?year ended (?P<when>[A-Z][a-z]+\.? \d{{1,2}}, \d{{4}}) with a weighted[- ]average grant[- ]date (?:estimated )?fair value of \$(?P<price>{NUM})",
            re.I,
        ),
        _granted_in_year,
        "with a weighted",
    ),
    (
        regex(rf"there was \$(?P<total>{NUM}){SCALE} of total unrecognized compensation (?:expense|cost)", re.I),
        _unrecognized_total,
        "of total unrecognized compensation",
    ),
]


_LEAD_IN = regex(r"\s*([A-Z][\w-]*(?:[\s-]+[A-Z][\w-]*)*)\.\s")  # "Restricted Stock Units.  …"
# a sentence: up to its end mark, past the points of "3.5", "U.S." and the like
_SENTENCE = regex(r"[^.!?]*(?:\.(?=\d)[^.!?]*|\b(?:U\.S|No|Inc|approx)\.[^.!?]*)*[.!?]?")


def sentences(text: str, spans: list[tuple[int, int]]) -> list[Sentence]:
    """Sentences of the prose paragraphs at `spans`, each with its paragraph's lead-in award."""
    out: list[Sentence] = []
    for start, end in spans:
        paragraph = text[start:end]
        lead = _LEAD_IN.match(paragraph)
        paragraph_award = find_award(lead.group(1)) if lead else None
        for match in _SENTENCE.finditer(paragraph):
            if match.group(0).strip():
                out.append(Sentence(match.group(0), start + match.start(), paragraph_award))
    return out


def extract_prose(
    note: StockCompensationNote,
    text: str,
    spans: list[tuple[int, int]],
    calendar: FiscalCalendar,
    fiscal_end: date,
    usd_scale: int = 0,
) -> Reading:
    """Read the numbers of every sentence: first the sentence patterns (each fills a field once), then every
    number they left, generically, by the cue phrases near it (prose_reader). Returns what was read and
    the numbers left unread. `usd_scale`: the scale unscaled dollars are known to be in (implied_scale)."""
    ctx = Context(note, calendar, fiscal_end)
    split = [sentences(text, [span]) for span in spans]  # each paragraph's sentences, for both passes
    for found in split:
        ctx.paragraph_day = None
        for sentence in found:
            phrases = find_phrases(sentence.text, calendar)
            ctx.carried = None if phrases else ctx.paragraph_day
            if "respectively" in sentence.text:
                _respectively(sentence, ctx)
            screened = screen_text(sentence.text)
            for pattern, handler, phrase in RULES:
                if phrase in screened:
                    for match in pattern.finditer(sentence.text):
                        handler(match, sentence, ctx)
            if "respectively" not in sentence.text:
                ctx.unread.append(sentence.text)
            if phrases:
                day = named_day(phrases)
                ctx.paragraph_day = day.end if day else None
    used = {(a.source.start, a.source.end) for _, (_, a, _) in iter_located_amounts(note) if a.source}
    return read_prose(note, prose_sentences(text, spans, split), calendar, fiscal_end, used, usd_scale)


_HEADING = regex(r"^[^.;:\t]{2,120}$")


def prose_sentences(text: str, spans: list[tuple[int, int]], split: list[list[Sentence]]) -> list[ProseSentence]:
    """The sentences of the prose paragraphs, each with the award type its paragraph is about: the
    paragraph's lead-in ("Restricted Stock Units.  …") or the heading line above it ("Employee Stock
    Purchase Plan"). Table rows rendered as paragraphs (tab-separated cells) are not prose. `split`: each
    span's sentences (sentences(), which the sentence rules read first)."""
    out: list[ProseSentence] = []
    heading_award: AwardType | None = None
    for index, (start, end) in enumerate(spans):
        paragraph = text[start:end]
        stripped = paragraph.strip()
        if "\t" in paragraph or not stripped:
            continue
        if _HEADING.match(stripped) and not ANY_DIGIT.search(stripped):
            heading_award = find_award(stripped)
            continue
        for sentence in split[index]:
            award = sentence.paragraph_award or heading_award
            out.append(ProseSentence(sentence.text, sentence.start, index, award))
    return out
