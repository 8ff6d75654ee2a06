"""The correction queue: claims under contention, stale saves, expiry, the audit log, corrections,
intake from runs and extract, and accepted items exported as gold that the eval harness scores."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from fixture_paths import FIXTURES, ROOT, SEED_002
from review_seed import RIGHT, WRONG_FIELD, seed_rollforward_error
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.cli import app
from extractor.evals.harness.runner import run_suite
from extractor.llm.config import ConfigError
from extractor.queue.documents import DocumentError, confined, item_document
from extractor.queue.edits import EditError, apply_edits
from extractor.queue.feed import qa_sampled
from extractor.queue.gold import export_gold
from extractor.queue.settings import queue_path, resolve_queue_settings
from extractor.queue.store import Conflict, ItemStatus, Queue, QueueError
from extractor.schemas.concepts import to_facts
from extractor.suites import load_suite
from extractor.validator import validate

SUITE_DOCS = ROOT / "evals" / "suites" / "heterogeneous" / "documents"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(tmp_path, clock) -> Queue:
    return Queue(tmp_path / "queue.sqlite", lease_seconds=600, clock=clock)


def corrected(queue: Queue, item_id: int, value: Decimal = RIGHT):
    item = queue.get(item_id)
    fixed, changes = apply_edits(item.extraction, {f"{WRONG_FIELD}.value": str(value)})
    fixed.validation = validate(fixed, item_document(item, ROOT))
    return fixed, changes


def test_two_reviewers_claiming_at_once_exactly_one_wins(tmp_path):
    items = [seed_rollforward_error(Queue(tmp_path / "q.sqlite"))]
    path = tmp_path / "q.sqlite"
    for copy in range(11):  # the same document under other names: separate items
        named = tmp_path / f"copy{copy}" / SEED_002.name
        named.parent.mkdir()
        named.write_bytes(SEED_002.read_bytes() + b"\n" * (copy + 1))
        items.append(seed_rollforward_error(Queue(path), named))
    outcomes: dict[int, list[str]] = {item: [] for item in items}
    barrier = threading.Barrier(2)

    def reviewer(name: str) -> None:
        own = Queue(path)  # its own connections, as two server threads or two processes would have
        for item in items:
            barrier.wait()
            try:
                own.claim(item, name)
                outcomes[item].append(name)
            except Conflict as refused:
                assert "is claimed by" in str(refused)

    threads = [threading.Thread(target=reviewer, args=(name,)) for name in ("alice", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared = Queue(path)
    for item, winners in outcomes.items():
        assert len(winners) == 1, (item, winners)
        assert shared.get(item).claimed_by == winners[0]
        assert [e.reviewer for e in shared.audit(item) if e.action == "claimed"] == winners


def test_a_stale_save_is_refused_and_the_newer_version_kept(queue):
    item_id = seed_rollforward_error(queue)
    opened = queue.get(item_id).version  # both reviewers look at version 1
    queue.claim(item_id, "alice")
    fixed, changes = corrected(queue, item_id)
    queue.save(item_id, "alice", opened, fixed, changes)
    queue.release(item_id, "alice")
    queue.claim(item_id, "bob")
    theirs, their_changes = corrected(queue, item_id, Decimal("999000"))
    with pytest.raises(
        Conflict, match=r"changed by alice .*\(version 2\) after you opened version 1; nothing was saved"
    ):
        queue.save(item_id, "bob", opened, theirs, their_changes)
    item = queue.get(item_id)
    assert item.version == 2 and item.status is ItemStatus.corrected
    assert item.extraction.note.award_activity[2].rows[2].count.value == RIGHT
    with pytest.raises(Conflict, match="version 2"):
        queue.resolve(item_id, "bob", opened, accept=True, reason="")


def test_an_expired_claim_can_be_taken_over_and_the_old_holder_cannot_save(queue, clock):
    item_id = seed_rollforward_error(queue)
    queue.claim(item_id, "alice")
    with pytest.raises(Conflict, match="claimed by alice until"):
        queue.claim(item_id, "bob")
    assert queue.next_for("bob") is None  # nothing else waits
    clock.now += 601
    assert queue.counts()[ItemStatus.open] == 1  # an expired claim counts as open, and is listed as open
    assert [i.id for i in queue.items([ItemStatus.open])] == [item_id] and not queue.items([ItemStatus.claimed])
    taken = queue.claim(item_id, "bob")
    assert taken.claimed_by == "bob"
    assert (
        queue.audit(item_id)[-1].action == "taken_over" and "alice's claim had expired" in queue.audit(item_id)[-1].note
    )
    fixed, changes = corrected(queue, item_id)
    with pytest.raises(Conflict, match="claimed by bob"):
        queue.save(item_id, "alice", taken.version, fixed, changes)
    assert queue.save(item_id, "bob", taken.version, fixed, changes).version == 2
    clock.now += 601  # bob's claim runs out too: the item is open again, and carol may resolve it
    assert queue.get(item_id).holder(clock.now) is None and queue.get(item_id).status is ItemStatus.corrected
    queue.resolve(item_id, "carol", 2, accept=False, reason="not the note")
    assert [(e.action, e.reviewer) for e in queue.audit(item_id)][-2:] == [
        ("taken_over", "carol"),
        ("rejected", "carol"),
    ]


def test_next_item_prefers_own_claim_then_validation_errors(queue):
    first = seed_rollforward_error(queue)
    assert queue.next_for("alice").id == first
    assert queue.next_for("alice").id == first  # still hers
    assert queue.next_for("bob") is None


def test_resolving_needs_a_reason_to_reject_and_to_accept_with_errors_left(queue):
    item_id = seed_rollforward_error(queue)
    with pytest.raises(QueueError, match="reason is needed when rejecting"):
        queue.resolve(item_id, "alice", 1, accept=False, reason=" ")
    with pytest.raises(QueueError, match="accepting with 3 error findings left"):
        queue.resolve(item_id, "alice", 1, accept=True, reason="")
    errors = {f.rule: f.id for f in queue.get(item_id).extraction.validation.errors}
    with pytest.raises(QueueError, match="no finding rollforward.count:0000"):
        queue.resolve(item_id, "alice", 1, accept=True, reason="x", finding_reasons={"rollforward.count:0000": "typo"})
    done = queue.resolve(
        item_id,
        "alice",
        1,
        accept=True,
        reason="the filing prints 110",
        finding_reasons={errors["rollforward.count"]: "the printed table does not add up"},
    )
    quirks = json.loads(done.accepted_findings)  # only the finding accepted individually is a filing quirk
    assert quirks == [
        {"id": errors["rollforward.count"], "rule": "rollforward.count", "reason": "the printed table does not add up"}
    ]
    assert [(e.action, e.field) for e in queue.audit(item_id)][-2:] == [
        ("finding_accepted", errors["rollforward.count"]),
        ("accepted", None),
    ]
    with pytest.raises(Conflict, match="accepted by alice"):
        queue.claim(item_id, "bob")


def test_the_audit_log_is_append_only(queue):
    item_id = seed_rollforward_error(queue)
    with sqlite3.connect(queue.path) as db:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("update audit set reviewer = 'mallory' where item_id = ?", (item_id,))
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("delete from audit")
    assert [e.action for e in queue.audit(item_id)] == ["enqueued"]


def test_the_same_extraction_enters_once(queue):
    first = seed_rollforward_error(queue)
    item = queue.get(first)
    assert queue.add(item.extraction, item.document_ref, item.reason, "again") is None
    assert len(queue.items()) == 1


def test_edits_set_values_units_periods_and_award_types(queue):
    extraction = queue.get(seed_rollforward_error(queue)).extraction
    fixed, changes = apply_edits(
        extraction,
        {
            f"{WRONG_FIELD}.value": "101,000",
            f"{WRONG_FIELD}.unit": "shares",  # unchanged: no change recorded
            "award_activity[2].rows[2].weighted_average_price.period.start": "2017-08-02",
            "award_activity[2].award": "psu",
            "plans[0].shares_authorized.value": "(12)",
        },
    )
    assert [c.field for c in changes] == [
        f"{WRONG_FIELD}.value",
        "award_activity[2].rows[2].weighted_average_price.period.start",
        "award_activity[2].award",
        "plans[0].shares_authorized.value",
    ]
    assert changes[0].before == "110000" and changes[0].after == "101000"
    assert fixed.note.award_activity[2].award == "psu" and fixed.note.plans[0].shares_authorized.value == Decimal("-12")
    assert {
        f.dims.get("award") for f in to_facts(fixed.note) if "PSU" in f.concept or f.dims.get("award") == "psu"
    } == {"psu"}
    assert extraction.note.award_activity[2].award == "rsu"  # the original is untouched
    with pytest.raises(EditError) as refused:
        apply_edits(
            extraction,
            {
                f"{WRONG_FIELD}.value": "12x",
                f"{WRONG_FIELD}.unit": "euros",
                "award_activity[9].award": "rsu",
                f"{WRONG_FIELD}.period.end": "31/07/2018",
                "award_activity[0].award": "warrant",
            },
        )
    message = str(refused.value)
    for expected in (
        "'12x' is not a number",
        "'euros' is not a unit",
        "award_activity[9].award: no such field",
        "'31/07/2018' is not a date",
        "'warrant' is not an award type",
    ):
        assert expected in message
    with pytest.raises(EditError, match="out of range"):
        apply_edits(extraction, {f"{WRONG_FIELD}.value": "1e1000000"})
    with pytest.raises(EditError, match="either an instant or has an end date"):
        apply_edits(extraction, {f"{WRONG_FIELD}.period.end": ""})  # a flow with no end is no period


def test_documents_are_read_only_from_below_the_root(tmp_path, queue):
    item = queue.get(seed_rollforward_error(queue))
    assert item_document(item, ROOT).sha256 == item.document_sha256
    outside = tmp_path / "secret.txt"
    outside.write_text("payroll")
    (ROOT / "out").mkdir(exist_ok=True)
    link = ROOT / "out" / f"link-{os.getpid()}.txt"
    link.unlink(missing_ok=True)
    link.symlink_to(outside)
    try:
        for ref in ("../../../../../../etc/passwd", "/etc/passwd", str(outside), str(link), "tests/../../secret.txt"):
            with pytest.raises(DocumentError, match="outside the review root"):
                confined(ref, ROOT)
    finally:
        link.unlink()
    assert confined("tests/fixtures/x.zip::a/../../b.htm", ROOT).endswith(
        "x.zip::a/../../b.htm"
    )  # members stay in their archive
    moved = tmp_path / "moved.txt"
    moved.write_text(SEED_002.read_text(encoding="utf-8") + "\nAmended.")
    changed = item.__class__(**{**item.__dict__, "document_ref": str(moved)})
    with pytest.raises(DocumentError, match="changed since it was extracted"):
        item_document(changed, tmp_path)


def test_queue_urls_and_settings(tmp_path):
    assert queue_path("sqlite:///review/q.sqlite") == Path("review/q.sqlite")
    assert queue_path("sqlite:////data/q.sqlite") == Path("/data/q.sqlite")
    assert queue_path("q.sqlite") == Path("q.sqlite")
    with pytest.raises(ConfigError, match="only SQLite queues"):
        queue_path("postgres://db/queue")
    config = tmp_path / "extractor.toml"
    config.write_text('[queue]\nurl = "sqlite:///x.sqlite"\nqa_rate = 0.25\nclaim_minutes = 5\n')
    settings = resolve_queue_settings({"url": None}, config, environ={})
    assert (settings.path, settings.qa_rate, settings.claim_minutes) == (Path("x.sqlite"), 0.25, 5)
    assert resolve_queue_settings({}, config, environ={"EXTRACTOR_QUEUE": "env.sqlite"}).path == Path("env.sqlite")
    config.write_text("[queue]\nqa_rate = 2\n")
    with pytest.raises(ConfigError, match="queue setting 'qa_rate'"):
        resolve_queue_settings({}, config, environ={})


def test_qa_sampling_is_deterministic_and_near_the_rate():
    keys = [f"{n:064x}" for n in range(20_000)]
    sampled = [k for k in keys if qa_sampled(k, 0.05)]
    assert 0.04 < len(sampled) / len(keys) < 0.06
    assert sampled == [k for k in keys if qa_sampled(k, 0.05)]
    assert not any(qa_sampled(k, 0) for k in keys[:1000])


def test_accepted_items_export_as_gold_that_the_eval_harness_scores(tmp_path, queue):
    item_id = seed_rollforward_error(queue)
    queue.claim(item_id, "alice")
    fixed, changes = corrected(queue, item_id)
    queue.save(item_id, "alice", 1, fixed, changes)
    quirk_id = seed_rollforward_error(queue, _copy(tmp_path, "quirk"))  # accepted as is: its findings become quirks
    queue.resolve(quirk_id, "bob", 1, accept=True, reason="reviewed: keep as printed")
    rejected = seed_rollforward_error(queue, _copy(tmp_path, "rejected"))
    queue.resolve(rejected, "bob", 1, accept=False, reason="duplicate filing")
    suite = tmp_path / "reviewed"
    assert export_gold(queue, suite, tmp_path.parent.parent, "carol").written == [f"q{quirk_id}_002_59f0e0194afd947c"]
    queue.resolve(item_id, "alice", 2, accept=True, reason="")
    result = export_gold(queue, suite, Path("/"), "carol", [item_id, item_id])  # named twice: written once
    assert result.written == [f"q{item_id}_002_59f0e0194afd947c"]
    again = export_gold(queue, suite, Path("/"), "carol")
    assert (
        again.written == []
        and len(again.skipped) == 2
        and all("in the suite already" in note for note in again.skipped)
    )
    assert export_gold(queue, tmp_path / "empty", Path("/"), "carol", [rejected]).skipped == [
        f"item {rejected}: rejected, not accepted"
    ]
    assert not (tmp_path / "empty" / "suite.toml").exists()

    loaded = load_suite(suite)
    corrected_doc, quirk_doc = sorted(loaded.documents, key=lambda d: d.id != f"q{item_id}_002_59f0e0194afd947c")
    assert corrected_doc.path.read_bytes() == SEED_002.read_bytes() and corrected_doc.tags == ("reviewed",)
    assert "accepted by alice" in corrected_doc.source
    assert (
        quirk_doc.accepted_findings == {} and corrected_doc.accepted is None
    )  # accepted as a whole: no finding individually
    provenance = json.loads((suite / "gold" / f"{corrected_doc.id}.provenance.json").read_text())
    assert [e["action"] for e in provenance["audit"]] == ["enqueued", "claimed", "corrected", "accepted"]
    assert queue.audit(item_id)[-1].action == "exported" and str(suite) in queue.audit(item_id)[-1].note
    assert provenance["audit"][2]["field"] == f"{WRONG_FIELD}.value"

    run = run_suite(loaded, rules.extract, "rules")
    results = {result.id: result for result in run.documents}
    by_document = run.metrics().by_document
    assert by_document[corrected_doc.id].f1 == 1.0  # the reviewed gold is what the filing says
    assert by_document[corrected_doc.id].wrong == 0 and by_document[corrected_doc.id].missed == 0
    # The misread value (and the others its unresolved errors involve) stayed out of the gold: no junk, nothing wrong
    assert by_document[quirk_doc.id].wrong == 0 and by_document[quirk_doc.id].missed == 0
    quirk_provenance = json.loads((suite / "gold" / f"{quirk_doc.id}.provenance.json").read_text())
    assert "110000" in {e["value"] for e in quirk_provenance["excluded"]}
    assert {e["rule"] for e in quirk_provenance["excluded"]} <= {
        "rollforward.count",
        "grounding.readback",
        "consistency.conflict",
    }
    assert results[corrected_doc.id].passed


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name / SEED_002.name
    target.parent.mkdir(parents=True)
    target.write_bytes(SEED_002.read_bytes() + f"\n{name}\n".encode())  # another document: another item
    return target


def test_bulk_run_and_extract_send_failing_documents_to_the_queue(tmp_path):
    queue_file = tmp_path / "queue.sqlite"
    env = {**os.environ, "EXTRACTOR_QUEUE": str(queue_file)}
    inputs = [str(SEED_002), str(SUITE_DOCS / "002_prose.txt"), str(SUITE_DOCS / "new_side_by_side.htm")]
    command = [
        sys.executable,
        "-m",
        "extractor.cli",
        "run",
        *inputs,
        "--out",
        str(tmp_path / "run"),
        "--workers",
        "1",
        "--qa-rate",
        "1",
    ]
    first = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "3 documents entered the review queue" in first.stderr
    queue = Queue(queue_file)
    reasons = {item.document_id: item.reason.value for item in queue.items()}
    assert reasons == {
        "002_59f0e0194afd947c.txt": "qa_sample",
        "002_prose.txt": "validation",
        "new_side_by_side.htm": "validation",
    }
    assert all(Path(item.document_ref).is_absolute() for item in queue.items())
    again = subprocess.run(
        [*command[:-2], "--qa-rate", "0"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert again.returncode == 0 and "0 documents entered" in again.stderr and len(queue.items()) == 3

    runner = CliRunner()
    extracted = runner.invoke(
        app,
        [
            "extract",
            str(SUITE_DOCS / "002_prose.txt"),
            str(FIXTURES / "000_a279831d03f6579a.txt"),
            "--queue",
            "-o",
            str(tmp_path / "x.json"),
        ],
        env={"EXTRACTOR_QUEUE": str(tmp_path / "q2.sqlite")},
    )
    assert extracted.exit_code == 1  # one input failed validation
    assert "1 extractions entered the review queue" in extracted.output
    assert [i.document_id for i in Queue(tmp_path / "q2.sqlite").items()] == ["002_prose"]
    refused = runner.invoke(app, ["extract", str(SEED_002), "--queue", "--no-validate"])
    assert refused.exit_code == 2 and "cannot be used with --no-validate" in refused.output


def test_queue_commands(tmp_path):
    queue = Queue(tmp_path / "queue.sqlite")
    item_id = seed_rollforward_error(queue)
    env = {"EXTRACTOR_QUEUE": str(queue.path), "EXTRACTOR_REVIEW_ROOT": str(ROOT)}
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, ["queue", *args], env=env)

    listed = run("list", "--rule", "rollforward.count")
    assert listed.exit_code == 0 and "open 1" in listed.output and "002_59f0e0194afd947c" in listed.output
    assert json.loads(run("list", "--json").output)["errors"] == 3
    assert run("claim", str(item_id), "--reviewer", "alice").exit_code == 0
    taken = run("claim", str(item_id), "--reviewer", "bob")
    assert taken.exit_code == 1 and "claimed by alice" in taken.output
    bad = run("resolve", str(item_id), "--accept", "--reviewer", "alice", "--set", f"{WRONG_FIELD}.value=abc")
    assert bad.exit_code == 1 and "'abc' is not a number" in bad.output
    done = run("resolve", str(item_id), "--accept", "--reviewer", "alice", "--set", f"{WRONG_FIELD}.value=101000")
    assert done.exit_code == 0, done.output
    assert "saved version 2: 1 fields changed; 0 errors left" in done.output and "accepted (version 3)" in done.output
    shown = run("show", str(item_id))
    assert "110000" in shown.output and "101000" in shown.output
    audit = json.loads(run("show", str(item_id), "--json").output)["audit"]
    assert [(e["field"], e["before"], e["after"]) for e in audit if e["action"] == "corrected"] == [
        (f"{WRONG_FIELD}.value", "110000", "101000")
    ]
    assert [e["action"] for e in audit] == [
        "enqueued",
        "claimed",
        "corrected",
        "revalidated",
        "accepted",
    ]  # as queue edit records it
    exported = run("export-gold", str(tmp_path / "suite"))
    assert exported.exit_code == 0 and "wrote 1 gold documents" in exported.output
    assert (
        runner.invoke(
            app,
            [
                "eval",
                str(tmp_path / "suite"),
                "--store",
                str(tmp_path / "runs.sqlite"),
                "--html",
                str(tmp_path / "r.html"),
                "--fail-under",
                "1",
            ],
        ).exit_code
        == 0
    )
    made = run("add-reviewer", "carol")
    token = made.stdout.strip().splitlines()[-1]
    assert made.exit_code == 0 and len(token) >= 32 and token not in queue.path.read_bytes().decode("latin-1")
    assert run("add-reviewer", "carol").exit_code == 2
    missing = runner.invoke(app, ["queue", "list"], env={"EXTRACTOR_QUEUE": str(tmp_path / "none.sqlite")})
    assert missing.exit_code == 2 and "no queue at" in missing.output
