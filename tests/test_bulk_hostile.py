"""Hostile inputs to a bulk run (`extractor run`), driven through the real CLI: nothing hangs the
run, nothing aborts it, and every input is accounted for exactly once, in a record or a failure."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fixture_paths import HTML_002, ROOT, SEED_000, SEED_002
from llm_server import Reply, ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.bulk.manifest import Finished, Manifest, Status
from extractor.bulk.sources import ref_of, split_ref
from extractor.bulk.work import Job, Step, handle
from extractor.bulk.workers import WorkerPool
from extractor.evals.benchmarks.corpus import build_corpus, distinct_copy
from extractor.loaders import load

EXTRACTOR = [sys.executable, "-m", "extractor.cli"]
NON_UTF8 = os.fsdecode(b"caf\xe9-note.txt")  # a Latin-1 name on a UTF-8 file system


def run(*args: str, timeout: float = 300, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *EXTRACTOR, "run", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def accounted(out: Path) -> dict[str, str]:
    """Every input ref of the run's outputs, with how it ended; each ref must appear once."""
    seen: dict[str, str] = {}
    for record in lines(out / "records.jsonl"):
        ref = record["document"]["ref"]
        assert ref not in seen, f"{ref} written twice"
        seen[ref] = record["status"]
    for failure in lines(out / "failures.jsonl"):
        assert failure["ref"] not in seen, f"{failure['ref']} both written and failed"
        seen[failure["ref"]] = f"failed at {failure['stage']}: {failure['reason']}"
    return seen


def by_name(seen: dict[str, str]) -> dict[str, str]:
    return {ref.rsplit("/", 1)[-1].rsplit("::", 1)[-1]: how for ref, how in seen.items()}


