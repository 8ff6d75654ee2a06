"""HTML to reader text: paragraphs one a line, tables one row a line with tab-separated cells.

Tables are read from the DOM, not guessed back from text: rowspans and colspans are expanded, `$`, `)`,
`%` and footnote cells joined to their number, spacer columns dropped, and empty cells kept empty (a tab
with nothing before the next), so no number moves column. Each table's grid (extractor.grid) records
every cell's span in the text, which reads as the table did to a person and to the review UI.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from lxml import etree

from extractor.document import DocumentMetadata, LoadError
from extractor.grid import GridCell, TableGrid

BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "li",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "center",
        "title",
        "dl",
        "dt",
        "dd",
        "hr",
        "body",
        "html",
    ]
)
CELL_TAGS = frozenset({"td", "th"})
SKIP_TAGS = frozenset({"script", "style", "head", "noscript", "template"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")  # not \s: non-breaking spaces are cell content
_CELL_SPACES = re.compile(r"[\s\u00a0\u200b]+")
_NUMERIC = re.compile(r"\d")
_JOIN_RIGHT = frozenset({"$", "(", "($", "$("})  # joined to the cell after them
_RANGE_DASHES = frozenset({"-", "\u2013", "to"})
_JOIN_LEFT = re.compile(r"^(?:\)|%|\)%|%\)|\([a-z]\)|\*+)$")  # joined to the cell before them


def _hidden(element: etree._Element) -> bool:
    style = element.get("style")
    if not style:
        return False
    return "display:none" in style.replace(" ", "").lower()


def _cell_text(element: etree._Element) -> str:
    """A cell's visible text on one line (its paragraphs and line breaks become spaces). Walked by lxml
    (iterwalk: no Python recursion, so a cell nested thousands of elements deep is read too)."""
    if not len(element):  # most cells: text only
        return _CELL_SPACES.sub(" ", element.text or "").strip()
    parts: list[str] = []
    walker = etree.iterwalk(element, events=("start", "end", "comment", "pi"))
    for event, node in walker:
        tag = node.tag.lower() if isinstance(node.tag, str) else ""
        if event == "start":
            if tag in SKIP_TAGS or _hidden(node):
                walker.skip_subtree()  # its "end" still comes: the tail is added there
            else:
                if tag in BLOCK_TAGS or tag == "br":
                    parts.append(" ")
                if node.text:
                    parts.append(node.text)
        elif event == "end":
            if tag in BLOCK_TAGS and not _hidden(node):  # (no block tag is skipped by name)
                parts.append(" ")
            if node.tail and node is not element:
                parts.append(node.tail)
        elif node.tail:  # a comment or processing instruction: only its tail is text
            parts.append(node.tail)
    return _CELL_SPACES.sub(" ", "".join(parts)).strip()


def _depth_first(visit: Callable[[etree._Element], Iterator[etree._Element]], root: etree._Element) -> None:
    """Run a recursive walk with a stack of its own: `visit` yields each child it would recurse into, where it
    would. Old filings nest thousands of elements deep (a <font> per paragraph, never closed): deeper than
    Python's call stack."""
    stack = [visit(root)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        else:
            stack.append(visit(child))


@dataclass
class _Slot:
    """A DOM cell placed in the slot grid: its text, first row and column, and spans."""

    text: str
    row: int
    col: int
    rowspan: int
    colspan: int


def _own_rows(table: etree._Element) -> list[etree._Element]:
    """The table's rows, not those of tables nested in its cells."""
    return [tr for tr in table.iter("tr") if next(tr.iterancestors("table"), None) is table]


def _span(element: etree._Element, name: str) -> int:
    given = element.get(name)
    if given is None:
        return 1
    try:
        return max(1, min(int(given.strip() or 1), 100))
    except ValueError:
        return 1


def _slots(table: etree._Element) -> tuple[list[_Slot], int]:
    """DOM cells placed on a dense slot grid with rowspans and colspans expanded."""
    taken: dict[tuple[int, int], _Slot] = {}
    slots: list[_Slot] = []
    rows = [tr for tr in _own_rows(table) if not _hidden(tr)]
    for r, tr in enumerate(rows):
        c = 0
        for td in tr:
            if not isinstance(td.tag, str) or td.tag.lower() not in CELL_TAGS:
                continue
            while (r, c) in taken:
                c += 1
            slot = _Slot("" if _hidden(td) else _cell_text(td), r, c, _span(td, "rowspan"), _span(td, "colspan"))
            slots.append(slot)
            for dr in range(slot.rowspan):
                for dc in range(slot.colspan):
                    taken[(r + dr, c + dc)] = slot
            c += slot.colspan
    return slots, len(rows)


def _merge_markers(slots: list[_Slot]) -> None:
    """Join '$' to the cell after it and ')', '%', footnote marks to the cell before it, in each row."""
    by_row: dict[int, list[_Slot]] = {}
    for slot in slots:
        by_row.setdefault(slot.row, []).append(slot)
    for row in by_row.values():
        row.sort(key=lambda s: s.col)
        filled = [s for s in row if s.text]
        for i, slot in enumerate(filled):
            if slot.text in _JOIN_RIGHT and i + 1 < len(filled) and _NUMERIC.search(filled[i + 1].text):
                filled[i + 1].text = (
                    f"{slot.text} {filled[i + 1].text}" if slot.text == "$" else slot.text + filled[i + 1].text
                )
                slot.text = ""
        filled = [s for s in row if s.text]
        for i, slot in enumerate(filled):
            if i == 0 or not _JOIN_LEFT.match(slot.text):
                continue
            before = filled[i - 1]
            if slot.text[0] in ")%":
                if _NUMERIC.search(before.text):
                    before.text += slot.text
                    slot.text = ""
            else:  # a footnote mark: kept with the cell it annotates
                before.text = f"{before.text} {slot.text}"
                slot.text = ""
        filled = [s for s in row if s.text]
        for i in range(1, len(filled) - 1):  # a range printed over three cells: '26.8%', '-', '32.6%'
            left, dash, right = filled[i - 1], filled[i], filled[i + 1]
            if (
                dash.text in _RANGE_DASHES
                and _NUMERIC.search(left.text)
                and _NUMERIC.search(right.text)
                and (dash.text == "to" or any(mark in left.text + right.text for mark in "%$."))
            ):
                # the range stands where single values of its column stand: under the rightmost cell
                right.text = f"{left.text} {dash.text} {right.text}"
                dash.text = left.text = ""


def table_grid(table: etree._Element) -> list[list[tuple[str, int]]] | None:
    """The table as rows of (text, colspan) over logical columns, or None when it holds no data.

    A logical column is a slot column where some single-column cell has text; a wider cell (a header
    over several measures) covers the logical columns inside its span.
    """
    slots, height = _slots(table)
    if not slots:
        return None
    _merge_markers(slots)
    kept = {s.col for s in slots if s.text and s.colspan == 1}
    for s in slots:
        if s.text and not any(s.col <= c < s.col + s.colspan for c in kept):
            kept.add(s.col)
    columns = sorted(kept)
    index = {c: i for i, c in enumerate(columns)}
    rows: list[list[tuple[str, int]]] = [[("", 1) for _ in columns] for _ in range(height)]
    for s in slots:
        if not s.text:
            continue
        covered = [index[c] for c in range(s.col, s.col + s.colspan) if c in index]
        rows[s.row][covered[0]] = (s.text, len(covered))
    rows = [row for row in rows if any(text for text, _ in row)]
    data = any(_NUMERIC.search(text) for row in rows for text, _ in row[1:])
    if len(columns) < 2 or not data:
        return None
    return rows


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.buffer: list[str] = []
        self.offset = 0  # length of the text rendered so far (lines joined by newlines)
        self.grids: list[TableGrid] = []

    def _emit(self, line: str) -> int:
        start = self.offset + (1 if self.lines else 0)
        self.lines.append(line)
        self.offset = start + len(line)
        return start

    def flush(self) -> None:
        line = _SPACES.sub(" ", "".join(self.buffer)).strip(" ")
        if line:
            self._emit(line)
        self.buffer = []

    def _blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self._emit("")

    def render(self, root: etree._Element) -> None:
        _depth_first(self._render, root)

    def _render(self, element: etree._Element) -> Iterator[etree._Element]:
        """Render one element; yields the children to render in their place (see _depth_first)."""
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in SKIP_TAGS or _hidden(element):
            self._tail(element)
            return
        if tag == "table":
            self.flush()
            yield from self._table(element)
        elif tag in BLOCK_TAGS or tag in CELL_TAGS:
            self.flush()
            yield from self._inline(element)
            self.flush()
        elif tag == "br":
            self.flush()
        else:
            yield from self._inline(element)
        self._tail(element)

    def _table(self, table: etree._Element) -> Iterator[etree._Element]:
        if any(True for _ in table.iterdescendants("table")):
            for cell in table.iter("td", "th"):  # a wrapper (an R page's note cell): its content reads as blocks
                if next(cell.iterancestors("table"), None) is table:
                    self.flush()
                    yield from self._inline(cell)
                    self.flush()
            return
        rows = table_grid(table)
        if rows is None:  # a layout table (a bullet and its paragraph): its rows read as paragraphs
            for tr in _own_rows(table):
                if _hidden(tr):
                    continue
                texts = [_cell_text(td) for td in tr if isinstance(td.tag, str) and td.tag.lower() in CELL_TAGS]
                line = " ".join(t for t in texts if t)
                if line:
                    self._emit(line)
            return
        self._blank()
        grid = TableGrid(start=0, end=0, rows=len(rows), cols=len(rows[0]))
        for r, row in enumerate(rows):
            last = max(i for i, (text, _) in enumerate(row) if text)
            line = "\t".join(text for text, _ in row[: last + 1])
            start = self._emit(line)
            grid.row_starts.append(start)
            at = start
            for c, (text, span) in enumerate(row[: last + 1]):
                if text:
                    grid.cells.append(GridCell(row=r, col=c, colspan=span, start=at, end=at + len(text)))
                at += len(text) + 1
        grid.start, grid.end = grid.row_starts[0], self.offset
        self.grids.append(grid)
        self._emit("")

    def _inline(self, element: etree._Element) -> Iterator[etree._Element]:
        if element.text:
            self.buffer.append(element.text)
        for child in element:
            if isinstance(child.tag, str):
                yield child
            else:  # comments, processing instructions
                self._tail(child)

    def _tail(self, element: etree._Element) -> None:
        if element.tail:
            self.buffer.append(element.tail)


def html_to_text(path: str, markup: str) -> tuple[str, DocumentMetadata, list[TableGrid]]:
    """Render HTML (possibly truncated or malformed) to reader text, R-page metadata and table grids."""
    # lxml refuses str input that carries an encoding declaration (inline XBRL starts with one)
    markup = re.sub(r"^\s*<\?xml[^>]*\?>", "", markup, count=1)
    # Plain lxml elements (not lxml.html's, whose Python class lookup per element costs more than the parse);
    # huge_tree: else libxml2 stops at 256 levels of nesting, silently.
    parser = etree.HTMLParser(huge_tree=True)
    try:
        root = etree.fromstring(markup, parser=parser)
        if root is None:
            raise etree.ParserError("Document is empty")
    except (etree.ParserError, ValueError) as err:
        raise LoadError(path, f"the HTML could not be parsed ({err})") from err
    _refuse_partial(path, parser.error_log)
    renderer = _Renderer()
    renderer.render(root)
    renderer.flush()
    while renderer.lines and renderer.lines[-1] == "":
        renderer.lines.pop()
    text = "\n".join(renderer.lines)
    return text, _rpage_metadata(root), renderer.grids


def _refuse_partial(path: str, log: etree._ListErrorLog) -> None:
    """Malformed HTML is read as browsers would, but a fatal parser error means the tree stops where it
    struck: the document would be read only in part, so it is not read at all."""
    fatal = next((error for error in log if error.level == etree.ErrorLevels.FATAL), None)
    if fatal is None:
        return
    depth = _EXCESSIVE_DEPTH.search(fatal.message)
    if depth:
        raise LoadError(
            path,
            f"the HTML is nested deeper than the parser's limit of {int(depth[1]):,} levels (line {fatal.line}); "
            "it would be read only in part",
        )
    raise LoadError(
        path, f"the HTML parser stopped at line {fatal.line} ({fatal.message.strip()}); it would be read only in part"
    )


_EXCESSIVE_DEPTH = re.compile(r"Excessive depth in document: (\d+)")


def _rpage_metadata(root: etree._Element) -> DocumentMetadata:
    """R pages carry the note title and period end in their header cells."""
    headers = [_SPACES.sub(" ", th.xpath("string()")).strip() for th in root.iter("th")][:6]
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
    """ "Feb. 29, 2020" / "Jul. 31, 2018" / "December 31, 2019" as R pages print them."""
    cleaned = re.sub(r"\bSept\b", "Sep", text.replace(".", "").replace("\u00a0", " ").strip())
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%b %d %Y", "%B %d %Y"):
        try:
            return datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
    return None
