"""HTML nested hundreds of levels deep reads whole, or fails naming the reason (issue 22).

Old EDGAR filings open a <font> per paragraph and never close it, so their elements nest deeper with
every paragraph; libxml2 stops building the tree at 256 levels unless told otherwise, and the rest of
the document was silently dropped (the 002 R page below kept 22 of its 109 facts, and passed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixture_paths import HTML_000, HTML_002, ROOT

from extractor.backends import rules
from extractor.document import Document
from extractor.loaders import LoadError, load_bytes, load_text
from extractor.schemas.concepts import iter_facts

DOCUMENTS = [HTML_000, HTML_002, ROOT / "evals" / "suites" / "heterogeneous" / "documents" / "002_10k_note.htm"]
OPENING = {"div": "<div>", "span": "<span>", "font": '<font size="2">'}


def wrapped(markup: str, tag: str, depth: int) -> str:
    """The body's content inside `depth` nested elements."""
    body = re.search(r"<body[^>]*>", markup, re.I)
    end = markup.lower().rindex("</body>")
    return markup[: body.end()] + OPENING[tag] * depth + markup[body.end() : end] + f"</{tag}>" * depth + markup[end:]


def unclosed_fonts(markup: str, depth: int) -> str:
    """`depth` <font> tags opened before the middle table and never closed, as old filings print them."""
    tables = [match.start() for match in re.finditer(r"<table", markup, re.I)]
    middle = tables[len(tables) // 2]
    return markup[:middle] + OPENING["font"] * depth + markup[middle:]


def facts(document: Document) -> list[str]:
    return [fact.to_json() for fact in iter_facts(rules.extract(document).note)]


def assert_reads_as(nested: str, path: Path) -> None:
    flat = load_text(path.read_text(encoding="utf-8"), path=str(path))
    deep = load_text(nested, path=str(path))
    assert deep.text == flat.text
    assert deep.grids == flat.grids
    assert facts(deep) == facts(flat)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
@pytest.mark.parametrize(("tag", "depth"), [("div", 300), ("span", 300), ("font", 1000), ("div", 1500)])
def test_a_body_nested_deep_reads_as_the_flat_one(path: Path, tag: str, depth: int) -> None:
    assert_reads_as(wrapped(path.read_text(encoding="utf-8"), tag, depth), path)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_fonts_never_closed_keep_every_fact_after_them(path: Path) -> None:
    assert_reads_as(unclosed_fonts(path.read_text(encoding="utf-8"), 1000), path)


def test_cells_and_tables_nested_deep_keep_their_grid() -> None:
    """The whole-table path: every cell's content in 1,000 fonts, and the tables 1,000 divs down."""
    markup = HTML_002.read_text(encoding="utf-8")
    fonts, closing = OPENING["font"] * 1000, "</font>" * 1000
    assert_reads_as(re.sub(r"(<td[^>]*>)(.*?)(</td>)", rf"\1{fonts}\2{closing}\3", markup, flags=re.S), HTML_002)
    divs, closing = "<div>" * 1000, "</div>" * 1000
    assert_reads_as(re.sub(r"(<table\b.*?</table>)", rf"{divs}\1{closing}", markup, flags=re.S), HTML_002)


def test_nesting_deeper_than_the_parser_reads_is_an_error_naming_it() -> None:
    """Past libxml2's hard limit (2,048 levels even for huge documents) the load fails, never returns a part."""
    nested = unclosed_fonts(HTML_002.read_text(encoding="utf-8"), 3000)
    with pytest.raises(LoadError, match=r"nested deeper than .* levels") as raised:
        load_bytes(nested.encode(), "deep.htm", "deep")
    assert "read only in part" in raised.value.reason
