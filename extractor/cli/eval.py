"""`extractor eval` and `eval-runs`: score a backend on a suite, store the run, compare with a baseline."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from extractor.backends.choice import BackendName
from extractor.cli.common import err
from extractor.cli.options import (
    ApiKeyOption,
    BackendOption,
    BaseUrlOption,
    CacheDirOption,
    CacheOption,
    ConfigOption,
    MaxCharsOption,
    ModelOption,
    ModeOption,
    PromptOption,
    TemperatureOption,
    TimeoutOption,
    backend_runner,
    llm_flags,
)
from extractor.evals.harness.compare import compare
from extractor.evals.harness.html_report import render_report, write_report
from extractor.evals.harness.runner import EvalRun, run_suite
from extractor.evals.harness.store import DEFAULT_STORE, RunStore, StoreError
from extractor.evals.harness.terminal import comparison_report, run_report
from extractor.llm.client import EndpointError
from extractor.suites import SuiteError, load_suite


def eval_command(
    suite_path: Path = typer.Argument(
        ...,
        metavar="SUITE",
        help="A suite folder holding suite.toml (or the manifest itself), e.g. evals/suites/heterogeneous.",
    ),
    backend: BackendOption = BackendName.rules,
    baseline: str | None = typer.Option(
        None, help="A stored run id to compare against, or 'latest' (the newest stored run of this suite)."
    ),
    fail_under: float | None = typer.Option(
        None, min=0, max=1, help="Exit 1 when the run's F1 is below this (0-1): a CI gate."
    ),
    no_regressions: bool = typer.Option(
        False,
        "--no-regressions",
        help="Exit 1 when a gold fact right in the baseline is not right now, or a new extra appears (needs --baseline).",
    ),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite file of stored runs (created when missing)."),
    html: Path | None = typer.Option(None, help="Where to write the HTML report (default: out/eval/run-<id>.html)."),
    label: str | None = typer.Option(None, help="A note stored with the run, e.g. 'lexicon: forfeited rows'."),
    show: int = typer.Option(25, help="Changed facts listed per kind in the terminal (the HTML report lists all)."),
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    temperature: TemperatureOption = None,
    timeout: TimeoutOption = None,
    mode: ModeOption = None,
    cache: CacheOption = None,
    cache_dir: CacheDirOption = None,
    prompt: PromptOption = None,
    max_chars: MaxCharsOption = None,
    config: ConfigOption = None,
) -> None:
    """Score a backend (and prompt) on a suite against its gold; store the run; compare with a baseline.

    Prints precision, recall and F1 (value right, and 'found F1' for finding the fact whatever its
    value) per concept group, award type, document format and document, the grounding rate, the
    validator pass rate and LLM usage, then, with --baseline, the facts newly right and newly
    wrong and a paired bootstrap over documents that says whether the change is more than noise.
    Every run is stored in --store; the HTML report has a drill-down per document.

    Exit status: 0; 1 when a gate fails (--fail-under, --no-regressions) or the endpoint cannot
    serve; 2 for a bad suite, store, baseline or settings.

    Examples:
      extractor eval evals/suites/heterogeneous
      extractor eval evals/suites/heterogeneous --baseline latest --no-regressions --fail-under 0.5
      extractor eval evals/suites/seeds --backend llm --prompt stock_compensation@v1 --cache replay --cache-dir evals/cassettes
    """
    try:
        suite = load_suite(suite_path)
        runs = RunStore(store)
        base = _baseline(runs, suite.name, baseline)
    except (SuiteError, StoreError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if no_regressions and base is None:
        err.print(
            "[red]error[/red]: --no-regressions needs a baseline run (--baseline ID or latest, with a stored run)"
        )
        raise typer.Exit(code=2)
    flags = llm_flags(locals())
    chosen, extract_one, settings = backend_runner(backend, flags, config)
    llm = chosen is not BackendName.rules
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err.console,
        transient=True,
    ) as progress:
        task = progress.add_task(f"eval {suite.name} ({chosen.value})", total=len(suite.documents))
        try:
            run = run_suite(
                suite,
                extract_one,
                chosen.value,
                model=settings.model if settings and llm else None,
                prompt_id=settings.prompt if settings and llm else None,
                label=label,
                on_document=lambda document: progress.advance(task),
            )
        except EndpointError as error:
            err.print(f"[red]error[/red]: {escape(str(error))}")
            err.print("stopped: the endpoint cannot serve any document; the run was not stored")
            raise typer.Exit(code=1) from error
    metrics = run.metrics()
    try:
        runs.save(run)
    except StoreError as error:  # the scores are still shown; the exit status says they were not kept
        err.print(f"[red]error[/red]: {escape(str(error))}; the run below was not stored")
    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(run_report(run, metrics))
    comparison = compare(base, run) if base is not None else None
    if comparison is not None:
        console.print(comparison_report(comparison, limit=show))
    if run.id is None:
        raise typer.Exit(code=2)
    report = html or Path("out/eval") / f"run-{run.id}.html"
    try:
        write_report(report, render_report(run, metrics, suite, runs.runs(suite.name), comparison))
    except OSError as error:
        err.print(
            f"[red]error[/red]: the report cannot be written to {escape(str(report))} ({escape(error.strerror or str(error))}); run {run.id} is stored in {store}"
        )
        raise typer.Exit(code=2) from error
    err.print(f"run {run.id} stored in {store}; report: {report}")
    failed_gates = []
    if fail_under is not None and metrics.overall.f1 < fail_under:
        failed_gates.append(f"F1 {metrics.overall.f1:.3f} is below --fail-under {fail_under}")
    if no_regressions and comparison is not None and comparison.regressions:
        failed_gates.append(
            f"{len(comparison.newly_wrong)} facts newly wrong and {len(comparison.new_extras)} new extras against run {comparison.baseline.id}"
        )
    for message in failed_gates:
        err.print(f"[red]gate failed[/red]: {escape(message)}")
    if failed_gates:
        raise typer.Exit(code=1)


def _baseline(runs: RunStore, suite: str, baseline: str | None) -> EvalRun | None:
    if baseline is None:
        return None
    if baseline == "latest":
        latest = runs.latest(suite)
        if latest is None:
            err.print(f"[yellow]note[/yellow]: no stored run of suite {escape(suite)} yet; nothing to compare with")
            return None
        return runs.load(latest)
    if not (baseline.isascii() and baseline.isdigit() and len(baseline) < 19):
        raise StoreError(f"--baseline must be a run id or 'latest', not {baseline!r}")
    run = runs.load(int(baseline))
    if run.suite != suite:
        raise StoreError(
            f"run {run.id} is of suite {run.suite!r}, not {suite!r}: runs compare fact by fact only within one suite"
        )
    return run


def eval_runs_command(
    suite: str | None = typer.Option(None, help="Only runs of this suite (its name in suite.toml)."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite file of stored runs."),
) -> None:
    """List stored eval runs, oldest first: the ids to pass to 'eval --baseline'."""
    if not store.exists():
        err.print(f"[red]error[/red]: {store} does not exist yet; 'extractor eval SUITE' creates it")
        raise typer.Exit(code=2)
    try:
        summaries = RunStore(store).runs(suite)
    except StoreError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    table = RichTable(title=f"Eval runs in {store}", title_justify="left")
    for column in ("id", "created", "suite", "backend", "model", "prompt", "code", "label", "F1"):
        table.add_column(column, justify="right" if column in ("id", "F1") else "left", overflow="fold")
    for r in summaries:
        prompt_name = f"{r.prompt_id} {r.prompt_hash or ''}".strip() if r.prompt_id else ""
        table.add_row(
            str(r.id),
            r.created,
            escape(r.suite),
            r.backend,
            escape(r.model or ""),
            escape(prompt_name),
            escape(r.code_version),
            escape(r.label or ""),
            f"{r.f1:.3f}",
        )
    Console(width=None if sys.stdout.isatty() else 150).print(table)
