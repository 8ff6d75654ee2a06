"""Who filed it (issue 18, point 5): the company, form and fiscal period end an HTML filing's cover page states,
read from its rendered text into the Document's metadata (a submission's SEC header wins where it has a field).

The cover snippets in tests/fixtures/covers/ are the first lines of the rendered text of real 10-K and 10-Q
filings (their inline XBRL stripped first), made by tests/fixtures/covers/make_covers.py.
"""

from __future__ import annotations

from datetime import date

import pytest
from fixture_paths import EDGAR_KMX, FIXTURES, HTML_002, ROOT, SEED_002

from extractor.backends import rules
from extractor.loaders import load, load_text
from extractor.loaders.cover import COVER_CHARS, Cover, read_cover

COVERS = FIXTURES / "covers"
META_MINI = COVERS / "meta-10k-2024-mini.htm"  # Meta's 10-K cover page, then its stock-compensation note
BOEING_MINI = COVERS / "ba-10q-2025q2-mini.htm"  # Boeing's 10-Q cover page, then its note
META_NOTE = ROOT / "evals" / "suites" / "real" / "documents" / "meta-10k-2024.html"  # the note alone: no cover
D = date

# what each cover states, as printed (the CIK is never on an HTML cover)
EXPECTED = {
    "meta-10k-2024": Cover("10-K", "Meta Platforms, Inc.", D(2024, 12, 31), "001-35551"),
    "googl-10k-2024": Cover("10-K", "Alphabet Inc.", D(2024, 12, 31), "001-37580"),
    "ba-10k-2024": Cover("10-K", "THE BOEING COMPANY", D(2024, 12, 31), "1-442"),
    "ba-10q-2025q2": Cover("10-Q", "THE BOEING COMPANY", D(2025, 6, 30), "1-442"),
    "hubs-10q-2025q2": Cover("10-Q", "HubSpot, Inc.", D(2025, 6, 30), "001-36680"),  # FOR THE QUARTERLY PERIOD ENDED
    "ibm-10k-2024": Cover(
        "10-K", "INTERNATIONAL BUSINESS MACHINES CORPORATION", D(2024, 12, 31), "1-2360"
    ),  # number above its caption
    "ibm-10q-2025q2": Cover(
        "10-Q", "INTERNATIONAL BUSINESS MACHINES CORPORATION", D(2025, 6, 30), "1-2360"
    ),  # FOR THE QUARTER ENDED
    "ma-10k-2024": Cover(
        "10-K", "Mastercard Incorporated", D(2024, 12, 31), "001-32877"
    ),  # "Form" and "10-K" in two cells
    "unh-10k-2024": Cover("10-K", "UnitedHealth Group Incorporated", D(2024, 12, 31), "1-10864"),
    "wfc-10k-2024": Cover(
        "10-K", "WELLS FARGO & COMPANY", D(2024, 12, 31), "001-2979"
    ),  # period and file number on one line
    "wmt-10k-2025": Cover("10-K", "WALMART INC.", D(2025, 1, 31), "001-06991"),  # a January year end
    "xom-10q-2025q2": Cover("10-Q", "Exxon Mobil Corporation", D(2025, 6, 30), "1-2256"),
}


def cover_text(name: str) -> str:
    return (COVERS / f"{name}.txt").read_text(encoding="utf-8")


def without_line(text: str, start: str) -> str:
    """The text with its (one) line starting with `start` left out."""
    lines = text.split("\n")
    kept = [line for line in lines if not line.startswith(start)]
    assert len(kept) == len(lines) - 1, start
    return "\n".join(kept)


# --- reading the cover ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cover_of_real_filings(name: str) -> None:
    assert read_cover(cover_text(name)) == EXPECTED[name]


def test_a_field_the_cover_does_not_state_stays_none() -> None:
    text = cover_text("meta-10k-2024")
    no_period = without_line(text, "For the fiscal year ended")
    assert read_cover(no_period) == Cover("10-K", "Meta Platforms, Inc.", None, "001-35551")
    no_form = without_line(cover_text("ba-10q-2025q2"), "FORM 10-Q")
    assert read_cover(no_form) == Cover(None, "THE BOEING COMPANY", D(2025, 6, 30), "1-442")
    no_name = without_line(text, "Meta Platforms, Inc.")  # the caption's line above is a drawn rule
    assert read_cover(no_name).company is None


def test_a_blank_transition_period_is_no_period_end() -> None:
    """A 10-KT states a transition period 'from ... to ...': no 'ended' date, so no period end is guessed."""
    text = without_line(cover_text("googl-10k-2024"), "For the fiscal year ended")
    assert "For the transition period from" in text
    assert read_cover(text).fiscal_period_end is None


def test_what_follows_the_cover_is_not_read() -> None:
    """Meta's cover without its period line, followed by the page after it, which says 'fiscal year ended'."""
    text = without_line(cover_text("meta-10k-2024"), "For the fiscal year ended")
    later = (
        "DOCUMENTS INCORPORATED BY REFERENCE\nFor the fiscal year ended December 31, 2024, the registrant's proxy ...\n"
        "Meta Platforms, Inc.\nForm 10-K\nTABLE OF CONTENTS\n"
    )
    assert read_cover(text + later).fiscal_period_end is None


