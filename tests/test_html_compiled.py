"""The compiled HTML reading (extractor/loaders/html_rows.pyx) renders exactly what the Python reading renders.

The Python reading in extractor/loaders/html.py is the reference; the compiled one walks libxml2's tree in C and
is used where the install built it. Both are run here on every HTML file of the repository, on the corpus's
real filings and notes when ../shared/corpus/real is present (inline XBRL left in: more names to read), and on
documents generated from the markup real filings use and abuse (hidden styles in odd spellings, spans that
are no numbers, wrapper tables, comments, line breaks, skipped elements).
"""

from __future__ import annotations

import os
import random
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType

import pytest
from fixture_paths import ROOT
from lxml import etree

from extractor.loaders import html
from extractor.loaders.decode import decode_bytes

CORPUS = ROOT.parent / "shared" / "corpus" / "real"
HTML_FILES = sorted(
    path
    for folder in (ROOT / "tests" / "fixtures", ROOT / "evals" / "suites", CORPUS)
    if folder.is_dir()
    for path in folder.rglob("*")
    if path.suffix in (".htm", ".html") and path.is_file()
)

needs_compiled = pytest.mark.skipif(not html.COMPILED, reason="the compiled HTML reading is not built here")


def _render(markup: str, compiled: bool) -> object:
    """html_to_text's text, metadata and drawn tables, by one reading or the other."""
    with nullcontext() if compiled else html.python_reading():
        try:
            text, meta, tables = html.html_to_text("document.htm", markup)
        except Exception as err:  # both readings must fail alike, too
            return repr(err)
    return text, meta, [(t.start, t.end, t.lines, t.cols, t.wide) for t in tables]


def test_the_install_built_the_compiled_reading() -> None:
    """CI must not pass on the Python reading alone because the build silently failed (it is optional)."""
    if not html.COMPILED and os.environ.get("CI") != "true":
        pytest.skip("the compiled HTML reading is not built (no C compiler?): pip install -e . builds it")
    assert html.COMPILED, "extractor/loaders/html_rows.pyx was not built or not loaded: see pip's build output"


def test_a_built_module_is_from_the_source_beside_it() -> None:
    """In a working tree, an edit of html_rows.pyx whose rebuild failed leaves the last build in place, unused (the
    Python reading reads everything): said here, outside CI too, rather than found slower later."""
    try:
        html_rows = _compiled_module()
    except ImportError:
        pytest.skip("the compiled HTML reading is not built here")
    assert html._built_from_source(html_rows.SOURCE_SHA256), "html_rows.pyx changed since its build: pip install -e ."


@needs_compiled
@pytest.mark.parametrize("path", HTML_FILES, ids=lambda path: path.relative_to(path.parents[1]).as_posix())
def test_a_real_html_file_renders_the_same_by_both_readings(path: Path) -> None:
    markup = decode_bytes(str(path), path.read_bytes(), [])
    assert _render(markup, True) == _render(markup, False)


_TAGS = ["p", "div", "span", "b", "br", "script", "style", "td", "font", "ul", "li", "sup", "a", "hr", "template"]
_TAGS += ["noscript", "i", "table", "tr", "th", "center", "title", "head", "pre", "blockquote", "h2", "tbody"]
_TEXTS = ["1,234", " ", "\n", "$", ")", "%", "(a)", "x y", "\xa0", "\u200b", "\u2003", "  12  ", "\u2014", "é"]
_TEXTS += [
    "\t",
    "\f",
    "\x0b",
    "\x1c",
    "\x1f",
    "<!-- c -->",
    "<?pi x?>",
    "&amp;",
    "&nbsp;",
    "&#8203;",
    "2024",
    "Note 5",
    "\r\n",
    "(1,2)",
    "4.5%",
    "-",
]
_STYLES = ["display:none", "DISPLAY: NONE", "color:red", "display :none", "dis play:none", "ddisplay:none"]
_STYLES += [
    "display:nonE;x",
    "displaydisplay:none",
    "d\u0130splay:none",
    "",
    "display:block",
    "padding:1px;display: none",
]
_SPANS = ["2", "3", " 2", "2 ", "0", "-1", "1000", "abc", "", "3_0", "02", "1.5", "\u0663", "+2"]


