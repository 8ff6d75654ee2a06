"""End to end on the real seeds: rules backend facts against hand-labeled gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixture_paths import FIXTURES, GOLD, SEED_000, SEED_002, TEXT_002
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.cli import app
from extractor.loaders import load
from extractor.schemas.concepts import from_facts, to_facts
from extractor.schemas.facts import Fact, read_facts
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.scoring import score

SEEDS = ["000_a279831d03f6579a", "002_59f0e0194afd947c"]
LAYOUTS = {
    "rpage-text": lambda stem: FIXTURES / f"{stem}.txt",
    "html": lambda stem: FIXTURES / "html" / f"{stem}.htm",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("stem", SEEDS)
def test_rules_backend_matches_gold(stem: str, layout: str) -> None:
    doc = load(LAYOUTS[layout](stem))
    facts = to_facts(rules.extract(doc).note)
    result = score(facts, read_facts(str(GOLD / f"{stem}.facts.jsonl")))
    print(
        f"{stem} [{layout}]: precision {result.precision:.3f} recall {result.recall:.3f} "
        f"({result.correct}/{result.gold} gold, {result.predicted} predicted)"
    )
    assert result.recall >= 0.98, [f.concept for f in result.missed]
    assert result.precision >= 0.98, [f.concept for f in result.extra]


def test_edgar_submission_reads_the_stock_compensation_r_page() -> None:
    doc = load(FIXTURES / "edgar" / "0001170010-20-000045.txt")
    assert doc.metadata.company == "CARMAX INC" and doc.metadata.form == "10-K"
    result = score(to_facts(rules.extract(doc).note), read_facts(str(GOLD / "000_a279831d03f6579a.facts.jsonl")))
    assert result.recall >= 0.98 and result.precision >= 0.98


@pytest.mark.parametrize(
    "path", [FIXTURES / f"{s}.txt" for s in SEEDS] + [FIXTURES / "html" / f"{s}.htm" for s in SEEDS]
)
def test_every_fact_is_grounded_in_the_document_text(path: Path) -> None:
    doc = load(path)
    facts = to_facts(rules.extract(doc).note)
    assert facts
    for fact in facts:
        assert fact.source is not None, fact.concept
        assert doc.text[fact.source.start : fact.source.end] == fact.source.text, fact.concept


def test_gold_sources_point_at_their_text() -> None:
    for stem in SEEDS:
        text = (FIXTURES / f"{stem}.txt").read_text(encoding="utf-8")
        for fact in read_facts(str(GOLD / f"{stem}.facts.jsonl")):
            assert text[fact.source.start : fact.source.end] == fact.source.text


def test_seed_values_are_scaled_and_typed() -> None:
    facts = to_facts(rules.extract(load(FIXTURES / "000_a279831d03f6579a.txt")).note)
    by = {(f.concept, f.period.end_date.isoformat(), tuple(sorted(f.dims.items()))): f for f in facts}
    P = "ShareBasedCompensationArrangementByShareBasedPaymentAward"
    exercised = by[(f"{P}OptionsExercisesInPeriod", "2020-02-29", (("award", "option"),))]
    assert (
        exercised.value == 2413000 and exercised.unit == "shares" and exercised.period.start.isoformat() == "2019-03-01"
    )
    granted = by[(f"{P}OptionsGrantsInPeriodGross", "2020-02-29", (("award", "option"),))]
    assert granted.value == 1601489 and granted.source.text == "1,601,489"  # the more precise printing wins
    volatility = by[(f"{P}FairValueAssumptionsWeightedAverageVolatilityRate", "2020-02-29", (("award", "option"),))]
    assert str(volatility.value) == "0.292" and volatility.unit == "pure"
    remaining = by[("StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1", "2020-02-29", ())]
    assert remaining.value == 1552300000


def test_facts_round_trip_through_the_schema() -> None:
    for stem in SEEDS:
        facts = to_facts(rules.extract(load(FIXTURES / f"{stem}.txt")).note)
        again = to_facts(from_facts(facts))
        assert {(f.key(), f.value) for f in again} == {(f.key(), f.value) for f in facts}


def test_fact_json_is_the_spec_shape() -> None:
    fact = to_facts(rules.extract(load(FIXTURES / "002_59f0e0194afd947c.txt")).note)[0]
    record = json.loads(fact.to_json())
    assert list(record) == ["concept", "value", "unit", "period", "dims", "source"]
    assert Fact.from_json(fact.to_json()) == fact


def test_json_schema_is_documented_for_an_llm_reader() -> None:
    schema = StockCompensationNote.model_json_schema()
    assert "never invent numbers" in schema["description"]
    assert schema["$defs"]["Amount"]["properties"]["value"]["description"]


def test_cli_reports_bad_input_and_still_extracts_the_rest(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    out = tmp_path / "facts.jsonl"
    result = CliRunner().invoke(
        app, ["extract", str(empty), str(FIXTURES / "002_59f0e0194afd947c.txt"), "--format", "facts", "-o", str(out)]
    )
    assert result.exit_code == 1
    assert "empty.txt: the file is empty" in result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 103 and all(json.loads(line)["document"] == "002_59f0e0194afd947c" for line in lines)


def test_cli_score_gates_on_f1(tmp_path: Path) -> None:
    out = tmp_path / "facts.jsonl"
    runner = CliRunner()
    assert (
        runner.invoke(
            app, ["extract", str(FIXTURES / "002_59f0e0194afd947c.txt"), "-f", "facts", "-o", str(out)]
        ).exit_code
        == 0
    )
    lines = out.read_text().splitlines()
    ok = runner.invoke(app, ["score", str(out), "--gold", str(GOLD), "--fail-under", "0.98"])
    assert ok.exit_code == 0, ok.output
    out.write_text("\n".join(lines[: len(lines) // 2]) + "\n")  # drop half the facts: recall 0.5
    worse = runner.invoke(app, ["score", str(out), "--gold", str(GOLD), "--fail-under", "0.98"])
    assert worse.exit_code == 1


def test_cli_table_and_json_formats() -> None:
    runner = CliRunner()
    table = runner.invoke(app, ["extract", str(FIXTURES / "002_59f0e0194afd947c.txt"), "-f", "table"])
    assert table.exit_code == 0 and "246,198,000" in table.output
    as_json = runner.invoke(app, ["extract", str(FIXTURES / "002_59f0e0194afd947c.txt")])
    payload = json.loads(as_json.stdout)  # the validation summary goes to stderr
    assert payload[0]["provenance"]["backend"] == "rules"
    assert payload[0]["validation"]["passed"] is True and "validation passed" in as_json.stderr
    assert payload[0]["note"]["award_activity"][0]["award"] == "sar"


def test_cli_extract_fails_on_validation_errors_but_writes_everything(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["extract", str(TEXT_002), str(SEED_002), "-o", str(out)])
    assert result.exit_code == 1 and "1 of 2 extractions failed validation" in result.stderr
    payload = json.loads(out.read_text())
    assert [e["validation"]["passed"] for e in payload] == [False, True]
    assert payload[0]["validation"]["findings"][0]["facts"][0]["path"].startswith("award_activity[")
    unchecked = CliRunner().invoke(app, ["extract", str(TEXT_002), "--no-validate", "-o", str(out)])
    assert unchecked.exit_code == 0 and json.loads(out.read_text())[0]["validation"] is None


def test_cli_validate_saved_extractions_and_facts_files(tmp_path: Path) -> None:
    runner = CliRunner()
    saved = tmp_path / "002.json"
    assert runner.invoke(app, ["extract", str(SEED_002), "-o", str(saved)]).exit_code == 0
    accept = GOLD / "002_59f0e0194afd947c.accepted.jsonl"
    result = runner.invoke(app, ["validate", str(saved), "--accept", str(accept)])
    assert result.exit_code == 0 and "0 errors, 0 warnings, 2 accepted" in result.stdout
    gold_file = GOLD / "000_a279831d03f6579a.facts.jsonl"
    assert runner.invoke(app, ["validate", str(gold_file), "--document", str(SEED_000)]).exit_code == 0
    wrong_text = runner.invoke(app, ["validate", str(gold_file), "--document", str(SEED_002), "-f", "json"])
    assert wrong_text.exit_code == 1
    assert {f["rule"] for f in json.loads(wrong_text.stdout)[0]["findings"]} >= {"grounding.span"}
    two = runner.invoke(app, ["validate", str(gold_file), str(gold_file), "--document", str(SEED_000)])
    assert two.exit_code == 2 and "one facts file" in two.stderr


def test_cli_validate_checks_span_texts_when_the_document_changed(tmp_path: Path) -> None:
    copy = tmp_path / "seed.txt"
    copy.write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    saved = tmp_path / "seed.json"
    runner = CliRunner()
    assert runner.invoke(app, ["extract", str(copy), "-o", str(saved)]).exit_code == 0
    copy.write_text("edited\n" + copy.read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(saved)])
    assert result.exit_code == 0 and "changed since extraction; checking span texts only" in result.stderr
    assert "spans not checked against the document" in result.stdout


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", "", "holds no facts"),
        ("list.jsonl", "[1, 2]\n", "list.jsonl:1: not a fact (a fact is a JSON object)"),
        (
            "unit.jsonl",
            '{"concept": "X", "value": 1, "unit": "bogus", "period": {"instant": "2020-02-29"}}\n',
            "unit.jsonl:1: not a fact (unit:",
        ),
        ("bad.json", "{oops", "not JSON"),
        ("none.json", "[]", "holds no extractions"),
        ("other.json", '{"a": 1}', "not an extraction"),
    ],
)
def test_cli_validate_rejects_unreadable_input_clearly(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_cli_validate_checks_a_multi_document_facts_file_per_document(tmp_path: Path) -> None:
    out = tmp_path / "facts.jsonl"
    runner = CliRunner()
    assert runner.invoke(app, ["extract", str(SEED_000), str(SEED_002), "-f", "facts", "-o", str(out)]).exit_code == 0
    result = runner.invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output
    assert "[000_a279831d03f6579a] · validation passed" in result.stdout
    assert "[002_59f0e0194afd947c] · validation passed" in result.stdout
