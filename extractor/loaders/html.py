"""HTML to reader text: paragraphs one a line, tables one row a line with tab-separated cells.

Tables are read from the DOM, not guessed back from text: rowspans and colspans are expanded, `$`, `)`,
`%` and footnote cells joined to their number, spacer columns dropped, and empty cells kept empty (a tab
with nothing before the next), so no number moves column. Each table's grid (extractor.grid) records
every cell's span in the text, which reads as the table did to a person and to the review UI.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, compress
from operator import itemgetter
from pathlib import Path
from typing import Any

from lxml import etree

from extractor.document import DocumentMetadata, LoadError
from extractor.grid import GridCell, TableGrid
from extractor.loaders.dates import parse_header_date
from extractor.numbers import ANY_DIGIT
from extractor.regex_cache import regex


def _compiled() -> tuple[Callable[..., Any], ...] | None:
    """The compiled walk, table rows, table drawing and layout tables' lines (extractor/loaders/html_rows.pyx),
    where the install built them beside the lxml now installed; else None, and the Python reading (the same text,
    slower) reads every document (so does a module built for another lxml, or from another source than the .pyx
    beside it)."""
    try:
        with warnings.catch_warnings():  # Cython's "size changed" warning, an error under -W error
            warnings.simplefilter("ignore")
            from extractor.loaders import html_rows
        if etree.__version__ != html_rows.LXML_VERSION or not _built_from_source(html_rows.SOURCE_SHA256):
            return None
        return html_rows.rows, html_rows.walk, html_rows.draw, html_rows.paragraphs
    except Exception:  # not built (no C compiler), built for another lxml (a changed C API or struct), or an
        return None  # older build lacking one of these functions


def _built_from_source(sha256: str) -> bool:
    """Whether the compiled module was built from the html_rows.pyx beside this module (where it is not there, as
    in an install that left out package data, there is nothing to compare: yes)."""
    source = Path(__file__).with_name("html_rows.pyx")
    return not source.is_file() or hashlib.sha256(source.read_bytes()).hexdigest() == sha256


_compiled_rows, _compiled_walk, _compiled_draw, _compiled_paragraphs = _compiled() or (None, None, None, None)
COMPILED = _compiled_walk is not None  # whether HTML is read by the compiled reading (the benchmarks print it)


@contextmanager
def python_reading() -> Iterator[None]:
    """HTML read by the Python reading alone, as where the compiled one is not built: for the tests and the
    benchmark that compare the two (not thread-safe: it swaps this module's readers)."""
    global _compiled_rows, _compiled_walk, _compiled_draw, _compiled_paragraphs
    kept = _compiled_rows, _compiled_walk, _compiled_draw, _compiled_paragraphs
    _compiled_rows = _compiled_walk = _compiled_draw = _compiled_paragraphs = None
    try:
        yield
    finally:
        _compiled_rows, _compiled_walk, _compiled_draw, _compiled_paragraphs = kept


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
_SPACED_OR_SKIPPED = BLOCK_TAGS | SKIP_TAGS | {"br"}
_SPACES = regex(r"[ \t\r\n\f\v]+")  # not \s: non-breaking spaces are cell content
_NOT_ONE_SPACE = ("  ", "\t", "\n", "\r", "\f", "\v")  # what _SPACES would change: a text without them has none
_JOIN_RIGHT = frozenset({"$", "(", "($", "$("})  # joined to the cell after them
_RANGE_DASHES = frozenset({"-", "\u2013", "to"})
_JOIN_LEFT = regex(r"^(?:\)|%|\)%|%\)|\([a-z]\)|\*+)$")  # joined to the cell before them
_JOIN_LEFT_FIRST = frozenset(")%(*")  # what every _JOIN_LEFT match starts with
_JOIN_LEFT_AT_START = regex(r"(?:^|\0)[)%(*]")  # a row's cells joined by NUL: some cell could be one


def _hidden(element: etree._Element) -> bool:
    style = element.get("style")
    return bool(style) and _hides(style)


@lru_cache(maxsize=4096)
def _hides(style: str) -> bool:
    """Cached: a filing repeats a few hundred style strings over tens of thousands of elements."""
    return "display:none" in style.replace(" ", "").lower()


def _cell_text(element: etree._Element) -> str:
    """A cell's visible text on one line (its paragraphs and line breaks become spaces). Walked by lxml
    (iterwalk: no Python recursion, so a cell nested thousands of elements deep is read too). A hidden cell has
    none, whatever it holds."""
    if not len(element):  # most cells: text only
        return "" if _hidden(element) else _one_line(element.text or "")
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
    return _one_line("".join(parts))


def _one_line(text: str) -> str:
    """Every run of Unicode whitespace (the non-breaking space among it) and zero-width spaces made one space, and
    none at either end (str.split's whitespace is the regex \\s: the same characters)."""
    return " ".join(text.replace("\u200b", " ").split())


def _inline_only(cell: etree._Element) -> bool:
    """Whether the cell holds only visible inline elements: no block or line break (read as a space), no skipped
    or hidden element, no comment. Its text is then all its text nodes in order, with no walk needed."""
    for node in cell.iterdescendants():
        tag = node.tag
        if not isinstance(tag, str) or tag.lower() in _SPACED_OR_SKIPPED or _hidden(node):
            return False
    return True


def _one_block(cell: etree._Element) -> bool:
    """Whether the cell is one visible block holding only visible inline elements, with nothing but white space
    beside it (<td><p><span>1,234</span></p></td>: most cells of a filing made by a tool). The spaces _cell_text
    puts at the block's edges then fall at the ends of the cell's text, where they are dropped: its text is its
    text nodes in order too."""
    if len(cell) != 1:
        return False
    block = cell[0]
    tag = block.tag
    if not isinstance(tag, str) or tag.lower() not in BLOCK_TAGS or _hidden(block):
        return False
    if (cell.text and not cell.text.isspace()) or (block.tail and not block.tail.isspace()):
        return False  # (str.isspace: the white space str.split drops)
    return _inline_only(block)


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


@lru_cache(maxsize=256)
def _span(given: str) -> int:
    """A rowspan or colspan attribute's value, 1 to 100 (1 when unreadable). Cached: a filing spells a few values
    over tens of thousands of cells."""
    try:
        return max(1, min(int(given.strip() or 1), 100))
    except ValueError:
        return 1


@dataclass
class _Row:
    """One <tr>'s cells placed on the slot grid (rowspans and colspans expanded), in column order: the text,
    first slot column and colspan of each. Three lists, not an object a cell: a filing has 100,000 cells."""

    texts: list[str]
    cols: list[int]
    spans: list[int]


def _rows(table: etree._Element) -> list[_Row]:
    """The rows of a table with no table inside it (so every <tr> below it is its own), hidden rows left out,
    each cell's text on one line: read from libxml2's tree by the compiled reading where it is built and
    follows the table, else by the Python reading (the reference: both give the same rows)."""
    rows = None if _compiled_rows is None else _compiled_rows(table, _Row, _span, _one_line)
    if rows is None:
        rows = _read_rows(table)
        _collapse_spaces(rows)
    return rows


def _read_rows(table: etree._Element) -> list[_Row]:
    """The rows of a table, read through lxml, their cells' spaces not yet made one.

    A cell takes the first slot of its row that no rowspan from a row above holds. Only cells holding what
    _cell_text treats apart are walked; the others' spaces are collapsed for the whole table at once.
    """
    rows: list[_Row] = []
    held: set[tuple[int, int]] = set()  # slots taken by rowspans from rows above
    for tr in table.iter("tr"):
        if _hidden(tr):
            continue
        r, c = len(rows), 0
        row = _Row([], [], [])
        rows.append(row)
        texts, cols, spans = row.texts, row.cols, row.spans
        for td in tr:
            tag = td.tag
            if tag != "td" and tag != "th" and not (isinstance(tag, str) and tag.lower() in CELL_TAGS):
                continue
            while held and (r, c) in held:
                c += 1
            style = td.get("style")
            if style and _hides(style):
                texts.append("")
            elif not len(td):
                texts.append(td.text or "")
            elif _inline_only(td) or _one_block(td):  # its text nodes in order, as libxml2 gathers them
                texts.append(etree.tostring(td, method="text", encoding=str, with_tail=False))
            else:
                texts.append(_cell_text(td))
            colspan = td.get("colspan")
            span = 1 if colspan is None else _span(colspan)
            cols.append(c)
            spans.append(span)
            rowspan = td.get("rowspan")
            if rowspan is not None:
                held.update((r + dr, c + dc) for dr in range(1, _span(rowspan)) for dc in range(span))
            c += span
    return rows


def _collapse_spaces(rows: list[_Row]) -> None:
    """Every cell's text made one line, as _cell_text does, in one pass: the cells joined by NUL, which no parsed
    text holds (lxml reads it as U+FFFD) and which is no space."""
    joined = "\0".join(chain.from_iterable(row.texts for row in rows))
    parts = _one_line(joined).replace(" \0", "\0").replace("\0 ", "\0").split("\0")
    at = 0
    for row in rows:
        row.texts[:] = parts[at : at + len(row.texts)]
        at += len(row.texts)


def _merge_markers(texts: list[str]) -> None:
    """Join '$' to the cell after it and ')', '%', footnote marks to the cell before it, in one row. Each pass runs
    only on a row holding a cell it could move (set and regex scans in C: a 10-K has 30,000 rows)."""
    if not _JOIN_RIGHT.isdisjoint(texts):
        _join_right(texts)
    if _JOIN_LEFT_AT_START.search("\0".join(texts)):
        _join_left(texts)
    if not _RANGE_DASHES.isdisjoint(texts):
        _join_ranges(texts)


def _join_right(texts: list[str]) -> None:
    filled = [i for i, text in enumerate(texts) if text]
    for n, i in enumerate(filled):
        text = texts[i]
        if text in _JOIN_RIGHT and n + 1 < len(filled) and ANY_DIGIT.search(texts[filled[n + 1]]):
            after = filled[n + 1]
            texts[after] = f"{text} {texts[after]}" if text == "$" else text + texts[after]
            texts[i] = ""


def _join_left(texts: list[str]) -> None:
    filled = [i for i, text in enumerate(texts) if text]
    for n, i in enumerate(filled):
        text = texts[i]
        if n == 0 or text[0] not in _JOIN_LEFT_FIRST or not _JOIN_LEFT.match(text):
            continue
        before = filled[n - 1]
        if text[0] in ")%":
            if ANY_DIGIT.search(texts[before]):
                texts[before] += text
                texts[i] = ""
        else:  # a footnote mark: kept with the cell it annotates
            texts[before] = f"{texts[before]} {text}"
            texts[i] = ""


def _join_ranges(texts: list[str]) -> None:
    filled = [i for i, text in enumerate(texts) if text]
    for n in range(1, len(filled) - 1):  # a range printed over three cells: '26.8%', '-', '32.6%'
        left, dash, right = filled[n - 1], filled[n], filled[n + 1]
        if (
            texts[dash] in _RANGE_DASHES
            and ANY_DIGIT.search(texts[left])
            and ANY_DIGIT.search(texts[right])
            and (texts[dash] == "to" or any(mark in texts[left] + texts[right] for mark in "%$."))
        ):
            # the range stands where single values of its column stand: under the rightmost cell
            texts[right] = f"{texts[left]} {texts[dash]} {texts[right]}"
            texts[dash] = texts[left] = ""


def table_grid(table: etree._Element) -> tuple[list[str], int, dict[tuple[int, int], int]] | None:
    """The table (one with no table inside it) as drawn over logical columns, or None when it holds no data: one
    line a row, its cells' texts tab-separated (no text holds a tab) and none after its last text; the number of
    logical columns; the colspan of each cell covering more than one, by (row, column).

    A logical column is a slot column where some single-column cell has text; a wider cell (a header
    over several measures) covers the logical columns inside its span.
    """
    rows = _rows(table)
    if not any(row.texts for row in rows):
        return None
    return _draw_rows(rows) if _compiled_draw is None else _compiled_draw(rows)


def _draw_rows(rows: list[_Row]) -> tuple[list[str], int, dict[tuple[int, int], int]] | None:
    """table_grid of the table's rows: their marker cells joined, then laid out (the reference of the compiled
    html_rows.draw)."""
    for row in rows:
        if row.texts:
            _merge_markers(row.texts)
    kept: set[int] = set()
    wide_rows: list[_Row] = []
    for row in rows:
        if max(row.spans, default=1) == 1:  # most rows: their columns with text taken in C
            kept.update(compress(row.cols, row.texts))
        else:
            kept.update(col for text, col, span in zip(row.texts, row.cols, row.spans) if text and span == 1)
            wide_rows.append(row)
    for row in wide_rows:
        for text, col, span in zip(row.texts, row.cols, row.spans):
            if text and span > 1 and not any(c in kept for c in range(col, col + span)):
                kept.add(col)
    if len(kept) < 2:
        return None
    columns = sorted(kept)
    index = {c: i for i, c in enumerate(columns)}
    pick, last = itemgetter(*columns), columns[-1]
    lines: list[str] = []
    wide: dict[tuple[int, int], int] = {}
    for row in rows:
        if not any(row.texts):
            continue
        if len(row.cols) > last and row.cols[last] == last and max(row.spans) == 1:  # slot n is cell n: picked in C
            lines.append("\t".join(pick(row.texts)).rstrip("\t"))
            continue
        texts = [""] * len(index)
        for text, col, span in zip(row.texts, row.cols, row.spans):
            if not text:
                continue
            if span == 1:
                texts[index[col]] = text
            else:
                covered = [index[c] for c in range(col, col + span) if c in index]
                texts[covered[0]] = text
                if len(covered) > 1:
                    wide[len(lines), covered[0]] = len(covered)
        lines.append("\t".join(texts).rstrip("\t"))
    for line in lines:  # data: a digit past some line's first cell
        tab = line.find("\t")
        if tab >= 0 and ANY_DIGIT.search(line, tab):
            return lines, len(index), wide
    return None


@dataclass(frozen=True)
class DrawnTable:
    """A data table as rendered: its `lines` (see table_grid) from `start` to `end` of the text, over `cols`
    logical columns, with the colspans of its `wide` cells."""

    start: int
    end: int
    lines: list[str]
    cols: int
    wide: dict[tuple[int, int], int]

    def grid(self, cells: bool = True) -> TableGrid:
        """The table's grid: every non-empty cell's span in the text (without `cells`, only where it lies)."""
        grid = TableGrid(start=self.start, end=self.end, rows=len(self.lines), cols=self.cols)
        at = self.start
        for r, line in enumerate(self.lines if cells else ()):
            grid.row_starts.append(at)
            for c, text in enumerate(line.split("\t")):
                if text:
                    span = self.wide.get((r, c), 1)
                    grid.cells.append(GridCell(row=r, col=c, colspan=span, start=at, end=at + len(text)))
                at += len(text) + 1
        return grid


def grids(tables: list[DrawnTable], start: int, end: int) -> list[TableGrid]:
    """Every table's grid, with its cells only where it starts in text[start:end]: a whole filing's note reads
    its own tables, never the 500 others (which keep only their place: no stage reads their cells)."""
    return [table.grid(cells=start <= table.start < end) for table in tables]


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.buffer: list[str] = []
        self.offset = 0  # length of the text rendered so far (lines joined by newlines)
        self.tables: list[DrawnTable] = []

    def _emit(self, line: str) -> int:
        start = self.offset + (1 if self.lines else 0)
        self.lines.append(line)
        self.offset = start + len(line)
        return start

    def flush(self) -> None:
        if not self.buffer:
            return
        line = "".join(self.buffer)
        if any(run in line for run in _NOT_ONE_SPACE):  # a scan for these is cheap, a substitution is not
            line = _SPACES.sub(" ", line)
        line = line.strip(" ")
        if line:
            self._emit(line)
        self.buffer = []

    def _blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self._emit("")

    def render(self, root: etree._Element) -> None:
        pieces = None if _compiled_walk is None else _compiled_walk(root)
        if pieces is None:  # the Python walk: the reference, and the reading of what the compiled one hands back
            _depth_first(lambda element: self._walk(element, element is not root), root)
            return
        emit, draw = self._emit, self._draw
        for piece in pieces:  # a line of text, or a table with no table inside it
            if piece.__class__ is str:
                emit(piece)
            else:
                draw(piece)

    def _walk(self, top: etree._Element, cell: bool) -> Iterator[etree._Element]:
        """Render `top` (a wrapper table's cell: only its content) in one lxml walk; yields each wrapper table's
        cells to render in their place (see _depth_first). Skipped, hidden and line-break elements and tables
        give only their tail; blocks and cells are lines of their own; other elements run on inline."""
        walker = etree.iterwalk(top, events=("start", "end", "comment", "pi"))
        blocks: list[bool] = []  # for each open element: whether its end ends a line
        for event, element in walker:
            if event == "start":
                tag = element.tag.lower() if isinstance(element.tag, str) else ""  # (always a str: an element)
                if cell and element is top:
                    blocks.append(False)
                elif tag in SKIP_TAGS or _hidden(element):
                    walker.skip_subtree()  # its "end" still comes: the tail is added there
                    blocks.append(False)
                    continue
                elif tag == "table":
                    self.flush()
                    yield from self._table(element)
                    walker.skip_subtree()
                    blocks.append(False)
                    continue
                elif tag in BLOCK_TAGS or tag in CELL_TAGS:
                    self.flush()
                    blocks.append(True)
                elif tag == "br":
                    self.flush()
                    walker.skip_subtree()
                    blocks.append(False)
                    continue
                else:
                    blocks.append(False)
                if element.text:
                    self.buffer.append(element.text)
            elif event == "end":
                if blocks.pop():
                    self.flush()
                if element.tail and not (cell and element is top):
                    self.buffer.append(element.tail)
            elif element.tail:  # a comment or processing instruction: only its tail is text
                self.buffer.append(element.tail)

    def _table(self, table: etree._Element) -> Iterator[etree._Element]:
        if any(True for _ in table.iterdescendants("table")):
            for cell in table.iter("td", "th"):  # a wrapper (an R page's note cell): its content reads as blocks
                if next(cell.iterancestors("table"), None) is table:
                    self.flush()
                    yield cell
                    self.flush()
            return
        self._draw(table)

    def _draw(self, table: etree._Element) -> None:
        """A table with no table inside it: a data table as lines of tab-separated cells, or a layout table's
        rows as paragraphs."""
        drawn = table_grid(table)
        if drawn is None:  # a layout table (a bullet and its paragraph): its rows read as paragraphs
            lines = None if _compiled_paragraphs is None else _compiled_paragraphs(table, _one_line)
            for line in _paragraphs(table) if lines is None else lines:
                self._emit(line)
            return
        self._blank()
        start = self.offset + 1 if self.lines else 0
        lines, cols, wide = drawn
        self.lines += lines
        self.offset = start + sum(map(len, lines)) + len(lines) - 1
        self.tables.append(DrawnTable(start, self.offset, lines, cols, wide))
        self._emit("")


def _paragraphs(table: etree._Element) -> list[str]:
    """A layout table's visible rows, each its cells' texts joined by a space (the reference of the compiled
    html_rows.paragraphs)."""
    lines = []
    for tr in table.iter("tr"):
        if _hidden(tr):
            continue
        texts = [_cell_text(td) for td in tr if isinstance(td.tag, str) and td.tag.lower() in CELL_TAGS]
        line = " ".join(t for t in texts if t)
        if line:
            lines.append(line)
    return lines


def html_to_text(path: str, markup: str) -> tuple[str, DocumentMetadata, list[DrawnTable]]:
    """Render HTML (possibly truncated or malformed) to reader text, R-page metadata and its data tables as
    drawn (`grids` makes the grids of those a reader reads)."""
    # lxml refuses str input that carries an encoding declaration (inline XBRL starts with one); matched at the
    # start only (a substitution would try every position of a 4 MB filing)
    declaration = _XML_DECLARATION.match(markup)
    if declaration:
        markup = markup[declaration.end() :]
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
    return text, _rpage_metadata(root), renderer.tables


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


_XML_DECLARATION = regex(r"\s*<\?xml[^>]*\?>")
_EXCESSIVE_DEPTH = regex(r"Excessive depth in document: (\d+)")


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