class _Generated:
    """A random document over the markup above, nested a few levels, tables inside cells included."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def attributes(self) -> str:
        pick, chance = self.random.choice, self.random.random
        found = f' style="{pick(_STYLES)}"' if chance() < 0.2 else ""
        found += f' colspan="{pick(_SPANS)}"' if chance() < 0.1 else ""
        return found + (f' rowspan="{pick(_SPANS)}"' if chance() < 0.05 else "")

    def content(self, depth: int) -> str:
        parts = []
        for _ in range(self.random.randint(0, 4)):
            if depth < 6 and self.random.random() < 0.45:
                tag = self.random.choice(_TAGS)
                if tag == "table":
                    parts.append(self.table(depth + 1))
                elif tag in ("br", "hr"):
                    parts.append(f"<{tag}{self.attributes()}>")
                else:
                    parts.append(f"<{tag}{self.attributes()}>{self.content(depth + 1)}</{tag}>")
            else:
                parts.append(self.random.choice(_TEXTS))
        return "".join(parts)

    def table(self, depth: int) -> str:
        rows = []
        for _ in range(self.random.randint(1, 4)):
            cells = "".join(
                f"<{self.random.choice(['td', 'th'])}{self.attributes()}>{self.content(depth + 1)}</td>"
                for _ in range(self.random.randint(0, 4))
            )
            rows.append(f"<tr{self.attributes()}>{cells}</tr>")
        return f"<table{self.attributes()}>{''.join(rows)}</table>"

    def document(self) -> str:
        return f"<html><body>{self.content(0)}{self.table(1)}{self.content(0)}</body></html>"


@needs_compiled
@pytest.mark.parametrize("seed", range(8))
def test_generated_documents_render_the_same_by_both_readings(seed: int) -> None:
    generated = _Generated(seed)
    for number in range(250):
        markup = generated.document()
        compiled = _render(markup, True)
        assert compiled == _render(markup, False), f"document {number} of seed {seed}: {markup!r}"
        root = etree.fromstring(markup, etree.HTMLParser(huge_tree=True))
        assert html._compiled_walk is not None and html._compiled_walk(root) is not None  # read in C, not handed back


@needs_compiled
def test_wrapper_tables_nested_past_the_compiled_limit_are_read_by_python() -> None:
    """The compiled walk recurses a level a wrapper table; past 200 it hands the document back (no C stack
    overflow on hostile input), and the Python reading, which keeps a stack of its own, reads it."""
    markup = "<table><tr><td>" * 300 + "<p>Shares 1,234</p><table><tr><td>a</td><td>1</td></tr></table>"
    root = etree.fromstring(markup, etree.HTMLParser(huge_tree=True))
    assert html._compiled_walk is not None and html._compiled_walk(root) is None
    rendered = _render(markup, True)
    assert rendered == _render(markup, False)
    assert isinstance(rendered, tuple) and "Shares 1,234" in rendered[0]


@needs_compiled
def test_a_cell_nested_a_thousand_deep_is_read_in_c() -> None:
    cell = "<span>" * 1500 + "1,234" + "</span>" * 1500
    markup = f"<table><tr><td>Granted</td><td>{cell}</td></tr></table>"
    root = etree.fromstring(markup, etree.HTMLParser(huge_tree=True))
    assert html._compiled_walk is not None and html._compiled_walk(root) is not None
    rendered = _render(markup, True)
    assert rendered == _render(markup, False)
    assert isinstance(rendered, tuple) and rendered[0] == "Granted\t1,234"


@needs_compiled
def test_the_compiled_reading_is_not_used_beside_another_lxml(monkeypatch: pytest.MonkeyPatch) -> None:
    """It reads lxml's element struct as compiled: beside another lxml version the Python reading is used."""
    assert html._compiled() is not None
    monkeypatch.setattr(html.etree, "__version__", "0.0.0")
    assert html._compiled() is None


@needs_compiled
def test_a_module_built_from_another_source_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild that failed (the extension is optional) keeps the last build: built from an older .pyx, it would
    read HTML by code the tests no longer see. It carries its source's SHA-256, and is used only where that is
    the .pyx's beside it."""
    html_rows = _compiled_module()
    assert len(html_rows.SOURCE_SHA256) == 64  # setup.py gave it
    monkeypatch.setattr(html_rows, "SOURCE_SHA256", "0" * 64)
    assert html._compiled() is None


def _compiled_module() -> ModuleType:
    from extractor.loaders import html_rows

    return html_rows


# Cells as real tables print them around their numbers, and the near misses of each marker
_CELLS = ["", "", "$", "(", "($", "$(", "$$", ")", "%", ")%", "%)", "))", "(a)", "(z)", "(A)", "(ab)", "(1)", "*"]
_CELLS += ["**", "*\n", "**x", "x*", "\n", ")\n", "-", "\u2013", "\u2014", "to", "To", " to", "1,234", "(1,234"]
_CELLS += ["26.8%"]
_CELLS += ["32.6", "5", "$5", "$ 5", "x", "Granted", "\u0663", "\u00b2", "\u2155", "\u0661\u0662", ".", "a.b", "5 to 6"]