def without_read_access() -> tuple[str, ...]:
    """A command prefix under which folder permissions hold: root reads anything, so it drops the
    capabilities that let it (as a container test fixture can); empty for other users."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: an unreadable folder cannot be made")
    caps = "-dac_override,-dac_read_search"
    return ("setpriv", "--inh-caps", caps, "--bounding-set", caps, "--")


# --- inputs that are not regular files -------------------------------------------------------------


def test_a_fifo_becomes_a_failure_record_instead_of_hanging_the_run(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 2)
    os.mkfifo(inputs / "pipe.txt")  # opening it to read would wait for a writer forever
    result = run(str(inputs), str(inputs / "pipe.txt"), "--out", str(tmp_path / "out"), timeout=120)
    assert result.returncode == 1, result.stderr
    seen = by_name(accounted(tmp_path / "out"))
    assert seen["pipe.txt"].startswith("failed at read: not a regular file (a FIFO)"), seen
    assert sum(how in ("done", "review") for how in seen.values()) == 2


def test_a_symlink_loop_becomes_a_failure_record_as_a_dangling_link_does(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 1)
    os.symlink("loop-b.txt", inputs / "loop-a.txt")
    os.symlink("loop-a.txt", inputs / "loop-b.txt")
    os.symlink("gone.txt", inputs / "dangling.txt")
    result = run(str(inputs), str(inputs / "loop-a.txt"), "--out", str(tmp_path / "out"), timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    seen = accounted(tmp_path / "out")
    loops = [how for ref, how in seen.items() if "loop-" in ref]
    assert len(loops) == 2 and all("symbolic link" in how for how in loops), seen  # loop-a named twice: one input
    assert "dangling" in " ".join(seen) and sum(how in ("done", "review") for how in seen.values()) == 1


# --- names --------------------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_extracted_and_its_name_kept_losslessly(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / NON_UTF8).write_bytes(SEED_000.read_bytes())
    (inputs / "plain.txt").write_bytes(SEED_002.read_bytes())
    for _ in range(2):  # a rerun must not crash at the same point either
        result = run(str(inputs), "--out", str(tmp_path / "out"), timeout=120)
        assert result.returncode == 0, result.stderr
    written = lines(tmp_path / "out" / "records.jsonl")
    assert len(written) == 2
    ref = next(record["document"]["ref"] for record in written if "caf" in record["document"]["ref"])
    assert ref.endswith("caf\\xe9-note.txt")  # printable, and read back to the very bytes of the name
    assert os.fsencode(split_ref(ref)[0]) == os.fsencode(str(inputs / NON_UTF8))
    assert (tmp_path / "out" / "facts.csv").read_text(encoding="utf-8").count("caf\\xe9-note") > 10


def test_a_file_named_like_an_archive_member_does_not_collide_with_the_member(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    with zipfile.ZipFile(inputs / "a", "w") as archive:  # an archive called 'a' holding 'b.txt'
        archive.writestr("b.txt", SEED_000.read_bytes())
    (inputs / "a::b.txt").write_bytes(SEED_002.read_bytes())  # a file called 'a::b.txt'
    result = run(str(inputs), "--out", str(tmp_path / "out"), timeout=120)
    assert result.returncode == 0, result.stderr
    written = {record["document"]["ref"]: record for record in lines(tmp_path / "out" / "records.jsonl")}
    assert len(written) == 2, list(written)
    for ref, record in written.items():  # each ref reads back to its own content
        path, member = split_ref(ref)
        data = zipfile.ZipFile(path).read(member) if member else Path(path).read_bytes()
        assert record["document"]["sha256"] == hashlib.sha256(data).hexdigest()


def test_refs_read_back_to_the_path_and_member_they_were_made_from() -> None:
    for path, member in [
        ("a::b.txt", None),
        ("a", "b.txt"),
        ("x\\:y", "m::n"),
        (NON_UTF8, None),
        ("c:", "d"),
        ("plain/x.htm", None),
    ]:
        assert split_ref(ref_of(path, member)) == (path, member)
    assert ref_of("filings/a/R19.htm") == "filings/a/R19.htm" and ref_of("q3.zip", "a/R19.htm") == "q3.zip::a/R19.htm"


# --- folders and archives -----------------------------------------------------------------------------


def test_an_unreadable_subfolder_becomes_a_failure_record_and_the_run_exits_1(tmp_path: Path) -> None:
    prefix = without_read_access()
    inputs = tmp_path / "in"
    build_corpus(inputs, 2)
    locked = inputs / "locked"
    locked.mkdir()
    (locked / "hidden-away.txt").write_bytes(SEED_000.read_bytes())
    locked.chmod(0)
    try:
        result = run(str(inputs), "--out", str(tmp_path / "out"), prefix=prefix, timeout=120)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 1, result.stderr
    seen = accounted(tmp_path / "out")
    assert seen[ref_of(str(locked))].startswith("failed at read: a folder that cannot be read"), seen
    assert sum(how in ("done", "review") for how in seen.values()) == 2
    locked.chmod(0)
    try:  # a glob looks into the folder too, and must not skip it without a word either
        result = run(str(inputs / "*" / "*.txt"), "--out", str(tmp_path / "globbed"), prefix=prefix, timeout=120)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 1, result.stderr
    assert accounted(tmp_path / "globbed")[ref_of(str(locked))].startswith(
        "failed at read: a folder that cannot be read"
    )


def test_zip_members_that_climb_out_of_the_archive_are_refused_with_a_record(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    names = [
        "../x.txt",
        "..\\y.txt",
        "ok/../../z.txt",
        "/etc/abs.txt",
        "ok/fine.txt",
        "also-fine.txt",
        ".hidden/skip.txt",
    ]
    with zipfile.ZipFile(inputs / "members.zip", "w") as archive:
        for number, name in enumerate(names):
            archive.writestr(name, distinct_copy(SEED_000.read_bytes(), ".txt", 700 + number))
    result = run(str(inputs), "--out", str(tmp_path / "out"), timeout=120)
    assert result.returncode == 1, result.stderr
    seen = {ref.split("::", 1)[1]: how for ref, how in accounted(tmp_path / "out").items()}
    assert set(seen) == set(names) - {".hidden/skip.txt"}  # hidden members are skipped, as hidden files are
    for name in names[:4]:
        assert seen[name].startswith("failed at read: refused: an archive member whose name"), seen[name]
    assert seen["ok/fine.txt"] in ("done", "review") and seen["also-fine.txt"] in ("done", "review")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["inputs"] == 6


# --- the commit is one transaction --------------------------------------------------------------------


@pytest.mark.slow
def test_a_commit_whose_second_statement_fails_loses_nothing_after_resume(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs / "first", 1)
    build_corpus(inputs / "later", 3, samples=(str(SEED_002),))
    out = tmp_path / "out"
    assert run(str(inputs / "first"), "--out", str(out)).returncode == 0
    with sqlite3.connect(
        out / "manifest.sqlite"
    ) as db:  # the output lengths cannot be stored once a document is finished
        db.execute(
            "create trigger full_disk before insert on outputs when (select count(*) from documents where status != 'pending') > 1"
            " begin select raise(abort, 'database or disk is full'); end"
        )
    failed = run(str(inputs), "--out", str(out), "--workers", "1")
    assert failed.returncode == 1 and "disk is full" in failed.stderr, failed.stderr
    with sqlite3.connect(out / "manifest.sqlite") as db:
        db.execute("drop trigger full_disk")
        assert (
            db.execute("select count(*) from documents where status != 'pending'").fetchone()[0] == 1
        )  # the failed commit left no trace
    resumed = run(str(inputs), "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    written = lines(out / "records.jsonl")
    assert len(written) == 4 and len({record["document"]["sha256"] for record in written}) == 4


def test_a_failed_commit_leaves_the_manifest_usable(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    manifest.saw("a.txt", "k1", "a")
    manifest.db.executescript("""
        pragma foreign_keys = on;
        create table parent (id integer primary key);
        create table child (id integer references parent (id) deferrable initially deferred);
        create trigger late before insert on outputs begin insert into child values (999); end;
    """)  # the check runs at COMMIT, as a full disk fails the commit and not a statement
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        manifest.commit([Finished("k1", Status.done)], {"records.jsonl": 10})
    assert not manifest.db.in_transaction and manifest.status("k1") is Status.pending
    manifest.db.execute("drop trigger late")
    manifest.commit([Finished("k1", Status.done)], {"records.jsonl": 10})  # the next commit goes through
    assert manifest.status("k1") is Status.done
    manifest.close()


def test_refs_stored_before_they_were_escaped_are_rewritten_once(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    for ref in ("in/10-K:2024.htm", "in/q3.zip::a/R2.htm", "in/plain.htm"):  # as an earlier version stored them
        manifest.db.execute("insert into inputs (ref, key) values (?, ?)", (ref, ref))
        manifest.db.execute(
            "insert into documents (key, ref, document_id, status, updated) values (?, ?, 'x', 'done', 0)", (ref, ref)
        )
    manifest.db.execute("delete from meta where key = 'refs'")
    manifest.close()
    reopened = Manifest(tmp_path / "manifest.sqlite")
    refs = [ref for (ref,) in reopened.db.execute("select ref from inputs order by ref")]
    assert refs == sorted([ref_of("in/10-K:2024.htm"), ref_of("in/q3.zip", "a/R2.htm"), "in/plain.htm"])
    assert [split_ref(ref)[0] for ref in refs] == ["in/10-K:2024.htm", "in/plain.htm", "in/q3.zip"]
    reopened.close()


def test_the_manifest_commit_is_all_or_nothing(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    manifest.saw("a.txt", "k1", "a")
    manifest.db.execute("create trigger broken before insert on outputs begin select raise(abort, 'disk full'); end")
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        manifest.commit([Finished("k1", Status.done)], {"records.jsonl": 10})
    assert manifest.status("k1") is Status.pending and manifest.lengths() == {}
    manifest.close()


# --- leftovers of a killed run --------------------------------------------------------------------------


def test_temporary_files_a_killed_run_left_are_removed_by_the_next_run(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 1)
    out = tmp_path / "out"
    assert run(str(inputs), "--out", str(out)).returncode == 0
    left = [out / ".facts.parquet.k2j3h4.tmp", out / ".failures.jsonl.x8y7z6.tmp", out / ".summary.json.abc123.tmp"]
    for path in left:
        path.write_bytes(b"PAR1 half a file")
    mine = out / ".notes.tmp"  # not a name the run writes: left alone
    mine.write_text("keep me")
    assert run(str(inputs), "--out", str(out)).returncode == 0
    assert not any(path.exists() for path in left) and mine.exists()


# --- a per-document time limit ---------------------------------------------------------------------------


async def hang_on_poison(job: Job, step: Step) -> object:
    if b"HANG" in job.data:
        while True:  # CPU-bound, as a pathological table is: nothing but killing the process stops it
            pass
    return await handle(job, step)


@pytest.mark.slow
def test_a_document_over_the_time_limit_is_killed_and_recorded_and_the_others_finish() -> None:
    jobs = [
        Job(f"good-{i}", f"good-{i}.txt", f"good-{i}", SEED_000.read_bytes() + f"\ncopy {i}\n".encode())
        for i in range(3)
    ]
    jobs.insert(1, Job("stuck", "stuck.txt", "stuck", SEED_002.read_bytes() + b"\nHANG\n"))

    async def scenario() -> list[object]:
        pool = WorkerPool(2, Step(BackendName.rules, doc_timeout=20.0), concurrency=2, handler=hang_on_poison)
        await pool.start()
        outcomes = await asyncio.gather(*(pool.run(job) for job in jobs))
        after = await pool.run(Job("after", "after.txt", "after", SEED_002.read_bytes()))  # the pool still serves
        await pool.close()
        return [*outcomes, after]

    outcomes = asyncio.run(asyncio.wait_for(scenario(), timeout=120))
    by_key = {outcome.finished.key: outcome.finished for outcome in outcomes}
    assert by_key["stuck"].status is Status.failed
    assert by_key["stuck"].stage == "load"  # the stage it was in: it hangs before loading
    assert by_key["stuck"].reason == "took longer than the 20 s limit per document (--doc-timeout); stopped"
    assert all(by_key[f"good-{i}"].status is Status.done for i in range(3)) and by_key["after"].status is Status.done


def test_doc_timeout_through_the_cli_fails_a_slow_document_with_its_stage(tmp_path: Path) -> None:
    """40,000 rows take about 7 s to load, extract and validate today: far past 0.2 s however much
    faster the rules become, and the run stops it at 0.2 s, so the test stays quick."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    rows = "".join(
        f"<tr><td>Granted in tranche {n}</td><td>{1000 + n:,}</td><td>$ {10 + n / 100:.2f}</td></tr>"
        for n in range(40_000)
    )
    (inputs / "big-table.htm").write_text(
        f"<html><body><p>Stock option activity:</p><table>{rows}</table></body></html>", encoding="utf-8"
    )
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--doc-timeout", "0.2", timeout=120)
    assert result.returncode == 1, result.stderr
    failure = lines(tmp_path / "out" / "failures.jsonl")[0]
    assert (
        failure["stage"] in ("load", "extract", "validate")
        and "0.2 s limit per document (--doc-timeout)" in failure["reason"]
    )


