"""Issue 19's corrections from the shell and in the library: add a missed fact, delete a wrong value,
re-point a span (each re-validated and audited), accept with a reason per coverage finding, and
export gold that holds the added fact, leaves out what unresolved errors involve, and says it is partial."""

from __future__ import annotations

import json

import pytest
from fixture_paths import ROOT
from review_seed import GOOGL, GOOGL_GOLD, JUNK_PATH, MISSED_CONCEPT, MOVED_PATH, seed_missed_number
from typer.testing import CliRunner

from extractor.cli import app
from extractor.loaders import load
from extractor.queue.corrections import correct
from extractor.queue.edits import EditError, apply_edits
from extractor.queue.facts import number_span, search_concepts, unit_of
from extractor.queue.gold import export_gold
from extractor.queue.store import ItemStatus, Queue, QueueError
from extractor.schemas.facts import read_facts
from extractor.scoring import score
from extractor.suites import load_suite


def _add(spans: dict[str, tuple[int, int]]) -> str:
    start, end = spans["missed"]
    return f"concept={MISSED_CONCEPT},value=633000000,unit=shares,instant=2024-12-31,span={start}:{end},award=rsu"


def test_a_selection_becomes_the_number_it_selects_most_of():
    text = "Unvested as of December 31, 2023\t338\t$ 104.93\nthree years"
    at = text.index("338")
    assert number_span(f"{at - 1}:{at + 4}", text) == (at, at + 3)  # tab and dollar sign left out
    assert number_span(f"{at + 1}:{at + 2}", text) == (at, at + 3)  # a number cut short taken whole
    word = text.index("three")
    assert number_span(f"{word}:{word + 5}", text) == (word, word + 5)  # numbers printed as words
    for bad, why in (
        ("5:1", "outside"),
        ("0:9", "holds no number"),
        ("x", "not a span"),
        ("0:250", "select the number only"),
    ):
        with pytest.raises(ValueError, match=why):
            number_span(bad, text if why != "select the number only" else text * 5)


def test_concepts_are_searchable_with_the_unit_they_take():
    assert [c.name for c in search_concepts("reserved future")] == [MISSED_CONCEPT]
    assert (
        unit_of(
            "ShareBasedCompensationArrangementByShareBasedPaymentAwardOptionsExercisableWeightedAverageExercisePrice"
        )
        == "USD/share"
    )
    assert (
        unit_of("ShareBasedCompensationArrangementByShareBasedPaymentAwardFairValueAssumptionsExpectedVolatilityRate")
        == "pure"
    )
    assert unit_of("AllocatedShareBasedCompensationExpense") == "USD"


def test_corrections_add_delete_and_repoint_and_say_what_they_resolved(tmp_path):
    queue = Queue(tmp_path / "queue.sqlite")
    item_id, spans = seed_missed_number(queue)
    item = queue.get(item_id)
    document = load(GOOGL)
    right = spans["right"]
    fields = {f"add[0].{k}": v for k, v in (pair.split("=") for pair in _add(spans).split(","))}
    fields["add[0].period.instant"] = fields.pop("add[0].instant")
    done = correct(
        item.extraction, fields | {f"{JUNK_PATH}.delete": "1", f"{MOVED_PATH}.span": f"{right[0]}:{right[1]}"}, document
    )
    assert [c.field for c in done.changes] == [f"{MOVED_PATH}.span", "line_items[3]", f"{JUNK_PATH}.delete"]
    added = done.extraction.note.line_items[3]
    assert (added.concept, added.award, added.amount.source.text) == (MISSED_CONCEPT, "rsu", "633")
    assert len(done.extraction.note.expense) == 3  # the junk line went with its amount
    resolved = {f.rule for f in done.resolved}
    assert {"grounding.readback", "consistency.conflict", "coverage.table"} <= resolved  # 338 is a value's span again
    assert not any(n.start == spans["missed"][0] for f in done.extraction.validation.findings for n in f.numbers)
    assert "resolved: " in done.account and "grounding.readback" in done.account
    # Refused, naming each problem: an added fact without a period or a span, a value that does not exist.
    with pytest.raises(EditError) as refused:
        apply_edits(
            item.extraction,
            {
                "add[0].concept": MISSED_CONCEPT,
                "add[0].value": "1",
                "add[0].unit": "shares",
                "add[0].span": "5:1",
                "expense[9].amount.delete": "1",
            },
            document.text,
        )
    assert "add[0]: '5:1' is outside the document text" in str(
        refused.value
    ) and "expense[9].amount.delete: no such value" in str(refused.value)
    with pytest.raises(EditError, match="give the period"):
        apply_edits(
            item.extraction,
            {
                "add[0].concept": MISSED_CONCEPT,
                "add[0].value": "1",
                "add[0].unit": "shares",
                "add[0].span": f"{spans['missed'][0]}:{spans['missed'][1]}",
            },
            document.text,
        )
    with pytest.raises(EditError, match="cannot be read"):
        apply_edits(item.extraction, {f"{MOVED_PATH}.span": f"{right[0]}:{right[1]}"}, None)