def test_a_name_on_two_lines() -> None:
    """IBM's 10-Q cover with its name wrapped (as older covers print long names); a file number line above a
    name is never taken as part of it (every cover above)."""
    text = cover_text("ibm-10q-2025q2").replace(
        "INTERNATIONAL BUSINESS MACHINES CORPORATION\n", "INTERNATIONAL BUSINESS\nMACHINES CORPORATION\n"
    )
    assert read_cover(text).company == "INTERNATIONAL BUSINESS MACHINES CORPORATION"
    caps_above = cover_text("hubs-10q-2025q2")  # "COMMISSION FILE NUMBER 001-36680" right above "HubSpot, Inc."
    assert read_cover(caps_above).company == "HubSpot, Inc."


def test_a_note_alone_has_no_cover() -> None:
    """A note cut out of a filing (or an R page) states no filer: every field stays empty, even where it says
    'For the year ended ...'."""
    assert read_cover(load(META_NOTE).text) == Cover()
    assert read_cover("Note 14\nFor the year ended December 31, 2024, we granted 1,000 RSUs.\n") == Cover()


def test_only_the_first_part_of_a_document_is_read() -> None:
    late = "x" * COVER_CHARS + "\n" + cover_text("meta-10k-2024")
    assert read_cover(late) == Cover()


# --- the Document's metadata, end to end through load() -----------------------------------------------


def test_html_filing_metadata_from_its_cover() -> None:
    meta = load(META_MINI).metadata
    assert (meta.company, meta.form, meta.fiscal_period_end, meta.cik) == (
        "Meta Platforms, Inc.",
        "10-K",
        D(2024, 12, 31),
        None,
    )
    meta = load(BOEING_MINI).metadata
    assert (meta.company, meta.form, meta.fiscal_period_end, meta.cik) == (
        "THE BOEING COMPANY",
        "10-Q",
        D(2025, 6, 30),
        None,
    )


def test_html_note_and_rpage_metadata_unchanged() -> None:
    note = load(META_NOTE).metadata
    assert (note.company, note.form, note.cik, note.fiscal_period_end) == (None, None, None, None)
    rpage = load(HTML_002).metadata
    assert (rpage.company, rpage.form, rpage.fiscal_period_end) == (None, None, D(2018, 7, 31))  # the R page's own date
    assert load(SEED_002).metadata.fiscal_period_end == D(2018, 7, 31)


def test_inline_xbrl_tags_are_not_what_is_read() -> None:
    """The same cover with inline XBRL tags around its values and a hidden ix:header naming another filer: the
    reader sees the rendered text only."""
    html = META_MINI.read_text(encoding="utf-8")
    tagged = html.replace(
        "Meta Platforms, Inc.",
        '<ix:nonNumeric name="dei:EntityRegistrantName" contextRef="c-1">Meta Platforms, Inc.</ix:nonNumeric>',
        1,
    ).replace(
        "<body>",
        '<body><div style="display:none"><ix:header><ix:hidden><ix:nonNumeric name="dei:EntityRegistrantName">'
        'Other Corp</ix:nonNumeric><ix:nonNumeric name="dei:DocumentType">10-Q</ix:nonNumeric></ix:hidden></ix:header></div>',
        1,
    )
    assert "ix:header" in tagged and tagged.count("Meta Platforms, Inc.") == html.count("Meta Platforms, Inc.")
    meta = load_text(tagged, path="meta.htm").metadata
    assert (meta.company, meta.form, meta.fiscal_period_end) == ("Meta Platforms, Inc.", "10-K", D(2024, 12, 31))


def test_submission_header_wins_over_the_cover() -> None:
    """The main document of a submission has a cover ('CARMAX, INC.'); the SEC header ('CARMAX INC', CIK) is
    the filer's registered identity and is kept."""
    text = EDGAR_KMX.read_text(encoding="utf-8")
    main_only = text[: text.index("<DOCUMENT>\n<TYPE>XML")] + "</SEC-DOCUMENT>\n"
    meta = load_text(main_only, path="kmx.txt").metadata
    assert (meta.company, meta.cik, meta.form, meta.fiscal_period_end) == (
        "CARMAX INC",
        "0001170010",
        "10-K",
        D(2020, 2, 29),
    )
    headless = main_only.replace("COMPANY CONFORMED NAME:\t\t\tCARMAX INC\n", "")
    assert headless != main_only
    assert (
        load_text(headless, path="kmx.txt").metadata.company == "CARMAX, INC."
    )  # the cover fills what the header lacks


def test_cover_period_is_the_fiscal_frame_of_a_whole_filing() -> None:
    """The rules backend dates a filing by what it says of itself: the cover's period end, not the latest
    date its text reports."""
    extraction = rules.extract(load(META_MINI))
    assert extraction.note.fiscal_year_ends and max(extraction.note.fiscal_year_ends) == D(2024, 12, 31)


def test_plain_text_filing_metadata_from_its_cover() -> None:
    """A filing saved as text (here the rendered text of Wells Fargo's 10-K cover) is read the same way."""
    meta = load(COVERS / "wfc-10k-2024.txt").metadata
    assert (meta.company, meta.form, meta.fiscal_period_end, meta.cik) == (
        "WELLS FARGO & COMPANY",
        "10-K",
        D(2024, 12, 31),
        None,
    )