# --- all of it at once ---------------------------------------------------------------------------------


def hostile_folder(root: Path) -> set[str]:
    """Good filings beside every hostile input found so far; returns the refs the run must account for."""
    inputs = root / "in"
    good = build_corpus(inputs / "good", 4)
    expected = {ref_of(str(path)) for path in good}
    odd = inputs / "odd"
    odd.mkdir()
    os.mkfifo(odd / "pipe.htm")
    (odd / NON_UTF8).write_bytes(distinct_copy(SEED_000.read_bytes(), ".txt", 801))
    os.symlink("loop-b.txt", odd / "loop-a.txt")
    os.symlink("loop-a.txt", odd / "loop-b.txt")
    (odd / "a::b.txt").write_bytes(distinct_copy(SEED_002.read_bytes(), ".txt", 802))
    (odd / "locked").mkdir()
    (odd / "locked" / "inside.txt").write_bytes(SEED_000.read_bytes())
    html = HTML_002.read_text(encoding="utf-8")
    body = html[html.index("<body") : html.index("</body>")]
    (odd / "deep.htm").write_text(html.replace(body, "<div>" * 1200 + body + "</div>" * 1200), encoding="utf-8")
    rows = "".join(
        f"<tr><td>Granted in tranche {n}</td><td>{1000 + n:,}</td><td>$ {10 + n / 100:.2f}</td></tr>"
        for n in range(2000)
    )
    (odd / "table-2000.htm").write_text(
        f"<html><body><p>Stock option activity:</p><table>{rows}</table></body></html>", encoding="utf-8"
    )
    (odd / os.fsdecode(b"bad\xe9::x.zip")).write_bytes(
        b"PK\x03\x04" + b"not really a zip archive" * 10
    )  # an odd name, and corrupt
    members = ["../up.txt", "ok/../../up2.txt", "inner/fine.txt"]
    with zipfile.ZipFile(odd / "climb.zip", "w") as archive:
        for number, name in enumerate(members):
            archive.writestr(name, distinct_copy(SEED_002.read_bytes(), ".txt", 810 + number))
    names = (
        "pipe.htm",
        NON_UTF8,
        "loop-a.txt",
        "loop-b.txt",
        "a::b.txt",
        "locked",
        "deep.htm",
        "table-2000.htm",
        os.fsdecode(b"bad\xe9::x.zip"),
    )
    expected |= {ref_of(str(odd / name)) for name in names}
    expected |= {ref_of(str(odd / "climb.zip"), name) for name in members}
    return expected


