"""Who filed it: the registrant, form and period a filing's cover page states.

The cover of a 10-K or 10-Q (and of most other SEC forms) follows the form's printed layout:

    UNITED STATES
    SECURITIES AND EXCHANGE COMMISSION
    FORM 10-K
    ☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) ...
    For the fiscal year ended December 31, 2024
    Commission File Number: 001-35551
    Meta Platforms, Inc.
    (Exact name of registrant as specified in its charter)
    ...
    Indicate by check mark ...

It is read from the rendered text (what a reader sees: never markup, never inline XBRL tags or
their hidden header), and only from its first `COVER_CHARS` characters: a 4 MB filing costs no
more than a note. A cover is recognised by the Commission's name on a line of its own; a
document without one (a note cut out of a filing, an R page) has no cover and every field stays
None. So does any field the cover does not state in one of the forms below: nothing is guessed
(the CIK is not printed on HTML covers; an annual report box is not taken to mean 10-K).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from extractor.document import DocumentMetadata
from extractor.patterns import deferred, may_match, required_phrases, screen_text
from extractor.periods import find_dates
from extractor.regex_cache import regex

COVER_CHARS = 15_000  # the cover is the first page: well inside this, whatever the filer's styling
_AFTER_HEADING = 8_000  # a cover ends this far after the Commission's name at the latest
_BEFORE_HEADING = 300  # and starts no further before it

# the Commission's name as the cover's heading: a line of its own ("UNITED STATES" and the address may share it)
_HEADING = regex(
    r"^[ \t]*(?:united[ \t]+states[ \t]+)?securities[ \t]+and[ \t]+exchange[ \t]+commission\b"
    r"[ \t,]*(?:washington\b[^\n]*)?$",
    re.I | re.M,
)
_HEADING_PHRASES = required_phrases(_HEADING)  # a note without them has no cover: not searched line by line
# where the cover's identity block ends: the check-mark questions, or the list of registered securities
_END = deferred(
    r"^[ \t]*(?:indicate[ \t]+by[ \t]+check[ \t]+mark|securities[ \t]+registered[ \t]+pursuant)", re.I | re.M
)
# "FORM 10-K", "Form 10-K/A", "FORM 20-F", "FORM 10-Q (Amendment No. 1)": on a line of its own
_FORM = deferred(
    r"^form[ \t]+((?:\d{1,2}|[sf])-[a-z0-9]{1,6}(?:[ \t]*/[ \t]*a)?)(?:[ \t]*\(amendment[ \t]+no\.?[ \t]*\d+\))?[ \t]*$",
    re.I | re.M,
)
# "For the fiscal year ended December 31, 2024", "FOR THE QUARTER ENDED JUNE 30, 2025", "For the quarterly period ended"
_PERIOD = deferred(
    r"^[ \t]*for[ \t]+the[ \t]+(?:fiscal[ \t]+)?(?:year|quarter|quarterly[ \t]+period|period)[ \t]+ended[ \t]*:?\s+",
    re.I | re.M,
)
_FILE_NUMBER = r"(\d{1,3}-\d{1,6}(?:-\d{1,3})?)\b"
# "Commission File Number: 001-35551", "Commission file number 1-442", "COMMISSION FILE NO. 0-19612"
_FILE_NUMBER_AFTER = deferred(r"commission[ \t]+file[ \t]+(?:number|no\.?)[ \t]*:?[ \t]*" + _FILE_NUMBER, re.I)
# "1-2360" on the line above "(Commission file number)"
_FILE_NUMBER_ABOVE = deferred(
    r"^[ \t]*" + _FILE_NUMBER + r"[ \t]*\n[ \t]*\(commission[ \t]+file[ \t]+(?:number|no\.?)\)", re.I | re.M
)
# "(Exact name of registrant as specified in its charter)", in any capitalization
_NAME_CAPTION = deferred(r"\(\s*(?:exact\s+)?name\s+of\s+(?:the\s+)?registrant\b[^)\n]*\)", re.I)
# another line of the cover, never a registrant's name
_NOT_NAME = deferred(
    r"commission[ \t]+file|file[ \t]+(?:number|no\b)|\bform[ \t]+\d|pursuant|\bended\b|transition[ \t]+period|"
    r"act[ \t]+of[ \t]+19|mark[ \t]+one|^or$",
    re.I,
)
# nor the first part of a name that wraps onto a second line
_NOT_FIRST_PART = deferred(r"commission|report|\bform\b|\d|^\(|:$", re.I)
_RULE = deferred(r"^[\s_\-=*.·•]*$")  # a drawn line, or nothing
_LONGEST_NAME = 150
_SPACES = regex(r"\s+")
_LETTER = regex(r"[A-Za-z]")


@dataclass(frozen=True)
class Cover:
    """What the cover states; None where it does not (or where this reader cannot tell)."""

    form: str | None = None
    company: str | None = None
    fiscal_period_end: date | None = None
    file_number: str | None = None  # the Commission file number: not a CIK


def read_cover(text: str) -> Cover:
    """The cover page's identity fields, from a filing's rendered text (its first COVER_CHARS only)."""
    head = text[:COVER_CHARS].replace("\u00a0", " ")
    heading = _HEADING.search(head) if may_match(_HEADING_PHRASES, screen_text(head)) else None
    if heading is None:
        return Cover()
    start = head.rfind("\n", 0, max(0, heading.start() - _BEFORE_HEADING)) + 1  # "FORM 10-K" may come first
    end = _END.search(head, heading.end())
    cover = head[start : min(end.start() if end else len(head), heading.end() + _AFTER_HEADING)]
    caption = _NAME_CAPTION.search(cover)
    above_name = cover[: caption.start()] if caption else cover  # the form prints form and period above the name
    return Cover(
        form=_form(above_name),
        company=_company(cover, caption) if caption else None,
        fiscal_period_end=_period_end(above_name),
        file_number=_file_number(cover),
    )


def with_cover(metadata: DocumentMetadata, text: str) -> DocumentMetadata:
    """`metadata` with the fields it lacks filled from the document's cover page (what it has is kept)."""
    cover = read_cover(text)
    filled = {
        name: value
        for name, value in (
            ("form", cover.form),
            ("company", cover.company),
            ("fiscal_period_end", cover.fiscal_period_end),
        )
        if value is not None and getattr(metadata, name) is None
    }
    return metadata.model_copy(update=filled) if filled else metadata


