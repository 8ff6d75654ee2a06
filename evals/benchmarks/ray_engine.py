"""The Ray engine against the local engine on this machine, in the same run: prints figures, asserts nothing.

(a) Rules: the real-filing suite's notes (evals/suites/real/documents), copied until the corpus has
    --documents distinct documents, run by `extractor run` on the local engine and with --engine ray
    (a local Ray instance, one CPU per core), alternately, --rounds times each. Documents/s past
    start-up (the run's own summary) and the whole command's seconds; Ray's rate as a ratio of the
    local engine's (medians).
(b) The LLM path through Ray: copies of seed 002 against the test server answering every request
    after 300 ms (tests/llm_server.py), at each --concurrency: documents/s as a share of the ideal
    (concurrency / 0.3 s), beside the local engine's share at the same concurrency.

Needs the 'ray' extra (make bench-ray installs it).

    python evals/benchmarks/ray_engine.py [--documents 600] [--rounds 3] [--concurrency 8 32]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from extractor.evals.benchmarks.bulk_throughput import DELAY, GOAL_DOCUMENT, scripted_server, timed_run  # noqa: E402
from extractor.evals.benchmarks.corpus import build_corpus  # noqa: E402

NOTES = tuple(str(path.relative_to(ROOT)) for path in sorted((ROOT / "evals/suites/real/documents").glob("*")))
ENGINES = ("local", "ray")


def rules_figures(work: Path, documents: int, rounds: int) -> None:
    corpus = work / "notes"
    build_corpus(corpus, documents, samples=NOTES)
    rates: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    walls: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    for round_ in range(rounds):
        for engine in ENGINES:
            out = work / f"rules-{engine}-{round_}"
            measured = timed_run([str(corpus), "--out", str(out), "--engine", engine, "--no-queue"])
            rates[engine].append(measured.summary["this_run"]["documents_per_second"])
            walls[engine].append(measured.seconds)
            shutil.rmtree(out)
    cores = os.cpu_count() or 1
    print(
        f"(a) rules backend, {documents:,} real notes ({len(NOTES)} distinct filings, copied), {cores} cores, "
        f"median of {rounds} runs each, alternated"
    )
    print(f"{'engine':>8} {'docs/s':>8} {'whole command':>14}")
    for engine in ENGINES:
        print(f"{engine:>8} {statistics.median(rates[engine]):>8.1f} {statistics.median(walls[engine]):>12.1f} s")
    ratio = statistics.median(rates["ray"]) / statistics.median(rates["local"])
    print(f"Ray / local, documents/s past start-up: {ratio:.2f}")


def llm_figures(work: Path, levels: list[int], documents: int) -> None:
    from llm_server import tool_reply
    from scripted_answers import quoted_answer

    from extractor.backends import rules
    from extractor.loaders import load

    document = load(GOAL_DOCUMENT)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    reply.delay = DELAY
    print(
        f"\n(b) LLM path, test server answering after {DELAY * 1000:.0f} ms, copies of {GOAL_DOCUMENT.name}, "
        f"one request each; share of the ideal (concurrency / {DELAY} s)"
    )
    print(f"{'concurrency':>11} {'documents':>9} {'ideal/s':>8} {'local':>14} {'ray':>14}")
    with scripted_server(lambda body: reply, False) as server:
        config = work / "llm.toml"
        config.write_text('[llm]\nmodel = "bench"\ncache = "off"\n')
        for level in levels:
            count = max(documents, level * 8)
            corpus = work / f"llm-{level}"
            build_corpus(corpus, count, samples=(str(GOAL_DOCUMENT.relative_to(ROOT)),))
            ideal = level / DELAY
            cells = []
            for engine in ENGINES:
                out = work / f"llm-{engine}-{level}"
                measured = timed_run(
                    [str(corpus), "--out", str(out), "--engine", engine, "--no-queue", "--backend", "llm"]
                    + ["--base-url", server.base_url, "--config", str(config), "--concurrency", str(level)]
                )
                rate = measured.summary["this_run"]["documents_per_second"]
                cells.append(f"{rate:>6.1f}/s {rate / ideal:>5.0%}")
                shutil.rmtree(out)
                server.requests.clear()
            shutil.rmtree(corpus)
            print(f"{level:>11} {count:>9,} {ideal:>8.1f} {cells[0]:>14} {cells[1]:>14}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=600, help="rules: distinct documents in the corpus")
    parser.add_argument("--rounds", type=int, default=3, help="rules: runs of each engine, alternated")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[8, 32], help="LLM: levels (none: skip)")
    parser.add_argument("--llm-documents", type=int, default=200, help="LLM: documents per level (>= 8 x level)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    try:
        if args.documents:
            rules_figures(work, args.documents, args.rounds)
        if args.concurrency:
            llm_figures(work, args.concurrency, args.llm_documents)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
