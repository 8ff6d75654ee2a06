"""A whole bulk run into an output folder, from Python: what `extractor run` does, without a terminal.

    from extractor.bulk.run import run
    outcome = run(["filings/"], Path("out/run"))          # rules, one worker per core
    outcome.summary["documents"]                            # {'done': ..., 'review': ..., 'failed': ...}

Resumable (run it again to go on), each document committed exactly once, bad inputs become failure
records and the batch goes on. Refusals (an output folder in use or of another run, settings that
cannot work) raise RunError or the library error that says why; nothing is printed: `notify`
receives the notes a person should see, `on_update` the running tally.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import signal
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor.backends.choice import BackendName
from extractor.bulk.forkserver import start_forkserver
from extractor.bulk.manifest import Manifest, ManifestError, Status
from extractor.bulk.outputs import FACTS_CSV, FACTS_PARQUET, MANIFEST, OutputWriter, write_failures, write_parquet
from extractor.bulk.runner import BulkRun, Pool, Tally, default_workers
from extractor.bulk.settings import DOC_TIMEOUT, Engine
from extractor.bulk.sources import Source, count, discover, source_of
from extractor.bulk.summary import summarize, write_summary
from extractor.bulk.work import BatchResults, Step
from extractor.code_version import code_version
from extractor.errors import ExtractorError
from extractor.limits import MAX_BYTES
from extractor.llm.batch import index_results
from extractor.llm.config import LLMConfig
from extractor.llm.limits import RateLimiter
from extractor.queue.feed import RunFeed
from extractor.queue.store import Queue

log = logging.getLogger(__name__)

# The correction queue, or a function that opens it: called only once the run is accepted, so a refused
# run creates no queue file.
QueueSource = Queue | Callable[[], Queue]

Notify = Callable[
    [str], None
]  # a note for the person running it ("12 documents that failed before will be tried again")
BATCH_SETTINGS = (
    "model",
    "temperature",
    "mode",
    "max_chars",
    "overlap_chars",
    "prices",
)  # what shapes a request, and its cost


class RunError(ExtractorError):
    """A run that cannot start as asked (the folder is a file, holds another run, exports differ); nothing was changed."""


class SummaryError(RunError):
    """The run's records are written but its summary files (failures.jsonl, facts.parquet, summary.json) are not."""


@dataclass
class RunOutcome:
    """What a run did: its summary.json contents, the tally, and whether it stopped early."""

    out: Path
    summary: dict[str, Any]
    tally: Tally
    interrupted: bool = False  # stopped by a signal after finishing what was in flight
    queued: int = 0  # documents that entered the correction queue

    @property
    def complete(self) -> bool:
        """Every input extracted (some perhaps for review): nothing failed, nothing left, no stop."""
        documents = self.summary["documents"]
        return not (self.interrupted or self.tally.stopped_by or documents["failed"] or documents["pending"])


