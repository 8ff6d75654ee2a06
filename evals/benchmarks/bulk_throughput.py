"""Bulk-run throughput and memory on this machine: prints figures, asserts nothing.

(a) The rules backend over corpora of 1,000 and 5,000 documents built from the project's filings
    (evals/benchmarks/corpus.py): documents/s, and the peak memory of the whole process tree
    (the run and its workers, sampled from /proc), which should not grow with the corpus.
(b) The LLM path against the test server (tests/llm_server.py) answering every request after a
    fixed 300 ms: documents/s at concurrency 1, 8, 32 and 64, as a fraction of the ideal
    (concurrency / 0.3 s: one request per document). Also the CPU time all processes spent per
    document (the run, its workers and the test server, start-up included) and the rate that CPU
    allows on this machine's cores: past it, more concurrency cannot help.

Run: python evals/benchmarks/bulk_throughput.py [--sizes 1000 5000] [--concurrency 1 8 32 64] [--keep DIR]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from extractor.evals.benchmarks.corpus import build_corpus  # noqa: E402

DELAY = 0.3


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


def timed_run(args: list[str]) -> tuple[float, float, float, dict]:
    """Run `extractor run`; (seconds, peak memory of its process tree in MiB, CPU seconds of the tree, summary)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "extractor.cli", "run", *args, "--quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak, cpu = 0.0, {}
    while process.poll() is None:
        table = _processes()
        tree = _tree(table, process.pid)
        peak = max(peak, sum(table[pid][1] for pid in tree if pid in table) / 2**20)
        cpu.update({pid: table[pid][2] for pid in tree if pid in table})  # the last reading of each, exited ones kept
        time.sleep(0.1)
    seconds = time.monotonic() - started
    stderr = process.stderr.read() if process.stderr else ""
    out = Path(args[args.index("--out") + 1])
    if not (out / "summary.json").exists():
        raise SystemExit(f"the run failed:\n{stderr}")
    return seconds, peak, sum(cpu.values()), json.loads((out / "summary.json").read_text())


def rules_figures(work: Path, sizes: list[int]) -> None:
    print(f"(a) rules backend, {os.cpu_count()} cores, worker processes: {os.cpu_count()}")
    print(f"{'documents':>10} {'seconds':>8} {'docs/s':>8} {'facts':>9} {'peak memory (all processes)':>28}")
    for size in sizes:
        corpus = work / f"corpus-{size}"
        build_corpus(corpus, size)
        seconds, peak, _, summary = timed_run([str(corpus), "--out", str(work / f"out-{size}")])
        done = summary["this_run"]["finished"]
        finished = sum(done.values())
        rate = summary["this_run"]["documents_per_second"]
        print(f"{finished:>10,} {seconds:>8.1f} {rate:>8.1f} {summary['facts']:>9,} {peak:>24.0f} MiB")
        shutil.rmtree(corpus)


def llm_figures(work: Path, levels: list[int], documents_per_level: int, sample: Path) -> None:
    from llm_server import ScriptedServer, tool_reply
    from scripted_answers import quoted_answer

    from extractor.backends import rules
    from extractor.loaders import load
    from extractor.schemas.concepts import to_facts

    document = load(sample)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    reply.delay = DELAY
    print(
        f"\n(b) LLM path, test server answering after {DELAY * 1000:.0f} ms; documents: copies of {sample.name} "
        f"({sample.stat().st_size:,} bytes, {len(to_facts(rules.extract(document).note))} facts), one request each"
    )
    print(
        f"{'concurrency':>11} {'documents':>9} {'seconds':>8} {'docs/s':>8} {'ideal':>8} {'of ideal':>9} {'CPU/doc':>8} {'CPU limit':>10}"
    )
    with ScriptedServer(lambda body: reply) as server:
        config = work / "llm.toml"
        config.write_text('[llm]\nmodel = "bench"\ncache = "off"\n')
        for level in levels:
            count = max(documents_per_level, level * 8)
            corpus = work / f"llm-{level}"
            build_corpus(corpus, count, samples=(str(sample.relative_to(ROOT)),))
            out = work / f"llm-out-{level}"
            served = time.process_time()
            _, _, cpu, summary = timed_run(
                [
                    str(corpus),
                    "--out",
                    str(out),
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
            cpu += time.process_time() - served  # the test server's own work, in this process
            rate = summary["this_run"]["documents_per_second"]
            ideal = level / DELAY
            per_document = cpu / count  # every process, start-up included
            print(
                f"{level:>11} {count:>9,} {summary['this_run']['seconds']:>8.1f} {rate:>8.1f} {ideal:>8.1f} {rate / ideal:>9.0%}"
                f" {per_document * 1000:>6.0f}ms {(os.cpu_count() or 1) / per_document:>7.0f}/s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 32, 64])
    parser.add_argument(
        "--llm-documents", type=int, default=200, help="documents per concurrency level (at least 8 x concurrency)"
    )
    parser.add_argument(
        "--document",
        type=Path,
        action="append",
        help="filing the LLM benchmark copies (repeatable; default: seed 002 and a small aligned-text note)",
    )
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one, removed)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bulk-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.sizes:
            rules_figures(work, args.sizes)
        for sample in args.document or [
            ROOT / "tests/fixtures/002_59f0e0194afd947c.txt",
            ROOT / "evals/suites/heterogeneous/documents/new_aligned_2000.txt",
        ]:
            if args.concurrency:
                llm_figures(work, args.concurrency, args.llm_documents, sample.resolve())
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    threading.excepthook = lambda hook: None  # the test server's threads may outlive a broken pipe quietly
    main()