def test_the_cli_fixes_an_omission_and_exports_partial_gold_that_scores_it(tmp_path):
    queue = Queue(tmp_path / "queue.sqlite")
    item_id, spans = seed_missed_number(queue)
    runner = CliRunner()
    env = {"EXTRACTOR_QUEUE": str(queue.path), "EXTRACTOR_REVIEW_ROOT": str(ROOT)}

    def run(*args: str):
        return runner.invoke(app, ["queue", *args], env=env)

    shown = run("show", str(item_id), "--values")
    assert (
        shown.exit_code == 0
        and f"{spans['missed'][0]}:{spans['missed'][1]} 633" in shown.output
        and JUNK_PATH in shown.output
    )
    assert MISSED_CONCEPT in run("concepts", "reserved").output
    assert run("edit", str(item_id)).exit_code == 2  # nothing to do
    bad = run("edit", str(item_id), "--span", f"{MOVED_PATH}=0:3", "--reviewer", "alice")
    assert bad.exit_code == 1 and "holds no number" in bad.output and queue.get(item_id).version == 1
    right = spans["right"]
    edited = run(
        "edit",
        str(item_id),
        "--add",
        _add(spans),
        "--delete",
        JUNK_PATH,
        "--span",
        f"{MOVED_PATH}={right[0]}:{right[1]}",
        "--reviewer",
        "alice",
    )
    assert edited.exit_code == 0, edited.output
    assert (
        "saved version 2: 3 changes" in edited.output
        and "resolved: " in edited.output
        and "0 errors left" in edited.output
    )
    audit = queue.audit(item_id)
    assert [e.action for e in audit][-4:] == ["corrected", "corrected", "corrected", "revalidated"]
    assert all(e.reviewer == "alice" and e.at for e in audit[-4:])

    item = queue.get(item_id)
    coverage = [f for f in item.extraction.validation.findings if f.family == "coverage"]
    assert coverage  # the note's other sentences still print numbers nobody extracted
    refused = run("resolve", str(item_id), "--accept", "--reviewer", "alice")
    assert (
        refused.exit_code == 1 and f"{len(coverage)} coverage findings left needs a reason for each" in refused.output
    )
    with pytest.raises(QueueError, match="coverage findings left"):
        queue.resolve(item_id, "alice", 2, True, "all fine", {coverage[0].id: "why"} if len(coverage) > 1 else {})
    reasons = [f"--accept-finding={f.id}=amounts settled in stock: no concept in scope" for f in coverage]
    done = run("resolve", str(item_id), "--accept", "--reviewer", "alice", *reasons)
    assert done.exit_code == 0, done.output
    assert queue.get(item_id).status is ItemStatus.accepted
    assert [e.field for e in queue.audit(item_id) if e.action == "finding_accepted"] == [f.id for f in coverage]

    exported = run("export-gold", str(tmp_path / "suite"))
    assert exported.exit_code == 0, exported.output
    (document,) = load_suite(tmp_path / "suite").documents
    assert document.tags == ("reviewed", "partial")
    provenance = json.loads((tmp_path / "suite" / "gold" / f"{document.id}.provenance.json").read_text())
    assert [p["finding"] for p in provenance["partial"]] == [f.id for f in coverage] and provenance["excluded"] == []
    gold = read_facts(str(document.gold))
    filer = [f for f in read_facts(str(GOOGL_GOLD)) if f.concept == MISSED_CONCEPT]
    assert score(gold, filer).correct == 1  # the added fact is the filer's own
    assert not any(f.value == 2022 for f in gold)


def test_gold_leaves_out_values_of_errors_nobody_accepted_one_by_one(tmp_path):
    queue = Queue(tmp_path / "queue.sqlite")
    item_id, _ = seed_missed_number(queue)
    findings = queue.get(item_id).extraction.validation.findings
    conflict = next(f for f in findings if f.rule == "consistency.conflict")
    coverage = {f.id: "left for later" for f in findings if f.family == "coverage"}
    queue.resolve(item_id, "bob", 1, True, "the rest is checked", coverage | {conflict.id: "the filing prints both"})
    result = export_gold(queue, tmp_path / "suite", ROOT, "carol")
    assert len(result.written) == 1
    (document,) = load_suite(tmp_path / "suite").documents
    gold = read_facts(str(document.gold))
    provenance = json.loads((tmp_path / "suite" / "gold" / f"{document.id}.provenance.json").read_text())
    # the readback error was not accepted: the value it blames (338 million pointing at '299') is no gold
    assert [(e["rule"], e["value"]) for e in provenance["excluded"]] == [("grounding.readback", "338000000")]
    assert not any(f.value == 338000000 for f in gold)
    assert any(f.value == 2022 for f in gold)  # accepted individually: kept as printed, the reviewer's call
    assert document.accepted_findings.keys() == coverage.keys() | {conflict.id}