def run(
    inputs: Sequence[str | Path],
    out: Path,
    backend: BackendName | str = BackendName.rules,
    llm: LLMConfig | None = None,
    *,
    workers: int | None = None,
    concurrency: int = 8,
    max_bytes: int = MAX_BYTES,
    doc_timeout: float | None = DOC_TIMEOUT,
    retry_failed: bool = False,
    queue: QueueSource | None = None,
    qa_rate: float = 0.0,
    batch_export: Path | None = None,
    on_update: Callable[[Tally], None] | None = None,
    notify: Notify | None = None,
    handle_signals: bool = False,
    engine: Engine | str = Engine.local,
    ray_address: str | None = None,
) -> RunOutcome:
    """Extract `inputs` (files, folders, globs, zip archives) into `out`. `backend` llm or hybrid needs
    `llm` settings (an LLMConfig; nothing is read from files or the environment here). With `queue`,
    documents failing validation (and `qa_rate` of passing ones) enter it (a function returning the
    queue is called only once the run is accepted). With `batch_export`, LLM
    requests are written there in Batch API format instead of sent. `handle_signals`: SIGINT/SIGTERM
    finish what is in flight, then stop (for command-line use; main thread only). `engine` ray works on
    the documents in a Ray cluster: the one at `ray_address` (else RAY_ADDRESS), or a local instance
    started for the run; `workers` is then its CPUs (default: all of them)."""
    if not inputs:
        raise RunError("no inputs: name files, folders, globs or zip archives to extract")
    on = _engine(engine, batch_export)
    chosen = BackendName(backend)
    if chosen is BackendName.auto:
        raise RunError("backend 'auto' is resolved by the caller (extractor.backends.choice.resolve_backend)")
    if batch_export is not None and chosen is BackendName.rules:
        raise RunError("batch export writes LLM requests: use it with backend llm or hybrid")
    say = notify or log.info
    if on is Engine.local:
        start_forkserver(chosen)
    step = prepare_step(chosen, llm or LLMConfig(), export=batch_export is not None, shared=on is Engine.local)
    manifest = open_output(out, fingerprint(step))
    writer: OutputWriter | None = None
    try:  # until _execute owns them, any failure (or Ctrl-C during a long listing) releases the folder
        export = _export_settings(manifest, step, batch_export) if batch_export is not None else None
        writer = open_writer(out, manifest, say, batch_export)  # a file this folder did not write is refused untouched
        if export is not None:
            manifest.remember("batch", export)  # only once the file is accepted
        manifest.forget_unread()  # inputs that could not be read are listed and read again
        if retry_failed and (reopened := manifest.reopen([Status.failed])):
            say(f"{reopened:,} documents that failed before will be tried again")
        listed = [str(given) for given in inputs]
        sources, total = discover(listed, skip=out), count(listed, skip=out)
        opened = queue() if callable(queue) else queue
    except BaseException:
        _release(manifest, writer)
        raise
    llm_run = chosen is not BackendName.rules and batch_export is None
    return _execute(
        out,
        manifest,
        writer,
        step,
        sources,
        total,
        workers,
        concurrency,
        max_bytes,
        doc_timeout,
        opened,
        qa_rate,
        None,
        on_update,
        say,
        handle_signals,
        llm_run,
        _ray_pool(step, workers, concurrency, ray_address, say) if on is Engine.ray else None,
    )


def import_batch(
    out: Path,
    results: Path,
    *,
    retry_failed: bool = False,
    workers: int | None = None,
    concurrency: int = 8,
    max_bytes: int = MAX_BYTES,
    doc_timeout: float | None = DOC_TIMEOUT,
    queue: QueueSource | None = None,
    qa_rate: float = 0.0,
    on_update: Callable[[Tally], None] | None = None,
    notify: Notify | None = None,
    handle_signals: bool = False,
) -> RunOutcome:
    """Answer the documents a `batch_export` run left waiting in `out` from the Batch API's RESULTS file:
    parsed, grounded and validated like live answers."""
    say = notify or log.info
    if not (out / MANIFEST).exists():
        raise RunError(
            f"{out} holds no run; export first: extractor run INPUT... --out {out} --backend llm --batch-export requests.jsonl"
        )
    probe = Manifest(out / MANIFEST)
    try:
        stored = probe.recall("batch")
    finally:
        probe.close()
    index, unreadable = index_results(results)
    if stored is None:
        raise RunError(f"no requests were exported from {out} (--batch-export)")
    if stored.get("code") != (now := code_version()):
        say(
            f"warning: exported with code {stored.get('code')}, importing with {now}: if the requests changed, their results will not be found"
        )
    # No re-asks: a batch answers only the requests it was given.
    settings = LLMConfig.model_validate(stored["llm"] | {"cache": "off", "reasks": 0, "feedback_reasks": 0})
    backend = BackendName(stored["backend"])
    start_forkserver(backend)
    step = prepare_step(backend, settings, results=BatchResults(results, index))
    manifest = open_output(out, fingerprint(step))
    writer: OutputWriter | None = None
    try:  # until _execute owns them, any failure releases the folder
        writer = open_writer(out, manifest, say)
        if retry_failed and (reopened := manifest.reopen([Status.failed], stage="batch", to=Status.exported)):
            say(f"{reopened:,} documents the batch could not answer before will be answered from {results}")
        root = stored.get("cwd", os.getcwd())
        sources = [
            source_of(ref, document_id, key, root)
            for key, ref, document_id, *_ in manifest.documents([Status.exported])
        ]
        say(f"{len(index):,} results in {results} for {len(sources):,} exported documents")
        if unreadable:
            lines = ", ".join(map(str, unreadable[:10])) + (" ..." if len(unreadable) > 10 else "")
            say(
                f"warning: {len(unreadable):,} lines are not Batch API results (lines {lines}); their requests go unanswered"
            )
        opened = queue() if callable(queue) else queue
    except BaseException:
        _release(manifest, writer)
        raise
    return _execute(
        out,
        manifest,
        writer,
        step,
        sources,
        len(sources),
        workers,
        concurrency,
        max_bytes,
        doc_timeout,
        opened,
        qa_rate,
        root,
        on_update,
        say,
        handle_signals,
        True,
    )


