"""A bulk run: inputs streamed to worker processes, one writer, a manifest to resume from.

    sources ─► read + hash (a thread) ─► manifest: finished already? skip
                                        └► worker processes (workers.py): load, extract, validate, render
                                                                         ─► the writer ─► files, then manifest

At most `window` documents are between reading and writing, so memory does not grow with the
corpus. Setting `stop` (Ctrl-C) ends reading; what is in flight is finished and written. Nothing
here needs a clean exit to stay consistent: see manifest.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from extractor.backends.choice import BackendName
from extractor.bulk.manifest import Manifest, Status
from extractor.bulk.outputs import OutputWriter
from extractor.bulk.sources import Source, read
from extractor.bulk.work import Job, Rendered, Step, Stop, failure
from extractor.bulk.workers import WorkerPool
from extractor.document import LoadError
from extractor.llm.usage import Usage


class Pool(Protocol):
    """Where documents are worked on: the local worker processes (workers.py) or a Ray cluster (engine_ray.py).
    `count` and `capacities` (documents each worker holds at once) are known once `start` has returned."""

    count: int

    @property
    def capacities(self) -> list[int]: ...

    async def start(self) -> None: ...

    async def run(self, job: Job) -> Rendered | Stop: ...

    async def close(self) -> None: ...

    def kill(self) -> None: ...


@dataclass
class Tally:
    """What this run did so far: what the progress bar shows and the summary adds up."""

    total: int = 0  # inputs listed
    seen: int = 0  # inputs taken from the list
    skipped: int = 0  # finished by an earlier run
    duplicates: int = 0  # same content as another input of this run
    written: dict[Status, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)  # when the workers were ready
    ended: float | None = None  # when the last document was written (before the workers are shut down)
    startup_seconds: float = 0.0  # starting the workers (imports, LLM clients)
    stopped_by: str | None = None  # why the run ended before its inputs did

    @property
    def failed(self) -> int:
        return self.written.get(Status.failed, 0)

    @property
    def finished(self) -> int:
        return sum(self.written.values())

    @property
    def handled(self) -> int:
        """Inputs done with in this run, one way or another (for the progress bar)."""
        return self.skipped + self.duplicates + self.finished

    @property
    def elapsed(self) -> float:
        """Seconds spent on documents: from the workers' start-up to the last one written."""
        return (self.ended or time.monotonic()) - self.started


