"""HTML to reader text: one table cell per line, as EDGAR's rendered R-page text has it.

Rendering tables one cell per line gives HTML notes, R pages and their stripped text the
same layout, so a single table rebuilder serves all of them and spans point into `text`.
"""

from __future__ import annotations

import re
from datetime import datetime

import lxml.html
from lxml import etree

from extractor.document import DocumentMetadata, LoadError

BLOCK_TAGS = frozenset(
    "p div h1 h2 h3 h4 h5 h6 ul ol li table tbody thead tfoot tr section article header footer "
    "blockquote pre center title dl dt dd hr body html".split()
)
CELL_TAGS = frozenset({"td", "th"})
SKIP_TAGS = frozenset({"script", "style", "head", "noscript", "template"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")  # not \s: non-breaking spaces are cell content


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.buffer: list[str] = []

    def flush(self, keep_empty: bool = False) -> None:
        line = _SPACES.sub(" ", "".join(self.buffer)).strip(" ")
        if line or keep_empty:
            self.lines.append(line)
        self.buffer = []

    def render(self, element: etree._Element) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in SKIP_TAGS or "display:none" in (element.get("style") or "").replace(" ", "").lower():
            self._tail(element)
            return
        if tag in CELL_TAGS:
            self.flush()
            self._inline(element)
            self.flush(keep_empty=True)
        elif tag in BLOCK_TAGS:
            self.flush()
            self._inline(element)
            self.flush()
        elif tag == "br":
            self.flush()
        else:
            self._inline(element)
        self._tail(element)

    def _inline(self, element: etree._Element) -> None:
        if element.text:
            self.buffer.append(element.text)
        for child in element:
            if isinstance(child.tag, str):
                self.render(child)
            else:  # comments, processing instructions
                self._tail(child)

    def _tail(self, element: etree._Element) -> None:
        if element.tail:
            self.buffer.append(element.tail)


def html_to_text(path: str, markup: str) -> tuple[str, DocumentMetadata]:
    """Render HTML (possibly truncated or malformed) to reader text plus R-page metadata."""
    # lxml refuses str input that carries an encoding declaration (inline XBRL starts with one)
    markup = re.sub(r"^\s*<\?xml[^>]*\?>", "", markup, count=1)
    try:
        root = lxml.html.document_fromstring(markup)
    except (etree.ParserError, ValueError) as err:
        raise LoadError(path, f"the HTML could not be parsed ({err})") from err
    renderer = _Renderer()
    renderer.render(root)
    renderer.flush()
    text = "\n".join(renderer.lines)
    return text, _rpage_metadata(root)


def _rpage_metadata(root: etree._Element) -> DocumentMetadata:
    """R pages carry the note title and period end in their header cells."""
    headers = [_SPACES.sub(" ", th.text_content()).strip() for th in root.iter("th")][:6]
    meta = DocumentMetadata()
    if headers:
        meta.title = headers[0] or None
    for cell in headers[1:]:
        parsed = parse_header_date(cell)
        if parsed:
            meta.fiscal_period_end = parsed
            break
    return meta


def parse_header_date(text: str):  # -> date | None
    """"Feb. 29, 2020" / "Jul. 31, 2018" / "December 31, 2019" as R pages print them."""
    cleaned = re.sub(r"\bSept\b", "Sep", text.replace(".", "").replace("\u00a0", " ").strip())
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%b %d %Y", "%B %d %Y"):
        try:
            return datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
    return None
