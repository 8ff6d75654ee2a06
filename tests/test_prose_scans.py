"""The prose scans made linear (issue 23) find exactly what the plain regexes they replace find, on every
sentence of the real-filing suite's notes and on the awkward cases: the regexes are kept here as oracles."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest
from fixture_paths import SEED_002

from extractor import periods
from extractor.backends import rules
from extractor.backends.rules import implied_scale, prose, prose_dates, prose_numbers
from extractor.backends.rules.lexicon import AWARD_PATTERNS, LINE_ITEMS, first_award
from extractor.backends.rules.prose_reader import load_cues
from extractor.llm import grounding
from extractor.llm.markdown import flat
from extractor.loaders import cover, load, load_text
from extractor.numbers import NUMBER_RE, WORD_NUMBERS, scale_exponent, scale_word_after
from extractor.patterns import _last_characters, ends_at, finditer_from, may_match, required_phrases, screen_text
from extractor.periods import MONTH_NAMES, FiscalCalendar
from extractor.schemas.concepts import to_facts
from extractor.tables import tokens
from extractor.validator import coverage

ROOT = Path(__file__).resolve().parents[1]
AWKWARD = [
    "Options vest over four years and expire ten years after the date of grant; RSUs vest over three years.",
    "Awards granted to directors (the 2019 Plan) have a life of ten years",
    "   vest over 4 years",
    "Note 12, Rule 10b5-1, Form 10-K, No. 3, § 5, #7 and note\u00a0 14 and annotes 9",
    "On March 1, 2024 and Sept. 30,  2023, in June 2022, May1, 2021 and 123, 2020; Mar. 5 2019",
    "$ (5.2) million, $12, ( 3 ), (4) items, a-1 and 401(k)",
]


def _sentences() -> list[str]:
    found = list(AWKWARD)
    for path in sorted((ROOT / "evals" / "suites" / "real" / "documents").glob("*.html")):
        text = load(path).text.replace("\n", " ")
        found += [m.group(0) for m in re.finditer(r"[^.!?]*[.!?]?", text) if m.group(0).strip()]
    return found


SENTENCES = _sentences()


def _spans(matches) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in matches]


@pytest.mark.parametrize("rule", [r for r, _, _ in prose.RULES if isinstance(r, prose.SubjectRule)])
def test_subject_rules_find_what_their_regex_finds(rule: prose.SubjectRule) -> None:
    for sentence in SENTENCES:
        assert _spans(rule.finditer(sentence)) == _spans(rule.pattern.finditer(sentence)), sentence


def test_rule_phrases_are_in_every_match() -> None:
    for finder, _, phrase in prose.RULES:
        pattern = finder.pattern if isinstance(finder, prose.SubjectRule) else finder
        for sentence in SENTENCES:
            for match in pattern.finditer(sentence):
                assert phrase in screen_text(match.group(0)), (phrase, match.group(0))


_SKIP_BEFORE = re.compile(
    r"(?:\b(?:note|notes|section|sections|rule|item|asc|asu|topic|form|class|level|tier|phase|no\.|number|schedule|"
    r"article|exhibit|part|fas|sfas|irc|code)\s*|[#§]\s*)$",
    re.I,
)
_MONTH_BEFORE = re.compile(r"\b(?:" + MONTH_NAMES + r")\.?\s*(?:\d{1,2},?\s*)?$", re.I)


def test_checks_before_a_number_agree_with_the_whole_prefix_regexes() -> None:
    checked = 0
    for sentence in SENTENCES:
        for start in range(len(sentence) + 1):
            before = sentence[:start]
            assert prose_numbers._after_reference_word(sentence, start) == bool(_SKIP_BEFORE.search(before))
            assert prose_numbers._after_month(sentence, start) == bool(_MONTH_BEFORE.search(before))
            assert (prose_numbers._printed_before(sentence, start) == "$") == before.rstrip().endswith("$")
            checked += 1
    assert checked > 100_000


def test_first_award_is_the_earliest_named_then_first_by_name() -> None:
    named = [(award, pattern) for award, pattern in AWARD_PATTERNS if award != "other"]
    for sentence in SENTENCES:
        hits = [(m.start(), award) for award, p in named for m in [p.search(sentence)] if m]
        assert first_award(sentence) == (min(hits)[1] if hits else None), sentence


# The number scans before each was given a first-character test (issue 23): the same matches, same groups.
_OLD_SCANS = [
    (
        NUMBER_RE,
        r"(?:(?P<lead_currency>\$)\s*)?(?:(?P<open>\()\s*)?(?:(?P<currency>\$)\s*)?(?P<sign>[-\u2212])?"
        r"(?P<digits>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
        r"(?:\s*(?P<percent>%))?(?:\s*(?P<close>\)))?(?:\s*(?P<trail_percent>%))?",
        0,
    ),
    (
        prose_numbers._DIGITS,
        r"(?<![\w.,/-])(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w/]|,\d|\.\d)",
        0,
    ),
    (
        prose_numbers._WORD,
        r"(?<![\w-])(?P<word>" + "|".join(sorted(prose_numbers.WORDS, key=len, reverse=True)) + r")(?![\w])",
        re.I,
    ),
    (
        prose_numbers._FRACTION,
        r"(?<![\w-])(?P<word>one|two|three)[- ](?P<den>half|thirds?|fourths?|quarters?|fifths?)\b",
        re.I,
    ),
    (
        grounding._DIGITS,
        r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+",
        0,
    ),
    (
        coverage._WORD_TERM,
        r"\b(" + "|".join(w for w, n in WORD_NUMBERS.items() if n) + r")(?=[\s-]+" + coverage._TERM + ")",
        re.I,
    ),
]
ODD = [
    "ſix years, ſeven-year, Ten Months, (−1.5)%, $ (.25), 1,234.5%, ٣ shares, $-3, (\u2212 4) and \u22127",
    "twenty-fourth",
]


@pytest.mark.parametrize(("scan", "old", "flags"), _OLD_SCANS, ids=lambda v: getattr(v, "pattern", str(v))[:20])
def test_number_scans_find_what_the_plain_regexes_find(scan: re.Pattern[str], old: str, flags: int) -> None:
    oracle = re.compile(old, flags)
    for text in [*SENTENCES, *ODD]:
        assert _spans(scan.finditer(text)) == _spans(oracle.finditer(text)), text


def test_a_cell_or_paragraph_is_flattened_as_the_whitespace_regex_flattens_it() -> None:
    """markdown.flat, grounding._fold and grounding._Folded split on str.isspace: the same characters as the
    regex engine's \\s."""
    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(r"\s", chr(c)))
    assert len(spaces) > 20  # NBSP, the ideographic space, the line and paragraph separators, …
    for text in [*SENTENCES, *ODD, f"{spaces}a{spaces}b {spaces}", "\u2028Granted\u3000 |\u00a0 1,601\x1c"]:
        assert flat(text) == re.sub(r"\s+", " ", text).strip(), text
        folded = grounding._fold_marks(text).lower()
        assert grounding._fold(text) == re.sub(r"\s+", " ", folded).strip(), text
        assert grounding._Folded(text).text == re.sub(r"\s+", " ", folded), text


