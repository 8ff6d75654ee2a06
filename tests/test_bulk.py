"""Bulk runs (`extractor run`), as a user runs them: a real process on real files, killed, resumed."""

from __future__ import annotations

import asyncio
import csv
import gc
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bulk_runs import plant, wait_for_records
from fixture_paths import HTML_002, ROOT, SEED_000, SEED_002
from llm_server import Reply, ScriptedServer, error_reply, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.bulk.manifest import Manifest, Status
from extractor.bulk.outputs import OutputWriter
from extractor.bulk.runner import BulkRun
from extractor.bulk.sources import discover
from extractor.bulk.work import Job, Step, handle
from extractor.bulk.workers import DIED, SWITCH_SECONDS, YOUNG_OBJECTS, WorkerPool
from extractor.evals.benchmarks.corpus import build_corpus, distinct_copy
from extractor.llm.config import LLMConfig
from extractor.loaders import load

EXTRACTOR = [sys.executable, "-m", "extractor.cli"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXTRACTOR, "run", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def failures(out: Path) -> dict[str, dict]:
    lines = (out / "failures.jsonl").read_text(encoding="utf-8").splitlines()
    return {
        Path(record["ref"]).name if "::" not in record["ref"] else record["ref"].split("::")[1]: record
        for record in map(json.loads, lines)
    }


def fact_rows(out: Path) -> list[tuple[str, ...]]:
    with open(out / "facts.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:3] == ["document_id", "document_ref", "document_sha256"]
    return sorted(tuple(row) for row in rows[1:])


def statuses(out: Path) -> Counter[str]:
    with sqlite3.connect(out / "manifest.sqlite") as db:
        return Counter(status for (status,) in db.execute("select status from documents"))


# --- bad input never stops the batch -----------------------------------------------------------


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A folder of good filings and every kind of bad input, run once."""
    corpus = tmp_path_factory.mktemp("planted")
    inputs = plant(corpus)
    out = corpus / "out"
    result = run(
        *inputs,
        "--out",
        str(out),
        "--workers",
        "1",
        "--max-bytes",
        "400000",
    )
    return out, result


def test_bad_inputs_become_failure_records_and_the_batch_goes_on(
    planted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, result = planted
    assert result.returncode == 1, result.stderr
    failed = failures(out)
    expected = {
        "empty.txt": ("load", "the file is empty"),
        "binary.bin": ("load", "binary"),
        "image-named.htm": ("load", "binary"),
        "huge.txt": ("read", "over the 400,000-byte limit"),
        "inner/nested.zip": ("read", "a zip archive inside a zip archive"),
        "broken.zip": ("read", "zip archive that cannot be opened"),
        "missing-folder": ("read", "no such file or folder"),
        "nothing-*.htm": ("read", "matches no file"),
    }
    assert set(failed) == set(expected)
    for name, (stage, reason) in expected.items():
        assert failed[name]["stage"] == stage, (name, failed[name])
        assert reason in failed[name]["reason"], (name, failed[name])
    extracted = {Path(r["document"]["ref"].split("::")[-1]).name: r for r in records(out)}
    assert set(extracted) == {
        "doc-000000.txt",
        "doc-000001.txt",
        "doc-000002.htm",
        "really-html.pdf",
        "truncated.htm",
        "income-taxes.txt",
        "windows-1252.txt",
        "seed-000.txt",
        "seed-002.txt",
    }
    assert extracted["really-html.pdf"]["document"]["format"] == "html"  # read by content, not by name
    assert extracted["really-html.pdf"]["status"] == "done"
    assert (
        extracted["seed-002.txt"]["status"] == "done"
        and len(extracted["seed-002.txt"]["extraction"]["note"]["award_activity"]) > 0
    )
    taxes = extracted["income-taxes.txt"]
    assert taxes["status"] == "review" and taxes["needs_review"] is True
    assert [f["rule"] for f in taxes["extraction"]["validation"]["findings"]] == ["coverage.empty"]
    assert any("decoded as cp1252" in w for w in extracted["windows-1252.txt"]["extraction"]["warnings"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["inputs"] == 18  # every name given, the duplicate and the failures included
    assert summary["documents"]["total"] == 9 + 8  # the duplicate is one document
    assert summary["documents"]["failed"] == 8 and summary["failed_inputs"] == 8
    assert summary["this_run"]["duplicates"] == 1
    assert "8 failed" in result.stderr or "failed (see failures.jsonl)" in result.stderr


def test_facts_csv_and_parquet_hold_the_same_rows_with_spans(
    planted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    import pyarrow.parquet as pq

    out, _ = planted
    rows = fact_rows(out)
    table = pq.read_table(out / "facts.parquet")
    assert table.num_rows == len(rows) > 200
    assert str(table.schema.field("value").type) == "decimal128(38, 12)"
    first = table.slice(0, 1).to_pylist()[0]
    document = next(r for r in records(out) if r["document"]["sha256"] == first["document_sha256"])
    text_start, text_end = first["source_start"], first["source_end"]
    assert first["source_text"] and text_end - text_start == len(first["source_text"])
    assert document["extraction"]["document_sha256"]  # the record carries the text's hash the span points into


def test_rerun_skips_finished_documents_and_retries_failed_only_when_asked(
    planted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = planted
    before = (out / "records.jsonl").read_bytes()
    again = run(*_planted_args(out), "--out", str(out), "--workers", "1", "--max-bytes", "400000")
    assert again.returncode == 1
    assert (out / "records.jsonl").read_bytes() == before
    this_run = json.loads((out / "summary.json").read_text())["this_run"]
    # 9 extracted and 3 failed on their content are final; inputs that could not be read are read again
    assert this_run["already_finished"] == 12 and this_run["finished"] == {"failed": 5}
    retried = run(*_planted_args(out), "--out", str(out), "--workers", "1", "--max-bytes", "400000", "--retry-failed")
    assert "3 documents that failed before will be tried again" in retried.stderr
    this_run = json.loads((out / "summary.json").read_text())["this_run"]
    assert this_run["already_finished"] == 9 and this_run["finished"] == {"failed": 8}
    assert (out / "records.jsonl").read_bytes() == before
    assert (
        len(failures(out)) == len((out / "failures.jsonl").read_text().splitlines()) == 8
    )  # one line per failed input, still
    other = run(*_planted_args(out), "--out", str(out), "--backend", "hybrid", "--base-url", "http://127.0.0.1:9/v1")
    assert other.returncode == 2 and "holds a run with other settings" in other.stderr


def _planted_args(out: Path) -> list[str]:
    corpus = out.parent
    return [str(corpus / "good"), str(corpus / "bad"), str(corpus / "missing-folder"), str(corpus / "nothing-*.htm")]


# --- killed at any moment, resumed: exactly one record per document ------------------------------


def start(*args: str) -> subprocess.Popen[str]:
    """A run in its own process group, as a shell starts a job (Ctrl-C reaches the whole group)."""
    return subprocess.Popen(
        [*EXTRACTOR, "run", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def group_members(group: int) -> list[int]:
    """Live processes of a process group (the run's session), from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            members.append(int(entry))
    return members


def wait_until(condition: Callable[[], object], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def corpus_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 distinct filings."""
    folder = tmp_path_factory.mktemp("corpus") / "in"
    build_corpus(folder, 60, per_folder=25)
    return folder


@pytest.fixture(scope="module")
def corpus(corpus_inputs: Path) -> tuple[Path, list[tuple[str, ...]]]:
    """60 distinct filings, and the facts rows of one uninterrupted run over them."""
    clean = corpus_inputs.parent / "clean"
    assert run(str(corpus_inputs), "--out", str(clean), "--workers", "1").returncode == 0
    return corpus_inputs, fact_rows(clean)


@pytest.mark.slow
def test_kill_9_at_any_moment_then_resume_gives_exactly_one_record_per_document(
    corpus: tuple[Path, list[tuple[str, ...]]], tmp_path: Path
) -> None:
    inputs, clean_rows = corpus
    out = tmp_path / "out"
    for killed_after in (3, 20, 41):
        process = start(str(inputs), "--out", str(out), "--workers", "2")
        wait_for_records(out, killed_after, process)
        if killed_after == 3:  # the main process alone: its workers must notice and stop, not linger
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            assert wait_until(lambda pid=process.pid: not group_members(pid), timeout=15), (
                f"workers left behind: {group_members(process.pid)}"
            )
        else:
            os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, mid-write perhaps
            process.wait()
        process.stdout.close(), process.stderr.close()  # type: ignore[union-attr, func-returns-value]
        with open(out / "records.jsonl", "ab") as handle:
            handle.write(b'{"half a line written when the power went')  # what a crash mid-append leaves
    assert 0 < statuses(out)["done"] < 60
    finished = run(str(inputs), "--out", str(out), "--workers", "2")
    assert finished.returncode == 0, finished.stderr
    written = records(out)  # every line parses: the half line is gone
    assert len(written) == 60
    assert len({r["document"]["sha256"] for r in written}) == 60
    assert {r["document"]["ref"] for r in written} == {str(p) for p in inputs.rglob("*.*")}
    assert fact_rows(out) == clean_rows  # no fact lost or doubled
    assert statuses(out) == Counter({"done": 48, "review": 12})
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"]["total"] == 60 and summary["documents"]["pending"] == 0


@pytest.mark.slow
def test_ctrl_c_stops_after_the_documents_in_flight_and_the_same_command_goes_on(
    corpus: tuple[Path, list[tuple[str, ...]]], tmp_path: Path
) -> None:
    inputs, clean_rows = corpus
    out = tmp_path / "out"
    process = start(str(inputs), "--out", str(out), "--workers", "1")
    wait_for_records(out, 5, process)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Ctrl-C: finishing the documents in flight" in stderr and "run the same command again" in stderr
    stopped = records(out)
    assert 5 <= len(stopped) < 60
    assert sum(statuses(out)[s] for s in ("done", "review")) == len(
        stopped
    )  # what was in flight was written and committed
    resumed = run(str(inputs), "--out", str(out), "--workers", "1")
    assert resumed.returncode == 0
    assert json.loads((out / "summary.json").read_text())["this_run"]["already_finished"] == len(stopped)
    assert len(records(out)) == 60 and fact_rows(out) == clean_rows


WITHOUT_RAY = "import sys; sys.modules['ray'] = None; from extractor.cli import main; main()"  # as if not installed


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--engine", "ray"], "the Ray engine needs Ray: pip install 'filing-extractor[ray]'"),
        (["--ray-address", "auto"], "--ray-address names a Ray cluster: add --engine ray"),
        (["--engine", "ray", "--backend", "llm", "--batch-export", "requests.jsonl"], "run it on the local engine"),
    ],
)
def test_the_ray_engine_is_refused_before_anything_is_written_when_it_cannot_run(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, "run", str(SEED_000), "--out", str(out), "--model", "m", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert said in " ".join(result.stderr.split())
    assert not out.exists() and not (tmp_path / "requests.jsonl").exists()


def test_an_edited_output_folder_is_refused_not_overwritten(tmp_path: Path) -> None:
    inputs, out = tmp_path / "in", tmp_path / "out"
    build_corpus(inputs, 3)
    assert run(str(inputs), "--out", str(out), "--workers", "1").returncode == 0
    (out / "records.jsonl").write_text("")  # a user emptied it
    refused = run(str(inputs), "--out", str(out))
    assert (
        refused.returncode == 2
        and "records.jsonl is shorter" in refused.stderr
        and "start a new --out" in refused.stderr
    )


# --- the LLM path: concurrent, rate-limited, failures recorded ------------------------------------


def llm_corpus(folder: Path, copies: int) -> Path:
    """Copies of both seeds, and one copy of seed 002 the scripted model always fails on."""
    build_corpus(
        folder, copies, samples=("tests/fixtures/000_a279831d03f6579a.txt", "tests/fixtures/002_59f0e0194afd947c.txt")
    )
    poisoned = SEED_002.read_bytes().replace(b"has a share award plan", b"has one share award plan")
    (folder / "poisoned.txt").write_bytes(poisoned)
    return folder


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedServer]:
    """A scripted endpoint answering each seed with its quoted answer (500 for the poisoned copy)."""

    answers = {}
    for marker, path in (("Articles of Incorporation", SEED_000), ("has a share award plan", SEED_002)):
        document = load(path)
        answers[marker] = tool_reply(quoted_answer(rules.extract(document), document))

    def respond(body: dict) -> Reply:
        prompt = json.dumps(body["messages"])
        if "has one share award plan" in prompt:
            return error_reply(500, "scripted: this document always fails")
        return next(
            (reply for marker, reply in answers.items() if marker in prompt), tool_reply({})
        )  # a hybrid block: nothing more

    with ScriptedServer(respond) as server:
        yield server


def llm_config(tmp_path: Path, **extra: object) -> Path:
    path = tmp_path / "extractor.toml"
    lines = ["[llm]", "attempts = 2", "retry_wait = 0.01", 'model = "scripted"', 'cache = "off"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_llm_run_extracts_concurrently_and_records_the_failing_document(model, tmp_path: Path) -> None:
    inputs = llm_corpus(tmp_path / "in", 8)
    out = tmp_path / "out"
    result = run(
        str(inputs),
        "--out",
        str(out),
        "--backend",
        "llm",
        "--base-url",
        model.base_url,
        "--config",
        str(llm_config(tmp_path)),
        "--concurrency",
        "4",
        "--workers",
        "1",
    )
    assert result.returncode == 1, result.stderr
    written = records(out)
    assert len(written) == 8 and {r["status"] for r in written} == {"done"}
    provenance = written[0]["extraction"]["provenance"]
    assert (
        provenance["backend"] == "llm"
        and provenance["model"] == "scripted"
        and provenance["prompt_id"].startswith("stock_compensation@v")
    )
    assert written[0]["extraction"]["usage"]["requests"] == 1 and written[0]["timing"]["extract_seconds"] > 0
    failed = failures(out)
    assert list(failed) == ["poisoned.txt"]
    assert (
        failed["poisoned.txt"]["stage"] == "extract" and "HTTP 500 after 2 attempts" in failed["poisoned.txt"]["reason"]
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["llm"]["requests"] == 8 + 2  # eight answers, and two attempts at the poisoned copy
    assert summary["llm"]["prompt_tokens"] == 8 * 1000 and summary["llm"]["retries"] == 1
    assert "LLM (all runs)" in result.stderr


def test_an_endpoint_that_cannot_serve_stops_the_run_and_leaves_documents_pending(model, tmp_path: Path) -> None:
    inputs = llm_corpus(tmp_path / "in", 4)
    out = tmp_path / "out"
    config = str(llm_config(tmp_path))
    down = run(
        str(inputs),
        "--out",
        str(out),
        "--backend",
        "llm",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--config",
        config,
        "--workers",
        "1",
    )
    assert down.returncode == 1
    assert "cannot reach http://127.0.0.1:9/v1" in down.stderr and "stay pending for the next run" in down.stderr
    assert (
        not records(out) and not (out / "failures.jsonl").read_text()
    )  # nothing recorded as failed: the documents did not fail
    assert statuses(out)["pending"] >= 1
    back = run(
        str(inputs),
        "--out",
        str(out),
        "--backend",
        "llm",
        "--base-url",
        model.base_url,
        "--config",
        config,
        "--workers",
        "1",
    )
    assert len(records(out)) == 4 and list(failures(out)) == ["poisoned.txt"]
    assert back.returncode == 1 and statuses(out) == Counter({"done": 4, "failed": 1})


def test_hybrid_run_asks_the_llm_only_where_rules_fall_short(model, tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(
        inputs, 4, samples=("tests/fixtures/000_a279831d03f6579a.txt", "tests/fixtures/002_59f0e0194afd947c.txt")
    )
    out = tmp_path / "out"
    asked_before = len(model.requests)
    result = run(
        str(inputs),
        "--out",
        str(out),
        "--backend",
        "hybrid",
        "--base-url",
        model.base_url,
        "--config",
        str(llm_config(tmp_path)),
    )
    assert result.returncode == 0, result.stderr
    written = records(out)
    complete = [r for r in written if any("no LLM call" in w for w in r["extraction"]["warnings"])]
    asked = [r for r in written if r not in complete]
    assert complete and asked  # seed 000 has numbers rules leave unexplained in four paragraphs, seed 002 none
    assert all(r["extraction"]["provenance"]["asked"] == [] for r in complete)
    for record in asked:  # the record says which blocks were sent, and why
        blocks = record["extraction"]["provenance"]["asked"]
        assert [(b["kind"], b["index"]) for b in blocks] == [
            ("paragraph", 6),
            ("paragraph", 7),
            ("paragraph", 10),
            ("paragraph", 11),
        ]
        assert blocks[3]["reason"] == "2 unexplained numbers: 7,500, 10,000"
    assert (
        len(model.requests) - asked_before == 4 * len(asked) == sum(r["extraction"]["usage"]["requests"] for r in asked)
    )
    assert {r["extraction"]["provenance"]["backend"] for r in written} == {"hybrid"}


# --- a worker that dies takes only the document that killed it -----------------------------------


async def die_on_poison(job: Job, step: Step) -> object:
    """A handler that kills its worker process on one document, as a segfault or the OOM killer would."""
    if b"POISON" in job.data:
        os._exit(9)
    return await handle(job, step)


def test_a_worker_that_dies_fails_only_the_document_that_killed_it() -> None:
    good = [SEED_000.read_bytes() + f"\ncopy {name}\n".encode() for name in "abcde"]
    jobs = [Job(f"good-{i}", f"good-{i}.txt", f"good-{i}", data) for i, data in enumerate(good)]
    jobs.insert(2, Job("poison", "poison.txt", "poison", SEED_000.read_bytes() + b"\nPOISON\n"))

    async def scenario() -> list[object]:
        pool = WorkerPool(2, Step(BackendName.rules), concurrency=2, handler=die_on_poison)
        await pool.start()
        outcomes = await asyncio.gather(*(pool.run(job) for job in jobs))
        more = await pool.run(Job("after", "after.txt", "after", SEED_002.read_bytes()))  # the pool still serves
        await pool.close()
        return [*outcomes, more]

    outcomes = asyncio.run(asyncio.wait_for(scenario(), timeout=60))
    by_key = {outcome.finished.key: outcome.finished for outcome in outcomes}
    assert by_key["poison"].status is Status.failed and by_key["poison"].reason == DIED
    assert all(by_key[f"good-{i}"].status is Status.done for i in range(5)) and by_key["after"].status is Status.done


# --- Batch API: export the requests, import the results -------------------------------------------


def batch_results(requests: Path, answer: Callable[[dict], dict | None]) -> list[str]:
    """Batch API output lines for an input file, as OpenAI writes them; `answer` gives a tool call's
    arguments, or None for a request the batch could not answer."""
    lines = []
    for number, line in enumerate(requests.read_text(encoding="utf-8").splitlines()):
        request = json.loads(line)
        arguments = answer(request["body"])
        if arguments is None:
            result = {
                "response": {"status_code": 500, "body": {"error": {"message": "scripted batch failure"}}},
                "error": None,
            }
        else:
            result = {
                "response": {"status_code": 200, "request_id": f"req_{number}", "body": tool_reply(arguments).body},
                "error": None,
            }
        lines.append(json.dumps({"id": f"batch_req_{number}", "custom_id": request["custom_id"], **result}))
    return lines


@pytest.mark.slow
def test_batch_export_then_import_goes_through_the_same_validation_and_outputs(
    model: ScriptedServer, tmp_path: Path
) -> None:
    inputs = llm_corpus(tmp_path / "in", 4)  # two copies of each seed, and the poisoned copy
    out, requests = tmp_path / "out", tmp_path / "requests.jsonl"
    exported = run(
        str(inputs), "--out", str(out), "--backend", "llm", "--model", "gpt-4o-mini", "--batch-export", str(requests)
    )
    assert exported.returncode == 0, exported.stderr
    assert "5 documents wait for their answers" in exported.stderr and "--batch-import" in exported.stderr
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    assert (
        len(lines) == 3
    )  # copies ask the very same question: one request each for seed 000, seed 002 and the poisoned copy
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in lines)
    body = lines[0]["body"]
    assert body["model"] == "gpt-4o-mini" and body["tools"][0]["function"]["name"] == "StockCompensationNote"
    assert len({line["custom_id"] for line in lines}) == 3
    assert not records(out) and statuses(out) == Counter({"exported": 5})
    again = run(
        str(inputs), "--out", str(out), "--backend", "llm", "--model", "gpt-4o-mini", "--batch-export", str(requests)
    )
    assert again.returncode == 0 and requests.read_text().count("\n") == 3  # nothing exported twice

    answers = {}
    for marker, path in (("Articles of Incorporation", SEED_000), ("has a share award plan", SEED_002)):
        document = load(path)
        answers[marker] = quoted_answer(rules.extract(document), document)

    def answer(body: dict) -> dict | None:
        prompt = json.dumps(body["messages"])
        return next((arguments for marker, arguments in answers.items() if marker in prompt), None)

    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(reversed(batch_results(requests, answer))) + "\n")  # results come in any order
    imported = run("--out", str(out), "--batch-import", str(results))
    assert imported.returncode == 1, imported.stderr  # the poisoned copy's request failed in the batch
    assert "3 results in" in imported.stderr and "for 5 exported documents" in imported.stderr
    written = records(out)
    assert len(written) == 4 and {r["status"] for r in written} == {"done"}
    assert {r["extraction"]["provenance"]["model"] for r in written} == {"gpt-4o-mini"}
    assert all(
        r["extraction"]["usage"]["requests"] == 1 and r["extraction"]["usage"]["prompt_tokens"] == 1000 for r in written
    )
    failed = failures(out)
    assert (
        list(failed) == ["poisoned.txt"]
        and "Batch API could not answer this request (HTTP 500: scripted batch failure)"
        in failed["poisoned.txt"]["reason"]
    )
    live = run(
        str(inputs),
        "--out",
        str(tmp_path / "live"),
        "--backend",
        "llm",
        "--base-url",
        model.base_url,
        "--config",
        str(llm_config(tmp_path)),
    )
    assert live.returncode == 1  # the scripted endpoint fails the poisoned copy too
    assert [row[4:] for row in fact_rows(out)] == [
        row[4:] for row in fact_rows(tmp_path / "live")
    ]  # the same facts as live answers give
    assert (
        run("--out", str(out), "--batch-import", str(results)).returncode == 1
    )  # importing twice writes nothing twice
    assert len(records(out)) == 4


# --- the output folder over time: a second run at once, fixed and edited inputs --------------------


def test_a_second_run_into_a_folder_in_use_is_refused(tmp_path: Path) -> None:
    """The first run waits for its endpoint's answer until the second has been refused: no race between them."""
    document = load(SEED_002)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    answer = threading.Event()

    def respond(body: dict) -> Reply:
        answer.wait(timeout=120)
        return reply

    inputs, out = tmp_path / "in", tmp_path / "out"
    build_corpus(inputs, 2, samples=(str(SEED_002),))
    with ScriptedServer(respond) as server:
        args = (str(inputs), "--out", str(out), "--backend", "llm", "--base-url", server.base_url)
        args += ("--config", str(llm_config(tmp_path)))
        first = start(*args)
        try:
            assert wait_until(lambda: server.requests, timeout=60)  # it holds the folder, waiting for an answer
            second = run(*args)
        finally:
            answer.set()
        _, stderr = first.communicate(timeout=120)
    assert second.returncode == 2 and "is in use by another run (pid" in second.stderr, second.stderr
    assert first.returncode == 0, stderr
    written = records(out)
    assert len(written) == 2 and len({r["document"]["sha256"] for r in written}) == 2
    assert {r["status"] for r in written} <= {"done", "review"}
    rows = fact_rows(out)
    assert {row[2] for row in rows} == {r["document"]["sha256"] for r in written} and len(set(rows)) == len(rows)


def test_fixed_and_edited_inputs_leave_only_current_documents_in_counts_failures_and_parquet(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    inputs, out = tmp_path / "in", tmp_path / "out"
    build_corpus(
        inputs, 2, samples=("tests/fixtures/000_a279831d03f6579a.txt", "tests/fixtures/002_59f0e0194afd947c.txt")
    )
    (inputs / "later.txt").write_bytes(b"")  # empty now, a filing later
    broken = tmp_path / "late.zip"
    broken.write_bytes(b"PK\x03\x04 not yet")
    first = run(str(inputs), str(broken), str(tmp_path / "missing"), "--out", str(out))
    assert first.returncode == 1 and len(failures(out)) == 3
    (inputs / "later.txt").write_bytes(SEED_002.read_bytes())  # the three are fixed
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("note.txt", distinct_copy(SEED_000.read_bytes(), ".txt", 77))
    (tmp_path / "missing").mkdir()
    edited = next(inputs.rglob("doc-000000.txt"))
    first_version = hashlib.sha256(edited.read_bytes()).hexdigest()
    edited.write_bytes(edited.read_bytes().replace(b"Corpus copy a.", b"Corpus copy a, edited."))
    second = run(str(inputs), str(broken), str(tmp_path / "missing"), "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert (out / "failures.jsonl").read_text() == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"]["total"] == summary["inputs"] == 4 and summary["documents"]["failed"] == 0
    assert summary["superseded"] == 2  # the empty file's old content, and the edited file's first version
    assert len(records(out)) == 5  # the first version's record stays in the log ...
    table = pq.read_table(out / "facts.parquet")
    assert set(table.column("document_sha256").to_pylist()) == {r["document"]["sha256"] for r in records(out)} - {
        first_version
    }  # ... not in the dataset


def test_folders_matched_by_a_glob_are_walked_and_ids_keep_their_suffix(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / "in" / folder).mkdir(parents=True)
        (tmp_path / "in" / folder / "note.txt").write_bytes(distinct_copy(SEED_002.read_bytes(), ".txt", ord(folder)))
    (tmp_path / "in" / "a" / "note.htm").write_bytes(HTML_002.read_bytes())
    out = tmp_path / "out [final]"  # brackets: rich markup must not eat the name
    result = run(str(tmp_path / "in" / "*"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(r["document"]["id"] for r in records(out)) == [
        "a/note.htm",
        "a/note.txt",
        "b/note.txt",
    ]  # below the glob's fixed part
    assert "out [final]" in result.stderr


@pytest.mark.slow
def test_export_refuses_a_file_it_did_not_write_and_settings_other_than_the_first_export(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(
        inputs, 2, samples=("tests/fixtures/000_a279831d03f6579a.txt", "tests/fixtures/002_59f0e0194afd947c.txt")
    )
    precious = tmp_path / "precious.jsonl"
    precious.write_text('{"a user\'s": "file"}\n')
    refused = run(str(inputs), "--out", str(tmp_path / "out"), "--backend", "llm", "--batch-export", str(precious))
    assert refused.returncode == 2 and "was not written by this run" in refused.stderr
    assert precious.read_text() == '{"a user\'s": "file"}\n'
    requests = tmp_path / "requests.jsonl"
    assert (
        run(
            str(inputs), "--out", str(tmp_path / "out2"), "--backend", "llm", "--batch-export", str(requests)
        ).returncode
        == 0
    )
    other = run(
        str(inputs),
        "--out",
        str(tmp_path / "out2"),
        "--backend",
        "llm",
        "--batch-export",
        str(requests),
        "--temperature",
        "0.5",
    )
    assert other.returncode == 2 and "llm.temperature: 0.0 before, 0.5 now" in other.stderr


@pytest.mark.slow
def test_batch_import_from_another_folder_with_a_broken_line_then_new_results(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(
        inputs, 2, samples=("tests/fixtures/000_a279831d03f6579a.txt", "tests/fixtures/002_59f0e0194afd947c.txt")
    )
    exported = subprocess.run(
        [*EXTRACTOR, "run", "in", "--out", "out", "--backend", "llm", "--batch-export", "requests.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr  # refs are relative to tmp_path
    answers = {
        marker: quoted_answer(rules.extract(load(path)), load(path))
        for marker, path in (("Articles of Incorporation", SEED_000), ("has a share award plan", SEED_002))
    }
    lines = batch_results(
        tmp_path / "requests.jsonl",
        lambda body: next(a for m, a in answers.items() if m in json.dumps(body["messages"])),
    )
    broken = json.loads(lines[0])
    del broken["response"]["body"]  # a line the Batch API would never write, but a user's script might
    (tmp_path / "partial.jsonl").write_text(json.dumps(broken) + "\n" + lines[1] + "\n")
    first = run(
        "--out", str(tmp_path / "out"), "--batch-import", str(tmp_path / "partial.jsonl")
    )  # from the project root
    assert first.returncode == 1
    failed = json.loads((tmp_path / "out" / "failures.jsonl").read_text().splitlines()[0])
    assert failed["stage"] == "batch" and "is not a Batch API result" in failed["reason"]
    assert len(records(tmp_path / "out")) == 1
    (tmp_path / "all.jsonl").write_text("\n".join(lines) + "\n")
    second = run("--out", str(tmp_path / "out"), "--batch-import", str(tmp_path / "all.jsonl"), "--retry-failed")
    assert second.returncode == 0, second.stderr
    assert "1 documents the batch could not answer before" in second.stderr
    assert len(records(tmp_path / "out")) == 2 and (tmp_path / "out" / "failures.jsonl").read_text() == ""


class BrokenStep(Step):
    """A step whose workers cannot start (a missing library, say)."""

    def prepare(self) -> None:
        raise RuntimeError("this worker cannot start")


async def interpreter_settings(job: Job, step: Step) -> tuple[int, int, float]:
    """A handler that answers how its worker's interpreter is set: objects frozen, the young generation's
    size, the switch interval."""
    return gc.get_freeze_count(), gc.get_threshold()[0], sys.getswitchinterval()


def worker_settings(step: Step) -> tuple[int, int, float]:
    async def scenario() -> object:
        pool = WorkerPool(1, step, concurrency=1, handler=interpreter_settings)
        await pool.start()
        answer = await pool.run(Job("k", "a.txt", "a", b"text"))
        await pool.close()
        return answer

    return asyncio.run(asyncio.wait_for(scenario(), timeout=60))  # type: ignore[return-value]


def test_a_worker_freezes_what_start_up_made_and_collects_young_objects_less_often() -> None:
    frozen, young, switch = worker_settings(Step(BackendName.rules))
    assert frozen > 10_000 and young == YOUNG_OBJECTS  # start-up's modules and objects, never walked again
    assert switch == pytest.approx(0.005)  # Python's own: the rules compute on the loop, no thread waits


def test_an_llm_worker_lets_its_computing_thread_hold_the_interpreter_briefly() -> None:
    frozen, young, switch = worker_settings(
        Step(BackendName.llm, llm_config=LLMConfig(base_url="http://127.0.0.1:9/v1"))
    )  # asks nothing
    assert frozen > 10_000 and young == YOUNG_OBJECTS
    assert switch == pytest.approx(SWITCH_SECONDS) and SWITCH_SECONDS < 0.005


def test_workers_that_cannot_start_stop_the_run_instead_of_being_replaced_forever() -> None:
    async def scenario() -> int:
        pool = WorkerPool(2, BrokenStep(BackendName.rules), concurrency=2)
        with pytest.raises(RuntimeError, match="could not start"):
            await pool.start()
        pool.kill()
        return next(pool._ids)

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=60)) == 2  # the two it was asked for, no replacements


class FullDisk(OutputWriter):
    """A writer whose second append finds the disk full."""

    calls = 0

    def append(self, batch: list[tuple[str | None, str | None, str | None]]) -> dict[str, int]:
        FullDisk.calls += 1
        if FullDisk.calls == 2:
            raise OSError(28, "No space left on device")
        return super().append(batch)


def test_a_writer_that_fails_stops_the_run_with_its_error_instead_of_hanging(
    corpus_inputs: Path, tmp_path: Path
) -> None:
    inputs = corpus_inputs
    manifest = Manifest(tmp_path / "manifest.sqlite")
    bulk = BulkRun(
        manifest, FullDisk(tmp_path, manifest), Step(BackendName.rules), workers=2, concurrency=2, max_bytes=1 << 20
    )

    async def scenario() -> None:
        await bulk.run(discover([str(inputs)]), 60)

    with pytest.raises(OSError, match="No space left"):
        asyncio.run(asyncio.wait_for(scenario(), timeout=60))
    assert not bulk.pool._workers  # every worker ended
    assert sum(manifest.counts().values()) > 0 and manifest.counts().get(Status.done, 0) < 60
    manifest.close()


def test_a_second_ctrl_c_stops_at_once_even_with_requests_in_flight(tmp_path: Path) -> None:
    document = load(SEED_002)
    slow = tool_reply(quoted_answer(rules.extract(document), document))
    slow.delay = 600.0  # an endpoint that takes its time: a run that waited for it would take 10 minutes
    with ScriptedServer(lambda body: slow) as server:
        inputs = llm_corpus(tmp_path / "in", 4)
        process = start(
            str(inputs),
            "--out",
            str(tmp_path / "out"),
            "--backend",
            "llm",
            "--base-url",
            server.base_url,
            "--config",
            str(llm_config(tmp_path)),
            "--concurrency",
            "4",
        )
        assert wait_until(lambda: len(server.requests) >= 2, timeout=60)
        os.killpg(process.pid, signal.SIGINT)  # finish what is in flight ...
        time.sleep(0.5)
        os.killpg(process.pid, signal.SIGINT)  # ... no: stop now
        started = time.monotonic()
        _, stderr = process.communicate(timeout=120)
        assert time.monotonic() - started < 60, stderr  # at once, however loaded the machine: not after the answers
        assert process.returncode != 0 and "finishing the documents in flight" in stderr
        assert wait_until(lambda: not group_members(process.pid), timeout=15), "workers left behind"
    assert statuses(tmp_path / "out")["pending"] >= 2  # the interrupted documents wait for the next run


def test_what_leads_into_the_output_folder_is_skipped_and_only_that(tmp_path: Path) -> None:
    """Files under the output folder are no inputs, reached through a link too; a folder whose name only starts
    like it ('out-old' beside 'out') is read, and a link that loops is a failure record wherever it stands."""
    inputs, out = tmp_path / "in", tmp_path / "in" / "out"
    (inputs / "out-old").mkdir(parents=True)
    out.mkdir()
    for path in (inputs / "a.txt", inputs / "out-old" / "b.txt", out / "records.jsonl"):
        path.write_text("x")
    os.symlink(out / "records.jsonl", inputs / "linked.txt")
    os.symlink("loop", out / "loop")  # a link that loops leads nowhere, the output folder neither: a failure record
    os.symlink(out / "loop", inputs / "via-out")
    found = sorted(source.document_id for source in discover([str(inputs)], skip=out))
    assert found == ["a.txt", "out-old/b.txt", "out/loop", "via-out"]
    assert [s.problem for s in discover([str(inputs / "via-out")], skip=out)] == [
        "cannot be read (a symbolic link that loops)"
    ]
    assert sorted(source.document_id for source in discover([str(inputs)])) == [
        "a.txt",
        "linked.txt",
        "out-old/b.txt",
        "out/loop",
        "out/records.jsonl",
        "via-out",
    ]


def test_an_output_folder_inside_the_input_folder_is_never_read_as_input(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 3)
    for _ in range(2):  # the second run would find records.jsonl, facts.parquet ... if they were inputs
        result = run(str(inputs), "--out", str(inputs / "out"))
        assert result.returncode == 0, result.stderr
    summary = json.loads((inputs / "out" / "summary.json").read_text())
    assert summary["inputs"] == 3 and summary["this_run"]["already_finished"] == 3