def _form(cover: str) -> str | None:
    for line in cover.split("\n"):
        match = _FORM.match(" ".join(line.split()))
        if match:
            return _SPACES.sub("", match[1]).upper()
    return None


def _period_end(cover: str) -> date | None:
    match = _PERIOD.search(cover)
    if match is None:
        return None
    dates = find_dates(cover[match.end() : match.end() + 40])
    return dates[0][0] if dates and dates[0][1] == 0 else None  # the date right after "ended", or none


def _file_number(cover: str) -> str | None:
    match = _FILE_NUMBER_AFTER.search(cover) or _FILE_NUMBER_ABOVE.search(cover)
    return match[1] if match else None


def _company(cover: str, caption: re.Match[str]) -> str | None:
    """The name printed above the first '(Exact name of registrant ...)' caption: in the caption's own cell,
    before it on its line, or on the one or two lines above it (a long name wraps)."""
    line_start = cover.rfind("\n", 0, caption.start()) + 1
    cells = cover[line_start : caption.start()].split("\t")
    same_line = _clean(cells[-1])
    if same_line:  # "Meta Platforms, Inc. (Exact name of registrant ...)" run together
        return _plausible(same_line)
    column = len(cells) - 1  # the caption's cell: the name is in the same cell of the row above
    above = cover[:line_start].rstrip("\n").split("\n")
    while above and _RULE.match(above[-1]):
        above.pop()  # rules and blank lines between the name and its caption
    parts: list[str] = []
    for line in reversed(above[-2:]):
        row = line.split("\t")
        cell = _clean(row[column] if len(row) > column else row[0] if len(row) == 1 else "")
        if not cell or (parts and not _continues(cell, parts[0])):
            break
        parts.insert(0, cell)
    return _plausible(" ".join(parts)) if parts else None


def _continues(line: str, name: str) -> bool:
    """Whether `line`, printed right above the name's last line, is its first part (a name in two lines)."""
    return (
        not _NOT_NAME.search(line)
        and not _NOT_FIRST_PART.search(line)
        and len(line) + len(name) < _LONGEST_NAME
        and (line.isupper() == name.isupper())
    )


def _clean(cell: str) -> str:
    return " ".join(cell.replace("\u200b", "").split()).strip(" _")


def _plausible(name: str) -> str | None:
    """A registrant's name has letters and fits on a line; a caption or a sentence is not one."""
    if not _LETTER.search(name) or len(name) > _LONGEST_NAME or name.startswith("(") or _NOT_NAME.search(name):
        return None
    return name
