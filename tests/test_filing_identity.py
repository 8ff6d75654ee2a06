"""Who filed it (issue 18, point 5) in every output: the Extraction's `filing` from every backend, `--format json`,
`--format facts` and `--format table`, and a bulk run's records.jsonl, facts.csv and facts.parquet.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from fixture_paths import EDGAR_KMX, FIXTURES, ROOT, SEED_000, SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer
from typer.testing import CliRunner

from extractor.backends import hybrid, rules
from extractor.backends.llm import LLMBackend
from extractor.bulk.outputs import FACT_COLUMNS
from extractor.cli import app
from extractor.extraction import Filing
from extractor.llm.config import LLMConfig
from extractor.loaders import load

COVERS = FIXTURES / "covers"
META_MINI = COVERS / "meta-10k-2024-mini.htm"  # Meta's 10-K cover page, then its stock-compensation note
BOEING_MINI = COVERS / "ba-10q-2025q2-mini.htm"  # Boeing's 10-Q cover page, then its note
META_NOTE = ROOT / "evals" / "suites" / "real" / "documents" / "meta-10k-2024.html"  # the note alone: no cover
D = date


# --- the Extraction and the outputs ----------------------------------------------------------------------


def test_every_backend_path_carries_the_filing() -> None:
    assert rules.extract(load(META_MINI)).filing == Filing(
        company="Meta Platforms, Inc.", form="10-K", fiscal_period_end=D(2024, 12, 31)
    )
    assert rules.extract(load(EDGAR_KMX)).filing == Filing(
        company="CARMAX INC", cik="0001170010", form="10-K", fiscal_period_end=D(2020, 2, 29)
    )
    assert rules.extract(load(META_NOTE)).filing == Filing()


def test_llm_and_hybrid_backends_carry_the_filing() -> None:
    doc = load(EDGAR_KMX)
    expected = Filing(company="CARMAX INC", cik="0001170010", form="10-K", fiscal_period_end=D(2020, 2, 29))
    with ScriptedServer() as server:
        settings = LLMConfig.model_validate(
            {"base_url": server.base_url, "model": "scripted", "cache": "off", "retry_wait": 0.01}
        )
        server.script.append(tool_reply(quoted_answer(rules.extract(doc), doc)))
        assert LLMBackend(settings).extract(doc).filing == expected
        seed = load(SEED_000)  # rules leave numbers of four paragraphs unexplained; say it was filed by someone
        said = seed.metadata.model_copy(
            update={"company": "CARMAX INC", "cik": "0001170010", "form": "10-K", "fiscal_period_end": D(2020, 2, 29)}
        )
        server.script += [tool_reply({})] * 4  # hybrid asks about those paragraphs, and merges the answers
        merged = hybrid.extract(seed.model_copy(update={"metadata": said}), LLMBackend(settings))
        assert len(server.requests) == 5 and merged.provenance.backend == "hybrid"
        assert merged.filing == expected


def test_extract_json_and_facts_carry_the_filing(tmp_path: Path) -> None:
    runner = CliRunner()
    as_json = runner.invoke(app, ["extract", str(META_MINI), str(SEED_002)])
    payload = json.loads(as_json.stdout)
    assert payload[0]["filing"] == {
        "company": "Meta Platforms, Inc.",
        "cik": None,
        "form": "10-K",
        "fiscal_period_end": "2024-12-31",
    }
    assert payload[1]["filing"] == {"company": None, "cik": None, "form": None, "fiscal_period_end": "2018-07-31"}
    out = tmp_path / "facts.jsonl"
    assert runner.invoke(app, ["extract", str(META_MINI), str(SEED_002), "-f", "facts", "-o", str(out)]).exit_code in (
        0,
        1,
    )
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    meta = [line for line in lines if line["document"] == "meta-10k-2024-mini"]
    assert len(meta) > 20 and all(line["filing"]["company"] == "Meta Platforms, Inc." for line in meta)
    assert {line["filing"]["form"] for line in meta} == {"10-K"} and {
        line["filing"]["fiscal_period_end"] for line in meta
    } == {"2024-12-31"}
    assert set(meta[0]) >= {
        "concept",
        "value",
        "unit",
        "period",
        "dims",
        "document",
        "filing",
    }  # the spec's fields stay
    seed = tmp_path / "seed.jsonl"
    seed.write_text(
        "".join(json.dumps(line) + "\n" for line in lines if line["document"] == "002_59f0e0194afd947c"),
        encoding="utf-8",
    )
    scored = runner.invoke(app, ["score", str(seed), "--gold", str(ROOT / "evals" / "gold"), "--fail-under", "0.98"])
    assert scored.exit_code == 0, scored.output  # the extra key is read past: the seed still scores 1.0


def test_table_format_names_the_filer() -> None:
    table = CliRunner().invoke(app, ["extract", str(META_MINI), "-f", "table"])
    assert "Meta Platforms, Inc. · 10-K · period ended 2024-12-31" in table.stdout


# --- bulk runs: records, facts.csv, facts.parquet ---------------------------------------------------------

EXTRACTOR = [sys.executable, "-m", "extractor.cli"]


def bulk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXTRACTOR, "run", *args, "--no-queue", "--workers", "1", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def csv_rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_bulk_outputs_carry_the_filing(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    inputs = tmp_path / "in"
    inputs.mkdir()
    for source in (META_MINI, BOEING_MINI, SEED_002):
        (inputs / source.name).write_bytes(source.read_bytes())
    out = tmp_path / "out"
    result = bulk(str(inputs), "--out", str(out))
    assert result.returncode in (0, 1), result.stderr
    rows = csv_rows(out / "facts.csv")
    assert rows[0] == list(FACT_COLUMNS) and rows[0][4:8] == ["company", "cik", "form", "fiscal_period_end"]
    identity = {(row[0], *row[4:8]) for row in rows[1:]}
    assert identity == {
        ("meta-10k-2024-mini.htm", "Meta Platforms, Inc.", "", "10-K", "2024-12-31"),
        ("ba-10q-2025q2-mini.htm", "THE BOEING COMPANY", "", "10-Q", "2025-06-30"),
        ("002_59f0e0194afd947c.txt", "", "", "", "2018-07-31"),  # an R page: its period, no filer
    }
    table = pq.read_table(out / "facts.parquet")
    assert str(table.schema.field("fiscal_period_end").type) == "date32[day]"
    parquet = {(r["document_id"], r["company"], r["cik"], r["form"], r["fiscal_period_end"]) for r in table.to_pylist()}
    assert parquet == {
        ("meta-10k-2024-mini.htm", "Meta Platforms, Inc.", None, "10-K", D(2024, 12, 31)),
        ("ba-10q-2025q2-mini.htm", "THE BOEING COMPANY", None, "10-Q", D(2025, 6, 30)),
        ("002_59f0e0194afd947c.txt", None, None, None, D(2018, 7, 31)),
    }
    assert table.num_rows == len(rows) - 1
    records = {
        json.loads(line)["document"]["id"]: json.loads(line)
        for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    }
    assert records["meta-10k-2024-mini.htm"]["extraction"]["filing"] == {
        "company": "Meta Platforms, Inc.",
        "cik": None,
        "form": "10-K",
        "fiscal_period_end": "2024-12-31",
    }
    assert records["ba-10q-2025q2-mini.htm"]["document"]["metadata"]["form"] == "10-Q"


def test_a_run_begun_by_an_earlier_version_keeps_its_columns(tmp_path: Path) -> None:
    """facts.csv of a folder an earlier version began has no identity columns: a resumed run writes its rows in
    that file's columns (one header), says so, and facts.parquet is built from it."""
    pq = pytest.importorskip("pyarrow.parquet")
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    (inputs / SEED_002.name).write_bytes(SEED_002.read_bytes())
    assert bulk(str(inputs), "--out", str(out)).returncode == 0
    # what the earlier version wrote: the same rows without the four identity columns, committed at that length
    old_columns = [name for name in FACT_COLUMNS if name not in ("company", "cik", "form", "fiscal_period_end")]
    keep = [FACT_COLUMNS.index(name) for name in old_columns]
    earlier = [[row[i] for i in keep] for row in csv_rows(out / "facts.csv")]
    with open(out / "facts.csv", "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(earlier)
    with sqlite3.connect(out / "manifest.sqlite") as db:
        db.execute("update outputs set length = ? where name = 'facts.csv'", ((out / "facts.csv").stat().st_size,))
    (inputs / META_MINI.name).write_bytes(META_MINI.read_bytes())
    result = bulk(str(inputs), "--out", str(out))
    assert result.returncode in (0, 1), result.stderr
    assert "begun by an earlier version" in result.stderr and "company, cik, form, fiscal_period_end" in result.stderr
    rows = csv_rows(out / "facts.csv")
    assert rows[0] == old_columns and sum(row[0] == "document_id" for row in rows) == 1
    assert {len(row) for row in rows} == {len(old_columns)}
    assert {row[0] for row in rows[1:]} == {"002_59f0e0194afd947c.txt", "meta-10k-2024-mini.htm"}
    table = pq.read_table(out / "facts.parquet")
    assert table.num_rows == len(rows) - 1 and "company" not in table.schema.names


def test_a_facts_file_with_unknown_columns_is_refused(tmp_path: Path) -> None:
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    (inputs / SEED_002.name).write_bytes(SEED_002.read_bytes())
    assert bulk(str(inputs), "--out", str(out)).returncode == 0
    text = (out / "facts.csv").read_text(encoding="utf-8")
    edited = text.replace("document_id,", "doc,", 1)
    (out / "facts.csv").write_text(edited, encoding="utf-8")
    with sqlite3.connect(out / "manifest.sqlite") as db:
        db.execute("update outputs set length = ? where name = 'facts.csv'", (len(edited.encode()),))
    result = bulk(str(inputs), "--out", str(out))
    assert result.returncode == 2 and "does not start with the header of a facts file" in result.stderr
    assert (out / "facts.csv").read_text(encoding="utf-8") == edited  # refused untouched
