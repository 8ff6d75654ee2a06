"""The Ray engine (`extractor run --engine ray`) on a real local Ray instance: no mock of Ray anywhere.

Each run is a real `extractor run` process that starts its own Ray instance (or joins the one a test
started), as a user runs it. Needs the 'ray' extra (make test-ray); skipped without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest
from bulk_runs import plant, wait_for_records
from fixture_paths import ROOT, SEED_000, SEED_002
from llm_server import Reply, ScriptedServer, error_reply, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.bulk.reaper import descendants, processes
from extractor.evals.benchmarks.corpus import build_corpus
from extractor.loaders import load

pytest.importorskip("ray", reason="the Ray engine's tests need the 'ray' extra (make test-ray)")
pytestmark = pytest.mark.ray

EXTRACTOR = [sys.executable, "-m", "extractor.cli", "run"]
REAL_NOTES = tuple(str(path.relative_to(ROOT)) for path in sorted((ROOT / "evals/suites/real/documents").glob("*")))


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXTRACTOR, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def start(*args: str) -> subprocess.Popen[str]:
    """A run in its own process group, as a shell starts a job."""
    return subprocess.Popen(
        [*EXTRACTOR, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def comparable(out: Path) -> dict[str, dict]:
    """Records by document hash, without their timings (the only part that differs between two runs)."""
    return {r["document"]["sha256"]: {k: v for k, v in r.items() if k != "timing"} for r in records(out)}


def fact_rows(out: Path) -> list[str]:
    return sorted((out / "facts.csv").read_text(encoding="utf-8").splitlines())


def failure_lines(out: Path) -> list[dict]:
    lines = [json.loads(line) for line in (out / "failures.jsonl").read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("seconds", None)
    return sorted(lines, key=lambda line: line["ref"])


def statuses(out: Path) -> Counter[str]:
    import sqlite3

    with sqlite3.connect(out / "manifest.sqlite") as db:
        return Counter(status for (status,) in db.execute("select status from documents"))


def working(run_pid: int, title: str, besides: Collection[int] = ()) -> int | None:
    """A live process of the run (not one of `besides`) working on a task or actor named `title` (Ray names
    its workers 'ray::NAME')."""
    for pid in descendants(run_pid, processes()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if command.startswith(f"ray::{title}".encode()) and pid not in besides and _not_zombie(pid):
            return pid
    return None


def kill_one_working(
    process: subprocess.Popen[str], title: str, besides: Collection[int] = (), timeout: float = 120
) -> int:
    """SIGKILL the first process of the run seen working on `title` (another than `besides`); its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the run ended before a worker was seen: {process.communicate()}"
        if (pid := working(process.pid, title, besides)) is not None:
            os.kill(pid, signal.SIGKILL)
            return pid
        time.sleep(0.005)
    raise AssertionError(f"no process working on {title} within {timeout} s")


def alive(pids: dict[int, str]) -> list[int]:
    """Those of `pids` (pid -> start time) still running: the same pid with the same start time."""
    now = processes()
    return [pid for pid, started in pids.items() if pid in now and now[pid][1] == started and _not_zombie(pid)]


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- the same outcome as the local engine ------------------------------------------------------


@pytest.fixture(scope="module")
def planted_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """Good filings and every kind of bad input, run once on each engine."""
    corpus = tmp_path_factory.mktemp("planted")
    inputs = plant(corpus)
    local, on_ray = corpus / "local", corpus / "ray"
    limits = ("--max-bytes", "400000", "--no-queue")
    assert run(*inputs, "--out", str(local), "--workers", "2", *limits).returncode == 1
    result = run(*inputs, "--out", str(on_ray), "--engine", "ray", "--workers", "2", *limits)
    return local, on_ray, result