@needs_compiled
def test_marker_cells_join_the_same_by_both_readings() -> None:
    """The compiled marker joins (html_rows.merge_markers) against html._merge_markers, the reference, on rows
    drawn from the cells above: '$' and '(' joined right, ')', '%' and footnote marks left, ranges over three."""
    merge_markers = _compiled_module().merge_markers
    draw = random.Random(23)
    for number in range(20_000):
        row = [draw.choice(_CELLS) for _ in range(draw.randint(0, 9))]
        by_python, by_c = list(row), list(row)
        html._merge_markers(by_python)
        merge_markers(by_c)
        assert by_c == by_python, f"row {number}: {row!r}"


@needs_compiled
def test_the_compiled_marker_joins_read_digits_as_re_does() -> None:
    """A '$' joins the next cell when it holds a decimal digit as re's \\d finds one: every numeric code point
    (Arabic-Indic digits join, superscripts and fractions do not) and a sample of all others."""
    merge_markers = _compiled_module().merge_markers
    points = [c for c in range(0x110000) if chr(c).isnumeric() or c % 97 == 0]
    for point in points:
        by_python, by_c = ["$", chr(point)], ["$", chr(point)]
        html._merge_markers(by_python)
        merge_markers(by_c)
        assert by_c == by_python, f"U+{point:04X}"
    row = ["$", "\u0663", "$", "\u00b2"]
    merge_markers(row)
    assert row == ["", "$ \u0663", "$", "\u00b2"]  # an Arabic-Indic three is a digit, a superscript two is not


@needs_compiled
def test_tables_are_drawn_the_same_by_both_readings() -> None:
    """The compiled table drawing (html_rows.draw: marker joins, logical columns, lines) against html._draw_rows
    on random tables: cells of one to three columns, slots held by a rowspan above, empty rows and columns."""
    draw, pick = _compiled_module().draw, random.Random(5)
    drawn = 0
    for number in range(5_000):
        rows = []
        for _ in range(pick.randint(0, 6)):
            texts, cols, spans, col = [], [], [], 0
            for _ in range(pick.randint(0, 7)):
                col += pick.random() < 0.1  # a slot a rowspan holds
                span = pick.choice([1, 1, 1, 1, 2, 3])
                texts.append(pick.choice(_CELLS))
                cols.append(col)
                spans.append(span)
                col += span
            rows.append((texts, cols, spans))
        by_python = html._draw_rows([html._Row(list(t), list(c), list(s)) for t, c, s in rows])
        assert draw([html._Row(list(t), list(c), list(s)) for t, c, s in rows]) == by_python, (
            f"table {number}: {rows!r}"
        )
        drawn += by_python is not None
    assert drawn > 1_000  # most are data tables, not all


@needs_compiled
def test_a_layout_tables_rows_read_as_paragraphs_by_both_readings() -> None:
    """A table with no data (a bullet and its paragraph) reads as lines of its visible rows' cells; a hidden cell
    gives nothing, whether it holds text alone or elements (the Python reading once read the former)."""
    markup = (
        "<table><tr><td>\u2022</td><td>Options vest <b>ratably</b> over\n four years.</td></tr>"
        '<tr><td style="display:none">hidden text</td><td style="display: NONE"><span>hidden span</span></td></tr>'
        '<tr style="display:none"><td>hidden row</td></tr><tr><td></td><td> Shares  are issued. </td></tr></table>'
    )
    table = etree.fromstring(markup, etree.HTMLParser()).find(".//table")
    assert html.table_grid(table) is None  # a layout table
    assert _compiled_module().paragraphs(table, html._one_line) is not None  # read in C
    expected = "\u2022 Options vest ratably over four years.\nShares are issued."
    assert _render(markup, True) == _render(markup, False)
    rendered = _render(markup, True)
    assert isinstance(rendered, tuple) and rendered[0] == expected


@needs_compiled
@pytest.mark.parametrize(
    "texts, cols, spans",
    [
        (["a", "1", "2"], [0], [1]),  # more texts than columns
        (["a", "1"], [-5, 1], [1, 1]),  # a column before the first
        (["a", "1", "x"], [0, 1, 2], [1, 1000, 1]),  # a span over the next cell
        (["a", "1"], [0, 1], [1, 0]),  # no span
    ],
)
def test_the_compiled_drawing_refuses_rows_html_rows_never_makes(texts, cols, spans) -> None:
    """draw indexes C arrays unchecked, so rows unlike _rows' (which the renderer never gives it) are refused
    with an error, not read out of bounds (a helper's review found a crash for each of these)."""
    with pytest.raises(ValueError):
        _compiled_module().draw([html._Row(list(texts), list(cols), list(spans))])