def test_a_years_suffix_is_looked_for_at_the_end_only_and_found_as_the_whole_search_finds_it() -> None:
    words = ["years", "Year", "yrs", "YRS.", "yearſ", "  ", " ", "\t", "\u00a0", "\n", "5.3", "x", "s", ".", "y", "rs"]
    found = 0
    for text in [*SENTENCES, *ODD, *("".join(parts) for parts in itertools.product(words, repeat=3))]:
        expected, got = tokens._YEARS_SUFFIX.search(text), tokens._years_suffix(text)
        assert _spans([got] if got else []) == _spans([expected] if expected else []), text
        found += expected is not None
    assert found > 1000  # the case-blind words, the long s, five kinds of whitespace and a line end after the word


@pytest.mark.parametrize(
    ("pattern", "phrases"),
    [
        (r"unrecogni[sz]ed (?:total )?cost", ("unrecogni",)),  # the longest run; an optional group ends it
        (r"\bRSUs?\b|\brestricted stock units?", ("rsu", "restricted stock unit")),  # one per branch
        (r"ESPP|\d+", ()),  # a branch without a phrase: nothing is required
        (r"(?:has|have)\d", ("ha",)),  # the parser's shared prefix of the branches
        (r"(?:has|have) (?:been )?(?:authori[sz]ed)", ("authori",)),  # the longest
        (r"\s*(?:vest)+ over", (" over",)),  # a repeated item counts, the run goes on after it
        (r"(?-i:Note) \d+", (" ",)),  # a group with its own flags is passed over
        (r"€ price", (" price",)),  # only ASCII characters
    ],
)
def test_required_phrases_are_read_from_the_pattern(pattern: str, phrases: tuple[str, ...]) -> None:
    assert required_phrases(re.compile(pattern, re.I)) == phrases


