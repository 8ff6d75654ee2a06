"""Rules vs llm vs hybrid, two prompt versions, on the seeds and the heterogeneous suite, with a real local model.

    python -m extractor.evals.local_model.run            (make eval-local; needs the 'local' extra)

Starts llama.cpp's server on the packaged Gemma 3 270M (or --model FILE) on a free port of
127.0.0.1, runs every (suite, backend, prompt) through the eval harness, stores each run in
evals/local_model/runs.sqlite, compares the prompt versions with the harness, and writes the
figures to evals/local_model/results.md (the README quotes that file). Completions are recorded
in out/local-eval/cassettes, so the seeds suite (the same two filings as two of the
heterogeneous suite's documents) reuses the answers instead of asking again.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console

from extractor.backends.choice import BackendName, extractor_for
from extractor.evals.harness.compare import compare
from extractor.evals.harness.runner import EvalRun, run_suite
from extractor.evals.harness.store import RunStore
from extractor.evals.harness.terminal import comparison_report
from extractor.llm.config import resolve_config
from extractor.local_model import LocalServer, free_port, packaged_model
from extractor.suites import load_suite

HERE = Path(__file__).resolve().parent
SUITES = ("heterogeneous", "seeds")  # heterogeneous first: the seeds then replay its recorded answers
PROMPTS = ("stock_compensation@v1", "stock_compensation@v2")


def _row(run: EvalRun, seconds: float) -> str:
    metrics = run.metrics()
    o, usage = metrics.overall, metrics.usage
    grounding = f"{metrics.grounding_rate:.3f}" if metrics.grounding_rate is not None else "-"
    passing = f"{metrics.validation_pass_rate:.3f}" if metrics.validation_pass_rate is not None else "-"
    requests = f"{usage.requests} / {usage.completion_tokens:,}" if usage else "0 / 0"
    return (
        f"| {run.suite} | {run.id} | {run.backend} | {run.prompt_id or '-'} | {o.precision:.3f} | {o.recall:.3f} | {o.f1:.3f} "
        f"| {o.found_f1:.3f} | {grounding} | {passing} | {metrics.failed_documents}/{metrics.documents} | {requests} | {seconds:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="GGUF file (default: the packaged Gemma 3 270M)")
    parser.add_argument("--store", type=Path, default=HERE / "runs.sqlite")
    parser.add_argument("--results", type=Path, default=HERE / "results.md")
    parser.add_argument("--cassettes", type=Path, default=Path("out/local-eval/cassettes"))
    args = parser.parse_args()
    console = Console()
    store = RunStore(args.store)
    rows: list[str] = []
    comparisons = []
    model = args.model or packaged_model()
    args.cassettes.mkdir(parents=True, exist_ok=True)
    with LocalServer(model, port=free_port(), threads=2, log=Path("out/local-eval/server.log")) as server:
        console.print(f"llama.cpp's server on {model.name} at {server.base_url}")
        for suite_name in SUITES:
            suite = load_suite(Path("evals/suites") / suite_name)
            runs: dict[tuple[str, str | None], EvalRun] = {}
            for backend, prompt in [(BackendName.rules, None)] + [
                (b, p) for p in PROMPTS for b in (BackendName.llm, BackendName.hybrid)
            ]:
                flags = {
                    "base_url": server.base_url,
                    "prompt": prompt,
                    "cache": "read-write",
                    "cache_dir": args.cassettes,
                }
                config = resolve_config(flags, config_file=HERE / "settings.toml")
                started = time.monotonic()
                console.print(f"{suite_name}: {backend.value} {prompt or ''} ...")
                run = run_suite(
                    suite,
                    extractor_for(backend, config),
                    backend.value,
                    model=config.model if prompt else None,
                    prompt_id=prompt,
                    label=f"local model {model.name}",
                )
                store.save(run)
                runs[(backend.value, prompt)] = run
                rows.append(_row(run, time.monotonic() - started))
                console.print(rows[-1])
            for compared in ("llm", "hybrid"):
                comparison = compare(runs[(compared, PROMPTS[0])], runs[(compared, PROMPTS[1])])
                comparisons.append((suite_name, compared, comparison))
                console.print(comparison_report(comparison, limit=5))
    _write(args.results, model.name, rows, comparisons, args.store)
    console.print(f"runs stored in {args.store}; figures in {args.results}")


def _write(path: Path, model: str, rows: list[str], comparisons: list, store: Path) -> None:
    lines = [
        f"# Local model eval: {model}",
        "",
        "Written by `make eval-local` (`python -m extractor.evals.local_model.run`); every row is a run stored in",
        f"`{store.relative_to(Path.cwd()) if store.is_absolute() and store.is_relative_to(Path.cwd()) else store}`"
        " (`extractor eval-runs --store ...` lists them). Settings: `evals/local_model/settings.toml`.",
        "",
        "| suite | run | backend | prompt | precision | recall | F1 | found F1 | grounded | passed validation | failed docs | requests / tokens out | seconds |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        "v2 against v1 (paired bootstrap over documents, 95 % interval):",
        "",
        "| suite | backend | F1 v1 → v2 | change | 95 % interval | newly right | newly wrong |",
        "| --- | --- | --- | ---: | --- | ---: | ---: |",
    ]
    for suite, backend, c in comparisons:
        before, after = c.baseline.metrics().overall.f1, c.candidate.metrics().overall.f1
        lines.append(
            f"| {suite} | {backend} | {before:.3f} → {after:.3f} | {c.delta_f1:+.3f} | {c.interval[0]:+.3f} … {c.interval[1]:+.3f} "
            f"| {len(c.newly_right)} | {len(c.newly_wrong)} |"
        )
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