@pytest.mark.slow
def test_a_folder_of_every_hostile_input_finishes_accounts_for_each_once_and_resume_changes_nothing(
    tmp_path: Path,
) -> None:
    prefix = without_read_access()
    expected = hostile_folder(tmp_path)
    locked, out = tmp_path / "in" / "odd" / "locked", tmp_path / "out"
    locked.chmod(0)
    try:  # the bound: 4 minutes a run on 2 busy cores for 16 inputs (both runs take about 8 s when idle)
        first = run(str(tmp_path / "in"), "--out", str(out), prefix=prefix, timeout=240)
        outputs = {name: (out / name).read_bytes() for name in ("records.jsonl", "facts.csv")}
        failed = sorted((out / "failures.jsonl").read_text(encoding="utf-8").splitlines())
        again = run(str(tmp_path / "in"), "--out", str(out), prefix=prefix, timeout=240)
    finally:
        locked.chmod(0o755)
    assert first.returncode == 1 and "Traceback" not in first.stderr, first.stderr
    seen = accounted(out)
    assert set(seen) == expected, set(seen) ^ expected
    assert json.loads((out / "summary.json").read_text())["inputs"] == len(expected)
    assert again.returncode == 1 and "Traceback" not in again.stderr, again.stderr
    assert {name: (out / name).read_bytes() for name in outputs} == outputs
    assert sorted((out / "failures.jsonl").read_text(encoding="utf-8").splitlines()) == failed