def _lexicon_patterns() -> list[re.Pattern[str]]:
    found = [pattern for _, pattern in AWARD_PATTERNS] + [rule.pattern for rule in LINE_ITEMS]
    found += [pattern for _, pattern in coverage.LEXICON.out_of_scope]
    for cue in load_cues():
        found += [screen.pattern for screen in (*cue.cues, *cue.after, *cue.vetoes, *cue.require)]
    return found


def test_every_match_of_a_lexicon_pattern_holds_one_of_its_phrases() -> None:
    """The screen is exact: a text it rules out has no match (every sentence of the real suite and the seeds)."""
    texts = [*SENTENCES, *(path.read_text() for path in sorted((ROOT / "tests" / "fixtures").glob("*.txt")))]
    screened_out = 0
    for pattern in _lexicon_patterns():
        phrases = required_phrases(pattern)
        for text in texts:
            if not may_match(phrases, screen_text(text)):
                screened_out += 1
                assert pattern.search(text) is None, (pattern.pattern, text)
            for match in pattern.finditer(text):
                assert may_match(phrases, screen_text(match.group(0))), pattern.pattern
    assert screened_out > 100_000  # the screen does rule most texts out


def test_screen_text_folds_every_character_a_case_blind_ascii_literal_matches() -> None:
    """Besides the two cases of a letter, re's case folding matches four non-ASCII characters to ASCII
    literals; screen_text writes them as those letters, so a phrase screen holds in any text."""
    ascii_literal = re.compile(r"[\x00-\x7f]", re.I)
    for point in range(0x80, sys.maxunicode + 1):
        char = chr(point)
        if ascii_literal.fullmatch(char):
            assert re.fullmatch(re.escape(screen_text(char)), char, re.I), hex(point)
            assert screen_text(char).isascii() and len(screen_text(char)) == 1, hex(point)
    assert screen_text("ſtock \u212aEY İtem") == "stock key item"
    for phrases, text in [(("stock",), "Reſtricted ſtock"), (("restricted s",), "Restricted \u017ftock")]:
        assert may_match(phrases, screen_text(text))


def test_the_references_are_screened_by_their_last_characters() -> None:
    """A number's reference test first looks at the one character before its spaces ("$5", "of 5": no
    reference ends in "$" or a space); the lexicon's pattern gives the characters its words end in."""
    body = coverage.LEXICON.references.pattern.removesuffix(r"\s*$")
    last = _last_characters(sre_parse.parse(body, coverage.LEXICON.references.flags))
    assert last is not None and {"c", "e", "."} <= last and not {"$", "5", " "} & last