class BulkRun:
    """Run `step` over sources into the folder of `manifest` and `writer`."""

    def __init__(
        self,
        manifest: Manifest,
        writer: OutputWriter,
        step: Step,
        workers: int,
        concurrency: int,
        max_bytes: int,
        on_update: Callable[[Tally], None] = lambda tally: None,
        feed: Callable[[list[Rendered]], None] | None = None,
        pool: Pool | None = None,
    ) -> None:
        self.manifest = manifest
        self.feed = feed  # the correction queue's intake: called before the commit, so nothing is lost
        self.writer = writer
        self.step = step
        self.max_bytes = max_bytes
        self.on_update = on_update
        self.tally = Tally()
        self.stop = asyncio.Event()
        self.pool: Pool
        if pool is not None:
            self.pool = pool
        elif step.backend is BackendName.rules:  # CPU-bound: one document at a time per worker
            self.pool = WorkerPool(workers, step, concurrency=workers)
        else:  # the LLM waits: `concurrency` requests at once in all, shared out between the workers
            self.pool = WorkerPool(workers, step, concurrency=concurrency)
        self.window = 0  # documents between reading and writing: set once the pool has started
        self._seen: set[str] = set()
        self._stop_message: str | None = None
        self._slots = asyncio.Semaphore(0)  # a document holds one from reading until it is written

    async def run(self, sources: Iterable[Source], total: int) -> Tally:
        """Extract every source not finished before; raises nothing for a bad document."""
        self.tally.total = total
        queue: asyncio.Queue[Rendered | None] = asyncio.Queue()
        writer = asyncio.create_task(self._write(queue))
        writer.add_done_callback(self._writer_ended)
        tasks: set[asyncio.Task[None]] = set()
        try:
            await self.pool.start()
            self.window = sum(self.pool.capacities) + self.pool.count  # and one more waiting in each worker
            self._slots = slots = asyncio.Semaphore(self.window)
            self.tally.startup_seconds = time.monotonic() - self.tally.started
            self.tally.started = time.monotonic()
            for source in sources:
                await slots.acquire()
                if self.stop.is_set():
                    slots.release()
                    break
                self.tally.seen += 1
                job = await asyncio.to_thread(self._read, source)
                if isinstance(job, Rendered):  # could not be read: a failure record, no worker needed
                    self.manifest.saw(source.ref, job.finished.key, source.document_id)
                    await queue.put(job)
                elif not self._admit(job):
                    slots.release()
                    self.on_update(self.tally)
                else:
                    task = asyncio.create_task(self._process(job, queue))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        except BaseException:  # a second Ctrl-C, a worker that cannot start: do not wait on workers
            self.pool.kill()
            raise
        finally:
            await queue.put(None)
            try:
                await writer  # raises what stopped the writer (a full disk, say): the CLI says it
            finally:
                self.tally.ended = time.monotonic()  # shutting workers down (a Ray instance: a second) is no work
                await self.pool.close()
        return self.tally

    def _writer_ended(self, writer: asyncio.Task[None]) -> None:
        """If the writer fails, stop reading and free every slot: nothing more can be written."""
        if not writer.cancelled() and writer.exception() is not None:
            self.stop.set()
            for _ in range(self.window):
                self._slots.release()

    def _read(self, source: Source) -> Job | Rendered:
        """The source's bytes and their hash (in a thread: a big file must not hold up the loop)."""
        try:
            data = read(source, self.max_bytes)
        except LoadError as error:
            return failure(
                Job(source.expected or f"unread:{source.ref}", source.ref, source.document_id, b""),
                "read",
                error.reason,
            )
        key = hashlib.sha256(data).hexdigest()
        if source.expected is not None and key != source.expected:
            reason = "the file changed since its requests were exported; export it again, or extract it live"
            return failure(Job(source.expected, source.ref, source.document_id, b""), "read", reason)
        return Job(key, source.ref, source.document_id, data)

    def _admit(self, job: Job) -> bool:
        """Record the input; False when its document is finished already or had another name this run."""
        self.manifest.saw(job.ref, job.key, job.document_id)
        if job.key in self._seen:
            self.tally.duplicates += 1
            return False
        self._seen.add(job.key)
        status = self.manifest.status(job.key)
        if status is not None and (status.finished or (status is Status.exported and self.step.export)):
            self.tally.skipped += 1
            return False
        return True

    async def _process(self, job: Job, queue: asyncio.Queue[Rendered | None]) -> None:
        try:
            outcome = await self.pool.run(job)
        except BaseException:
            self._slots.release()
            raise
        if isinstance(outcome, Stop):  # no document will fare better: stop reading, leave this one pending
            self._slots.release()
            if self.tally.stopped_by is None:
                self.tally.stopped_by = f"the endpoint cannot serve: {outcome.message}"
                self._stop_message = outcome.message
            self.stop.set()
            return
        await queue.put(outcome)

    @property
    def endpoint_failure(self) -> str | None:
        """Why the endpoint could not serve, when that stopped the run."""
        return self._stop_message

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
            lengths = await asyncio.to_thread(
                self.writer.append, [(item.record, item.facts, item.requests) for item in ready]
            )
            if self.feed is not None:
                await asyncio.to_thread(self.feed, ready)
            self.manifest.commit([item.finished for item in ready], lengths)
            for _ in ready:
                self._slots.release()
            for item in ready:
                status = item.finished.status
                self.tally.written[status] = self.tally.written.get(status, 0) + 1
                if item.usage:
                    self.tally.usage.add(Usage.model_validate(item.usage))
            self.on_update(self.tally)


def default_workers() -> int:
    """One worker process per core: the LLM step waits concurrently inside each worker."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