def prepare_step(
    chosen: BackendName,
    settings: LLMConfig,
    export: bool = False,
    results: BatchResults | None = None,
    shared: bool = True,
) -> Step:
    """The run's step; for LLM backends its client is made here once, so a bad prompt or a missing key
    is raised once (PromptError, EndpointError), not by every worker. `shared`: its rate limiter lives in
    memory this machine's worker processes share (the Ray engine keeps its own in an actor)."""
    if chosen is BackendName.rules:
        return Step(chosen)
    limiter = (
        RateLimiter(settings.rpm, settings.tpm, shared=shared)
        if (settings.rpm or settings.tpm) and not (export or results)
        else None
    )
    step = Step(chosen, settings, limiter, export=export, results=results)
    step.prepare()
    return step


def fingerprint(step: Step) -> dict[str, object]:
    """What must not change between runs into one folder: the backend, and the model and prompt."""
    if step.llm_config is None:
        return {"backend": step.backend.value}
    return {
        "backend": step.backend.value,
        "model": step.llm_config.model,
        "prompt": step.llm.prompt.name,
        "prompt_hash": step.llm.prompt.hash,
    }


def open_output(out: Path, fingerprint: dict[str, object]) -> Manifest:
    """The folder's manifest, locked for this run; RunError if it is a file, in use or holds another run."""
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} is a file; name a folder (it is created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(out / MANIFEST)
    except (ManifestError, OSError) as error:
        raise RunError(str(error)) from error
    try:
        manifest.check_settings(fingerprint)
    except ManifestError as error:
        manifest.close()
        raise RunError(str(error)) from error
    return manifest


def open_writer(out: Path, manifest: Manifest, notify: Notify, requests: Path | None = None) -> OutputWriter:
    try:
        writer = OutputWriter(out, manifest, requests)
    except (ManifestError, OSError) as error:
        raise RunError(str(error)) from error
    if writer.notice:
        notify(f"warning: {writer.notice}")
    return writer


def _export_settings(manifest: Manifest, step: Step, requests: Path) -> dict[str, Any] | None:
    """What the import must rebuild the same requests from (never the key), to be kept; None when
    kept already. A folder exports with one set of settings, to one file, from one working folder:
    a second export with others would make the first's requests unanswerable (RunError)."""
    assert step.llm_config is not None
    given = step.llm_config.prompt
    prompt = str(Path(given).resolve()) if Path(given).suffix == ".toml" else step.llm.prompt.name
    llm = step.llm_config.model_dump(mode="json", include=set(BATCH_SETTINGS)) | {"prompt": prompt}
    wanted = {"requests": str(requests.resolve()), "backend": step.backend.value, "cwd": os.getcwd(), "llm": llm}
    stored = manifest.recall("batch")
    if stored is not None:
        changed = [name for name in ("requests", "backend", "cwd") if stored.get(name) != wanted[name]]
        changed += [
            f"llm.{name}" for name in sorted(set(stored["llm"]) | set(llm)) if stored["llm"].get(name) != llm.get(name)
        ]
        if changed:
            said = "; ".join(f"{name}: {_dig(stored, name)!r} before, {_dig(wanted, name)!r} now" for name in changed)
            raise RunError(
                f"{manifest.path.parent} exported requests with other settings ({said}); export with the same ones, or choose another --out"
            )
        return None
    return wanted | {"code": code_version()}


def _dig(settings: dict[str, Any], dotted: str) -> Any:
    value: Any = settings
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _execute(
    out: Path,
    manifest: Manifest,
    writer: OutputWriter,
    step: Step,
    sources: Iterable[Source],
    total: int,
    workers: int | None,
    concurrency: int,
    max_bytes: int,
    doc_timeout: float | None,
    queue: Queue | None,
    qa_rate: float,
    root: str | None,
    on_update: Callable[[Tally], None] | None,
    say: Notify,
    handle_signals: bool,
    llm: bool,
    pool: Pool | None = None,
) -> RunOutcome:
    """Run the documents, then write failures.jsonl, facts.parquet and summary.json; the manifest is closed."""
    step.doc_timeout = doc_timeout or None
    feed = RunFeed(queue, qa_rate, f"run {out}", root) if queue is not None else None
    try:
        bulk = BulkRun(
            manifest, writer, step, workers or default_workers(), concurrency, max_bytes, feed=feed, pool=pool
        )
        if on_update is not None:
            bulk.on_update = on_update
        try:
            interrupted = _drive(bulk, sources, total, say, handle_signals)
        finally:
            writer.close()
        try:
            failed_inputs = write_failures(out, manifest)
            facts = _parquet(out, manifest.superseded(), say)
            summary = summarize(out, manifest, bulk.tally, failed_inputs, facts)
            write_summary(out, summary)
        except (OSError, sqlite3.Error) as error:
            raise SummaryError(f"the run's summary files cannot be written ({error}); its records are kept") from error
    finally:
        manifest.close()
    return RunOutcome(out, summary, bulk.tally, interrupted, feed.added if feed is not None else 0)


def _engine(engine: Engine | str, batch_export: Path | None) -> Engine:
    """The engine asked for, once it can run: Ray installed, and no Batch API export (that runs here)."""
    try:
        chosen = Engine(engine)
    except ValueError as error:
        raise RunError(f"no engine {engine!r}: choose {' or '.join(e.value for e in Engine)}") from error
    if chosen is Engine.ray:
        if batch_export is not None:
            raise RunError("--batch-export writes requests, it sends none: run it on the local engine")
        if importlib.util.find_spec("ray") is None:
            raise RunError(
                "the Ray engine needs Ray: pip install 'filing-extractor[ray]' (in a checkout: pip install -e '.[ray]')"
            )
    return chosen


def _ray_pool(step: Step, workers: int | None, concurrency: int, address: str | None, say: Notify) -> Pool:
    from extractor.bulk.engine_ray import RayPool  # imports ray: only for runs on it

    return RayPool(step, workers, concurrency, address or os.environ.get("RAY_ADDRESS") or None, say)


def _release(manifest: Manifest, writer: OutputWriter | None) -> None:
    """Close what a run opened before it could start, so the folder is free for the next one."""
    if writer is not None:
        writer.close()
    manifest.close()


def _drive(bulk: BulkRun, sources: Iterable[Source], total: int, say: Notify, handle_signals: bool) -> bool:
    """Run the event loop; True when stopped by a signal after finishing what was in flight."""
    interrupted = False

    async def main() -> None:
        nonlocal interrupted
        loop = asyncio.get_running_loop()

        def stop_after_in_flight(name: str) -> None:
            nonlocal interrupted
            interrupted = True
            bulk.tally.stopped_by = f"{name}: the inputs not reached wait for the next run"
            bulk.stop.set()
            say(f"\n{name}: finishing the documents in flight, then stopping (Ctrl-C again to stop at once)")
            for number in (signal.SIGINT, signal.SIGTERM):  # a second one acts as usual
                loop.remove_signal_handler(number)

        if handle_signals:
            loop.add_signal_handler(signal.SIGINT, stop_after_in_flight, "Ctrl-C")
            loop.add_signal_handler(signal.SIGTERM, stop_after_in_flight, "SIGTERM")
        try:
            await bulk.run(sources, total)
        except (OSError, sqlite3.Error, RuntimeError) as error:  # a full disk, a worker that cannot start
            bulk.tally.stopped_by = f"error: {error}"
            say(f"error: {error}")
            say("stopped: what was written is kept; run the same command again to go on")
        if bulk.endpoint_failure is not None:
            say(f"error: {bulk.endpoint_failure}")
            say("stopped: the endpoint cannot serve any document; the ones not finished stay pending for the next run")

    asyncio.run(main())
    return interrupted


def _parquet(out: Path, superseded: list[str], say: Notify) -> int | None:
    """facts.parquet from facts.csv; None (with a warning) if it cannot be written."""
    try:
        return write_parquet(out, superseded)
    except Exception as error:
        say(f"warning: {out / FACTS_PARQUET} not written ({error}); {out / FACTS_CSV} holds the same rows")
        return None