@pytest.mark.parametrize(
    "pattern",
    [
        coverage.LEXICON.references,
        re.compile(r"Note\s*$", re.I),  # a word then spaces: the window before the spaces
        re.compile(r"(?<!\d)No\.?\s*$"),  # a look-behind reaches before the window
        re.compile(r"a|note\s*$", re.I),  # not anchored as a whole: the prefix is searched
        re.compile(r"note\s", re.I),  # no anchor at all
        re.compile(r"\b(?:Forms|Rule|No\.|#)\s*$"),  # case-sensitive: its last characters screened case-blind
        re.compile(r"(?:Item|Section)s?\s*$", re.I),  # may end in "s" or not: no last-character screen
        re.compile(r"\b(?:Notes|Par+s|Topi[ck])\b\s*$", re.I),  # "ſ" and the Kelvin sign fold to s and k
    ],
    ids=lambda p: p.pattern[:24],
)
def test_ends_at_agrees_with_searching_the_whole_prefix(pattern: re.Pattern[str]) -> None:
    ends = ends_at(pattern)
    checked = 0
    for sentence in [
        *SENTENCES,
        "Note \n",
        "No.\u00a0 5, \u2003note\n\n",
        "Noteſ 4, ParS 5 and topi\u212a 6; Forms § 7",
    ]:
        for end in range(len(sentence) + 1):
            assert ends(sentence, end) == (pattern.search(sentence[:end]) is not None), (sentence[:end], pattern)
            checked += 1
    assert checked > 100_000


@pytest.mark.parametrize(("kind", "pattern"), prose_dates._PATTERNS, ids=[kind for kind, _ in prose_dates._PATTERNS])
def test_date_patterns_find_what_they_find_without_their_first_letter_lookahead(
    kind: str, pattern: re.Pattern[str]
) -> None:
    assert pattern.pattern.startswith("(?="), kind
    oracle = re.compile(re.sub(r"^\(\?=[^)]*\)", "", pattern.pattern), pattern.flags)
    for sentence in [*SENTENCES, "ſeptember 30, 2024 and 2023", "For the year ended ſept. 30, 2024"]:
        assert _spans(pattern.finditer(sentence)) == _spans(oracle.finditer(sentence)), sentence


def test_words_looked_up_after_a_case_blind_match_are_folded_as_the_match_was() -> None:
    """'Auguſt' and 'thouſands' match the month and scale patterns (re's case folding matches 'ſ' as s), so the
    tables of month, scale and number words are looked up by the folded word: by `word.lower()` a real note with
    such a letter raised KeyError and was lost. Read from a real filing, they give the facts its ASCII spelling does."""
    text = load(SEED_002).text
    odd = text.replace("August", "Auguſt").replace("thousands", "thouſands").replace("two", "twO")
    assert odd != text and len(odd) == len(text)

    def facts(document_text: str) -> list[tuple[object, ...]]:
        note = rules.extract(load_text(document_text, path="002.txt")).note
        return [(f.concept, f.value, f.period, f.dims, f.source and f.source.start) for f in to_facts(note)]

    assert facts(odd) == facts(text) != []
    assert scale_exponent("(in Thouſands)") == 3 and scale_word_after("5 mıllion", 1) == "million"

    def values(sentence: str) -> list[object]:
        return [number.value for number in prose_numbers.find_numbers(sentence)]

    fifths = "One-fifth{} of the options vest each year."
    assert values(fifths.format("ſ")) == values(fifths.format("s")) != []
    calendar = FiscalCalendar(12, 31)
    ended = "In the twenty-{}ix weeks ended June 30, 2024, we granted 5,000 RSUs."

    def periods(sentence: str) -> list[object]:
        return [phrase.periods for phrase in prose_dates.find_phrases(sentence, calendar)]

    assert periods(ended.format("ſ")) == periods(ended.format("s")) != []


