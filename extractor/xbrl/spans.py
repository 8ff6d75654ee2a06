"""Where an inline fact is printed in the rendered text (`load(path).text`, what every backend reads),
so XBRL gold has sources like hand labels. The renderer keeps document order and drops the tags,
so a printing is found by its number, after the previous fact's, with the same words before it."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left

from lxml import etree

from extractor.numbers import parse_word_number
from extractor.regex_cache import regex
from extractor.schemas.values import SourceSpan
from extractor.xbrl.instance import is_ix, local

_BLOCKS = frozenset(
    [
        "p",
        "div",
        "td",
        "th",
        "li",
        "tr",
        "table",
        "tbody",
        "thead",
        "body",
        "html",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "br",
    ]
)
_NO_SPACE = regex(r"\s+")
_CONTEXT_CHARS = 16  # characters of words before a printing compared


def _text_before(element: etree._Element) -> str:
    """Up to 16 characters (spaces dropped) printed before the element in its paragraph or cell:
    tells "No shares" from the "No" that starts the sentence."""
    pieces: list[str] = []
    node = element
    while sum(map(len, pieces)) < 4 * _CONTEXT_CHARS:
        for sibling in node.itersiblings(preceding=True):
            if sibling.tail:
                pieces.append(sibling.tail)
            if isinstance(sibling.tag, str) and local(sibling.tag).lower() in _BLOCKS:
                return _NO_SPACE.sub("", "".join(reversed(pieces)))[-_CONTEXT_CHARS:]
            pieces.append("".join(sibling.itertext()))
        parent = node.getparent()
        if parent is None:
            break
        if parent.text:
            pieces.append(parent.text)
        if not isinstance(parent.tag, str) or local(parent.tag).lower() in _BLOCKS:
            break
        node = parent
    return _NO_SPACE.sub("", "".join(reversed(pieces)))[-_CONTEXT_CHARS:]


def _hidden(element: etree._Element) -> bool:
    return any(is_ix(a, "header") or is_ix(a, "hidden") for a in element.iterancestors())


class Printings:
    """Finds the printing of each fact in turn, in document order, in one rendered text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0
        self.spans: dict[etree._Element, SourceSpan] = {}
        # the text without whitespace, where the words before a number are looked for with str.find
        # (a whole-document search per fact stays fast), and where each of its characters stands
        self.squeezed = _NO_SPACE.sub("", text)
        self.offsets = array("l", (i for i, ch in enumerate(text) if not ch.isspace()))

    def source(self, element: etree._Element, printed: str | None) -> SourceSpan | None:
        """Where the printed number stands: the next occurrence after the previous fact's that the
        same words precede, else the next occurrence; a fact nested in another shares its span.
        None for a hidden fact and for text that prints no number."""
        if not printed or parse_word_number(printed) is None or _hidden(element):
            return None
        for ancestor in element.iterancestors():
            if ancestor in self.spans and self.spans[ancestor].text == printed:
                return self.spans[ancestor]
        # the document's own number: re.compile (re's in-process cache), not kept between runs by regex_cache
        pattern = re.compile(r"(?<![\w.])(?<!\d,)" + re.escape(printed) + r"(?!\w)(?![.,]\d)")  # noqa: TID251
        chosen = self._after_words(pattern, printed, _text_before(element)) or pattern.search(self.text, self.cursor)
        if chosen is None:
            return None
        self.cursor = chosen.end()
        span = SourceSpan(start=chosen.start(), end=chosen.end(), text=printed)
        self.spans[element] = span
        return span

    def _after_words(self, pattern: re.Pattern[str], printed: str, context: str) -> re.Match[str] | None:
        """The first printing from the cursor on that `context` precedes (spaces aside), anywhere in
        the rest of the document: a fact far from the previous one is still told by its words."""
        needle = context + _NO_SPACE.sub("", printed)
        start = max(0, bisect_left(self.offsets, self.cursor) - len(context))
        while (found := self.squeezed.find(needle, start)) >= 0:
            match = pattern.match(self.text, self.offsets[found + len(context)])
            if match:
                return match
            start = found + 1
        return None
