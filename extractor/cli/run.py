"""`extractor run`: bulk extraction into an output folder, resumable, concurrent, nothing lost."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from extractor.backends.choice import BackendName
from extractor.bulk.forkserver import start_forkserver
from extractor.bulk.settings import DOC_TIMEOUT, Engine
from extractor.cli import startup
from extractor.cli.common import err, open_queue, queue_settings
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
    RpmOption,
    TemperatureOption,
    TimeoutOption,
    TpmOption,
    chosen_backend,
    llm_flags,
)
from extractor.limits import MAX_BYTES

if TYPE_CHECKING:
    from extractor.bulk.runner import Tally

INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C
BATCH = "Batch API (half the price, answers within a day)"
RAY = "Ray cluster"


def run_command(
    inputs: list[str] = typer.Argument(
        None,
        metavar="INPUT...",
        help="Files, folders (walked recursively), glob patterns ('filings/**/*.htm', quoted), EDGAR .txt submissions and .zip archives of any of these.",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="Output folder: records.jsonl, facts.csv, facts.parquet, failures.jsonl, summary.json and the run manifest. Run the same command again to resume.",
    ),
    backend: BackendOption = BackendName.rules,
    concurrency: int = typer.Option(
        8,
        min=1,
        max=512,
        help="Documents with the LLM at once, over all workers (each waits on one request at a time).",
    ),
    workers: int | None = typer.Option(
        None,
        min=1,
        show_default=False,
        help="Worker processes; each loads, extracts and validates documents, LLM documents several at once. Default: one per core (with --engine ray: one per CPU of the cluster).",
    ),
    engine: Engine = typer.Option(
        Engine.local,
        rich_help_panel=RAY,
        help="Where documents are worked on: this machine's worker processes, or a Ray cluster (needs the 'ray' extra: pip install 'filing-extractor\\[ray]'). Same outputs, statuses and review queue either way; this process reads the inputs and writes every output.",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        rich_help_panel=RAY,
        help="With --engine ray: the cluster to join ('auto', 'ray://head:10001', 'head:6379'; default: RAY_ADDRESS, else a local Ray instance started for the run and shut down after it).",
    ),
    max_bytes: int = typer.Option(
        MAX_BYTES, min=1, max=MAX_BYTES, help="Larger inputs are not read; each becomes a failure record saying so."
    ),
    doc_timeout: float = typer.Option(
        DOC_TIMEOUT,
        "--doc-timeout",
        min=0,
        metavar="SECONDS",
        help="Time one document may take (reading it, extracting, validating; on the LLM path its requests and waits too). One that takes longer is stopped and becomes a failure record naming the stage it was in; the run goes on. 0: no limit.",
    ),
    retry_failed: bool = typer.Option(
        False,
        "--retry-failed",
        help="Try documents that failed in an earlier run again (after an endpoint outage, say); with --batch-import, answer the ones the batch could not answer before from this results file.",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar: a progress line every 10 seconds, for logs."
    ),
    batch_export: Path | None = typer.Option(
        None,
        "--batch-export",
        metavar="FILE",
        rich_help_panel=BATCH,
        help="Write the LLM requests to FILE in OpenAI Batch API format instead of sending them (half the price, answers within 24 hours); documents wait as 'exported'.",
    ),
    batch_import: Path | None = typer.Option(
        None,
        "--batch-import",
        metavar="RESULTS",
        rich_help_panel=BATCH,
        help="Read the Batch API's output file for the documents exported into --out: parsed, grounded and validated like live answers. Takes no inputs.",
    ),
    send_to_queue: bool = typer.Option(
        True,
        "--queue/--no-queue",
        help="Send documents that fail validation (and a sample of passing ones, --qa-rate) to the correction queue (extractor.toml's queue table, env EXTRACTOR_QUEUE, else out/queue.sqlite).",
    ),
    qa_rate: float | None = typer.Option(
        None,
        min=0,
        max=1,
        help="Share of passing documents sampled for review, always the same ones (default: qa_rate in extractor.toml's queue table, else 0).",
    ),
    rpm: RpmOption = None,
    tpm: TpmOption = None,
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
    """Extract thousands of filings into one folder; stop any time (Ctrl-C, even kill -9) and run again to finish.

    Each document is identified by the SHA-256 of its bytes: one finished in an earlier run, or
    the same content under another name, is not extracted again, and every record is written
    exactly once. Documents that fail validation are kept, marked for review (the correction
    queue); inputs that cannot be read or extracted become lines of failures.jsonl with the
    reason, and the batch goes on.

    Exit status: 0 when every input was extracted (some may need review) or, with --batch-export,
    exported; 1 when some failed or are not finished (the endpoint could not serve, a disk
    filled); 2 for bad settings or an output folder in use or of another run; 130 when stopped
    by Ctrl-C or SIGTERM (run the same command again to go on).

    Examples:
      extractor run filings/ --out out/run
      extractor run 'edgar/**/*.txt' archive.zip --out out/llm --backend llm --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct --concurrency 32 --rpm 500
      extractor run filings/ --out out/ray --engine ray --ray-address auto
    """
    if not math.isfinite(doc_timeout):  # before anything is opened: bad settings touch nothing
        err.print("[red]error[/red]: --doc-timeout takes a number of seconds (0: no limit)")
        raise typer.Exit(code=2)
    if batch_import is not None and inputs:
        err.print("[red]error[/red]: --batch-import reads the documents its export listed: name no inputs, only --out")
        raise typer.Exit(code=2)
    if batch_import is not None and engine is Engine.ray:
        err.print(
            "[red]error[/red]: --batch-import reads answers from a file and asks nothing: run it on the local engine"
        )
        raise typer.Exit(code=2)
    if ray_address is not None and engine is not Engine.ray:
        err.print("[red]error[/red]: --ray-address names a Ray cluster: add --engine ray")
        raise typer.Exit(code=2)
    if batch_import is None and not inputs:
        err.print("[red]error[/red]: no inputs: name files, folders, globs or zip archives to extract")
        raise typer.Exit(code=2)
    from extractor.llm.config import LLMConfig

    chosen, settings = (
        (BackendName.llm, LLMConfig())
        if batch_import is not None
        else chosen_backend(backend, llm_flags(locals()), config)
    )
    if batch_export is not None and chosen is BackendName.rules:
        err.print("[red]error[/red]: --batch-export writes LLM requests: use it with --backend llm or hybrid")
        raise typer.Exit(code=2)
    # The run's own code is imported only once the forkserver its workers come from is importing theirs on the
    # other core (bulk/forkserver.py; ~0.4 s each, with an LLM ~1.5 s more). The Ray engine has no forkserver.
    if batch_import is not None or engine is Engine.local:
        start_forkserver(chosen)
    from extractor.bulk.manifest import ManifestError
    from extractor.bulk.outputs import FACTS_CSV, FACTS_PARQUET, FAILURES, RECORDS, SUMMARY
    from extractor.bulk.run import RunError, SummaryError, import_batch, run
    from extractor.bulk.summary import summary_table
    from extractor.llm.batch import BatchError
    from extractor.llm.errors import EndpointError
    from extractor.llm.prompts import PromptError

    review_settings = queue_settings(None, config, qa_rate=qa_rate) if send_to_queue else None
    llm_run = batch_import is not None or (chosen is not BackendName.rules and batch_export is None)
    view = _QuietLog(llm_run) if quiet else _Bar(llm_run)
    update = _freezing_first(view.update)
    rate = review_settings.qa_rate if review_settings is not None else 0.0
    # opened by the library once the run is accepted: a refused run creates no queue file
    queue = partial(open_queue, review_settings, must_exist=False) if review_settings is not None else None
    try:
        with view:
            if batch_import is not None:
                outcome = import_batch(
                    out,
                    batch_import,
                    retry_failed=retry_failed,
                    workers=workers,
                    concurrency=concurrency,
                    max_bytes=max_bytes,
                    doc_timeout=doc_timeout,
                    queue=queue,
                    qa_rate=rate,
                    on_update=update,
                    notify=_say,
                    handle_signals=True,
                )
            else:
                outcome = run(
                    inputs,
                    out,
                    chosen,
                    settings,
                    workers=workers,
                    concurrency=concurrency,
                    max_bytes=max_bytes,
                    doc_timeout=doc_timeout,
                    retry_failed=retry_failed,
                    queue=queue,
                    qa_rate=rate,
                    batch_export=batch_export,
                    on_update=update,
                    notify=_say,
                    handle_signals=True,
                    engine=engine,
                    ray_address=ray_address,
                )
    except SummaryError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=1) from error
    except (RunError, ManifestError, BatchError, PromptError, EndpointError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    summary = outcome.summary
    Console(stderr=True, width=None if err.is_terminal else 120).print(summary_table(summary))
    err.print(
        escape(f"wrote {out / RECORDS}, {out / FACTS_CSV}, {out / FACTS_PARQUET}, {out / FAILURES}, {out / SUMMARY}")
    )
    if review_settings is not None:
        err.print(
            f"{outcome.queued:,} documents entered the review queue {escape(str(review_settings.path))}: extractor queue list, or extractor review"
        )
    if batch_export is not None and summary["documents"]["exported"]:
        err.print(
            escape(
                f"{summary['documents']['exported']:,} documents wait for their answers: submit {batch_export} to the Batch API "
                f"(https://platform.openai.com/docs/guides/batch), then: extractor run --out {out} --batch-import RESULTS.jsonl"
            )
        )
    if outcome.interrupted:
        err.print("stopped after finishing what was in flight; run the same command again to go on")
        raise typer.Exit(code=INTERRUPTED)
    if batch_import and not outcome.tally.total and (waiting := summary["documents"]["failed"]):
        err.print(
            f"{waiting:,} documents failed before (some perhaps in the batch): add --retry-failed to answer them from this file"
        )
    unfinished = summary["documents"]["pending"] + (summary["documents"]["exported"] if batch_import else 0)
    if outcome.tally.stopped_by or summary["documents"]["failed"] or unfinished:
        if unfinished:
            err.print(
                f"{unfinished:,} documents are not finished; run the same command again to go on"
                + (" (or --retry-failed with new results)" if batch_import else "")
            )
        raise typer.Exit(code=1)


def _say(note: str) -> None:
    """The library's notes, coloured as the other messages are."""
    for word, colour in (("error", "red"), ("warning", "yellow")):
        if note.startswith(f"{word}: "):
            err.print(f"[{colour}]{word}[/{colour}]: {escape(note[len(word) + 2 :])}")
            return
    err.print(escape(note))


