"""Worker processes, each with its own event loop: the whole of a document's work happens in one.

Why processes with event loops, not a plain process pool: on the LLM path each document spends
~300 ms or more waiting on the endpoint and ~20 ms of CPU (the openai and instructor clients,
grounding quotes, validating). One process can wait on many requests at once, but its CPU caps it
at ~50 documents/s; a pool of synchronous workers would wait on one request each. So every worker
runs up to `concurrency` documents at once on its own loop, and the workers together use every core.

The main process only reads, hashes, hands out jobs (to the least busy worker) and writes. A
worker that dies (out of memory, a crash) is replaced; each document it held is tried once more
in a process of its own, so only the one that kills its worker fails.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from extractor.bulk.work import Job, Rendered, Stop, Step, failure, handle, ignore_interrupts

CONTEXT = get_context("forkserver")  # never fork a process that has threads
CONTEXT.set_forkserver_preload(["extractor.bulk.work"])  # imported once; each worker starts in milliseconds
DIED = "the worker process died working on it (out of memory, or a crash)"

Handler = Callable[[Job, Step], Any]  # async: a Job to its Rendered or Stop


@dataclass
class _Worker:
    process: Any
    jobs: Any  # multiprocessing queue of (ticket, Job) or None to finish
    results: Any  # multiprocessing queue of (ticket, Rendered | Stop)
    share: int  # documents it runs at once
    solo: bool = False  # started for one retried job
    closing: bool = False


class WorkerPool:
    """`await pool.run(job)`: the job's outcome, from the least busy worker.

    `concurrency` documents run at once in all, shared out between at most `count` workers.
    """

    def __init__(self, count: int, step: Step, concurrency: int, handler: Handler = handle) -> None:
        self.count = max(1, min(count, concurrency))
        self.step = step
        self.shares = [concurrency // self.count + (i < concurrency % self.count) for i in range(self.count)]
        self.handler = handler
        self._tickets = itertools.count()
        self._held: dict[int, dict[int, tuple[Job | None, asyncio.Future[Any], bool]]] = {}  # worker id -> ticket -> (job, future, retried)
        self._workers: dict[int, _Worker] = {}
        self._ids = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        """Start the workers and wait until each is ready (modules imported, clients made)."""
        self._loop = asyncio.get_running_loop()
        ready = [self._send(self._start(share), None, retried=False) for share in self.shares]
        await asyncio.gather(*ready)

    async def run(self, job: Job) -> Any:
        pool = [worker_id for worker_id, worker in self._workers.items() if not worker.solo and not worker.closing]
        chosen = min(pool, key=lambda worker_id: len(self._held[worker_id]) / self._workers[worker_id].share)
        return await self._send(chosen, job, retried=False)

    async def close(self) -> None:
        """Let every worker finish what it holds, then end it."""
        for worker in self._workers.values():
            worker.closing = True
            worker.jobs.put(None)
        while self._workers:
            await asyncio.sleep(0.02)

    def _send(self, worker_id: int, job: Job | None, retried: bool) -> asyncio.Future[Any]:
        """Hand a job to a worker (None: just say when you are ready)."""
        assert self._loop is not None
        future = self._loop.create_future()
        ticket = next(self._tickets)
        self._held[worker_id][ticket] = (job, future, retried)
        self._workers[worker_id].jobs.put((ticket, job) if job is not None else (ticket, "ready?"))
        return future

    def _start(self, share: int, solo: bool = False) -> int:
        worker_id = next(self._ids)
        jobs, results = CONTEXT.Queue(), CONTEXT.Queue()
        process = CONTEXT.Process(target=_serve, args=(self.step, share, self.handler, jobs, results, os.getpid()), daemon=True)
        process.start()
        self._workers[worker_id] = _Worker(process, jobs, results, share, solo)
        self._held[worker_id] = {}
        threading.Thread(target=self._listen, args=(worker_id,), daemon=True, name=f"worker-{worker_id}-results").start()
        return worker_id

    def _listen(self, worker_id: int) -> None:
        """In a thread: hand each result to the event loop; say when the worker has ended."""
        worker = self._workers[worker_id]
        assert self._loop is not None
        while True:
            try:
                ticket, outcome = worker.results.get(timeout=0.1)
            except queue.Empty:
                if worker.process.is_alive():
                    continue
                try:  # it ended: take what it sent before it did
                    ticket, outcome = worker.results.get(timeout=0.5)
                except (queue.Empty, EOFError, OSError):
                    self._loop.call_soon_threadsafe(self._ended, worker_id)
                    return
            except (EOFError, OSError):
                self._loop.call_soon_threadsafe(self._ended, worker_id)
                return
            self._loop.call_soon_threadsafe(self._deliver, worker_id, ticket, outcome)

    def _deliver(self, worker_id: int, ticket: int, outcome: Any) -> None:
        _, future, _ = self._held[worker_id].pop(ticket)
        if not future.done():
            future.set_result(outcome)
        worker = self._workers[worker_id]
        if worker.solo and not self._held[worker_id]:
            worker.closing = True
            worker.jobs.put(None)

    def _ended(self, worker_id: int) -> None:
        worker = self._workers.pop(worker_id)
        held = self._held.pop(worker_id)
        worker.process.join(timeout=1)
        for queue_ in (worker.jobs, worker.results):
            queue_.close()
        if not held:
            return
        if not worker.closing and not worker.solo:
            self._start(worker.share)  # a replacement, for the jobs still to come
        for job, future, retried in held.values():
            if future.done():
                continue
            if job is None:
                future.set_exception(RuntimeError("a worker process could not start; see the error above"))
            elif retried:
                future.set_result(failure(job, "extract", DIED))
            else:  # alone, so that only the job that kills its worker fails
                retry = self._send(self._start(1, solo=True), job, retried=True)
                retry.add_done_callback(lambda done, target=future: target.done() or target.set_result(done.result()))


def _serve(step: Step, concurrency: int, handler: Handler, jobs: Any, results: Any, parent: int) -> None:
    """A worker process: run jobs `concurrency` at a time until told to finish, or the parent is gone."""
    ignore_interrupts()
    asyncio.run(_serve_async(step, concurrency, handler, jobs, results, parent))


async def _serve_async(step: Step, concurrency: int, handler: Handler, jobs: Any, results: Any, parent: int) -> None:
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(concurrency)
    running: set[asyncio.Task[None]] = set()
    step.prepare()

    async def one(ticket: int, job: Job | str) -> None:
        try:
            results.put((ticket, "ready" if isinstance(job, str) else await handler(job, step)))
        finally:
            slots.release()

    while True:
        await slots.acquire()
        item = await loop.run_in_executor(None, _next_job, jobs, parent)
        if item is None:
            break
        task = asyncio.create_task(one(*item))
        running.add(task)
        task.add_done_callback(running.discard)
    if running:
        await asyncio.gather(*running)
    results.close()
    results.join_thread()


def _next_job(jobs: Any, parent: int) -> tuple[int, Job] | None:
    """The next job; None when told to finish, or when the main process has died (killed -9)."""
    while True:
        try:
            return jobs.get(timeout=0.5)
        except queue.Empty:
            if os.getppid() == 1 or not _alive(parent):
                return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["WorkerPool", "Rendered", "Stop"]
