"""Worker processes, each with its own event loop: the whole of a document's work happens in one.

Why processes with event loops, not a plain process pool: on the LLM path each document spends
~300 ms or more waiting on the endpoint and ~20 ms of CPU (validating, the openai and instructor
clients, grounding quotes, rendering). One process can wait on many requests at once, but its CPU
caps it at ~50 documents/s; a pool of synchronous workers would wait on one request each. So every
worker runs its share of the run's concurrency on its own loop, and the workers together use every core.

The share counts requests at the endpoint, not documents: a worker holds up to twice its share of
LLM documents, so that while `share` of them wait on the endpoint the others are read, prepared,
grounded and validated, and a request that ends is followed at once by the next document's. That
computing runs in one thread beside the loop (compute.py), so the loop sends and reads on time. A
run is then bound by the endpoint (concurrency / latency) as long as the CPU keeps up.

The main process only reads, hashes, hands out jobs (to the least busy worker) and writes. Jobs
and results travel over one-way pipes whose other ends each side closes, so when either side
dies the other reads end-of-file instead of waiting forever. A worker that dies (out of memory,
a crash) is replaced; each document it held is tried once more in a process of its own, so only
the one that kills its worker fails. A worker whose main process dies (kill -9) stops at once;
one that cannot start is not replaced (the run stops with the reason).

A document still running at its deadline (--doc-timeout) fails with the stage it was in: on the
LLM path the worker cancels it while it waits; a worker still computing at the deadline (the rules
on a pathological table: nothing else can interrupt it, and an LLM document waits for its
computation to end) is killed and replaced, the other documents it held are retried as above, and
the kill does not count as a death.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection
from typing import Any

from extractor.attempt import INTERNAL_ERROR
from extractor.backends.choice import BackendName
from extractor.bulk import work
from extractor.bulk.forkserver import CONTEXT, start_forkserver
from extractor.bulk.work import Job, Rendered, Step, Stop, failure, handle, overdue, work_on

DIED = "the worker process died working on it (out of memory, or a crash)"
READY = "ready?"  # the first message to every worker: answered once it can take jobs
STARTED = "started"  # a worker's word that it began a job (its time limit runs from then)
MAX_DEATHS_IN_A_ROW = 8  # workers dying with no answer in between: something kills every one; stop replacing
KILL_GRACE = (
    10.0  # seconds past the deadline before a worker that waits (LLM) is killed: it cancels the document itself
)
STAGE_BYTES = 16
DOCUMENTS_PER_REQUEST = 2  # LLM documents a worker holds per request it may have at the endpoint
YOUNG_OBJECTS = 20_000  # objects made between two collections of the youngest generation (Python's default: 700)
# How long the computing thread (compute.py) may keep the interpreter while the event loop waits for it
# (Python's default: 5 ms). Each answer read and request sent takes the loop several turns, each after a
# socket call that let go of the interpreter: at 5 ms a turn, a 300 ms request took ~400 ms (median, 32 at
# once on 2 cores); at 0.2 ms, ~350 ms, and 65 -> 80 documents/s in the same runs.
SWITCH_SECONDS = 0.0002


Handler = Callable[[Job, Step], Any]  # async: a Job to its Rendered or Stop


@dataclass
class _Worker:
    process: Any
    outbox: queue.Queue[tuple[int, Job | str] | None]  # drained into the worker's job pipe by a sender thread
    share: int  # requests it has at the endpoint at once
    capacity: int  # documents it holds at once
    stage: Any  # shared bytes: the stage its current document is in (work.enter)
    solo: bool = False  # started for one retried job
    closing: bool = False
    on_probation: bool = False  # a first worker, until it answers the ready check
    overdue: bool = False  # killed at a document's deadline: not a death


class WorkerPool:
    """`await pool.run(job)`: the job's outcome, from the least busy worker.

    `concurrency` requests at once in all (documents on the rules backend), shared out between at most
    `count` workers; an LLM worker holds twice its share of documents (see the module's docstring).
    """

    def __init__(self, count: int, step: Step, concurrency: int, handler: Handler = handle) -> None:
        self.count = max(1, min(count, concurrency))
        self.step = step
        self.shares = shares(concurrency, self.count)
        self.per_request = 1 if step.backend is BackendName.rules else DOCUMENTS_PER_REQUEST
        self.handler = handler
        self._tickets = itertools.count()
        self._held: dict[
            int, dict[int, tuple[Job | None, asyncio.Future[Any], bool]]
        ] = {}  # worker -> ticket -> (job, future, retried)
        self._workers: dict[int, _Worker] = {}
        self._ids = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deaths_in_a_row = 0  # workers that died since one last answered
        self._killed = False

    async def start(self) -> None:
        """Start the workers and wait until each is ready (modules imported, clients made)."""
        self._loop = asyncio.get_running_loop()
        await asyncio.gather(
            *(self._send(self._start(share, on_probation=True), None, retried=False) for share in self.shares)
        )

    async def run(self, job: Job) -> Any:
        pool = [
            worker_id
            for worker_id, worker in self._workers.items()
            if not (worker.solo or worker.closing or worker.overdue)
        ]
        if not pool:
            raise RuntimeError(
                f"no worker process stays alive ({MAX_DEATHS_IN_A_ROW} died in a row); see the errors above"
            )
        chosen = min(pool, key=lambda worker_id: len(self._held[worker_id]) / self._workers[worker_id].capacity)
        return await self._send(chosen, job, retried=False)

    async def close(self) -> None:
        """Let every worker finish what it holds, then end it."""
        for worker in self._workers.values():
            worker.closing = True
            worker.outbox.put(None)
        while self._workers:
            await asyncio.sleep(0.02)

    def kill(self) -> None:
        """End every worker now, whatever it holds (a second Ctrl-C, an error): workers ignore the
        SIGTERM that would end them at exit, so they are killed."""
        self._killed = True
        for worker in list(self._workers.values()):
            worker.closing = True
            if worker.process.is_alive():
                worker.process.kill()

    def _send(self, worker_id: int, job: Job | None, retried: bool) -> asyncio.Future[Any]:
        """Hand a job to a worker (None: just say when you are ready)."""
        assert self._loop is not None
        future = self._loop.create_future()
        ticket = next(self._tickets)
        self._held[worker_id][ticket] = (job, future, retried)
        self._workers[worker_id].outbox.put((ticket, job if job is not None else READY))
        return future

    def _started(self, worker_id: int, ticket: int) -> None:
        """The worker began the job (it may have waited behind another): its time starts now."""
        held = self._held.get(worker_id, {}).get(ticket)
        if held is None or self.step.doc_timeout is None:
            return
        assert self._loop is not None
        deadline = self.step.doc_timeout + (0 if self.step.backend is BackendName.rules else KILL_GRACE)
        timer = self._loop.call_later(deadline, self._overdue, worker_id, ticket)
        held[1].add_done_callback(lambda _: timer.cancel())

    def _overdue(self, worker_id: int, ticket: int) -> None:
        """A job past its deadline: fail it with the stage it is in, and kill the worker computing it."""
        worker, held = self._workers.get(worker_id), self._held.get(worker_id, {}).get(ticket)
        if worker is None or held is None or held[1].done():
            return
        job, future, _ = held
        assert job is not None and self.step.doc_timeout is not None
        stage = worker.stage.value.decode("ascii", "replace") or "extract"
        future.set_result(failure(job, stage, overdue(self.step.doc_timeout), self.step.doc_timeout))
        worker.overdue = True
        worker.process.kill()  # _ended replaces it and retries what else it held

    @property
    def capacities(self) -> list[int]:
        """Documents each worker holds at once."""
        return [self._capacity(share) for share in self.shares]

    def _capacity(self, share: int) -> int:
        """Documents a worker with `share` requests at the endpoint holds at once."""
        return share * self.per_request

    def _start(self, share: int, solo: bool = False, on_probation: bool = False) -> int:
        worker_id = next(self._ids)
        jobs_in, jobs_out = CONTEXT.Pipe(duplex=False)
        results_in, results_out = CONTEXT.Pipe(duplex=False)
        stage = CONTEXT.Array("c", STAGE_BYTES, lock=False)
        capacity = self._capacity(share)
        process = CONTEXT.Process(
            target=_serve,
            args=(self.step, share, capacity, self.handler, jobs_in, results_out, os.getpid(), stage),
            daemon=True,
        )
        start_forkserver(self.step.backend)
        process.start()
        jobs_in.close()  # the worker's ends: closed here, so its death reads as end-of-file
        results_out.close()
        self._workers[worker_id] = _Worker(
            process, queue.Queue(), share, capacity, stage, solo, on_probation=on_probation
        )
        self._held[worker_id] = {}
        threading.Thread(target=_sender, args=(self._workers[worker_id].outbox, jobs_out), daemon=True).start()
        threading.Thread(target=self._listen, args=(worker_id, results_in), daemon=True).start()
        return worker_id

    def _listen(self, worker_id: int, results: Connection) -> None:
        """In a thread: hand each result to the event loop; say when the worker has ended."""
        assert self._loop is not None
        while True:
            try:
                message: tuple[int, Any] | None = results.recv()
            except (EOFError, OSError):  # the worker ended, or died (perhaps halfway through a message)
                message = None
            try:
                if message is None:
                    results.close()
                    self._loop.call_soon_threadsafe(self._ended, worker_id)
                    return
                self._loop.call_soon_threadsafe(self._deliver, worker_id, *message)
            except RuntimeError:  # the event loop is closed: the run is over, nobody is listening
                return

    def _deliver(self, worker_id: int, ticket: int, outcome: Any) -> None:
        if isinstance(outcome, str) and outcome == STARTED:
            self._started(worker_id, ticket)
            return
        _, future, _ = self._held[worker_id].pop(ticket)
        if not future.done():
            future.set_result(outcome)
        worker = self._workers[worker_id]
        worker.on_probation = False
        self._deaths_in_a_row = 0
        if worker.solo and not self._held[worker_id]:
            worker.closing = True
            worker.outbox.put(None)

    def _ended(self, worker_id: int) -> None:
        worker = self._workers.pop(worker_id)
        held = self._held.pop(worker_id)
        worker.outbox.put(None)  # ends its sender thread
        worker.process.join(timeout=1)
        if worker.on_probation:  # it never started: a replacement would fail the same way, forever
            for _, future, _ in held.values():
                if not future.done():
                    future.set_exception(
                        RuntimeError(
                            f"a worker process could not start (exit code {worker.process.exitcode}); see the error above"
                        )
                    )
            return
        if self._killed or (worker.closing and not worker.solo):  # closed or killed: what it held stays pending
            for _, future, _ in held.values():
                future.cancel()
            return
        self._deaths_in_a_row += 0 if worker.solo or worker.overdue else 1
        try:
            if not worker.closing and not worker.solo and self._deaths_in_a_row <= MAX_DEATHS_IN_A_ROW:
                self._start(worker.share)  # a replacement, for the jobs still to come
            for job, future, retried in held.values():
                if future.done() or job is None:
                    continue
                if retried:
                    future.set_result(failure(job, "extract", DIED))
                else:  # alone, so that only the job that kills its worker fails
                    retry = self._send(self._start(1, solo=True), job, retried=True)
                    retry.add_done_callback(partial(_settle_with, future))
        except OSError as error:  # no process can be started (too many open files, no memory)
            for job, future, _ in held.values():
                if not future.done() and job is not None:
                    future.set_result(
                        failure(job, "extract", f"{DIED}; no process could be started to retry it ({error})")
                    )


def shares(concurrency: int, count: int) -> list[int]:
    """`concurrency` requests at the endpoint shared out as evenly as can be between `count` workers."""
    return [concurrency // count + (i < concurrency % count) for i in range(count)]


def _settle_with(target: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    """Give `target` the result of `done`, its retry, unless it was settled meanwhile."""
    if not target.done():
        target.set_result(done.result())


def _sender(outbox: queue.Queue[tuple[int, Job | str] | None], jobs: Connection) -> None:
    """In a thread: write jobs into a worker's pipe (a big document can take a while); None ends it."""
    try:
        while (item := outbox.get()) is not None:
            jobs.send(item)
    except OSError:  # the worker died: its jobs are retried by _ended
        pass
    finally:
        jobs.close()


def _serve(
    step: Step,
    share: int,
    capacity: int,
    handler: Handler,
    jobs: Connection,
    results: Connection,
    parent: int,
    stage: Any,
) -> None:
    """A worker process: run jobs `capacity` at a time, with at most `share` requests at the endpoint,
    until the main process says finish or is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C and SIGTERM reach the whole process group:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the main process decides, and finishes what is in flight

    def say(name: str) -> None:
        stage.value = name.encode("ascii", "replace")[: STAGE_BYTES - 1]

    work.process_stage = say
    asyncio.run(_serve_async(step, share, capacity, handler, jobs, results, parent))


async def _serve_async(
    step: Step, share: int, capacity: int, handler: Handler, jobs: Connection, results: Connection, parent: int
) -> None:
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(capacity)
    running: set[asyncio.Task[None]] = set()
    step.prepare(requests=share)
    settle(step)

    async def one(ticket: int, job: Job | str) -> None:
        try:
            if isinstance(job, str):
                outcome: Any = "ready"
            else:
                if step.doc_timeout is not None:
                    results.send((ticket, STARTED))
                outcome = await work_on(job, step, handler)
            try:
                results.send((ticket, outcome))
            except OSError:
                raise
            except Exception as error:
                assert isinstance(job, Job)
                results.send((ticket, failure(job, "extract", INTERNAL_ERROR.format(error=repr(error)))))
        except OSError:  # the main process is gone: nobody wants the rest
            os._exit(0)
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
    if not _alive(parent):
        os._exit(0)  # killed -9: stop spending on documents no one will write
    if running:
        await asyncio.gather(*running)
    results.close()


def settle(step: Step) -> None:
    """Set a worker process's interpreter for its documents (local workers and Ray actors alike): collect_less,
    and where documents compute in a thread beside the event loop (the LLM client's, compute.py), a switch
    interval of SWITCH_SECONDS, so the loop reads answers and sends requests on time. Rules workers compute on
    the loop: no thread waits on them."""
    collect_less()
    if step.llm_config is not None:
        sys.setswitchinterval(SWITCH_SECONDS)


def collect_less() -> None:
    """Cyclic garbage collection sized for a worker's documents. What the worker holds from start-up (modules,
    clients, schemas: ~200,000 objects) is never garbage, yet every full collection walked it again (~3 ms of
    CPU per LLM document): frozen, collections skip it. And a document's parse makes tens of thousands of
    objects, nearly all freed by reference counting: a young generation of 20,000 instead of 700 collects
    a tenth as often (~0.8 ms less per document), holding a few MB more at most."""
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


def _watch(parent: int) -> None:
    """In a thread: end the worker at once when the main process is gone (killed -9), even in the
    middle of documents: nobody would write them, and LLM requests cost money."""
    while _alive(parent):
        time.sleep(0.5)
    os._exit(0)


def _next_job(jobs: Connection, parent: int) -> tuple[int, Job | str] | None:
    """The next job; None when the main process says finish (closes the pipe), or has died."""
    while True:
        try:
            if jobs.poll(0.5):
                return jobs.recv()
        except (EOFError, OSError):
            return None
        if not _alive(parent):
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
