"""The eval harness: suites, per-fact outcomes, stored runs, comparison with significance, CI gates."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from fixture_paths import GOLD, ROOT, SEED_000, SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.backends.rules import lexicon
from extractor.cli import app
from extractor.evals.harness.compare import compare
from extractor.evals.harness.outcomes import FactOutcome
from extractor.evals.harness.runner import DocumentResult, EvalRun, run_suite
from extractor.evals.harness.store import RunStore, StoreError
from extractor.loaders import load
from extractor.suites import SuiteError, load_suite

SEEDS_SUITE = ROOT / "evals" / "suites" / "seeds"


def write_suite(folder: Path, entries: list[dict], name: str = "t") -> Path:
    """A suite.toml listing `entries` (paths may be absolute)."""
    lines = [f'[suite]\nname = "{name}"\n']
    for entry in entries:
        lines.append("[[documents]]")
        lines += [
            f"{key} = {json.dumps(str(value)) if not isinstance(value, list) else json.dumps(value)}"
            for key, value in entry.items()
        ]
        lines.append("")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder


def seed_entries() -> list[dict]:
    return [
        {
            "id": "000",
            "path": SEED_000,
            "gold": GOLD / "000_a279831d03f6579a.facts.jsonl",
            "format": "rpage-text",
            "tags": ["real"],
        },
        {
            "id": "002",
            "path": SEED_002,
            "gold": GOLD / "002_59f0e0194afd947c.facts.jsonl",
            "accepted": GOLD / "002_59f0e0194afd947c.accepted.jsonl",
            "format": "rpage-text",
            "tags": ["real"],
        },
    ]


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


# -- suites -------------------------------------------------------------------------------------


def test_suite_manifest_resolves_paths_relative_to_itself():
    suite = load_suite(SEEDS_SUITE)
    assert suite.name == "seeds" and [d.tags for d in suite.documents] == [("real",), ("real",)]
    assert suite.documents[0].path == SEED_000 and len(suite.documents[0].gold_facts) == 179
    assert suite.documents[1].accepted_findings  # seed 002's two accepted quirks


@pytest.mark.parametrize(
    "entries, message",
    [
        ([], "lists no [[documents]]"),
        (
            [{"id": "a", "path": "missing.txt", "gold": GOLD / "000_a279831d03f6579a.facts.jsonl"}],
            "path missing.txt does not exist",
        ),
        ([{"id": "a", "path": SEED_000}], "missing gold"),
        ([{"id": "a", "path": SEED_000, "gold": GOLD / "000_a279831d03f6579a.facts.jsonl"}] * 2, "listed twice: a"),
        ([{"id": "a", "path": SEED_000, "gold": SEED_000}], "gold 000_a279831d03f6579a.txt:1 is not a fact"),
    ],
)
def test_a_broken_manifest_is_refused_naming_the_problem(tmp_path, entries, message):
    with pytest.raises(SuiteError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_suite(write_suite(tmp_path, entries))


def test_a_missing_or_invalid_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(SuiteError, match="no suite manifest"):
        load_suite(tmp_path)
    (tmp_path / "suite.toml").write_text("[suite\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="not valid TOML"):
        load_suite(tmp_path)


# -- runs and outcomes --------------------------------------------------------------------------


def test_rules_on_the_seeds_scores_every_gold_fact_and_round_trips_through_the_store(tmp_path):
    run = run_suite(load_suite(SEEDS_SUITE), rules.extract, "rules")
    metrics = run.metrics()
    assert (metrics.overall.gold, metrics.overall.correct, metrics.overall.f1) == (282, 282, 1.0)
    assert metrics.by_group["assumptions"].gold == 39 and metrics.by_award["sar"].gold == 73
    assert metrics.grounding_rate == 1.0 and metrics.validation_pass_rate == 1.0
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.save(run)
    loaded = store.load(run_id)
    assert loaded.outcomes == run.outcomes and loaded.metrics() == metrics
    assert [r.f1 for r in store.runs("seeds")] == [1.0] and store.latest("seeds") == run_id
    with pytest.raises(StoreError, match="no run 99"):
        store.load(99)


def test_a_document_that_cannot_be_read_fails_alone_and_its_gold_counts_as_missed(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    entries = seed_entries()
    entries[0] = {**entries[0], "path": empty}
    run = run_suite(load_suite(write_suite(tmp_path / "s", entries)), rules.extract, "rules")
    failed, extracted = run.documents
    assert failed.status == "failed" and "empty" in (failed.reason or "")
    assert extracted.status == "extracted" and extracted.passed
    metrics = run.metrics()
    assert metrics.by_document["000"].recall == 0.0 and metrics.by_document["002"].f1 == 1.0
    assert metrics.failed_documents == 1 and metrics.overall.gold == 282


def test_wrong_values_count_as_found_but_not_right(tmp_path):
    gold = [json.loads(line) for line in (GOLD / "002_59f0e0194afd947c.facts.jsonl").read_text().splitlines()]
    gold[0]["value"] = gold[0]["value"] * 2  # the extractor reads the document's number: now a wrong value
    changed = tmp_path / "gold.jsonl"
    changed.write_text("\n".join(json.dumps(g) for g in gold), encoding="utf-8")
    suite = load_suite(write_suite(tmp_path / "s", [{"id": "002", "path": SEED_002, "gold": changed}]))
    counts = run_suite(suite, rules.extract, "rules").metrics().overall
    assert (counts.found, counts.correct) == (103, 102)
    assert counts.found_f1 == 1.0 and counts.value_accuracy == pytest.approx(102 / 103)


# -- comparison and significance ---------------------------------------------------------------


def synthetic_run(right_per_document: list[int], facts_per_document: int = 20) -> EvalRun:
    """A run whose document i gets its first `right_per_document[i]` gold facts right, the rest missed."""
    outcomes = []
    for i, right in enumerate(right_per_document):
        for n in range(facts_per_document):
            outcomes.append(
                FactOutcome(
                    document=f"d{i}",
                    concept=f"C{n}",
                    period={"instant": "2020-12-31"},
                    dims={},
                    unit="shares",
                    group="plan",
                    outcome="correct" if n < right else "missed",
                    gold_value=Decimal(n),
                    predicted_value=Decimal(n) if n < right else None,
                )
            )
    documents = [DocumentResult(id=f"d{i}", status="extracted", passed=True) for i in range(len(right_per_document))]
    return EvalRun(
        created="2026-01-01T00:00:00+00:00",
        suite="s",
        suite_fingerprint="f",
        backend="rules",
        code_version="test",
        documents=documents,
        outcomes=outcomes,
    )


def test_a_one_document_wobble_is_not_read_as_progress():
    baseline = synthetic_run([10] * 12)
    candidate = synthetic_run([10] * 11 + [20])  # ten more facts right, all in one document
    result = compare(baseline, candidate)
    assert len(result.newly_right) == 10 and result.delta_f1 > 0
    assert not result.significant and result.interval[0] <= 0 < result.interval[1] and result.p_value > 0.05


def test_a_gain_spread_over_documents_is_significant():
    result = compare(synthetic_run([10] * 12), synthetic_run([12] * 12))
    assert result.significant and result.interval[0] > 0 and result.p_value < 0.05
    assert len(result.newly_right) == 24 and result.regressions == 0


# -- the CLI as a CI gate ------------------------------------------------------------------------


def test_eval_catches_a_planted_rule_regression_and_the_gate_exits_non_zero(tmp_path, monkeypatch):
    store, suite = str(tmp_path / "runs.sqlite"), str(ROOT / "evals" / "suites" / "heterogeneous")
    first = cli("eval", suite, "--store", store, "--html", str(tmp_path / "r1.html"))
    assert first.exit_code == 0, first.output
    assert "By concept group" in first.output and "options roll-forward" in first.output

    # A deliberately worse rule set: the lexicon no longer knows "forfeited" rows.
    monkeypatch.setattr(lexicon, "ROW_KINDS", [(k, p) for k, p in lexicon.ROW_KINDS if k != "forfeited"])
    worse = cli(
        "eval",
        suite,
        "--store",
        store,
        "--baseline",
        "latest",
        "--no-regressions",
        "--fail-under",
        "0.99",
        "--label",
        "no forfeited rows",
        "--html",
        str(tmp_path / "r2.html"),
    )
    assert worse.exit_code == 1, worse.output
    wrong = int(re.search(r"(\d+) newly wrong", worse.output).group(1))
    assert wrong >= 10 and "a real regression" in worse.output  # spread over documents: not noise
    assert "EquityInstrumentsOtherThanOptionsForfeitedInPeriod" in worse.output
    # the rows no rule knows are not dropped: they come back as line items, so the gate sees them as extras
    extras = re.search(rf"gate failed: {wrong} facts newly wrong and (\d+) new extras against run 1", worse.output)
    assert extras and int(extras.group(1)) > 0, worse.output
    assert "below --fail-under 0.99" in worse.output
    html = (tmp_path / "r2.html").read_text(encoding="utf-8")
    assert f"Newly wrong ({wrong})" in html and "no forfeited rows" in html

    monkeypatch.undo()  # the rules restored: right again, and nothing regressed against run 1
    fixed = cli(
        "eval", suite, "--store", store, "--baseline", "1", "--no-regressions", "--html", str(tmp_path / "r3.html")
    )
    assert fixed.exit_code == 0, fixed.output
    assert "0 facts newly right · 0 newly wrong · 0 new extras" in fixed.output and "within noise" in fixed.output
    listing = cli("eval-runs", "--store", store)
    assert (
        listing.exit_code == 0 and "no forfeited rows" in listing.output and listing.output.count("heterogeneous") == 3
    )


def test_too_few_documents_are_never_called_significant():
    result = compare(synthetic_run([10] * 2), synthetic_run([20] * 2))
    assert result.delta_f1 > 0 and not result.significant
    assert result.verdict == "too few documents to tell (2; 6 needed)"


def test_a_duplicate_prediction_is_a_new_extra_not_a_lost_fact():
    baseline = synthetic_run([20])
    duplicate = baseline.outcomes[0].model_copy(update={"outcome": "extra", "gold_value": None})
    candidate = baseline.model_copy(update={"outcomes": [*baseline.outcomes, duplicate]})
    twice = baseline.model_copy(update={"outcomes": [*candidate.outcomes, duplicate]})
    result = compare(baseline, candidate)
    assert (len(result.newly_wrong), len(result.newly_right), len(result.new_extras)) == (0, 0, 1)
    assert len(compare(candidate, twice).new_extras) == 1 and len(compare(twice, baseline).extras_gone) == 2


def test_eval_refuses_bad_suites_baselines_and_gates_without_a_baseline(tmp_path):
    store = str(tmp_path / "runs.sqlite")
    assert cli("eval", str(tmp_path), "--store", store).exit_code == 2
    no_baseline = cli("eval", str(SEEDS_SUITE), "--store", store, "--no-regressions")
    assert no_baseline.exit_code == 2 and "needs a baseline" in no_baseline.output
    for baseline in ("yesterday", "²", "9" * 30):
        bad = cli("eval", str(SEEDS_SUITE), "--store", store, "--baseline", baseline)
        assert bad.exit_code == 2 and "run id or 'latest'" in bad.output
    assert cli("eval", str(SEEDS_SUITE), "--store", store, "--html", str(tmp_path / "a.html")).exit_code == 0
    other = write_suite(tmp_path / "other", seed_entries(), name="other")
    mixed = cli("eval", str(other), "--store", store, "--baseline", "1")
    assert mixed.exit_code == 2 and "run 1 is of suite 'seeds', not 'other'" in mixed.output
    unwritable = cli("eval", str(SEEDS_SUITE), "--store", store, "--html", "/dev/null/report.html")
    assert unwritable.exit_code == 2 and "the report cannot be written" in unwritable.output
    assert "run 2 is stored" in unwritable.output and len(RunStore(Path(store)).runs()) == 2
    no_store = cli("eval", str(SEEDS_SUITE), "--store", "/dev/null/runs.sqlite")
    assert no_store.exit_code == 2 and "cannot be used as a run store" in no_store.output


# -- the LLM backend through the harness ---------------------------------------------------------


def test_eval_of_the_llm_backend_records_model_prompt_and_usage_then_replays_without_calls(tmp_path):
    store, cassettes = str(tmp_path / "runs.sqlite"), str(tmp_path / "cassettes")
    with ScriptedServer() as server:
        for path in (SEED_000, SEED_002):  # scripted completions (test fixtures), not a model
            document = load(path)
            server.script.append(tool_reply(quoted_answer(rules.extract(document), document), tokens=(4000, 900)))
        recorded = cli(
            "eval",
            str(SEEDS_SUITE),
            "--backend",
            "llm",
            "--base-url",
            server.base_url,
            "--model",
            "scripted",
            "--cache",
            "read-write",
            "--cache-dir",
            cassettes,
            "--store",
            store,
            "--html",
            str(tmp_path / "a.html"),
        )
        assert recorded.exit_code == 0, recorded.output
        assert len(server.requests) == 2
    replayed = cli(
        "eval",
        str(SEEDS_SUITE),
        "--backend",
        "llm",
        "--model",
        "scripted",
        "--cache",
        "replay",
        "--cache-dir",
        cassettes,
        "--store",
        store,
        "--baseline",
        "latest",
        "--no-regressions",
        "--html",
        str(tmp_path / "b.html"),
    )
    assert replayed.exit_code == 0, replayed.output
    runs = RunStore(Path(store))
    first, second = runs.load(1), runs.load(2)
    assert (first.model, first.prompt_id) == ("scripted", "stock_compensation@v1") and first.prompt_hash
    assert first.metrics().overall.f1 == second.metrics().overall.f1 == 1.0
    assert first.metrics().usage.prompt_tokens == 8000 and first.metrics().usage.requests == 2
    assert second.metrics().usage.requests == 0 and second.metrics().usage.cache_hits == 2
    assert "0 newly wrong" in replayed.output and "LLM usage: 0 requests, 2 from cache" in replayed.output


def test_report_nests_facts_sharing_a_span_and_links_only_to_drawn_marks(tmp_path):
    from extractor.evals.harness.html_report import render_report

    entries = [{**seed_entries()[1], "id": "50%25 x"}]
    suite = load_suite(write_suite(tmp_path, entries))
    run = run_suite(suite, rules.extract, "rules")
    right = next(row for row in run.outcomes if row.outcome == "correct")
    twin = right.model_copy(update={"outcome": "extra", "gold_value": None, "gold_source": None, "concept": "ext:Twin"})
    far = right.model_copy(
        update={
            "outcome": "extra",
            "gold_value": None,
            "gold_source": None,
            "concept": "ext:Far",
            "predicted_source": right.predicted_source.model_copy(update={"start": 10**7, "end": 10**7 + 2}),
        }
    )
    run.outcomes += [twin, far]
    html = render_report(run, run.metrics(), suite, [])
    assert 'id="doc-50-25-x"' in html and 'href="#doc-50-25-x"' in html
    marks = re.findall(r'<mark id="([^"]+)"', html)
    links = re.findall(r'href="#([gp]-[^"]+)"', html)
    assert set(links) <= set(marks) and len(marks) == 103 * 2 + 1  # gold and predicted of each fact, plus the twin
    assert re.search(
        r'<mark id="p-doc-50-25-x-\d+" class="correct"[^>]*><mark id="p-doc-50-25-x-\d+" class="extra"', html
    ) or re.search(
        r'<mark id="p-doc-50-25-x-\d+" class="extra"[^>]*><mark id="p-doc-50-25-x-\d+" class="correct"', html
    )
