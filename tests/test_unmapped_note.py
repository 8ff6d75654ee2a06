"""The 'tables not mapped' note of `extractor extract` (issue 18, point 4): one short line by default, the whole
list under --verbose and always in the JSON output. A whole 10-K has some 60 such tables."""

from __future__ import annotations

import json
from pathlib import Path

from fixture_paths import ROOT
from typer.testing import CliRunner

from extractor.cli import app
from extractor.cli.extract import unmapped_note


def test_unmapped_note_is_one_short_line() -> None:
    titles = [
        "__________",
        "TABLE OF CONTENTS",
        "We report our financial results for our two reportable segments: Family of Apps",
        "We report our financial results for our two reportable segments: Family of Apps",
        "Cost of revenue",
        "15",
    ]
    note = unmapped_note(titles)
    assert note == (
        "6 tables not mapped: 'TABLE OF CONTENTS', 'We report our financial results for our…', 'Cost of revenue' and 3 more"
        " (all: --verbose, or tables_unmapped in --format json)"
    )
    assert (
        unmapped_note(["Plan category"])
        == "1 table not mapped: 'Plan category' (all: --verbose, or tables_unmapped in --format json)"
    )
    assert unmapped_note(["___", "15"]).startswith(
        "2 tables not mapped: '___', '15' ("
    )  # nothing worded: the titles as they are
    verbose = unmapped_note(titles, verbose=True).split("\n")
    assert verbose[0] == "6 tables not mapped:" and verbose[1:] == [f"  - {title}" for title in titles]


def test_extract_prints_the_short_note_and_the_whole_list_under_verbose(tmp_path: Path) -> None:
    document = ROOT / "evals" / "suites" / "real" / "documents" / "gainsco-10k-2009.html"  # 5 tables no rule maps
    runner = CliRunner()
    out = tmp_path / "out.json"
    quiet = runner.invoke(app, ["extract", str(document), "-o", str(out)])
    unmapped = json.loads(out.read_text(encoding="utf-8"))[0]["tables_unmapped"]
    assert len(unmapped) == 5 and sum(len(title) for title in unmapped) > 400
    notes = [line for line in quiet.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith(f"note: {document}: 5 tables not mapped: '") and len(notes[0]) < 300
    assert " and 2 more (all: --verbose" in notes[0] and unmapped[-1] not in notes[0]
    loud = runner.invoke(app, ["extract", str(document), "-o", str(out), "--verbose"])
    listed = loud.stderr.split(f"{len(unmapped)} tables not mapped:\n", 1)[1].splitlines()[: len(unmapped)]
    assert listed == [f"  - {' '.join(title.split())}" for title in unmapped]
    assert "--verbose" in runner.invoke(app, ["extract", "--help"]).stdout