@pytest.mark.slow
def test_an_llm_document_over_the_time_limit_is_cancelled_in_its_worker_and_the_others_finish(tmp_path: Path) -> None:
    answers = {}
    for marker, path in (("Articles of Incorporation", SEED_000), ("has a share award plan", SEED_002)):
        document = load(path)
        answers[marker] = tool_reply(quoted_answer(rules.extract(document), document))
    stalled = tool_reply(answers["has a share award plan"].body)
    stalled.delay = 300.0  # an endpoint that sits on one request far past the limit

    def respond(body: dict) -> Reply:
        prompt = json.dumps(body["messages"])
        return stalled if "has a share award plan" in prompt else answers["Articles of Incorporation"]

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "quick.txt").write_bytes(SEED_000.read_bytes())
    (inputs / "stalled.txt").write_bytes(SEED_002.read_bytes())
    config = tmp_path / "extractor.toml"
    config.write_text('[llm]\nattempts = 1\nmodel = "scripted"\ncache = "off"\ntimeout = 600\n')
    with ScriptedServer(respond) as server:
        result = run(
            str(inputs),
            "--out",
            str(tmp_path / "out"),
            "--backend",
            "llm",
            "--base-url",
            server.base_url,
            "--config",
            str(config),
            "--workers",
            "1",
            "--doc-timeout",
            "20",
            timeout=150,
        )  # well before the answer
    assert result.returncode == 1, result.stderr
    seen = by_name(accounted(tmp_path / "out"))
    assert (
        seen["stalled.txt"]
        == "failed at extract: took longer than the 20 s limit per document (--doc-timeout); stopped"
    )
    assert seen["quick.txt"] in ("done", "review")
