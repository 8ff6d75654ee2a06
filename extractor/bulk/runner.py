"""A bulk run: inputs streamed through a process pool and the LLM, one writer, a manifest to resume.

One asyncio event loop drives everything:

    sources ─► read + hash (thread) ─► manifest: finished? skip ─► process pool: load, rules, validate
                                                                   └► LLM step (async, ≤ concurrency at once,
                                                                      rate-limited) ─► pool: validate, render
                                                                                            ─► writer ─► files + manifest

At most `window` documents are between reading and writing at any time, so memory does not grow
with the corpus. Stopping (`stop` set, e.g. by Ctrl-C) ends reading; what is in flight is finished
and written. Nothing here needs a clean exit to stay consistent: see manifest.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from extractor.backends import hybrid
from extractor.backends.choice import BackendName
from extractor.backends.llm import LLMBackend
from extractor.bulk.manifest import Manifest, Status
from extractor.bulk.outputs import OutputWriter
from extractor.bulk.sources import Source, read
from extractor.bulk.work import Job, Loaded, Rendered, failure, finish, ignore_interrupts, load_job, run_rules
from extractor.document import LoadError
from extractor.extraction import Extraction
from extractor.llm.client import EndpointError, LLMError
from extractor.llm.usage import Usage


@dataclass
class Tally:
    """What this run did so far: what the progress bar shows and the summary adds up."""

    total: int = 0  # inputs listed
    seen: int = 0  # inputs taken from the list
    skipped: int = 0  # finished by an earlier run
    duplicates: int = 0  # same content as another input of this run
    written: dict[Status, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)
    stopped_by: str | None = None  # why the run ended before its inputs did

    @property
    def failed(self) -> int:
        return self.written.get(Status.failed, 0)

    @property
    def finished(self) -> int:
        return sum(self.written.values())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass
class Step:
    """How a document is extracted: a worker function, and the LLM step (None for rules)."""

    backend: BackendName
    llm: LLMBackend | None = None

    async def extract(self, loaded: Loaded) -> Extraction:
        """The LLM step; LLMError (not EndpointError) for this document alone."""
        assert self.llm is not None
        if loaded.planned is None:
            return await self.llm.aextract(loaded.document)
        try:
            asked: Extraction | LLMError = await self.llm.aextract(loaded.document, only=loaded.planned.parts)
        except EndpointError:
            raise
        except LLMError as error:
            asked = error
        return hybrid.combine(loaded.planned, asked)


class BulkRun:
    """Run `step` over `sources` into the folder of `manifest` and `writer`."""

    def __init__(
        self,
        manifest: Manifest,
        writer: OutputWriter,
        step: Step,
        workers: int,
        concurrency: int,
        max_bytes: int,
        on_update: Callable[[Tally], None] = lambda tally: None,
    ) -> None:
        self.manifest = manifest
        self.writer = writer
        self.step = step
        self.workers = workers
        self.concurrency = concurrency
        self.max_bytes = max_bytes
        self.on_update = on_update
        self.tally = Tally()
        self.stop = asyncio.Event()
        self.window = max(2 * max(workers, 1), concurrency + max(workers, 1))  # documents between read and write
        self._pool: Executor | None = None
        self._llm_slots = asyncio.Semaphore(concurrency)
        self._in_flight: set[str] = set()
        self._seen: set[str] = set()
        self._endpoint_error: EndpointError | None = None

    async def run(self, sources: Iterable[Source], total: int) -> Tally:
        self.tally.total = total
        queue: asyncio.Queue[Rendered | None] = asyncio.Queue()
        writer = asyncio.create_task(self._write(queue))
        slots = asyncio.Semaphore(self.window)
        tasks: set[asyncio.Task[None]] = set()
        self._pool = self._make_pool()
        try:
            for source in sources:
                await slots.acquire()
                if self.stop.is_set():
                    slots.release()
                    break
                self.tally.seen += 1
                job = await asyncio.to_thread(self._read, source)
                if isinstance(job, Rendered):
                    self.manifest.saw(source.ref, job.finished.key, source.document_id)
                    await queue.put(job)
                    slots.release()
                    continue
                if not self._admit(job):
                    slots.release()
                    self.on_update(self.tally)
                    continue
                task = asyncio.create_task(self._process(job, queue))
                tasks.add(task)
                task.add_done_callback(lambda done: (tasks.discard(done), slots.release()))
            if tasks:
                await asyncio.gather(*tasks)
        finally:
            await queue.put(None)
            await writer
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._endpoint_error is not None:
            raise self._endpoint_error
        return self.tally

    def _make_pool(self, workers: int | None = None) -> Executor:
        if self.workers == 0:  # in-process (one thread): for debugging, and runs of a few files
            return ThreadPoolExecutor(1)
        return ProcessPoolExecutor(workers or self.workers, mp_context=get_context("forkserver"), initializer=ignore_interrupts)

    def _read(self, source: Source) -> Job | Rendered:
        """The source's bytes and their hash (in a thread: big files must not block the LLM step)."""
        try:
            data = read(source, self.max_bytes)
        except LoadError as error:
            job = Job(f"unread:{source.ref}", source.ref, source.document_id, b"")
            return failure(job, "read", error.reason)
        return Job(hashlib.sha256(data).hexdigest(), source.ref, source.document_id, data)

    def _admit(self, job: Job) -> bool:
        """Record the input; False when its document is finished already or in flight."""
        self.manifest.saw(job.ref, job.key, job.document_id)
        if job.key in self._seen:
            self.tally.duplicates += 1
            return False
        self._seen.add(job.key)
        status = self.manifest.status(job.key)
        if status is not None and status.finished:
            self.tally.skipped += 1
            return False
        return True

    async def _process(self, job: Job, queue: asyncio.Queue[Rendered | None]) -> None:
        try:
            rendered = await self._extract(job)
        except EndpointError as error:  # no document will fare better: stop reading, keep this one pending
            if self._endpoint_error is None:
                self._endpoint_error = error
                self.tally.stopped_by = f"the endpoint cannot serve: {error}"
            self.stop.set()
            return
        await queue.put(rendered)

    async def _extract(self, job: Job) -> Rendered:
        if self.step.backend is BackendName.rules:
            return await self._in_pool(run_rules, job)
        loaded = await self._in_pool(load_job, job, self.step.backend is BackendName.hybrid)
        if isinstance(loaded, Rendered):
            return loaded
        async with self._llm_slots:
            if self.stop.is_set() and self._endpoint_error is not None:
                raise self._endpoint_error
            started = time.perf_counter()
            try:
                extraction = await self.step.extract(loaded)
            except EndpointError:
                raise
            except LLMError as error:
                usage = error.usage.model_dump(mode="json") if error.usage else None
                return failure(job, "extract", str(error), time.perf_counter() - started, usage)
        loaded.timing["extract_seconds"] = time.perf_counter() - started
        return await self._in_pool(finish, loaded, extraction)

    async def _in_pool(self, function: Callable[..., Any], job: Job | Loaded, *args: Any) -> Any:
        """Run a worker function. When a worker dies (out of memory, a crash), every job in the pool
        fails with it: each is tried once more alone, so only the one that kills its worker fails."""
        pool = self._pool
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(pool, function, job, *args)
        except BrokenProcessPool:
            if self._pool is pool:  # the first to notice replaces the pool for everyone
                self._pool = self._make_pool()
                if pool is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
        alone = self._make_pool(1)
        try:
            return await loop.run_in_executor(alone, function, job, *args)
        except BrokenProcessPool:
            plain = job.job if isinstance(job, Loaded) else job
            return failure(plain, "load", "the worker process died reading it (out of memory, or a crash)")
        finally:
            alone.shutdown(wait=False)

    async def _write(self, queue: asyncio.Queue[Rendered | None]) -> None:
        """The one writer: takes what is ready, appends it, commits it; the manifest says what is final."""
        done = False
        while not done:
            batch = [await queue.get()]
            while not queue.empty() and len(batch) < 512:
                batch.append(queue.get_nowait())
            done = None in batch
            ready = [item for item in batch if item is not None]
            if not ready:
                continue
            self.writer.write([(item.finished, item.record, item.facts) for item in ready])
            for item in ready:
                status = item.finished.status
                self.tally.written[status] = self.tally.written.get(status, 0) + 1
                if item.usage:
                    self.tally.usage.add(Usage.model_validate(item.usage))
            self.on_update(self.tally)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