# The patterns run over a whole note or filing, tried only where one of their starts is printed (finditer_from).
_WHOLE_TEXT_SCANS = [
    (periods._YEAR_ENDED, periods._YEAR_ENDED_STARTS),
    (periods._REPORTED, periods._REPORTED_STARTS),
    (periods._QUARTERLY, periods._QUARTERLY_STARTS),
    (implied_scale._STATED, implied_scale._STATED_STARTS),
]
# Each start in capitals, folded (the long s, the dotless i, the Kelvin sign), and run into a word before it.
ODD_WHOLE = [
    "FOR THE FISCAL YEARS ENDED JANUARY 31, 2025 AND 2024; YEAR ENDED June 30 2023, fiſcal yearſ ended Dec. 31",
    "As Of March 1, 2024, AT April 30, THROUGH May 2, ending Sept. 30, thrOugh June, 1 at\u00a0July 4, flat May 5",
    "ſix months ended, THREE  MONTHS, nine\nmonths, Quarter, QUARTERLY, the ninth month, fourquarters",
    "(DOLLARS IN THOUSANDS), thouſands, $5.2M, $ 12bn, $7 k, $\u00a03.1 b, \u212aelvin, Fıscal year ended",
    "Fıscal years ended March 31, FİSCAL YEAR ENDED June 30, bıllion, MİLLİONS, $5 \u212a, nıne months, NİNE MONTHS",
]


def _whole_texts() -> list[str]:
    texts = [load(path).text for path in sorted((ROOT / "evals" / "suites" / "real" / "documents").glob("*.html"))]
    texts += [path.read_text() for path in sorted((ROOT / "tests" / "fixtures").rglob("*.txt"))]
    return [*texts, *ODD_WHOLE, " ".join(ODD_WHOLE), ""]


WHOLE_TEXTS = _whole_texts()


@pytest.mark.parametrize(("pattern", "starts"), _WHOLE_TEXT_SCANS, ids=lambda v: getattr(v, "pattern", str(v))[:24])
def test_whole_text_scans_find_what_finditer_finds(pattern: re.Pattern[str], starts: tuple[str, ...]) -> None:
    """Every match begins with one of the starts, so trying the pattern only there finds every match."""
    found = 0
    for text in WHOLE_TEXTS:
        expected = list(pattern.finditer(text))
        for match in expected:
            assert screen_text(match.group(0)).startswith(starts), match.group(0)
        assert _spans(finditer_from(pattern, text, screen_text(text), starts)) == _spans(expected), text[:80]
        found += len(expected)
    assert found > 10  # each pattern matches somewhere: in the notes or the odd texts


def test_a_text_without_the_commissions_name_has_no_cover_heading() -> None:
    """read_cover looks for the heading only in a text that prints its required phrase."""
    assert cover._HEADING_PHRASES  # a phrase every match holds, so most notes are never searched line by line
    headed = 0
    for text in WHOLE_TEXTS:
        if not may_match(cover._HEADING_PHRASES, screen_text(text)):
            assert cover._HEADING.search(text) is None, text[:80]
        headed += cover._HEADING.search(text) is not None
    assert headed >= 3  # the fixtures' whole filings and covers
    alone = "FORM 10-K\n  Securities and Exchange Commission\nAcme Corp.\n"  # no "united", no "washington"
    assert cover._HEADING.search(alone) and may_match(cover._HEADING_PHRASES, screen_text(alone))


def test_sentence_ends_are_split_where_the_lookbehind_first_pattern_splits() -> None:
    """coverage._SENTENCE_END begins with its first space instead of a lookbehind: the same splits."""
    oracle = re.compile(r"(?<=[.;:])\s+(?=[A-Z(•])")
    texts = [*SENTENCES, *ODD, *WHOLE_TEXTS, "a.  B; \u00a0(c):\n\u2022 d. e.F", ". A", " A", ":\t\n B"]
    for text in texts:
        assert _spans(coverage._SENTENCE_END.finditer(text)) == _spans(oracle.finditer(text)), text[:80]
        assert coverage._SENTENCE_END.split(text) == oracle.split(text)
