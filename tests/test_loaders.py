"""extractor.loaders: every layout is sniffed from content; bad inputs fail with a reason."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from fixture_paths import EDGAR_KMX, FIXTURES, HTML_000, HTML_002, SEED_000, SEED_002, TEXT_000, TEXT_002

from extractor.document import Document, LoadError
from extractor.loaders import load, load_text
from extractor.loaders.dates import parse_header_date
from extractor.tables import rebuild_tables


def _rows(doc: Document) -> list[tuple[str, list[str]]]:
    """Every table row as (label, printed numbers with sign), for layout comparisons."""
    out = []
    for table in rebuild_tables(doc):
        for row in table.rows:
            out.append((row.label, [("-" if n.negative else "") + n.text for c in row.cells for n in c.numbers]))
    return out


def _table(doc: Document, title: str):
    return next(t for t in rebuild_tables(doc) if t.title == title)


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize(
    "path, title, period, source",
    [
        (SEED_000, "Stock And Stock-Based Incentive Plans", date(2020, 2, 29), "R19.htm"),
        (SEED_002, "Stock Compensation Plan", date(2018, 7, 31), "R23.htm"),
    ],
)
def test_rpage_text_seed(path, title, period, source):
    doc = load(path)
    assert doc.format == "rpage-text"
    assert doc.id == path.stem
    assert doc.path == str(path)
    assert doc.text == path.read_text(encoding="utf-8")  # R-page text is kept verbatim
    assert doc.metadata.title == title
    assert doc.metadata.fiscal_period_end == period
    assert doc.metadata.source_name == source
    assert doc.warnings == []


@pytest.mark.parametrize(
    "path, title, period",
    [
        (HTML_000, "Stock And Stock-Based Incentive Plans", date(2020, 2, 29)),
        (HTML_002, "Stock Compensation Plan", date(2018, 7, 31)),
    ],
)
def test_html_rpage(path, title, period):
    doc = load(path)
    assert doc.format == "html"
    assert doc.metadata.title == title
    assert doc.metadata.fiscal_period_end == period
    assert "<" not in doc.text and "&#160;" not in doc.text  # rendered, not markup
    assert "v3.20.1" not in doc.text and "v3.10.0.1" not in doc.text  # display:none skipped
    assert "Stock Compensation Plan" in doc.text or "STOCK AND STOCK-BASED INCENTIVE PLANS" in doc.text


@pytest.mark.parametrize(
    "header, period",
    [
        ("Jul. 31, 2018", date(2018, 7, 31)),
        ("Sep. 30, 2019", date(2019, 9, 30)),
        ("Dec. 31, 2019", date(2019, 12, 31)),
        ("June 30, 2019", date(2019, 6, 30)),
        ("May 31, 2019", date(2019, 5, 31)),
        ("Sept. 30, 2019", date(2019, 9, 30)),
    ],
)
def test_rpage_period_header_variants(header, period):
    text = SEED_002.read_text(encoding="utf-8").replace("Jul. 31, 2018", header, 1)
    doc = load_text(text, path="r23.txt")
    assert doc.format == "rpage-text"
    assert doc.metadata.fiscal_period_end == period


@pytest.mark.parametrize(
    "cell, day",
    [
        ("Feb. 29, 2020", date(2020, 2, 29)),
        ("SEPT. 30, 2019", date(2019, 9, 30)),
        ("Dec. 31,\u00a02019", date(2019, 12, 31)),
        ("August 1 2015", date(2015, 8, 1)),
        ("Feb. 30, 2020", None),  # no such day
        ("Dec. 31, 2019 (a)", None),  # the whole cell must be the date
        ("12 Months Ended", None),
        ("Mayo 5, 2021", None),
    ],
)
def test_header_date_is_the_whole_cell_read_with_english_month_names(cell, day):
    assert parse_header_date(cell) == day


def test_html_rpage_renders_a_table_row_per_line_like_the_seed():
    """Each table row of the rendered R page is one line of tab-separated cells, holding the seed's cells
    (one a line there) in the seed's order; a blank line before and after the table."""
    seed = [line.strip(" \u00a0") for line in SEED_002.read_text(encoding="utf-8").split("\n")]
    seed_cells = [s for s in seed if s]
    start = seed_cells.index("Year Ended July 31,")
    doc = load(HTML_002)
    lines = doc.text.split("\n")
    first = lines.index("\tYear Ended July 31,")  # the label column is empty: the row starts with a tab
    last = lines.index("", first)
    assert lines[first - 1] == ""
    table = lines[first:last]
    assert table == [
        "\tYear Ended July 31,",
        "\t2018\t2017\t2016",
        "Expected volatility\t40.0%\t40.3%\t40.4%",
        "Expected dividends\t2.0%\t2.2%\t2.2%",
        "Expected term (average in years)\t5.8-6.4\t5.5-6.2\t5.3-5.9",
        "Risk-free rate\t1.2-2.3%\t0.5-1.5%\t0.3-2.2%",
    ]
    assert [f for line in table for f in line.split("\t") if f] == seed_cells[start : start + 20]
    # the grid is this text: one row a line, every cell's span is its field
    grid = next(g for g in doc.grids if g.start == sum(len(line) + 1 for line in lines[:first]))
    assert doc.text[grid.start : grid.end] == "\n".join(table)
    assert (grid.rows, grid.cols) == (6, 4)
    for r, line in enumerate(table):
        fields = line.split("\t")
        assert doc.text[grid.row_starts[r] :].startswith(line)
        assert [(c.col, doc.text[c.start : c.end]) for c in grid.row_cells(r)] == [
            (i, f) for i, f in enumerate(fields) if f
        ]
    # SAR activity: '(1,049', ')' and '$', '33.25' cells are joined; empty cells keep every value in its column
    header = lines.index(
        "\tAwards\tWeighted-Average Exercise Price\tWeighted-Average Remaining Contractual Term"
        "\tAggregate Intrinsic Value"
    )
    assert lines[header - 1] == ""
    assert "Exercised\t(1,049)\t$ 33.25" in lines[header:]
    assert "Outstanding at July 31, 2018\t1,324\t$ 91.01\t5.3 years\t$ 246,198" in lines[header:]
    assert "Forfeited or expired\t(3)\t$ 172.03" in lines[header:]
    end = lines.index("", header)
    assert lines[end - 1] == "Exercisable at July 31, 2018\t1,092\t$ 71.54\t4.7 years\t$ 224,231"
    assert end - header == 16  # the header and 15 rows, nothing split or lost