class _Bar:
    """A progress bar: inputs handled, documents/s, time left, failures, review, tokens, cost."""

    def __init__(self, llm: bool) -> None:
        self.llm = llm
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[pace]}"),
            console=err.console,
            transient=False,
        )
        self.task = self.progress.add_task("run", total=None, pace="")

    def __enter__(self) -> _Bar:
        return self  # shown from the first update: a run refused before it starts draws no empty bar

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.progress.live.is_started:
            self.progress.__exit__(kind, error, trace)

    def update(self, tally: Tally) -> None:
        if not self.progress.live.is_started:
            self.progress.start()
        self.progress.update(self.task, total=tally.total, completed=tally.handled, pace=pace(tally, self.llm))


def _freezing_first(update: Callable[[Tally], None]) -> Callable[[Tally], None]:
    """`update`, freezing the heap at its first call: the run has then made what it keeps to its end (the
    LLM clients, made after start-up's freeze), which every collection of the driver walked again (~0.7 ms
    of CPU per LLM document)."""
    first = True

    def updating(tally: Tally) -> None:
        nonlocal first
        if first:
            first = False
            startup.freeze()
        update(tally)

    return updating


class _QuietLog:
    """For logs: one progress line every `every` seconds, and one at the end."""

    def __init__(self, llm: bool, every: float = 10.0) -> None:
        self.llm, self.every = llm, every
        self.last = time.monotonic()
        self.tally: Tally | None = None

    def __enter__(self) -> _QuietLog:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tally is not None:
            self._log(self.tally)

    def update(self, tally: Tally) -> None:
        self.tally = tally
        if time.monotonic() - self.last >= self.every:
            self.last = time.monotonic()
            self._log(tally)

    def _log(self, tally: Tally) -> None:
        err.print(f"{time.strftime('%H:%M:%S')} {tally.handled:,}/{tally.total:,} inputs, {pace(tally, self.llm)}")


def pace(tally: Tally, llm: bool) -> str:
    """documents/s, time left, failures and review so far, and LLM tokens and cost."""
    from extractor.bulk.manifest import Status

    rate = tally.finished / tally.elapsed if tally.elapsed > 0 else 0.0
    left = tally.total - tally.handled
    eta = f"{_clock(left / rate)} left" if rate > 0 and left > 0 else ""
    parts = [
        f"{rate:.1f} documents/s",
        eta,
        f"{tally.failed:,} failed",
        f"{tally.written.get(Status.review, 0):,} for review",
    ]
    if llm:
        usage = tally.usage
        cost = "cost unknown" if usage.cost_usd is None else f"${float(usage.cost_usd):.2f}"
        parts.append(f"{usage.prompt_tokens + usage.completion_tokens:,} tokens, {cost}")
    return " · ".join(part for part in parts if part)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )
