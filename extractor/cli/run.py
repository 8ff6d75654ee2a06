"""`extractor run`: bulk extraction into an output folder, resumable, concurrent, nothing lost."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from extractor.code_version import code_version
from extractor.backends.choice import BackendName
from extractor.bulk.manifest import Manifest, ManifestError, Status
from extractor.bulk.outputs import FAILURES, FACTS_CSV, FACTS_PARQUET, MANIFEST, RECORDS, SUMMARY, OutputWriter, write_failures, write_parquet
from extractor.bulk.runner import BulkRun, Tally, default_workers
from extractor.bulk.work import DOC_TIMEOUT, BatchResults, Step
from extractor.bulk.sources import Source, count, discover, source_of
from extractor.bulk.summary import summarize, summary_table, write_summary
from extractor.cli.options import (
    ApiKeyOption, BackendOption, BaseUrlOption, CacheDirOption, CacheOption, ConfigOption, MaxCharsOption,
    ModelOption, ModeOption, PromptOption, RpmOption, TemperatureOption, TimeoutOption, TpmOption,
    chosen_backend, llm_flags,
)  # fmt: skip
from extractor.llm.client import EndpointError
from extractor.llm.batch import BatchError, index_results
from extractor.llm.config import LLMConfig
from extractor.llm.limits import RateLimiter
from extractor.llm.prompts import PromptError
from extractor.loaders.decode import MAX_BYTES
from extractor.queue.feed import RunFeed
from extractor.cli.common import err, open_queue, queue_settings

INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C
BATCH = "Batch API (half the price, answers within a day)"


def run_command(
    inputs: list[str] = typer.Argument(None, metavar="INPUT...", help="Files, folders (walked recursively), glob patterns ('filings/**/*.htm', quoted), EDGAR .txt submissions and .zip archives of any of these."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: records.jsonl, facts.csv, facts.parquet, failures.jsonl, summary.json and the run manifest. Run the same command again to resume."),
    backend: BackendOption = BackendName.rules,
    concurrency: int = typer.Option(8, min=1, max=512, help="Documents with the LLM at once, over all workers (each waits on one request at a time)."),
    workers: int = typer.Option(default_workers(), min=1, help="Worker processes; each loads, extracts and validates documents, LLM documents several at once (default: one per core)."),
    max_bytes: int = typer.Option(MAX_BYTES, min=1, max=MAX_BYTES, help="Larger inputs are not read; each becomes a failure record saying so."),
    doc_timeout: float = typer.Option(DOC_TIMEOUT, "--doc-timeout", min=0, metavar="SECONDS", help="Time one document may take (reading it, extracting, validating; on the LLM path its requests and waits too). One that takes longer is stopped and becomes a failure record naming the stage it was in; the run goes on. 0: no limit."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try documents that failed in an earlier run again (after an endpoint outage, say); with --batch-import, answer the ones the batch could not answer before from this results file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar: a progress line every 10 seconds, for logs."),
    batch_export: Path | None = typer.Option(None, "--batch-export", metavar="FILE", rich_help_panel=BATCH, help="Write the LLM requests to FILE in OpenAI Batch API format instead of sending them (half the price, answers within 24 hours); documents wait as 'exported'."),
    batch_import: Path | None = typer.Option(None, "--batch-import", metavar="RESULTS", rich_help_panel=BATCH, help="Read the Batch API's output file for the documents exported into --out: parsed, grounded and validated like live answers. Takes no inputs."),
    send_to_queue: bool = typer.Option(True, "--queue/--no-queue", help="Send documents that fail validation (and a sample of passing ones, --qa-rate) to the correction queue (extractor.toml's queue table, env EXTRACTOR_QUEUE, else out/queue.sqlite)."),
    qa_rate: float | None = typer.Option(None, min=0, max=1, help="Share of passing documents sampled for review, always the same ones (default: qa_rate in extractor.toml's queue table, else 0)."),
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
    """
    if not math.isfinite(doc_timeout):  # before anything is opened: bad settings touch nothing
        err.print("[red]error[/red]: --doc-timeout takes a number of seconds (0: no limit)")
        raise typer.Exit(code=2)
    if batch_import is not None:
        if inputs:
            err.print("[red]error[/red]: --batch-import reads the documents its export listed: name no inputs, only --out")
            raise typer.Exit(code=2)
        manifest, writer, step, sources, total = _batch_import(out, batch_import, retry_failed)
        llm_run = True
    else:
        if not inputs:
            err.print("[red]error[/red]: no inputs: name files, folders, globs or zip archives to extract")
            raise typer.Exit(code=2)
        chosen, settings = chosen_backend(backend, llm_flags(locals()), config)
        if batch_export is not None and chosen is BackendName.rules:
            err.print("[red]error[/red]: --batch-export writes LLM requests: use it with --backend llm or hybrid")
            raise typer.Exit(code=2)
        step = _step(chosen, settings, export=batch_export is not None)
        manifest = _open_manifest(out, _fingerprint(step))
        export = _export_settings(manifest, step, batch_export) if batch_export is not None else None
        writer = _open_writer(out, manifest, batch_export)  # a file this folder did not write is refused untouched
        if export is not None:
            manifest.remember("batch", export)  # only once the file is accepted
        manifest.forget_unread()  # inputs that could not be read are listed and read again
        if retry_failed and (reopened := manifest.reopen([Status.failed])):
            err.print(f"{reopened:,} documents that failed before will be tried again")
        sources, total = discover(inputs, skip=out), count(inputs, skip=out)
        llm_run = chosen is not BackendName.rules and batch_export is None
    step.doc_timeout = doc_timeout or None
    feed = _feed(out, config, qa_rate, manifest.recall("batch") if batch_import else None) if send_to_queue else None
    bulk = BulkRun(manifest, writer, step, workers, concurrency, max_bytes, feed=feed)
    interrupted = _run(bulk, sources, total, quiet, llm_run)
    writer.close()
    try:
        failed_inputs = write_failures(out, manifest)
        facts = _parquet(out, manifest.superseded())
        summary = summarize(out, manifest, bulk.tally, failed_inputs, facts)
        write_summary(out, summary)
    except (OSError, sqlite3.Error) as error:
        err.print(f"[red]error[/red]: the run's summary files cannot be written ({escape(str(error))}); its records are kept")
        raise typer.Exit(code=1) from error
    finally:
        manifest.close()
    Console(stderr=True, width=None if err.is_terminal else 120).print(summary_table(summary))
    err.print(escape(f"wrote {out / RECORDS}, {out / FACTS_CSV}, {out / FACTS_PARQUET}, {out / FAILURES}, {out / SUMMARY}"))
    if feed is not None:
        err.print(f"{feed.added:,} documents entered the review queue {escape(str(feed.queue.path))}: extractor queue list, or extractor review")
    if batch_export is not None and summary["documents"]["exported"]:
        err.print(escape(f"{summary['documents']['exported']:,} documents wait for their answers: submit {batch_export} to the Batch API "
                         f"(https://platform.openai.com/docs/guides/batch), then: extractor run --out {out} --batch-import RESULTS.jsonl"))  # fmt: skip
    if interrupted:
        err.print("stopped after finishing what was in flight; run the same command again to go on")
        raise typer.Exit(code=INTERRUPTED)
    if batch_import and not total and (waiting := summary["documents"]["failed"]):
        err.print(f"{waiting:,} documents failed before (some perhaps in the batch): add --retry-failed to answer them from this file")
    unfinished = summary["documents"]["pending"] + (summary["documents"]["exported"] if batch_import else 0)
    if bulk.tally.stopped_by or summary["documents"]["failed"] or unfinished:
        if unfinished:
            err.print(f"{unfinished:,} documents are not finished; run the same command again to go on"
                      + (" (or --retry-failed with new results)" if batch_import else ""))
        raise typer.Exit(code=1)