@pytest.mark.parametrize("path", [TEXT_000, TEXT_002], ids=["000", "002"])
def test_aligned_text(path):
    doc = load(path)
    assert doc.format == "aligned-text"
    assert doc.text == path.read_text(encoding="utf-8")  # kept verbatim: spans are columns in lines
    assert doc.metadata.fiscal_period_end is None and doc.metadata.source_name is None
    assert doc.warnings == []


def test_aligned_text_table_alone_is_aligned():
    """Three aligned rows are enough: the assumptions table cut from the 002 aligned text."""
    lines = TEXT_002.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == "Year Ended July 31,")
    snippet = "\n".join(lines[start : start + 8])
    assert snippet.rstrip().endswith("0.3-2.2%")
    assert load_text(snippet).format == "aligned-text"
    assert load_text(snippet.replace("\n", "\r\n")).format == "aligned-text"


def test_aligned_text_detection_agrees_with_counting_every_aligned_row():
    """The shortcut (no two spaces or tab in a row: no scan; stop at the third row) against counting every row."""
    import re

    from extractor.loaders import _aligned

    rows = re.compile(r"\S[ \t]{2,}[\$(]?[ \t]*\d", re.MULTILINE)
    row = "Granted  1,601\n"
    texts = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.rglob("*.txt"))]
    texts += [row * n for n in range(5)] + [row.replace("  ", sep) * 3 for sep in ("\t", " \t", "\t ", "\t\t", " ")]
    texts += ["a  1  2  3", "a  1  2", "a\t$ 1\nb (\t2\nc  3"]
    assert {_aligned(text) for text in texts} == {True, False}
    for text in texts:
        assert _aligned(text) == (len(rows.findall(text)) >= 3), text[:80]


def _ten_k_note() -> str:
    """Note 11 of CarMax's FY2020 10-K, cut from the submission's main HTML document."""
    body = EDGAR_KMX.read_text(encoding="utf-8")
    start = body.index(
        '<div style="margin-top:12pt;text-align:justify"><span style="font-family:\'Times New Roman\',serif;font-size:10pt;font-weight:bold">11. STOCK AND STOCK-BASED'
    )
    end = body.index("12. Net Earnings Per Share")
    end = body.rindex("<div", start, end)
    return body[start:end]


def test_html_10k_note_snippet():
    snippet = _ten_k_note()
    assert snippet.startswith("<div") and "<html" not in snippet and "<table" in snippet
    doc = load_text(snippet, path="kmx-note11.htm", doc_id="kmx-note11")
    assert doc.format == "html"
    assert doc.id == "kmx-note11" and doc.path == "kmx-note11.htm"
    assert doc.text.startswith("11. STOCK AND STOCK-BASED INCENTIVE PLANS")
    options = _table(doc, "Stock Option Activity")
    exercised = next(r for r in options.rows if r.label == "Options exercised")
    assert [("-" if n.negative else "") + n.text for c in exercised.cells for n in c.numbers] == ["-2,413", "51.55"]
    # the 10-K note and the R page of the same note print the same tables
    assert _rows(doc) == _rows(load(HTML_000))


def test_inline_xbrl_10k_with_xml_declaration():
    markup = (
        "<?xml version='1.0' encoding='ASCII'?>\n"
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL">\n'
        "<head><title>kmx-20200229x10k</title></head>\n<body>\n" + _ten_k_note() + "\n</body>\n</html>\n"
    )
    doc = load_text(markup, path="kmx-20200229x10k.htm")
    assert doc.format == "html"
    assert _rows(doc) == _rows(load(HTML_000))


def test_edgar_submission_picks_the_stock_comp_rpage():
    doc = load(EDGAR_KMX)
    assert doc.format == "edgar-submission/html"
    meta = doc.metadata
    assert meta.form == "10-K"
    assert meta.company == "CARMAX INC"
    assert meta.cik == "0001170010"
    assert meta.fiscal_period_end == date(2020, 2, 29)
    assert meta.source_name == "R19.htm"  # the R page, not the 10-K or its exhibits
    assert meta.title == "Stock And Stock-Based Incentive Plans"
    assert "UNITED STATES" not in doc.text  # not the 10-K cover
    assert _rows(doc) == _rows(load(HTML_000))


def test_edgar_submission_without_rpages_falls_back_to_main_document():
    text = EDGAR_KMX.read_text(encoding="utf-8")
    cut = text.index("<DOCUMENT>\n<TYPE>XML")
    doc = load_text(text[:cut] + "</SEC-DOCUMENT>\n", path="kmx.txt")
    assert doc.format == "edgar-submission/html"
    assert doc.metadata.source_name == "kmx-20200229x10k.htm"
    assert doc.metadata.form == "10-K" and doc.metadata.cik == "0001170010"
    assert doc.metadata.fiscal_period_end == date(2020, 2, 29)  # from CONFORMED PERIOD OF REPORT
    assert "11. STOCK AND STOCK-BASED INCENTIVE PLANS" in doc.text


@pytest.mark.parametrize("damaged", ["2020-02-29", "20200230", "2020022"])
def test_a_damaged_period_of_report_in_the_sec_header_is_left_for_the_documents_own(damaged: str) -> None:
    """The header's period is YYYYMMDD; any other value (a hand-edited or cut header) is ignored with a warning, and
    the period is read from the R page, or from the 10-K's cover when the submission has no R pages."""
    text = EDGAR_KMX.read_text(encoding="utf-8")
    assert text.count("CONFORMED PERIOD OF REPORT:\t20200229") == 1
    text = text.replace("CONFORMED PERIOD OF REPORT:\t20200229", f"CONFORMED PERIOD OF REPORT:\t{damaged}")
    cut = text.index("<DOCUMENT>\n<TYPE>XML")
    for doc in (load_text(text, path="kmx.txt"), load_text(text[:cut] + "</SEC-DOCUMENT>\n", path="kmx.txt")):
        assert doc.metadata.fiscal_period_end == date(2020, 2, 29)
        assert doc.metadata.form == "10-K" and doc.metadata.cik == "0001170010"
        assert (
            f"the SEC header's CONFORMED PERIOD OF REPORT '{damaged}' is not a date (YYYYMMDD); ignored" in doc.warnings
        )


def test_edgar_submission_without_documents_is_an_error():
    header = EDGAR_KMX.read_text(encoding="utf-8").split("</SEC-HEADER>")[0] + "</SEC-HEADER>\n"
    with pytest.raises(LoadError, match="no <DOCUMENT> block") as err:
        load_text(header, path="hdr-only.txt")
    assert err.value.path == "hdr-only.txt"


# --------------------------------------------------------------------------- bad inputs


INSTANCE = FIXTURES / "xbrl" / "small_instance.xml"  # its declaration, then a comment, then <xbrli:xbrl>
FILING_SUMMARY = (  # how an EDGAR submission's FilingSummary.xml starts
    b'<?xml version="1.0" encoding="utf-8"?>\r\n<FilingSummary>\r\n  <Version>3.24.3</Version>\r\n'
    b"  <ProcessingTime />\r\n  <ReportFormat>Html</ReportFormat>\r\n  <ContextCount>248</ContextCount>\r\n"
)


def test_xml_that_is_html_or_text_is_still_read():
    """Inline XBRL and XHTML start with a declaration too; text after a bare declaration is read as text."""
    html = load_text(
        '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Options 1,234</p></body></html>',
        path="note.htm",
    )
    text = load_text('<?xml version="1.0"?>\nStock options outstanding 1,234\n', path="note.txt")
    assert (html.format, html.text) == ("html", "Options 1,234") and text.format == "rpage-text"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("empty.txt", b"", "empty"),
        ("blank.txt", b"  \n\t\r\n   \n", "empty"),
        ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10", "binary"),
        ("png-header-only.htm", b"\x89PNG\r\n\x1a\n", "binary"),
        ("nul.txt", b"Stock Option Activity\n7,869\n\x00\x00\x00\x00\n57.96\n", "binary"),
        ("prose.txt", b"Stock Compensation Plan\nThe Company has a share award plan.\n", "no numbers"),
        ("prose.htm", b"<html><body><table><tr><td>Awards</td><td>none</td></tr></table></body></html>", "no numbers"),
        # XML that is not HTML: read as text, its tags and attributes were a note's words and numbers
        ("declaration.htm", b'\xef\xbb\xbf<?xml version="1.0" encoding="utf-8"?>\r\n', "only an XML declaration"),
        ("instance.xml", INSTANCE.read_bytes(), "XML document (root <xbrli:xbrl>), not a filing section"),
        ("instance.xml", INSTANCE.read_bytes(), "an XBRL instance's facts are gold: extractor gold from-xbrl"),
        ("FilingSummary.xml", FILING_SUMMARY, "XML document (root <FilingSummary>), not a filing section"),
    ],
)
def test_bad_file_gives_load_error_naming_it(tmp_path, name, data, reason):
    path = _write(tmp_path, name, data)
    with pytest.raises(LoadError) as err:
        load(path)
    assert reason in err.value.reason
    assert err.value.path == str(path)
    assert str(err.value).startswith(f"{path}: ")


def test_directory_gives_load_error(tmp_path):
    with pytest.raises(LoadError) as err:
        load(tmp_path)
    assert "directory" in err.value.reason
    assert str(tmp_path) in str(err.value)


def test_missing_file_gives_load_error(tmp_path):
    missing = tmp_path / "R19.htm"
    with pytest.raises(LoadError) as err:
        load(missing)
    assert "cannot be read" in err.value.reason and "No such file" in err.value.reason
    assert str(missing) in str(err.value)


def test_load_text_without_numbers_names_the_path():
    with pytest.raises(LoadError, match=r"^note\.txt: no numbers found"):
        load_text("Stock Compensation Plan\nNone were granted.\n", path="note.txt")


# --------------------------------------------------------------------------- encodings and line ends


def test_cp1252_smart_quotes_load_with_a_warning(tmp_path):
    text = SEED_002.read_text(encoding="utf-8")
    assert "\u201cPlan\u201d" in text  # “Plan”
    data = text.encode("cp1252")
    assert b"\x93Plan\x94" in data
    doc = load(_write(tmp_path, "r23-cp1252.txt", data))
    assert doc.text == text  # smart quotes decoded, nothing lost
    assert len(doc.warnings) == 1
    assert "not valid UTF-8" in doc.warnings[0] and "cp1252" in doc.warnings[0]
    first_bad = next(i for i, b in enumerate(data) if b >= 0x80)
    assert f"offset {first_bad}" in doc.warnings[0]
    assert doc.format == "rpage-text" and doc.metadata.fiscal_period_end == date(2018, 7, 31)
    assert _rows(doc) == _rows(load(SEED_002))


def test_utf8_bom_is_dropped(tmp_path):
    text = SEED_002.read_text(encoding="utf-8")
    doc = load(_write(tmp_path, "bom.txt", b"\xef\xbb\xbf" + text.encode("utf-8")))
    assert doc.text == text and doc.warnings == []
    assert doc.metadata.source_name == "R23.htm"


@pytest.mark.parametrize("path", [SEED_000, SEED_002, HTML_002])
def test_crlf_line_endings(tmp_path, path):
    raw = path.read_bytes()
    crlf = _write(tmp_path, path.name, raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    lf = load(path)
    doc = load(crlf)
    assert "\r" not in doc.text
    assert doc.text == lf.text
    assert doc.format == lf.format and doc.metadata == lf.metadata
    assert _rows(doc) == _rows(lf)


# --------------------------------------------------------------------------- truncation


def _sar_rows(doc):
    """Rows of the SAR activity table: the one whose header has an 'Exercise Price' column."""
    sar = next(t for t in rebuild_tables(doc) if any("Exercise Price" in h for h in t.header_lines))
    return [(r.label, [("-" if n.negative else "") + n.text for c in r.cells for n in c.numbers]) for r in sar.rows]


def test_truncated_html_mid_table_keeps_complete_rows():
    markup = HTML_002.read_text(encoding="utf-8")
    full = _sar_rows(load(HTML_002))
    assert len(full) == 15
    # cut inside the 2018 "Forfeited or expired" row, right after its label cell
    last_row = markup.index("<tr>", markup.index("(1,049"))
    cut = markup.index("</td>", last_row) + len("</td>")
    assert markup[last_row:cut].endswith(">Forfeited or expired</td>")
    doc = load_text(markup[:cut], path="cut.htm")
    assert doc.format == "html"
    assert doc.metadata.title == "Stock Compensation Plan"
    assert _sar_rows(doc)[:11] == full[:11]
    assert _sar_rows(doc)[10] == ("Exercised", ["-1,049", "33.25"])
    # complete rows stay one tab-separated line each; the cut row has only its label
    assert doc.text.split("\n")[-2:] == ["Exercised\t(1,049)\t$ 33.25", "Forfeited or expired"]


def test_truncated_html_mid_cell_keeps_the_partial_row():
    markup = HTML_002.read_text(encoding="utf-8")
    full = _sar_rows(load(HTML_002))
    last_row = markup.index("<tr>", markup.index("(1,049"))
    cut = markup.index("(3", last_row) + 2  # "...>(3" and nothing after
    doc = load_text(markup[:cut], path="cut.htm")
    rows = _sar_rows(doc)
    assert rows[:11] == full[:11]
    assert rows[11:] == [("Forfeited or expired", ["-3"])]  # the cut row keeps what was printed
    assert doc.text.split("\n")[-2:] == ["Exercised\t(1,049)\t$ 33.25", "Forfeited or expired\t(3"]


def test_truncated_html_inside_a_tag():
    markup = HTML_002.read_text(encoding="utf-8")
    full = _sar_rows(load(HTML_002))
    cut = markup.index('<td style="vert', markup.index("(1,049")) + 8  # "...(1,049</td><td styl"
    doc = load_text(markup[:cut], path="cut.htm")
    rows = _sar_rows(doc)
    assert rows[:10] == full[:10]
    assert rows[10:] == [("Exercised", ["-1,049"])]
    assert doc.text.split("\n")[-2:] == ["Granted\t86\t$ 237.86", "Exercised\t(1,049"]


# --------------------------------------------------------------------------- sniffing


def test_rpage_text_with_plain_spaces_is_still_rpage_text():
    text = SEED_000.read_text(encoding="utf-8").replace("\u00a0", " ")
    doc = load_text(text, path="r19-plain-spaces.txt")
    assert doc.format == "rpage-text"
    assert doc.metadata.title == "Stock And Stock-Based Incentive Plans"