def test_ray_gives_the_records_facts_and_failures_of_the_local_engine(
    planted_runs: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    local, on_ray, result = planted_runs
    assert result.returncode == 1, result.stderr  # as locally: some inputs failed
    assert "Ray: started a local Ray instance (2 CPUs) for this run" in result.stderr
    assert comparable(on_ray) == comparable(local) and len(comparable(local)) == 9
    assert fact_rows(on_ray) == fact_rows(local) and len(fact_rows(local)) > 200
    assert statuses(on_ray) == statuses(local) == Counter({"done": 8, "review": 1, "failed": 8})
    ray_summary, local_summary = (json.loads((out / "summary.json").read_text()) for out in (on_ray, local))
    assert ray_summary["documents"] == local_summary["documents"]


def test_each_planted_bad_input_gives_one_failure_record_on_ray(
    planted_runs: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    local, on_ray, _ = planted_runs
    failed = failure_lines(on_ray)
    assert failed == failure_lines(local)
    assert len(failed) == 8 and len({line["ref"] for line in failed}) == 8
    reasons = {Path(line["ref"].split("::")[-1]).name: (line["stage"], line["reason"]) for line in failed}
    assert reasons["empty.txt"] == ("load", "the file is empty")
    assert reasons["huge.txt"][0] == "read" and "over the 400,000-byte limit" in reasons["huge.txt"][1]
    assert reasons["broken.zip"][0] == "read" and reasons["binary.bin"][0] == "load"


def test_documents_failing_validation_enter_the_review_queue_as_on_the_local_engine(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 6, samples=REAL_NOTES[:6])
    said = {}
    for engine in ("local", "ray"):
        queue = tmp_path / f"{engine}.sqlite"
        done = subprocess.run(
            [*EXTRACTOR, str(inputs), "--out", str(tmp_path / engine), "--engine", engine],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env={**os.environ, "EXTRACTOR_QUEUE": str(queue)},
        )
        assert done.returncode == 0, done.stderr
        said[engine] = next(line for line in done.stderr.splitlines() if "entered the review queue" in line)
        said[engine] = said[engine].split(" documents")[0]
    assert said["ray"] == said["local"] == str(statuses(tmp_path / "local")["review"])


# --- exactly once, whatever dies ---------------------------------------------------------------


@pytest.fixture(scope="module")
def real_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """40 distinct real notes, and the facts of one uninterrupted local run over them."""
    folder = tmp_path_factory.mktemp("real") / "in"
    build_corpus(folder, 40, per_folder=20, samples=REAL_NOTES)
    clean = folder.parent / "clean"
    assert run(str(folder), "--out", str(clean), "--no-queue").returncode == 0
    return folder, fact_rows(clean)


def test_a_ray_worker_killed_mid_document_leaves_every_document_exactly_once(
    real_corpus: tuple[Path, list[str]], tmp_path: Path
) -> None:
    inputs, clean_rows = real_corpus
    out = tmp_path / "out"
    process = start(str(inputs), "--out", str(out), "--engine", "ray", "--no-queue")
    killed = [kill_one_working(process, "run_rules")]
    killed.append(kill_one_working(process, "run_rules", besides=killed))  # and another, on another document
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr  # the killed tasks were tried again: nothing failed
    written = records(out)
    assert len(written) == 40 and len({r["document"]["sha256"] for r in written}) == 40
    assert fact_rows(out) == clean_rows
    assert len(set(killed)) == 2


def test_the_driver_killed_then_resumed_gives_each_document_once_and_leaves_no_ray_process(
    real_corpus: tuple[Path, list[str]], tmp_path: Path
) -> None:
    inputs, clean_rows = real_corpus
    out = tmp_path / "out"
    process = start(str(inputs), "--out", str(out), "--engine", "ray", "--no-queue")
    wait_for_records(out, 5, process)
    ray_processes: dict[int, str] = {}
    while not working(process.pid, "run_rules"):  # the whole instance is up, tasks running
        time.sleep(0.005)
    ray_processes.update(descendants(process.pid, processes()))
    assert len(ray_processes) >= 4  # GCS, raylet, workers, the watcher...
    os.kill(process.pid, signal.SIGKILL)  # the driver alone: what it started must not outlive it
    process.wait()
    process.stdout.close(), process.stderr.close()  # type: ignore[union-attr, func-returns-value]
    deadline = time.monotonic() + 30
    while alive(ray_processes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(ray_processes), [Path(f"/proc/{p}/cmdline").read_bytes()[:60] for p in alive(ray_processes)]
    before = statuses(out)  # what the manifest committed before the kill: records can be ahead of it
    finished = before["done"] + before["review"] + before["failed"]
    assert 0 < finished < 40
    resumed = run(str(inputs), "--out", str(out), "--engine", "ray", "--no-queue")
    assert resumed.returncode == 0, resumed.stderr
    written = records(out)
    assert len(written) == 40 and len({r["document"]["sha256"] for r in written}) == 40
    assert fact_rows(out) == clean_rows
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"]["pending"] == 0 and summary["this_run"]["already_finished"] == finished


def test_sigterm_finishes_the_documents_in_flight_writes_the_summary_and_the_run_resumes(
    real_corpus: tuple[Path, list[str]], tmp_path: Path
) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 200, per_folder=100, samples=REAL_NOTES)
    out = tmp_path / "out"
    process = start(str(inputs), "--out", str(out), "--engine", "ray", "--no-queue")
    wait_for_records(out, 10, process)
    os.kill(process.pid, signal.SIGTERM)  # as a scheduler stops a job: Ray's own handler must not take it
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "SIGTERM: finishing the documents in flight" in stderr
    summary = json.loads((out / "summary.json").read_text())
    stopped = len(records(out))
    assert 10 <= stopped < 200 and summary["documents"]["done"] + summary["documents"]["review"] == stopped
    resumed = run(str(inputs), "--out", str(out), "--engine", "ray", "--no-queue")
    assert resumed.returncode == 0, resumed.stderr
    assert len(records(out)) == 200 and len({r["document"]["sha256"] for r in records(out)}) == 200


CALLER = """
import subprocess, sys
import extractor
mine = subprocess.Popen(["sleep", "600"])  # the caller's own process, started before the run
print(mine.pid, flush=True)
extractor.run([sys.argv[1]], sys.argv[2], engine="ray")
"""


def test_a_python_caller_killed_mid_run_loses_its_ray_processes_but_keeps_its_own(
    real_corpus: tuple[Path, list[str]], tmp_path: Path
) -> None:
    inputs, _ = real_corpus
    out = tmp_path / "out"
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, str(inputs), str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert caller.stdout is not None
    mine = int(caller.stdout.readline())
    try:
        wait_for_records(out, 3, caller)
        ray_processes = {pid: started for pid, started in descendants(caller.pid, processes()).items() if pid != mine}
        os.kill(caller.pid, signal.SIGKILL)
        caller.wait()
        caller.stdout.close(), caller.stderr.close()  # type: ignore[union-attr, func-returns-value]
        deadline = time.monotonic() + 30
        while alive(ray_processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(ray_processes)
        assert _not_zombie(mine) and Path(f"/proc/{mine}").exists()  # the caller's own process is not Ray's
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(mine, signal.SIGKILL)


# --- the LLM path: a shared rate limit, actors that die ----------------------------------------


def answers() -> dict[str, Reply]:
    found = {}
    for marker, path in (("Articles of Incorporation", SEED_000), ("has a share award plan", SEED_002)):
        document = load(path)
        found[marker] = tool_reply(quoted_answer(rules.extract(document), document))
    return found


@pytest.fixture
def slow_model() -> Iterator[ScriptedServer]:
    """A scripted endpoint answering each seed after 0.3 s."""
    replies = {marker: Reply(reply.status, reply.body, delay=0.3) for marker, reply in answers().items()}

    def respond(body: dict) -> Reply:
        prompt = json.dumps(body["messages"])
        return next((reply for marker, reply in replies.items() if marker in prompt), error_reply(500, "unknown"))

    with ScriptedServer(respond) as server:
        yield server


def llm_args(server: ScriptedServer, tmp_path: Path, *more: str) -> list[str]:
    config = tmp_path / "extractor.toml"
    config.write_text('[llm]\nattempts = 2\nretry_wait = 0.01\nmodel = "scripted"\ncache = "off"\n')
    return ["--backend", "llm", "--base-url", server.base_url, "--config", str(config), "--no-queue", *more]


def test_the_rate_limit_holds_for_the_whole_cluster_across_two_worker_processes(
    slow_model: ScriptedServer, tmp_path: Path
) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 14, samples=(str(SEED_000.relative_to(ROOT)), str(SEED_002.relative_to(ROOT))))
    out = tmp_path / "out"
    rate = 3.0  # requests per second: 180 a minute, shared by two actors in two processes
    result = run(
        str(inputs),
        "--out",
        str(out),
        "--engine",
        "ray",
        "--workers",
        "2",
        "--concurrency",
        "8",
        *llm_args(slow_model, tmp_path, "--rpm", str(int(rate * 60))),
    )
    assert result.returncode == 0, result.stderr
    assert len(records(out)) == 14
    arrivals = sorted(slow_model.arrivals)
    assert len(arrivals) == 14
    # GCRA with a burst of 1: any window of w seconds sees at most 1 + w * rate requests leave the limiter;
    # 50 ms more of w absorbs the jitter between leaving it and arriving here. Two limiters of their own
    # (one per process) would let twice the rate through.
    for window in (0.5, 1.0, 2.0):
        allowed = int(1 + (window + 0.05) * rate)
        worst = max(sum(1 for t in arrivals if first <= t < first + window) for first in arrivals)
        assert worst <= allowed, (window, worst, allowed, [round(t - arrivals[0], 3) for t in arrivals])
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) / rate - 0.05


def test_an_llm_worker_killed_mid_document_leaves_every_document_exactly_once(
    slow_model: ScriptedServer, tmp_path: Path
) -> None:
    inputs = tmp_path / "in"
    build_corpus(inputs, 16, samples=(str(SEED_000.relative_to(ROOT)), str(SEED_002.relative_to(ROOT))))
    out = tmp_path / "out"
    process = start(
        str(inputs), "--out", str(out), "--engine", "ray", "--workers", "2", *llm_args(slow_model, tmp_path)
    )
    wait_for_records(out, 2, process)
    kill_one_working(process, "LLMWorker")  # an actor holding documents that wait on the endpoint
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    written = records(out)
    assert len(written) == 16 and len({r["document"]["sha256"] for r in written}) == 16
    assert {r["status"] for r in written} == {"done"}
    assert len(slow_model.requests) > 16  # the documents the dead actor held were asked again


# --- a document past its time limit; a cluster that was there before ----------------------------


def long_table(rows: int, variant: int = 0) -> str:
    """A note with one table of `rows` rows: about a second of work for 1,500 rows."""
    cells = "".join(
        f"<tr><td>Granted in tranche {n}</td><td>{1000 + n + variant:,}</td><td>$ {10 + n / 100:.2f}</td></tr>"
        for n in range(rows)
    )
    return f"<html><body><p>Stock option activity:</p><table>{cells}</table></body></html>"


def test_a_document_past_its_time_limit_fails_and_its_worker_is_ended_while_the_others_finish(tmp_path: Path) -> None:
    """40,000 rows take seconds to extract; the limit is 1 s, counted from the task's start (the workers'
    imports are done before the first document)."""
    inputs = tmp_path / "in"
    build_corpus(inputs, 6, samples=REAL_NOTES[:3])
    (inputs / "big-table.htm").write_text(long_table(40_000), encoding="utf-8")
    out = tmp_path / "out"
    result = run(str(inputs), "--out", str(out), "--engine", "ray", "--doc-timeout", "1", "--no-queue")
    assert result.returncode == 1, result.stderr
    failed = failure_lines(out)
    assert [Path(line["ref"]).name for line in failed] == ["big-table.htm"]
    assert failed[0]["stage"] == "extract" and "1 s limit per document (--doc-timeout)" in failed[0]["reason"]
    assert len(records(out)) == 6


def ray_start(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """`ray start ... --block` in a session of its own: one node, ended with its process group."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "ray"), "start", "--block", "--node-ip-address=127.0.0.1"]
        + ["--disable-usage-stats", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )


def end(node: subprocess.Popen[str], how: signal.Signals = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, how)  # --block: the node's processes end with it
    node.wait(timeout=60)
    node.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def cluster() -> Iterator[tuple[str, subprocess.Popen[str], dict[str, str]]]:
    """A Ray cluster started beforehand, as a platform team runs one (`ray start --head --block`), with
    token authentication as Ray recommends: its mode and token are the environment of every process
    that joins it (the run included)."""
    import secrets
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    head = ray_start("--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false", env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # its GCS listens once the head is up
            assert head.poll() is None, head.communicate()
            with socket.socket() as knock:
                if knock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", head, env
    finally:
        end(head)


def test_a_run_joins_an_existing_cluster_and_leaves_it_running(
    cluster: tuple[str, subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    address, head, env = cluster
    inputs = tmp_path / "in"
    build_corpus(inputs, 8, samples=REAL_NOTES[:8])
    local = tmp_path / "local"
    assert run(str(inputs), "--out", str(local), "--no-queue").returncode == 0
    for out in (tmp_path / "ray", tmp_path / "again"):  # twice: the first run left the cluster as it was
        joined = subprocess.run(
            [*EXTRACTOR, str(inputs), "--out", str(out), "--engine", "ray", "--ray-address", address, "--no-queue"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env=env,
        )
        assert joined.returncode == 0, joined.stderr
        assert f"Ray: joined the Ray cluster at {address}" in joined.stderr
        assert comparable(out) == comparable(local)
        assert head.poll() is None  # the cluster is not the run's to stop


def test_a_node_lost_mid_run_leaves_every_document_exactly_once(
    cluster: tuple[str, subprocess.Popen[str], dict[str, str]], real_corpus: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """A second node (its own raylet and workers, as another machine would have) joins the head; it is
    killed, whole, while it works on a document: Ray runs its tasks again on the head."""
    address, head, env = cluster
    node = ray_start(f"--address={address}", "--num-cpus=1", env=env)
    try:
        deadline = time.monotonic() + 120
        while (
            "/2.0 CPU"
            not in subprocess.run(  # the cluster counts the node's CPU: it has joined
                [str(Path(sys.executable).parent / "ray"), "status", f"--address={address}"],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            ).stdout
        ):
            assert node.poll() is None and time.monotonic() < deadline, "the second node did not join"
            time.sleep(0.5)
        inputs = tmp_path / "in"
        build_corpus(inputs, 200, per_folder=100, samples=REAL_NOTES)
        for number in range(6):  # and documents that take a second or so: a node dies in the middle of one
            (inputs / f"long-{number}.htm").write_text(long_table(1_500, number), encoding="utf-8")
        out = tmp_path / "out"
        process = subprocess.Popen(
            [*EXTRACTOR, str(inputs), "--out", str(out), "--engine", "ray", "--ray-address", address, "--no-queue"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env=env,
        )
        deadline, busy = time.monotonic() + 120, (None, 0.0)
        while True:  # until the node has worked on one document for 0.3 s: a long one, surely unfinished
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            pid = working(node.pid, "run_rules")
            if pid is None or pid != busy[0]:
                busy = (pid, time.monotonic())
            elif time.monotonic() - busy[1] > 0.3:
                break
            time.sleep(0.01)
        end(node, signal.SIGKILL)  # the node's raylet and its workers at once, as a machine that is lost
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
        written = records(out)
        assert len(written) == 206 and len({r["document"]["sha256"] for r in written}) == 206
        assert not failure_lines(out)
    finally:
        if node.poll() is None:
            end(node)


def test_an_address_where_nothing_answers_stops_the_run_at_once_with_the_reason(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "out"
    result = run(str(SEED_000), "--out", str(out), "--engine", "ray", "--ray-address", f"127.0.0.1:{port}", timeout=120)
    assert result.returncode == 1
    said = " ".join(result.stderr.replace("│", " ").split())
    assert f"cannot join the Ray cluster at 127.0.0.1:{port}: nothing answers there" in said
    assert not records(out) and not failure_lines(out)  # nothing failed: the document waits for the next run


def test_from_python_in_a_ray_session_of_its_own_the_run_uses_it_and_leaves_it_open(
    slow_model: ScriptedServer, tmp_path: Path
) -> None:
    import ray

    import extractor

    inputs = tmp_path / "in"
    build_corpus(inputs, 4, samples=(str(SEED_000.relative_to(ROOT)), str(SEED_002.relative_to(ROOT))))
    settings = extractor.LLMConfig(base_url=slow_model.base_url, model="scripted", cache="off", api_key="unused")
    ray.init(address="local", num_cpus=2, log_to_driver=False)
    try:
        said: list[str] = []
        outcome = extractor.run([inputs], tmp_path / "out", "llm", llm=settings, engine="ray", notify=said.append)
        assert outcome.complete and outcome.summary["documents"]["done"] == 4
        assert not any(note.startswith("Ray: ") for note in said)  # neither started nor joined: the caller's
        assert ray.is_initialized()  # still the caller's
        deadline = time.monotonic() + 30
        while working(os.getpid(), "LLMWorker") and time.monotonic() < deadline:  # the run's actors end with it
            time.sleep(0.1)
        assert working(os.getpid(), "LLMWorker") is None
        assert ray.get(ray.remote(lambda: 42).remote()) == 42  # and the session serves its caller
    finally:
        ray.shutdown()
