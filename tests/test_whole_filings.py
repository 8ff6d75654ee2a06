"""Whole filings in, only the stock-compensation note out: the note is found among the filing's others, every
backend reads only it, and a filing without one is refused with no facts.

The fixtures in tests/fixtures/whole are real filings (inline XBRL stripped, rendered as the loader renders
them), cut down: the cover page and table of contents, every note and Item heading with the start of its
body, MD&A sentences about share-based compensation, and the stock-compensation note whole (see its README).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_paths import FIXTURES, ROOT
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.cli import app
from extractor.loaders import NoNoteFound, load, load_text
from extractor.schemas.concepts import to_facts

WHOLE = FIXTURES / "whole"
META, MA, UNH, XOM = (
    WHOLE / f"{name}.txt" for name in ("meta-10k-2024", "ma-10k-2024", "unh-10k-2024", "xom-10q-2025q2")
)
CORPUS = ROOT.parent / "shared" / "corpus" / "real"


def _between(text: str, first: str, then: str) -> tuple[int, int]:
    start = text.index(first)
    return start, text.index(then, start)


def test_a_combined_equity_note_is_read_not_the_toc_or_mdna() -> None:
    document = load(META)
    text = document.text
    assert document.note is not None
    assert (document.note.start, document.note.end) == _between(text, "Note\xa013. Stockholders' Equity", "Note\xa014.")
    assert "a combined note" in document.note.why
    # the table of contents names Item 8 and the MD&A speaks of share-based compensation: both lie outside
    assert text.index("Item 8.\tFinancial Statements") < document.note.start
    mdna = [i for i in range(len(text)) if text.startswith("share-based compensation", i)]
    assert any(i < document.note.start for i in mdna)
    extraction = rules.extract(document)
    assert extraction.section == document.note
    facts = to_facts(extraction.note)
    assert all(document.note.start <= f.source.start < f.source.end <= document.note.end for f in facts if f.source)
    # the same facts as the note cut out and read alone (in the same format), at the same places
    cut = document.model_copy(update={"text": text_of(document), "note": None})
    alone = to_facts(rules.extract(cut).note)
    shifted = {(f.concept, f.value, f.source.start - document.note.start) for f in facts}
    assert len(facts) >= 5 and shifted == {(f.concept, f.value, f.source.start) for f in alone}


def test_a_note_crossing_running_page_headers_is_read_to_its_end() -> None:
    # Mastercard prints "ITEM 8. ... - NOTES TO CONSOLIDATED FINANCIAL STATEMENTS" on every page: no Item starts there.
    document = load(MA)
    text = document.text
    assert document.note is not None and document.note.heading == "Note 18. Share-Based Payments"
    assert (document.note.start, document.note.end) == _between(text, "Note 18. Share-Based Payments", "Note 19.")
    assert (
        "ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA - NOTES" in text[document.note.start : document.note.end]
    )


def test_a_numbered_note_without_the_word_note() -> None:
    document = load(UNH)
    assert document.note is not None
    assert document.note.heading == "11.\xa0\xa0\xa0\xa0Share-Based Compensation"
    start, end = _between(document.text, "11.\xa0\xa0\xa0\xa0Share-Based Compensation", "\n12.")
    assert (document.note.start, document.note.end) == (start, end + 1)


def text_of(document) -> str:
    return document.text[document.note.start : document.note.end]


def test_lettered_notes() -> None:
    # The same real notes, lettered as some filers letter them: Note A, Note B, ...
    text = META.read_text(encoding="utf-8")
    for number in range(16, 0, -1):
        text = text.replace(f"Note\xa0{number}.", f"Note\xa0{chr(ord('A') + number - 1)}.")
    document = load_text(text, path="lettered.txt")
    assert document.note is not None and document.note.heading == "Note\xa0M. Stockholders' Equity"
    assert (document.note.start, document.note.end) == _between(text, "Note\xa0M. Stockholders' Equity", "Note\xa0N.")


def test_note_sentences_do_not_make_headings() -> None:
    # "Note that ..." and "Notes to ..." are no lettered notes; the list of notes is unchanged by them.
    inserted = "Note that the following.\nNotes to the tables.\n"
    text = META.read_text(encoding="utf-8").replace("Note\xa05.", inserted + "Note\xa05.", 1)
    note, before = load_text(text).note, load(META).note
    assert note and before and note.heading == before.heading
    assert (note.start, note.end) == (before.start + len(inserted), before.end + len(inserted))


def test_a_filing_without_the_note_is_refused() -> None:
    with pytest.raises(
        NoNoteFound, match=r"xom-10q-2025q2.txt: no stock-compensation note found: a whole filing \(\d+ note headings"
    ):
        load(XOM)


@pytest.mark.parametrize("backend", ["rules", "llm", "hybrid"])
def test_every_backend_refuses_a_filing_without_the_note_with_no_facts(tmp_path: Path, backend: str) -> None:
    out = tmp_path / "facts.jsonl"
    args = ["extract", str(XOM), "--format", "facts", "-o", str(out), "--backend", backend]
    if backend != "rules":  # nothing listens there: the refusal must come before any request
        args += ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key", "k"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "no stock-compensation note found" in result.output
    assert not out.exists() or out.read_text() == ""


def test_a_bulk_run_records_the_refusal_and_reads_the_other_filing(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for path in (META, XOM):
        (inputs / path.name).write_bytes(path.read_bytes())
    run = subprocess.run(
        [sys.executable, "-m", "extractor.cli", "run", str(inputs), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    [failure] = [json.loads(line) for line in (tmp_path / "out" / "failures.jsonl").read_text().splitlines()]
    assert failure["ref"].endswith("xom-10q-2025q2.txt") and "no stock-compensation note found" in failure["reason"]
    [record] = [json.loads(line) for line in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert record["document"]["ref"].endswith("meta-10k-2024.txt")
    section = record["extraction"]["section"]
    assert section["heading"] == "Note\xa013. Stockholders' Equity" and section["start"] > 0


@pytest.mark.skipif(
    not (CORPUS / "meta-10k-2024" / "filing.html").is_file(), reason="../shared/corpus/real is not here"
)
def test_whole_corpus_filings_find_what_their_note_alone_finds() -> None:
    from extractor.evals.whole_filings import main

    assert main(["--corpus", str(CORPUS)]) == 0