def _feed(out: Path, config: Path | None, qa_rate: float | None, export: dict[str, Any] | None) -> RunFeed:
    """The queue intake; documents named relative to the folder the inputs were listed in."""
    settings = queue_settings(None, config, qa_rate=qa_rate)
    root = export.get("cwd") if export else None
    return RunFeed(open_queue(settings, must_exist=False), settings.qa_rate, f"run {out}", root)


def _step(chosen: BackendName, settings: LLMConfig, export: bool = False, results: BatchResults | None = None) -> Step:
    """The run's step; for LLM backends, its client is made here once, so a bad prompt or a missing
    key is said once (exit 2), not by every worker."""
    if chosen is BackendName.rules:
        return Step(chosen)
    limiter = RateLimiter(settings.rpm, settings.tpm, shared=True) if (settings.rpm or settings.tpm) and not (export or results) else None
    step = Step(chosen, settings, limiter, export=export, results=results)
    try:
        step.prepare()
    except (PromptError, EndpointError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    return step


def _fingerprint(step: Step) -> dict[str, object]:
    """What must not change between runs into one folder: the backend, and the model and prompt."""
    if step.llm_config is None:
        return {"backend": step.backend.value}
    return {"backend": step.backend.value, "model": step.llm_config.model, "prompt": step.llm.prompt.name, "prompt_hash": step.llm.prompt.hash}


def _open_manifest(out: Path, fingerprint: dict[str, object]) -> Manifest:
    """The folder's manifest, locked for this run; exit 2 if it is in use or holds another run."""
    if out.exists() and not out.is_dir():
        err.print(f"[red]error[/red]: --out {escape(str(out))} is a file; name a folder (it is created if missing)")
        raise typer.Exit(code=2)
    try:
        out.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(out / MANIFEST)
        manifest.check_settings(fingerprint)
        return manifest
    except (ManifestError, OSError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error


def _open_writer(out: Path, manifest: Manifest, requests: Path | None = None) -> OutputWriter:
    try:
        writer = OutputWriter(out, manifest, requests)
    except (ManifestError, OSError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if writer.notice:
        err.print(f"[yellow]warning[/yellow]: {escape(writer.notice)}")
    return writer


BATCH_SETTINGS = ("model", "temperature", "mode", "max_chars", "overlap_chars", "prices")  # what shapes a request, and its cost


def _export_settings(manifest: Manifest, step: Step, requests: Path) -> dict[str, Any] | None:
    """What the import must rebuild the same requests from (never the key), to be kept; None when
    kept already. A folder exports with one set of settings, to one file, from one working folder:
    a second export with others would make the first's requests unanswerable (exit 2)."""
    assert step.llm_config is not None
    given = step.llm_config.prompt
    prompt = str(Path(given).resolve()) if Path(given).suffix == ".toml" else step.llm.prompt.name
    llm = step.llm_config.model_dump(mode="json", include=set(BATCH_SETTINGS)) | {"prompt": prompt}
    wanted = {"requests": str(requests.resolve()), "backend": step.backend.value, "cwd": os.getcwd(), "llm": llm}
    stored = manifest.recall("batch")
    if stored is not None:
        changed = [name for name in ("requests", "backend", "cwd") if stored.get(name) != wanted[name]]
        changed += [f"llm.{name}" for name in sorted(set(stored["llm"]) | set(llm)) if stored["llm"].get(name) != llm.get(name)]
        if changed:
            said = "; ".join(f"{name}: {_dig(stored, name)!r} before, {_dig(wanted, name)!r} now" for name in changed)
            err.print(f"[red]error[/red]: {escape(str(manifest.path.parent))} exported requests with other settings ({escape(said)}); "
                      "export with the same ones, or choose another --out")  # fmt: skip
            raise typer.Exit(code=2)
        return None
    return wanted | {"code": code_version()}


def _dig(settings: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        settings = settings.get(part) if isinstance(settings, dict) else None  # type: ignore[assignment]
    return settings


def _batch_import(out: Path, results: Path, retry_failed: bool) -> tuple[Manifest, OutputWriter, Step, list[Source], int]:
    """The step that answers from RESULTS, and the exported documents it answers."""
    if not (out / MANIFEST).exists():
        err.print(f"[red]error[/red]: {out} holds no run; export first: extractor run INPUT... --out {out} --backend llm --batch-export requests.jsonl")
        raise typer.Exit(code=2)
    try:
        probe = Manifest(out / MANIFEST)
        stored = probe.recall("batch")
        probe.close()
        index, unreadable = index_results(results)
    except (ManifestError, BatchError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if stored is None:
        err.print(f"[red]error[/red]: no requests were exported from {escape(str(out))} (--batch-export)")
        raise typer.Exit(code=2)
    if stored.get("code") != (now := code_version()):
        err.print(f"[yellow]warning[/yellow]: exported with code {escape(str(stored.get('code')))}, importing with {escape(now)}: "
                  "if the requests changed, their results will not be found")  # fmt: skip
    # No re-asks: a batch answers only the requests it was given.
    settings = LLMConfig.model_validate(stored["llm"] | {"cache": "off", "reasks": 0, "feedback_reasks": 0})
    step = _step(BackendName(stored["backend"]), settings, results=BatchResults(results, index))
    manifest = _open_manifest(out, _fingerprint(step))
    writer = _open_writer(out, manifest)
    if retry_failed and (reopened := manifest.reopen([Status.failed], stage="batch", to=Status.exported)):
        err.print(f"{reopened:,} documents the batch could not answer before will be answered from {escape(str(results))}")
    root = stored.get("cwd", os.getcwd())
    sources = [source_of(ref, document_id, key, root) for key, ref, document_id, *_ in manifest.documents([Status.exported])]
    err.print(escape(f"{len(index):,} results in {results} for {len(sources):,} exported documents"))
    if unreadable:
        lines = ", ".join(map(str, unreadable[:10])) + (" ..." if len(unreadable) > 10 else "")
        err.print(f"[yellow]warning[/yellow]: {len(unreadable):,} lines are not Batch API results (lines {lines}); their requests go unanswered")
    return manifest, writer, step, sources, len(sources)


def _run(bulk: BulkRun, sources: Iterable[Source], total: int, quiet: bool, llm: bool) -> bool:
    """Run with a progress display; True when stopped by Ctrl-C."""
    view = _QuietLog(total, llm) if quiet else _Bar(total, llm)
    bulk.on_update = view.update
    interrupted = False

    async def main() -> None:
        nonlocal interrupted
        loop = asyncio.get_running_loop()

        def stop_after_in_flight(name: str) -> None:
            nonlocal interrupted
            interrupted = True
            bulk.tally.stopped_by = f"{name}: the inputs not reached wait for the next run"
            bulk.stop.set()
            err.print(f"\n{name}: finishing the documents in flight, then stopping (Ctrl-C again to stop at once)")
            for number in (signal.SIGINT, signal.SIGTERM):  # a second one acts as usual
                loop.remove_signal_handler(number)

        loop.add_signal_handler(signal.SIGINT, stop_after_in_flight, "Ctrl-C")
        loop.add_signal_handler(signal.SIGTERM, stop_after_in_flight, "SIGTERM")
        try:
            await bulk.run(sources, total)
        except (OSError, sqlite3.Error, RuntimeError) as error:  # a full disk, a worker that cannot start
            bulk.tally.stopped_by = f"error: {error}"
            err.print(f"[red]error[/red]: {escape(str(error))}")
            err.print("stopped: what was written is kept; run the same command again to go on")
        if bulk.endpoint_failure is not None:
            err.print(f"[red]error[/red]: {escape(bulk.endpoint_failure)}")
            err.print("stopped: the endpoint cannot serve any document; the ones not finished stay pending for the next run")

    with view:
        asyncio.run(main())
    return interrupted


class _Bar:
    """A progress bar: inputs handled, documents/s, time left, failures, review, tokens, cost."""

    def __init__(self, total: int, llm: bool) -> None:
        self.llm = llm
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[pace]}"), console=err, transient=False,
        )  # fmt: skip
        self.task = self.progress.add_task("run", total=total, pace="")

    def __enter__(self) -> _Bar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def update(self, tally: Tally) -> None:
        self.progress.update(self.task, completed=tally.handled, pace=pace(tally, self.llm))


class _QuietLog:
    """For logs: one progress line every `every` seconds, and one at the end."""

    def __init__(self, total: int, llm: bool, every: float = 10.0) -> None:
        self.total, self.llm, self.every = total, llm, every
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
        err.print(f"{time.strftime('%H:%M:%S')} {tally.handled:,}/{self.total:,} inputs, {pace(tally, self.llm)}")


def pace(tally: Tally, llm: bool) -> str:
    """documents/s, time left, failures and review so far, and LLM tokens and cost."""
    rate = tally.finished / tally.elapsed if tally.elapsed > 0 else 0.0
    left = tally.total - tally.handled
    eta = f"{_clock(left / rate)} left" if rate > 0 and left > 0 else ""
    parts = [f"{rate:.1f} documents/s", eta, f"{tally.failed:,} failed", f"{tally.written.get(Status.review, 0):,} for review"]
    if llm:
        usage = tally.usage
        cost = "cost unknown" if usage.cost_usd is None else f"${float(usage.cost_usd):.2f}"
        parts.append(f"{usage.prompt_tokens + usage.completion_tokens:,} tokens, {cost}")
    return " · ".join(part for part in parts if part)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


def _parquet(out: Path, superseded: list[str]) -> int | None:
    """facts.parquet from facts.csv; None (with a warning) if it cannot be written."""
    try:
        return write_parquet(out, superseded)
    except Exception as error:  # noqa: BLE001 - the CSV holds the same rows; say so and go on
        err.print(f"[yellow]warning[/yellow]: {escape(str(out / FACTS_PARQUET))} not written ({escape(str(error))}); {escape(str(out / FACTS_CSV))} holds the same rows")
        return None
