"""A whole filing is parsed once and rendered whole (its text and offsets are the same as ever), but only its note's
tables get their cells: the note reads exactly as it did when every table of the filing had them.

Runs on a generated 10-K (evals/benchmarks/note_finding.py) and, when the shared corpus is here, on real ones.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path

import pytest
from fixture_paths import FIXTURES, ROOT
from lxml import etree

from extractor import sections
from extractor.document import Document
from extractor.evals.benchmarks.note_finding import filing_html
from extractor.loaders import html, load_text
from extractor.loaders.decode import decode_bytes
from extractor.tables.assemble import layout

CORPUS = ROOT.parent / "shared" / "corpus" / "real"
REAL = [CORPUS / name / "filing.html" for name in ("meta-10k-2024", "ibm-10q-2025q2")]
FILINGS = ["generated", *(pytest.param(p, id=p.parent.name) for p in REAL if p.is_file())]


def _markup(filing: str | Path) -> str:
    if filing == "generated":
        return filing_html(0.5)
    assert isinstance(filing, Path)
    return decode_bytes(str(filing), filing.read_bytes(), [])


@pytest.mark.parametrize("filing", FILINGS)
def test_only_the_note_tables_have_cells_and_the_note_reads_as_with_all_of_them(filing: str | Path) -> None:
    markup = _markup(filing)
    document = load_text(markup, path="filing.htm")
    assert document.note is not None
    text, _, drawn = html.html_to_text("filing.htm", markup)
    assert document.text == text  # the whole filing, so every offset is where it always was
    lo, hi = document.span
    inside = [table.grid() for table in drawn if lo <= table.start < hi]
    assert [g for g in document.grids if g.cells] == [g for g in inside if g.cells]
    outside = [g for g in document.grids if not lo <= g.start < hi]
    assert outside and not any(g.cells or g.row_starts for g in outside)
    assert [(g.start, g.end) for g in document.grids] == [(t.start, t.end) for t in drawn]
    every = Document(**{**dict(document), "grids": [table.grid() for table in drawn]})  # (no layout cached)
    tables, prose = layout(document)
    assert (tables, prose) == layout(every)
    assert prose and (tables or filing == "generated")  # the generated note prints its tables as paragraphs


def test_a_whole_filing_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[object] = []
    parse = etree.fromstring

    def counted(*args: object, **kwargs: object) -> etree._Element:
        parses.append(args[0])
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(etree, "fromstring", counted)
    document = load_text(filing_html(0.5), path="filing.htm")
    assert document.note is not None and len(parses) == 1


def test_loading_a_filing_leaves_the_process_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector's switch is the whole process's: a loader that turned it off and back on could leave it off
    for good when two threads load at once (the review app's thread pool, a caller's threads)."""

    def refuse() -> None:
        raise AssertionError("a loader switched the process's garbage collector")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    document = load_text(filing_html(0.5), path="filing.htm")
    assert document.note is not None and gc.isenabled()


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "whole").glob("*.txt"))]
    return texts + [html.html_to_text("g", filing_html(0.5))[0]]


def test_keyword_hits_in_the_notes_are_those_of_a_scan_of_the_whole_text() -> None:
    for text in _texts():
        heads = [h for run in sections._runs(sections._headings(text)) for h in run]
        spans = [(a.start, b.start) for a, b in zip(heads, heads[1:]) if a.start < b.start]
        everywhere = [m.start() for m in sections._KEYWORDS.finditer(text)]
        inside = [hit for hit in everywhere if any(start <= hit < end for start, end in spans)]
        assert spans and sections._keyword_hits(text, spans) == inside


def test_every_line_a_heading_can_be_is_looked_at() -> None:
    for text in [*_texts(), "İtem 8.\nſignatures\n\u2003Note 4. Leases\n٣. Stock Plans\nK. Stock Plans"]:
        offset, starts = 0, set(sections._heading_starts(text))
        lines = text.split("\n")
        for i, line in enumerate(lines):
            after = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if line.strip() and sections._classify(line.strip(), after):
                assert offset in starts, line
            offset += len(line) + 1


def test_spaces_are_collapsed_as_the_patterns_say() -> None:
    """str.split's whitespace is the regex \\s (with the non-breaking space); a paragraph with none of
    _NOT_ONE_SPACE is one the substitution leaves as it is."""
    cell = re.compile(r"[\s\u00a0\u200b]+")
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace() or cell.fullmatch(chr(c))]
    for space in spaces:
        for text in (space, f"a{space}b", f" {space}a{space}{space}", f"a {space} b"):
            assert html._one_line(text) == cell.sub(" ", text).strip()
            changed = html._SPACES.sub(" ", text) != text
            assert changed == any(run in text for run in html._NOT_ONE_SPACE)


ONE_BLOCK = [  # (cell, whether its text is read without a walk)
    ('<td> <p style="margin:0"><span>1,234</span> <b>(a)</b></p>\n</td>', True),
    ("<td><div><span>Granted</span><ix:nonfraction>5</ix:nonfraction></div></td>", True),
    ("<td>\xa0<p>1</p>\u2003</td>", True),
    ("<td>$<p>1</p></td>", False),  # text beside the block: _cell_text puts a space between
    ("<td><p>1</p>%</td>", False),
    ("<td><p>1</p><p>2</p></td>", False),
    ("<td><p>1<br>2</p></td>", False),
    ("<td><p>1<div>2</div></p></td>", False),
    ('<td><p style="display: none">1</p></td>', False),
    ("<td><p>1<!-- note -->2</p></td>", False),
    ("<td>\u200b<p>1</p></td>", False),  # (a zero-width space is not str.isspace)
]


@pytest.mark.parametrize(("cell", "fast"), ONE_BLOCK)
def test_a_cell_read_without_a_walk_reads_as_the_walk_does(cell: str, fast: bool) -> None:
    td = next(etree.fromstring(f"<table><tr>{cell}</tr></table>", etree.HTMLParser()).iter("td"))
    assert html._one_block(td) is fast
    assert html._rows(td.getparent().getparent())[0].texts == [html._cell_text(td)]


def test_every_cell_read_without_a_walk_reads_as_the_walk_does() -> None:
    paths = [*sorted(FIXTURES.rglob("*.htm")), *(p for p in REAL if p.is_file())]
    markups = [filing_html(0.5), *(decode_bytes(str(p), p.read_bytes(), []) for p in paths)]
    read = 0
    for markup in markups:
        root = etree.fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", markup), etree.HTMLParser(huge_tree=True))
        for td in root.iter("td", "th"):
            if len(td) and (html._inline_only(td) or html._one_block(td)):
                text = etree.tostring(td, method="text", encoding=str, with_tail=False)
                assert html._one_line(text) == html._cell_text(td)
                read += 1
    assert read
