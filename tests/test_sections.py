"""extractor.sections: find the stock-compensation note in a whole 10-K, and chunk a long note."""

from __future__ import annotations

from itertools import pairwise

import pytest
from fixture_paths import EDGAR_KMX, HTML_000, HTML_002, SEED_000, SEED_002, TEXT_002
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.document import Document
from extractor.loaders import load, load_text
from extractor.sections import NoNoteFound, Section, find_note, split
from extractor.tables import layout

ROLL_FORWARD = "Outstanding at July 31, 2017\n2,290\n\n$\n59.12"  # seed 002's SAR activity table


def _note_body(path) -> str:
    """A seed R page without its header lines (R page name, title, period, abstract)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if len(line) > 200)  # the first paragraph
    return "\n".join(lines[first:]).strip() + "\n"


FILLER = (
    "The Company evaluates its estimates on an ongoing basis, including those related to revenue "
    "recognition, inventories, goodwill, long-lived assets, leases and income taxes. Actual results could "
    "differ from those estimates, and such differences could be material to the consolidated financial "
    "statements. Management believes the assumptions used are reasonable given the information available.\n\n"
)

NOTES = [
    "Summary of Significant Accounting Policies",
    "Revenue",
    "Inventories",
    "Property and Equipment",
    "Fair Value Measurements",
    "Goodwill and Intangible Assets",
    "Leases",
    "Debt",
    "Commitments and Contingencies",
    "Stockholders' Equity",
    "Stock-Based Compensation",
    "Income Taxes",
    "Earnings Per Share",
]

# (heading of note n titled t, as 10-Ks print them)
STYLES = {
    "NOTE 11 – CAPS": lambda n, t: f"NOTE {n} – {t.upper()}",
    "11. Title": lambda n, t: f"{n}. {t}",
    "Note 11: Title": lambda n, t: f"Note {n}: {t}",
    "(11) Title": lambda n, t: f"({n}) {t}",
    "Note 11 / Title (HTML cells)": lambda n, t: f"Note {n}\n{t}",
}


def _ten_k(heading, body: str, stock_title: str = "Stock-Based Compensation") -> tuple[str, str, str]:
    """A whole 10-K in plain text; returns (text, note 11 heading, note 12 heading)."""
    titles = [stock_title if t == "Stock-Based Compensation" else t for t in NOTES]
    toc_notes = "\n".join(f"{heading(n, t).replace(chr(10), ' ')} {60 + 3 * n}" for n, t in enumerate(titles, 1))
    parts = [
        (
            "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\nFORM 10-K\n"
            "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
            "For the fiscal year ended July 31, 2018\nCommission file number 1-12345\n\n"
        ),
        (
            "TABLE OF CONTENTS\nPART I\nItem 1. Business 3\nItem 1A. Risk Factors 9\nPART II\n"
            "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations 30\n"
            "Item 8. Financial Statements and Supplementary Data 45\n"
            f"Notes to Consolidated Financial Statements\n{toc_notes}\nItem 9A. Controls and Procedures 90\n\n"
        ),
        "PART I\nItem 1. Business\n" + FILLER * 40,
        "Item 1A. Risk Factors\n" + FILLER * 60,
        "PART II\nItem 7. Management's Discussion and Analysis of Financial Condition and Results of Operations\n"
        + FILLER * 20
        + "CRITICAL ACCOUNTING ESTIMATES\nSTOCK-BASED COMPENSATION\nWe measure stock-based compensation at the "
        "grant-date fair value of the awards and recognize it over the vesting period. The fair value of stock "
        "appreciation rights granted is estimated with a lattice-based option valuation model; restricted share "
        "units are valued at the market price on the grant date. Forfeitures are recorded as they occur.\n\n"
        + FILLER
        * 20,
        "Item 8. Financial Statements and Supplementary Data\nNOTES TO CONSOLIDATED FINANCIAL STATEMENTS\n\n",
    ]
    for n, title in enumerate(titles, 1):
        text = FILLER * 8
        if n == 1:
            text = (
                FILLER * 4 + "STOCK-BASED COMPENSATION\nThe Company measures share-based awards at the grant-date "
                "fair value and recognizes compensation cost over the vesting period. Forfeitures of options and "
                "restricted stock are recorded as they occur. See Note 11.\n\n" + FILLER * 4
            )
        if n == 11:
            text = body
        parts.append(f"{heading(n, title)}\n{text}\n")
    parts.append("Item 9. Changes in and Disagreements with Accountants\nNone.\n\nSIGNATURES\n" + FILLER * 5)
    return "".join(parts), heading(11, titles[10]), heading(12, titles[11])


# --------------------------------------------------------------------------- find_note


@pytest.mark.parametrize("style", STYLES.values(), ids=STYLES.keys())
@pytest.mark.parametrize("seed", [SEED_002, SEED_000], ids=["002", "000"])
def test_find_note_in_a_whole_10k(style, seed):
    body = _note_body(seed)
    text, note_11, note_12 = _ten_k(style, body)
    document = load_text(text, path="10k.txt", doc_id="10k")
    assert len(text) > 100_000
    section = find_note(document)
    # the TOC prints the same headings, each followed by a page number
    assert section.start == text.index(f"\n{note_11}\n") + 1
    assert section.end == text.index(f"\n{note_12}\n") + 1
    assert section.title == note_11.replace("\n", " ")
    assert "keyword hits" in section.why  # the TOC line, MD&A and Note 1 lost
    assert body.strip() in text[section.start : section.end]
    assert text[section.start : section.end].rstrip().endswith(body.strip())


def test_roll_forward_sits_in_the_found_note():
    text, _, _ = _ten_k(STYLES["NOTE 11 – CAPS"], _note_body(SEED_002))
    section = find_note(load_text(text))
    assert ROLL_FORWARD in text[section.start : section.end]


def test_last_note_ends_at_the_next_item():
    body = _note_body(SEED_002)
    text = (
        "Item 8. Financial Statements\nNOTE 1 – REVENUE\n"
        + FILLER * 5
        + "NOTE 2 – STOCK-BASED COMPENSATION\n"
        + body
        + "\nItem 9. Changes in Accountants\n"
        + FILLER * 5
    )
    section = find_note(load_text(text))
    assert text[section.start : section.end] == "NOTE 2 – STOCK-BASED COMPENSATION\n" + body + "\n"


def test_footnote_markers_inside_the_note_do_not_end_it():
    body = (
        "Options granted and exercised are presented below:\n(1)\nMeasured using a lattice model.\n(2)\nBased on Treasury rates.\n"
        "Stock options vest over four years; forfeited awards are reversed.\n"
    )
    text = "(11) Stock-Based Compensation\n" + body + "(12) Income Taxes\n" + FILLER + "(13) Leases\n" + FILLER
    section = find_note(load_text(text))
    assert (section.start, section.end) == (0, text.index("(12) Income Taxes"))


def test_10k_without_a_stock_compensation_note_is_refused():
    text, _, _ = _ten_k(STYLES["NOTE 11 – CAPS"], FILLER * 3, stock_title="Employee Retirement Plans")
    text = text.replace("STOCK-BASED COMPENSATION\n", "ACCOUNTING FOR LEASES\n")
    with pytest.raises(NoNoteFound, match="10k.txt: no stock-compensation note found: a whole filing"):
        load_text(text, path="10k.txt")


@pytest.mark.parametrize("path", [SEED_000, SEED_002, HTML_000, HTML_002, EDGAR_KMX, TEXT_002], ids=lambda p: p.name)
def test_single_note_documents_are_one_section(path):
    document = load(path)
    section = find_note(document)
    assert (section.start, section.end) == (0, len(document.text))
    assert section.why == "whole document (no other note headings)"


def test_a_note_with_its_own_numbered_heading_is_still_whole():
    text = "NOTE 11 – STOCK-BASED COMPENSATION\n" + _note_body(SEED_002)
    section = find_note(load_text(text))
    assert (section.start, section.end) == (0, len(text))


# --------------------------------------------------------------------------- split


def _check_chunks(document: Document, section: Section, chunks: list[Section], max_chars: int) -> None:
    """Cover the section without gaps, always move forward, respect max_chars and never cut a table."""
    tables = [(t.start, t.end) for t in layout(document)[0]]
    text = document.text
    assert chunks[0].start == section.start and chunks[-1].end == section.end
    if section.end - section.start <= max_chars:
        assert chunks == [section]
    for before, after in pairwise(chunks):
        assert before.start < after.start <= before.end < after.end
    for i, chunk in enumerate(chunks, 1):
        assert chunk.title == section.title
        assert chunk.why == (section.why if chunks == [section] else f"part {i} of {len(chunks)}")
        for edge in (chunk.start, chunk.end):
            assert not any(start < edge < end for start, end in tables), f"chunk {i} cuts a table at {edge}"
        if chunk.end - chunk.start > max_chars:  # allowed only for one table (and white space) too long to fit
            inside = [(s, e) for s, e in tables if chunk.start <= s and e <= chunk.end]
            assert len(inside) == 1, f"chunk {i} is too long"
            ((start, end),) = inside
            assert (text[chunk.start : start] + text[end : chunk.end]).strip() == ""


def test_short_section_is_one_chunk():
    document = load(SEED_002)
    section = find_note(document)
    assert split(document, section, max_chars=len(document.text), overlap_chars=500) == [section]


def test_split_the_note_found_in_a_10k():
    text, _, _ = _ten_k(STYLES["NOTE 11 – CAPS"], _note_body(SEED_000))
    document = load_text(text)
    section = find_note(document)
    chunks = split(document, section, max_chars=4000, overlap_chars=400)
    assert len(chunks) > 3
    _check_chunks(document, section, chunks, 4000)
    overlaps = [before.end - after.start for before, after in pairwise(chunks)]
    assert sum(o > 0 for o in overlaps) >= len(overlaps) // 2


def test_overlap_is_about_overlap_chars_in_prose():
    paragraphs = [f"Paragraph {i}: " + "options granted vest over three years. " * (3 + i % 5) for i in range(300)]
    text = "\n\n".join(paragraphs) + "\n"
    document = load_text(text)
    section = Section(0, len(text), "prose", "test")
    chunks = split(document, section, max_chars=5000, overlap_chars=600)
    _check_chunks(document, section, chunks, 5000)
    longest = max(len(p) for p in paragraphs) + 2
    for before, after in pairwise(chunks):
        assert 600 <= before.end - after.start <= 600 + longest
        assert text[after.start - 1] == "\n" and text[before.end - 1] == "\n"  # at line starts


def test_table_longer_than_max_chars_is_its_own_chunk():
    document = load(SEED_002)
    section = find_note(document)
    chunks = split(document, section, max_chars=600, overlap_chars=100)
    _check_chunks(document, section, chunks, 600)
    sar = next(t for t in layout(document)[0] if ROLL_FORWARD[:20] in document.text[t.start : t.end])
    assert sar.end - sar.start > 600
    assert any(c.start <= sar.start and sar.end <= c.end for c in chunks)


@pytest.mark.parametrize("overlap", [0, 300, 5000, 50_000])
def test_one_huge_line_terminates_and_covers(overlap):
    text = "stock options granted 1,234 " * 40_000  # about 1.1 MB, no newline
    document = load_text(text)
    section = Section(0, len(text), None, "test")
    chunks = split(document, section, max_chars=10_000, overlap_chars=overlap)
    _check_chunks(document, section, chunks, 10_000)
    assert len(chunks) < 2 * len(text) / 10_000 + 2


@settings(max_examples=40, deadline=None)
@given(
    path=st.sampled_from([SEED_000, HTML_000, SEED_002, TEXT_002]),
    max_chars=st.integers(min_value=50, max_value=8000),
    overlap=st.integers(min_value=0, max_value=3000),
)
def test_split_invariants_on_the_fixtures(path, max_chars, overlap):
    document = load(path)
    section = find_note(document)
    _check_chunks(document, section, split(document, section, max_chars, overlap), max_chars)


def test_page_numbers_between_paragraphs_do_not_glue_the_note_into_one_chunk():
    # The table assembler gives a header-less "table" (a page number after a paragraph) Table.start 0;
    # split must not take that as a table covering everything before the page number.
    page_break = "\n{page}\n\nTable of Contents\n\n"
    body = "".join(FILLER * 3 + page_break.format(page=60 + i) for i in range(12)) + _note_body(SEED_002)
    text, _, _ = _ten_k(STYLES["NOTE 11 – CAPS"], body)
    document = load_text(text)
    section = find_note(document)
    chunks = split(document, section, max_chars=3000, overlap_chars=300)
    assert chunks[0].start == section.start and chunks[-1].end == section.end
    assert all(b.start < a.start <= b.end < a.end for b, a in pairwise(chunks))
    sar = next(t for t in layout(document)[0] if ROLL_FORWARD in text[t.start : t.end])
    assert all(c.end - c.start <= 3000 or (c.start, c.end) == (sar.start, sar.end) for c in chunks)
