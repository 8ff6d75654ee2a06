"""Regex helpers shared by the rules backend and the validator."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, cast

from extractor.regex_cache import code_digest, derived, regex


def any_of(patterns: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One case-blind pattern matching wherever any of `patterns` does: a single scan that rules most texts out
    before each pattern is tried in turn. None when the patterns cannot be joined (a lexicon entry with its own
    named groups or inline flags); callers then try each one."""
    try:
        return regex("|".join(f"(?:{p.pattern})" for p in patterns), re.I)
    except re.error:
        return None


def initials(words: Iterable[str]) -> str:
    """A character class of the words' first characters: in a lookahead before a case-blind alternation of
    them, one test passes over most positions of a text, where Python (finding no literal prefix in a
    case-blind pattern) would try every word at each."""
    return "[" + "".join(sorted({re.escape(word[0]) for word in words})) + "]"


def required_phrases(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Lower-case ASCII phrases one of which every match of `pattern` contains, read from its parse: the
    longest run of plain characters it must match, or one per branch of an alternation. Python's regex engine
    finds no literal prefix in a case-blind pattern and so tries it at every position of a text; a phrase
    missing from the lower-cased text rules the pattern out by one substring test. () when none is known."""
    return phrases_of(pattern.pattern, pattern.flags)


def phrases_of(source: str, flags: int = 0) -> tuple[str, ...]:
    """required_phrases of a pattern not compiled (re.error if it is no pattern). Parsing is pure Python, some
    50 µs a pattern: what a parse gave is kept with the compiled regexes (regex_cache.derived) under a digest of
    the code reading it, so a changed reading is never answered from an older one."""
    return derived(source, flags, _reader(), lambda: _phrases(sre_parse.parse(source, flags)), _are_phrases)


@functools.cache
def _reader() -> str:
    return "required_phrases " + code_digest(phrases_of, _phrases)


def _are_phrases(value: object) -> bool:
    return type(value) is tuple and all(type(phrase) is str and phrase for phrase in value)


# The only characters besides its two cases that a case-blind ASCII literal matches (re's case folding):
# 'İ' and 'ı' match i, 'ſ' matches s, the Kelvin sign matches k. Written as that letter, a text shows the
# phrases of every match, ASCII or not.
_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


def screen_text(text: str) -> str:
    """The text as may_match tests it: lower-cased, the four characters above as their ASCII letter. Any
    match of a pattern, case-blind or not, holds one of its required_phrases here: a non-ASCII sentence (a
    curly quote, a dash) is screened like any other instead of being searched by every pattern."""
    if not text.isascii():
        for char, letter in _FOLDS:  # str.replace, not str.translate: 14 times faster on a sentence
            text = text.replace(char, letter)
    return text.lower()


def folded(word: str) -> str:
    """A word a case-blind pattern matched, as the lower-case ASCII a table of words is keyed by: re matches
    'Auguſt' and 'thouſands' as it matches 'August' and 'thousands', so a lookup by `word.lower()` would fail."""
    return screen_text(word)


def may_match(phrases: tuple[str, ...], screened: str) -> bool:
    """False only when the text (screen_text) holds none of a pattern's required_phrases: it cannot match."""
    if not phrases:
        return True
    for phrase in phrases:  # noqa: SIM110 - a loop, not any() over a generator: this runs some 1,500 times a note
        if phrase in screened:
            return True
    return False


def finditer_from(
    pattern: re.Pattern[str], text: str, screened: str, starts: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, the pattern tried only where `screened` (screen_text(text), of the text's length)
    begins one of `starts`: lower-case ASCII, one of which every match begins with (so none is empty). Python
    tries a case-blind pattern at every position of a text, some 20-40 ns each whatever it begins with; str.find
    passes over a note at a few ns a character. For the patterns run over a whole note."""
    places: set[int] = set()
    for start in starts:
        at = screened.find(start)
        while at != -1:
            places.add(at)
            at = screened.find(start, at + 1)
    end = 0
    for at in sorted(places):
        if at >= end and (match := pattern.match(text, at)) is not None:
            yield match
            end = match.end()


def ends_at(pattern: re.Pattern[str]) -> Callable[[str, int], bool]:
    r"""A test of `pattern.search(text[:end]) is not None` for every `end` of a text. A pattern `X\s*$` (X of
    bounded width w, no re.M) can only match in the w characters before the spaces that end at `end`: only
    those are searched, not the whole prefix again for every end. Any other pattern searches the prefix."""
    body = pattern.pattern.removesuffix(r"\s*$")
    anchored = list(sre_parse.parse(pattern.pattern, pattern.flags))[-1:] == [(sre.AT, sre.AT_END)]  # no "a|b$"
    width, end_chars = sre.MAXREPEAT, None
    if body != pattern.pattern and anchored and not pattern.flags & re.M:
        with contextlib.suppress(re.error):  # the rest is no pattern of its own: the prefix is searched
            parsed = sre_parse.parse(body, pattern.flags)
            width, end_chars = parsed.getwidth()[1], _last_characters(parsed)
    if width >= sre.MAXREPEAT:
        return lambda text, end: pattern.search(text, 0, end) is not None

    def test(text: str, end: int) -> bool:
        start = end
        while start and text[start - 1].isspace():
            start -= 1
        if end_chars is not None and (not start or screen_text(text[start - 1]) not in end_chars):
            return False  # X must end right before the spaces, in one of its last characters: "$5", "of 5" end in none
        return pattern.search(text, max(0, start - width), end) is not None

    return test


def _last_characters(items: Sequence) -> frozenset[str] | None:
    """The characters a match of a parsed pattern can end in, lower-cased, read from its last items (literals,
    classes of literals, alternations, groups, repeats of at least one); None when unknown, not ASCII, or a space
    (it could be one of the spaces after it). A text's character is in the set, as screen_text writes it, whenever
    it matches one of them, with or without re.I: the ASCII letters' case-blind matches are their two cases and
    the four characters screen_text folds to them (tests/test_prose_scans.py checks every code point)."""
    for op, arg in reversed(list(items)):
        if op is sre.AT:
            continue  # \b, ^: no character; the item before ends the match
        if op is sre.LITERAL:
            found: set[str] | frozenset[str] | None = {chr(arg)}
        elif op is sre.IN:
            found = {chr(value) for kind, value in arg if kind is sre.LITERAL}
            found = found if len(found) == len(arg) else None  # a range, class or negation: unknown
        elif op is sre.BRANCH:
            ends = [_last_characters(branch) for branch in arg[1]]
            found = None if any(end is None for end in ends) else set().union(*ends)  # type: ignore[arg-type]
        elif op is sre.SUBPATTERN:
            found = _last_characters(arg[3])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and arg[0] >= 1:
            found = _last_characters(arg[2])
        else:
            found = None
        if not found or not all(char.isascii() and not char.isspace() for char in found):
            return None  # a case-blind match folds case beyond ASCII (screen_text writes the four ASCII folds)
        return frozenset(char.lower() for char in found)
    return None


def union(phrase_lists: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """Phrases one of which any match of any of several patterns contains; () when one of them has none."""
    lists = list(phrase_lists)
    return () if not all(lists) else tuple(dict.fromkeys(phrase for phrases in lists for phrase in phrases))


def _phrases(items: Sequence) -> tuple[str, ...]:
    """The most selective phrases (longest shortest member) among the sequence's runs of literal characters,
    its alternations whose every branch has phrases, and the items it repeats at least once."""
    best: tuple[str, ...] = ()
    run: list[str] = []

    def consider(candidate: tuple[str, ...]) -> None:
        nonlocal best
        if candidate and min(map(len, candidate)) > (min(map(len, best)) if best else 0):
            best = candidate

    def end_run() -> None:
        consider(("".join(run),) if run else ())
        run.clear()

    def walk(sequence: Sequence) -> None:
        for op, av in sequence:
            if op is sre.LITERAL and av < 128:
                run.append(chr(av).lower())
            elif op is sre.SUBPATTERN and not av[1] and not av[2]:  # a group without flags of its own
                walk(av[3])
            else:
                end_run()
                if op is sre.BRANCH:
                    branches = [_phrases(branch) for branch in av[1]]
                    if all(branches):
                        consider(tuple(phrase for branch in branches for phrase in branch))
                elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[0] >= 1:
                    consider(_phrases(av[2]))

    walk(items)
    end_run()
    return best


class Screened:
    """A pattern with its required_phrases: `may_match(phrases, screen_text(text))` first, the regex only then. It is
    compiled on first use, as most texts never pass the screen: of a lexicon's 150 cue patterns a note needs
    some 40, and compiling the rest was a tenth of a rules extraction's start-up. Its syntax is checked at once
    (the phrases are read from its parse, or from a run that parsed it)."""

    __slots__ = ("source", "flags", "phrases", "_pattern")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self.phrases: tuple[str, ...] = phrases_of(source, flags)
        self._pattern: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            self._pattern = regex(self.source, self.flags)
        return self._pattern


def deferred(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled on first use: a module's patterns that only some inputs reach (a
    filing's cover, a whole filing's headings) cost a text note nothing at start-up. `pattern` (the source) is
    there at once; after the first use each method is the compiled pattern's own, found as fast."""
    return cast("re.Pattern[str]", _Deferred(source, flags))


_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class _Deferred:
    def __init__(self, source: str, flags: int) -> None:
        self.pattern, self._flags = source, flags

    def __getattr__(self, name: str) -> Any:  # only for a missing attribute: the first use of a method
        if name.startswith("__"):  # copy and pickle asking for hooks
            raise AttributeError(name)
        compiled = regex(self.pattern, self._flags)
        for attribute in (*_METHODS, "flags", "groups", "groupindex"):  # the compiled pattern's, from now on
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)
