"""Bulk-run throughput and memory on this machine: prints figures, asserts nothing.

(a) The rules backend over corpora of 1,000 and 5,000 documents built from the project's filings
    (evals/benchmarks/corpus.py): documents/s, and the peak memory of the whole process tree
    (the run and its workers, sampled from /proc), which should not grow with the corpus.
(b) The LLM path against the test server (tests/llm_server.py) answering every request after a
    fixed 300 ms: documents/s at concurrency 1, 8, 32 and 64, as a fraction of the ideal
    (concurrency / 0.3 s: one request per document), each over at least 32 round trips per request slot
    (a throughput: a run fills its workers once at its start and drains them once at its end, whatever its
    length), and goal 4 of issue 23 on seed 002: at concurrency 32, at least 90 % of it, measured with a
    connection per request and again with keep-alive connections (the second only at 32). Goal 4 is also
    run over 8 round trips per slot: the two runs apart give the rate a run keeps once under way and the
    seconds its filling and draining cost. Also the CPU every process spent per document past start-up
    (a 2-document run's CPU, measured first, is subtracted), split into the workers (a document's
    whole work), the driver (the run's own process: reading, hashing, writing) and the test server,
    and the rate that CPU allows on this machine's cores: past it, more concurrency cannot help. And the
    share of the concurrency's requests at the server over the middle half of each run ("fed"): a run's first
    and last rounds fill and drain the workers, which a short run feels most; the middle shows what it keeps up.
    Other work on the machine takes cores too: the load average before each part is printed.

Run: python evals/benchmarks/bulk_throughput.py [--sizes 1000 5000] [--concurrency 1 8 32 64] [--keep DIR]
[--keep-alive] (`--sizes` with no number skips (a); `--concurrency` with none skips (b); `--keep-alive`:
the test server keeps connections open, as real endpoints do, instead of one per request).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from extractor.evals.benchmarks.corpus import build_corpus  # noqa: E402

DELAY = 0.3
GOAL_DOCUMENT = ROOT / "tests/fixtures/002_59f0e0194afd947c.txt"  # the issue measures goal 4 on seed 002


def _processes() -> dict[int, tuple[int, int, float]]:
    """Every process: pid -> (parent pid, resident bytes, CPU seconds so far)."""
    table = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (
            int(fields[1]),
            int(fields[21]) * os.sysconf("SC_PAGE_SIZE"),
            (int(fields[11]) + int(fields[12])) / tick,
        )
    return table


def _tree(table: dict[int, tuple[int, int, float]], root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _role(pid: int, root: int, table: dict[int, tuple[int, int, float]]) -> str:
    """What a process of the run's tree does: the run itself reads, hashes, hands out and writes (the
    driver, helpers such as the resource tracker with it); the forkserver imports once and forks the
    workers; a worker (the forkserver's child) does each document's whole work."""
    parent = table[pid][0]
    if pid == root:
        return "driver"
    if parent != root:
        return "worker"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        command = b""
    return "start-up" if b"forkserver" in command else "driver"


@dataclass
class Measured:
    """One `extractor run`: wall seconds, peak memory of its process tree, CPU seconds by role, its summary."""

    seconds: float
    peak_mib: float
    cpu: dict[str, float]
    summary: dict

    @property
    def cpu_total(self) -> float:
        return sum(self.cpu.values())


def timed_run(args: list[str]) -> Measured:
    """Run `extractor run`, sampling its process tree from /proc every 0.1 s (its own CPU from the kernel)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "extractor.cli", "run", *args, "--quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak, cpu, roles = 0.0, {}, {}
    while True:
        reaped, status, usage = os.wait4(process.pid, os.WNOHANG)  # its CPU, exactly, once it has ended
        if reaped:
            process.returncode = os.waitstatus_to_exitcode(status)
            break
        table = _processes()
        tree = [pid for pid in _tree(table, process.pid) if pid in table]
        peak = max(peak, sum(table[pid][1] for pid in tree) / 2**20)
        for pid in tree:
            cpu[pid] = table[pid][2]  # the last reading of each, exited ones kept
            if pid not in roles:
                roles[pid] = _role(pid, process.pid, table)
        time.sleep(0.1)
    seconds = time.monotonic() - started
    stderr = process.stderr.read() if process.stderr else ""
    out = Path(args[args.index("--out") + 1])
    if not (out / "summary.json").exists():
        raise SystemExit(f"the run failed:\n{stderr}")
    by_role: dict[str, float] = {"driver": usage.ru_utime + usage.ru_stime}  # its last 0.1 s too (the parquet file)
    for pid, seconds_used in cpu.items():
        if pid != process.pid:
            by_role[roles[pid]] = by_role.get(roles[pid], 0.0) + seconds_used
    return Measured(seconds, peak, by_role, json.loads((out / "summary.json").read_text()))


def rules_figures(work: Path, sizes: list[int]) -> None:
    print(f"(a) rules backend, {os.cpu_count()} cores, worker processes: {os.cpu_count()}")
    print(f"{'documents':>10} {'seconds':>8} {'docs/s':>8} {'facts':>9} {'peak memory (all processes)':>28}")
    for size in sizes:
        corpus = work / f"corpus-{size}"
        build_corpus(corpus, size)
        measured = timed_run([str(corpus), "--out", str(work / f"out-{size}")])
        seconds, peak, summary = measured.seconds, measured.peak_mib, measured.summary
        done = summary["this_run"]["finished"]
        finished = sum(done.values())
        rate = summary["this_run"]["documents_per_second"]
        print(f"{finished:>10,} {seconds:>8.1f} {rate:>8.1f} {summary['facts']:>9,} {peak:>24.0f} MiB")
        shutil.rmtree(corpus)


GOAL_LEVEL, GOAL_SHARE = 32, 0.90  # issue 23, goal 4: at concurrency 32, 90 % of concurrency / latency
# Round trips per request slot in a level's run: a throughput, past the run's one filling of its workers and
# one draining; goal 4 is also run at SHORT_ROUNDS, and the two runs tell that fixed cost from the rate.
ROUNDS, SHORT_ROUNDS = 32, 8
ROLES = ("worker", "driver", "server")
BASELINE = 2  # documents (and concurrency) of the run whose CPU is start-up: subtracted from each level's


def _server_cpu() -> float:
    """CPU seconds of this process's other threads: the test server's (the main thread samples /proc)."""
    return time.process_time() - time.thread_time()


def scripted_server(responder: Any, keep_alive: bool) -> Any:
    """The test server; with `keep_alive`, on HTTP/1.1 persistent connections, as real endpoints keep them
    (the fixture answers HTTP/1.0: one connection per request)."""
    from llm_server import KeepAliveServer, ScriptedServer

    server = (KeepAliveServer if keep_alive else ScriptedServer)(responder)
    server._httpd.handle_error = lambda *_: None  # type: ignore[method-assign]  # a client hanging up is no error
    return server


def occupancy(arrivals: list[float], level: int) -> float | None:
    """The share of the run's `level` requests that were at the server, on average, over the middle half of the run
    (from the first request of its second quarter to the last of its third): each request is there DELAY seconds
    from its arrival. Being there is the whole ideal (Little's law: in flight / latency = rate), so this is the share
    of the ideal a run keeps up once its workers have filled and before they drain; unlike a count of requests
    over the same span it does not depend on where the span cuts the bursts of a run in lockstep."""
    times = sorted(arrivals)
    if len(times) < 2:  # (a run resumed with nothing left to do asks nothing)
        return None
    quarter = len(times) // 4
    start, end = times[quarter], times[len(times) - 1 - quarter]
    if end <= start:
        return None
    busy = sum(max(0.0, min(arrived + DELAY, end) - max(arrived, start)) for arrived in times)
    return busy / ((end - start) * level)


def llm_figures(
    work: Path, levels: list[int], documents_per_level: int, sample: Path, goal: bool, keep_alive: bool = False
) -> None:
    from llm_server import tool_reply
    from scripted_answers import quoted_answer

    from extractor.backends import rules
    from extractor.loaders import load
    from extractor.schemas.concepts import to_facts

    document = load(sample)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    reply.delay = DELAY
    mode = "HTTP/1.1 keep-alive" if keep_alive else "HTTP/1.0, a connection per request"
    cores = os.cpu_count() or 1
    print(
        f"\n(b) LLM path, test server answering after {DELAY * 1000:.0f} ms; documents: copies of {sample.name} "
        f"({sample.stat().st_size:,} bytes, {len(to_facts(rules.extract(document).note))} facts), one request each; "
        f"{mode}; "
        f"{cores} cores, load average {os.getloadavg()[0]:.1f} before"
    )
    with scripted_server(lambda body: reply, keep_alive) as server:
        work.mkdir(parents=True, exist_ok=True)
        config = work / "llm.toml"
        config.write_text('[llm]\nmodel = "bench"\ncache = "off"\n')

        def measure(level: int, count: int) -> tuple[Measured, float, float | None]:
            corpus = work / f"llm-{level}-{count}"
            build_corpus(corpus, count, samples=(str(sample.relative_to(ROOT)),))
            served, first = _server_cpu(), len(server.arrivals)
            measured = timed_run(
                [
                    str(corpus),
                    "--out",
                    str(work / f"llm-out-{level}-{count}"),
                    "--backend",
                    "llm",
                    "--base-url",
                    server.base_url,
                    "--config",
                    str(config),
                    "--concurrency",
                    str(level),
                ]
            )
            shutil.rmtree(corpus)
            fed = occupancy(server.arrivals[first:], level)
            server.requests.clear()  # the test server keeps every request body: its heap would grow level by level
            return measured, _server_cpu() - served, fed

        # imports, workers, clients: what every run spends before its documents
        base, _, _ = measure(BASELINE, BASELINE)
        print(
            f"start-up (a {BASELINE}-document run, subtracted below): {base.cpu_total:.1f} s CPU "
            f"({', '.join(f'{role} {value:.1f} s' for role, value in sorted(base.cpu.items()))})"
        )
        print(
            f"{'concurrency':>11} {'documents':>9} {'seconds':>8} {'docs/s':>8} {'ideal':>8} {'of ideal':>9}"
            f" {'fed':>5} {'CPU/doc':>8} {'worker':>7} {'driver':>7} {'server':>7} {'CPU limit':>10}"
        )
        shares: dict[int, float] = {}
        fed_shares: dict[int, float] = {}
        runs: list[tuple[int, float]] = []  # goal 4's runs: (documents, seconds), the short one first
        for level in dict.fromkeys(levels):  # each once
            count = max(documents_per_level, level * ROUNDS)
            if goal and level == GOAL_LEVEL:
                brief = measure(level, level * SHORT_ROUNDS)[0].summary["this_run"]
                runs.append((level * SHORT_ROUNDS, brief["seconds"]))
            measured, served, fed = measure(level, count)
            summary = measured.summary
            if goal and level == GOAL_LEVEL:
                runs.append((count, summary["this_run"]["seconds"]))
            rate = summary["this_run"]["documents_per_second"]
            ideal = level / DELAY
            shares[level] = rate / ideal
            fed_text = "n/a"
            if fed is not None:
                fed_shares[level] = fed
                fed_text = f"{fed:.0%}"
            per_role = {
                role: max(0.0, measured.cpu.get(role, 0.0) - base.cpu.get(role, 0.0)) / (count - BASELINE)
                for role in ROLES
            }
            per_role["worker"] += max(0.0, measured.cpu.get("start-up", 0.0) - base.cpu.get("start-up", 0.0)) / (
                count - BASELINE
            )
            per_role["server"] = served / count
            per_document = sum(per_role.values())
            print(
                f"{level:>11} {count:>9,} {summary['this_run']['seconds']:>8.1f} {rate:>8.1f} {ideal:>8.1f} {rate / ideal:>9.0%}"
                f" {fed_text:>5} {per_document * 1000:>6.1f}ms"
                + "".join(f" {per_role[role] * 1000:>5.1f}ms" for role in ROLES)
                + f" {cores / per_document:>8.0f}/s"
            )
    print(
        "fed: the share of the concurrency's requests at the test server, on average, over the middle half of the run "
        "(the first and last quarters, where the workers fill and drain, left out): the share of the ideal a run "
        "keeps up once under way, which a longer run approaches. "
        "CPU/doc: every process's CPU per document past start-up; worker: a document's load, extraction "
        "(openai, instructor, grounding), validation and rendering; driver: reading, hashing, handing out, "
        f"writing, the manifest; server: the test server. CPU limit: {cores} cores / CPU per document."
    )
    if goal:
        measured_shares = " / ".join(f"{shares[level]:.0%}" for level in levels)
        print(f"of ideal at concurrency {' / '.join(map(str, levels))}: {measured_shares}")
        if GOAL_LEVEL in shares:
            verdict = "meets" if shares[GOAL_LEVEL] >= GOAL_SHARE else "below"
            (few, brief), (many, long) = runs
            ideal = GOAL_LEVEL / DELAY
            print(
                f"goal 4 ({mode}): over {many:,} documents ({many // GOAL_LEVEL} round trips per request slot) the LLM "
                f"path at concurrency {GOAL_LEVEL} reaches {shares[GOAL_LEVEL]:.0%} of the ideal "
                f"(bar: >= {GOAL_SHARE:.0%}): {verdict}"
                + (
                    f"; over the middle half of the run it fed the endpoint at {fed_shares[GOAL_LEVEL]:.0%}"
                    if GOAL_LEVEL in fed_shares
                    else ""
                )
                + f"\n  a run of {few:,} documents ({few // GOAL_LEVEL} round trips per slot) reaches "
                f"{few / brief / ideal:.0%}" + _fixed_cost(few, brief, many, long, ideal)
            )
        else:
            print(f"goal 4: not measured (needs --concurrency including {GOAL_LEVEL})")


def _fixed_cost(few: int, brief: float, many: int, long: float, ideal: float) -> str:
    """What two runs of one level say apart: the documents/s a run keeps once under way (the extra documents
    over the extra seconds), and the seconds every run adds to that whatever its length (filling the workers at
    its start, draining them at its end)."""
    if long <= brief:
        return ""
    rate = (many - few) / (long - brief)
    return (
        f"; the two runs apart: once under way {rate / ideal:.0%} of the ideal, and about {brief - few / rate:.2f} s a "
        "run spends filling its workers and draining them (one pair of runs: a tenth of a second either way is noise)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 32, 64])
    parser.add_argument(
        "--llm-documents",
        type=int,
        default=200,
        help=f"documents per concurrency level (at least {ROUNDS} x concurrency: {ROUNDS} round trips per request slot)",
    )
    parser.add_argument(
        "--document",
        type=Path,
        action="append",
        help="filing the LLM benchmark copies (repeatable; default: seed 002 and a small aligned-text note)",
    )
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one, removed)")
    parser.add_argument(
        "--keep-alive", action="store_true", help="the test server keeps connections open, as real endpoints do"
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bulk-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.sizes:
            rules_figures(work, args.sizes)
        for sample in args.document or [
            GOAL_DOCUMENT,
            ROOT / "evals/suites/heterogeneous/documents/new_aligned_2000.txt",
        ]:
            if args.concurrency:
                goal = sample.resolve() == GOAL_DOCUMENT
                llm_figures(work, args.concurrency, args.llm_documents, sample.resolve(), goal, args.keep_alive)
                if goal and GOAL_LEVEL in args.concurrency:  # goal 4 with the server's other connection mode too
                    other = work / "other-connections"  # its own runs: the same output folders would be resumed
                    llm_figures(other, [GOAL_LEVEL], args.llm_documents, sample.resolve(), goal, not args.keep_alive)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    threading.excepthook = lambda hook: None  # the test server's threads may outlive a broken pipe quietly
    main()
