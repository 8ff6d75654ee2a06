"""The Ray engine (`extractor run --engine ray`): documents worked on in a Ray cluster, the rest as before.

One writer of record. This process (Ray's driver) lists, reads and hashes the inputs, keeps the
manifest and writes every output, as with the local engine (runner.py). Only a document's work (load,
extract, validate, render: work.py) runs in the cluster, and its outcome comes back here to be
committed. A document is committed once, here, whatever fails over there: a task whose worker dies is
tried again, and a driver killed with SIGKILL leaves uncommitted documents pending for the next run,
as with the local engine.

Document bytes travel with the work: each document's bytes are the argument of its task, which Ray
carries to whichever node runs it through its object store. Workers need no shared filesystem, and
at most the run's window of documents (a few per CPU) is in the object store at once.

- Rules: one Ray task per document, one CPU each, handed to Ray only when a CPU is free, so its time
  limit (--doc-timeout) runs from its start. Ray retries a task whose worker dies once; a document
  that kills its worker twice fails. At its time limit the task is cancelled with force (Ray kills
  the worker computing it) and the document fails.
- LLM and hybrid: one async actor per worker (one CPU each), holding its share of --concurrency and
  an LLM client made once. A document whose actor dies (Ray restarts the actor) is tried once more
  in a task of its own, so that only a document that kills its worker fails, as on one machine.
  --rpm/--tpm hold for the whole cluster: one small actor keeps the run's rate limits.
- Without an address (--ray-address, or RAY_ADDRESS as `ray job submit` sets it), a local Ray
  instance is started for the run, one CPU per --workers, and shut down afterwards; a watcher
  (reaper.py) ends it if this process is killed. With one, the run joins that cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import ray
from ray import exceptions as ray_errors

from extractor.attempt import INTERNAL_ERROR
from extractor.backends.choice import BackendName
from extractor.bulk.reaper import DONE
from extractor.bulk.runner import default_workers
from extractor.bulk.work import Job, Rendered, Step, Stop, failure, overdue, run_rules, work_on
from extractor.bulk.workers import DIED, DOCUMENTS_PER_REQUEST, KILL_GRACE, settle, shares
from extractor.code_version import source_hash
from extractor.errors import ExtractorError
from extractor.llm.limits import RateLimiter

# A worker ended by the system or the cluster, not by the document's own code: worth another try.
_LOST = (
    ray_errors.RayActorError,
    ray_errors.WorkerCrashedError,
    ray_errors.NodeDiedError,
    ray_errors.ObjectLostError,
    ray_errors.OutOfMemoryError,
)


SOLO_AT_ONCE = 2  # documents of dead actors tried again at once: each takes a worker process of its own
READY_SECONDS = 300.0  # the LLM actors' start: longer means the cluster has no free CPU for them


class ClusterError(ExtractorError, RuntimeError):
    """The cluster cannot run this run's documents (another version of the code on its workers, an address
    where nothing answers): the run stops with the reason, its documents left pending."""


class LimiterActor:
    """The run's --rpm and --tpm, kept in one place for every worker of the cluster (one clock too)."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None) -> None:
        self.limiter = RateLimiter(requests_per_minute, tokens_per_minute)

    def try_pass(self, tokens: int) -> float:
        return self.limiter.try_pass(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        self.limiter.settle(estimated, actual)


class ClusterRateLimiter(RateLimiter):
    """A RateLimiter whose budgets live in a LimiterActor: each request asks it whether it may pass.
    Each worker still lines its own requests up (limits.py), so only the head of a line asks. It travels
    by the actor's name, not its handle: an actor restarted by Ray rebuilds its arguments, and a handle
    among them would have to be kept in the object store."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self._actor: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"])  # type: ignore[misc]

    @property
    def actor(self) -> Any:
        if self._actor is None:
            self._actor = ray.get_actor(self.name)
        return self._actor

    @property
    def active(self) -> bool:
        return True

    def try_pass(self, tokens: int) -> float:
        return float(ray.get(self.actor.try_pass.remote(tokens)))

    async def ask(self, tokens: int) -> float:
        return float(await self.actor.try_pass.remote(tokens))

    def settle(self, estimated: int, actual: int) -> None:
        if actual != estimated:
            self.actor.settle.remote(estimated, actual)  # nothing waits for it


class LLMWorker:
    """An async actor: up to its capacity of documents at once, with its share of requests at the endpoint."""

    def __init__(self, step: Step, share: int) -> None:
        self.step = step
        step.prepare(requests=share)
        settle(step)  # as a local worker: start-up's objects frozen, fewer young collections, a short switch interval

    async def ready(self) -> str:
        return source_hash()

    async def work(self, job: Job) -> Rendered | Stop:
        return await work_on(job, self.step)


def _solo(step: Step, job: Job) -> Rendered | Stop:
    """A document whose actor died, tried once more alone: only a document that kills its worker fails."""
    step.prepare(requests=1)
    return asyncio.run(work_on(job, step))


def _worker_source() -> str:
    """The code a worker runs; asking it also imports what a document's work needs (work.py's imports)."""
    return source_hash()


class RayPool:
    """The Pool of BulkRun (runner.py) on a Ray cluster: `await pool.run(job)` is the job's outcome.

    `workers`: CPUs used (rules) or actors (LLM); None: one per CPU of the cluster (or of this
    machine, for a local instance). `address`: a cluster to join; None starts a local instance.
    """

    def __init__(
        self,
        step: Step,
        workers: int | None,
        concurrency: int,
        address: str | None,
        notify: Callable[[str], None],
    ) -> None:
        self.step = step
        self.requested = workers
        self.concurrency = concurrency
        self.address = address
        self.say = notify
        self.count = 0
        self.shares: list[int] = []
        self._cpus: asyncio.Semaphore | None = None
        self._workers: list[Any] = []  # the LLM actors
        self._actors: list[Any] = []  # the others (the rate limiter)
        self._held: list[int] = []
        self._connected = False  # ray.init called here (and so ray.shutdown too)
        self._reaper: subprocess.Popen[str] | None = None
        self._rules: Any = None
        self._warm: Any = None
        self._solo: Any = None
        self._solos = asyncio.Semaphore(SOLO_AT_ONCE)

    @property
    def llm(self) -> bool:
        return self.step.backend is not BackendName.rules

    @property
    def capacities(self) -> list[int]:
        if not self.llm:
            return [1] * self.count
        return [share * DOCUMENTS_PER_REQUEST for share in self.shares]

    async def start(self) -> None:
        """Start or join the cluster, and get its workers ready: this code on them (checked), its modules
        imported (a document's time limit must not pay for that), the LLM actors started."""
        self._connect()
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if not self.llm:
            self.count = min(self.requested or cpus, cpus)  # more would wait in Ray, their time limits running
            self._warm = ray.remote(num_cpus=1)(_worker_source)
            await self._check(self._warm.remote() for _ in range(self.count))
            self._cpus = asyncio.Semaphore(self.count)
            self._rules = ray.remote(num_cpus=1, max_retries=1)(run_rules)
            return
        self.count = max(1, min(self.requested or cpus, cpus, self.concurrency))  # an actor holds a CPU
        self.shares = shares(self.concurrency, self.count)
        step = self.step
        if step.limiter is not None and step.llm_config is not None:
            name = f"extractor-rate-limits-{uuid.uuid4().hex}"
            limiter = ray.remote(LimiterActor).options(name=name, num_cpus=0)
            self._actors.append(limiter.remote(step.llm_config.rpm, step.llm_config.tpm))
            step = dataclasses.replace(step, limiter=ClusterRateLimiter(name), _llm=None)
        self.step = step
        actor = ray.remote(LLMWorker)
        self._workers = [
            actor.options(
                num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=share * DOCUMENTS_PER_REQUEST + 1
            ).remote(step, share)
            for share in self.shares
        ]
        self._held = [0] * self.count
        self._solo = ray.remote(num_cpus=0, max_retries=0)(_solo)
        try:
            await asyncio.wait_for(self._check(actor.ready.remote() for actor in self._workers), READY_SECONDS)
        except TimeoutError as error:
            raise ClusterError(
                f"{self.count} LLM workers of one CPU each did not start within {READY_SECONDS:g} s: "
                "the cluster has no free CPU for them (fewer --workers?)"
            ) from error
        except ray_errors.RayError as error:  # its client could not be made: say why, once
            raise ClusterError(f"the LLM workers could not start: {_cause(error)}") from error

    async def _check(self, sources: Iterable[Any]) -> None:
        """Wait for the workers' answers (the hash of the code they run): each must be this process's."""
        here = source_hash()
        found = set(await asyncio.gather(*sources)) - {here}
        if found:
            raise ClusterError(
                f"the cluster's workers run other extractor code (source {', '.join(sorted(found))}, here {here}): "
                "install this version on every node (README: On a Ray cluster)"
            )

    async def run(self, job: Job) -> Rendered | Stop:
        if not self.llm:
            assert self._cpus is not None
            async with self._cpus:
                return await self._rules_outcome(job)
        chosen = min(range(self.count), key=lambda i: self._held[i] / self.capacities[i])
        self._held[chosen] += 1
        try:
            outcome = await self._llm_outcome(job, chosen)
        finally:
            self._held[chosen] -= 1
        if outcome is None:  # its actor died: once more, alone
            async with self._solos:
                try:
                    outcome = await self._solo.remote(self.step, job)
                except _LOST:
                    return failure(job, "extract", DIED)
                except ray_errors.RayTaskError as error:
                    return failure(job, "extract", INTERNAL_ERROR.format(error=_cause(error)))
                except ray_errors.RayError as error:
                    raise _stopped(error) from error
        return outcome

    async def _rules_outcome(self, job: Job) -> Rendered | Stop:
        ref = self._rules.remote(job)
        try:
            return await asyncio.wait_for(_awaited(ref), self.step.doc_timeout)
        except TimeoutError:
            ray.cancel(ref, force=True)  # kills the worker computing it
            with contextlib.suppress(ray_errors.RayError):  # its successor imports before the next document
                await self._warm.remote()
            assert self.step.doc_timeout is not None
            return failure(job, "extract", overdue(self.step.doc_timeout), self.step.doc_timeout)
        except _LOST:  # Ray tried it twice
            return failure(job, "extract", DIED)
        except ray_errors.RayTaskError as error:  # our code raised outside work_on's net (an unpicklable result)
            return failure(job, "extract", INTERNAL_ERROR.format(error=_cause(error)))
        except ray_errors.RayError as error:
            raise _stopped(error) from error

    async def _llm_outcome(self, job: Job, chosen: int) -> Rendered | Stop | None:
        """The actor's outcome; None when the actor died with it."""
        actor = self._workers[chosen]
        ref = actor.work.remote(job)
        limit = self.step.doc_timeout + KILL_GRACE if self.step.doc_timeout is not None else None
        try:
            return await asyncio.wait_for(_awaited(ref), limit)
        except TimeoutError:  # still computing past its time limit: the actor is ended, and Ray restarts it
            ray.cancel(ref)
            ray.kill(actor, no_restart=False)
            assert self.step.doc_timeout is not None
            return failure(job, "extract", overdue(self.step.doc_timeout), self.step.doc_timeout)
        except _LOST:
            return None
        except ray_errors.RayTaskError as error:
            return failure(job, "extract", INTERNAL_ERROR.format(error=_cause(error)))
        except ray_errors.RayError as error:
            raise _stopped(error) from error

    async def close(self) -> None:
        self.kill()

    def kill(self) -> None:
        """End the run's actors and leave the cluster (a local instance is shut down)."""
        if self._connected:
            ray.shutdown()  # the run's tasks and actors end with it
            self._connected = False
        self._workers, self._actors = [], []  # in a caller's own Ray session, its last handles: the actors end
        if self._reaper is not None:
            try:
                assert self._reaper.stdin is not None
                self._reaper.stdin.write(DONE + "\n")
                self._reaper.stdin.close()
            except OSError:
                pass
            self._reaper.wait(timeout=10)
            self._reaper = None

    def _connect(self) -> None:
        if ray.is_initialized():  # a Python caller that has its own Ray session: use it, leave it open
            if self.address:
                self.say(f"warning: Ray is running in this process already: its session is used, not {self.address}")
            return
        cpus = None if self.address else self.requested or default_workers()
        if self.address:
            _knock(self.address)
        else:  # the watcher notes what runs already first: only what Ray starts from here on is its to end
            self._reaper = _start_reaper()
        handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        try:
            # "local": a new instance for this run, never one that another run or `ray start` left on this machine
            context = ray.init(
                address=self.address or "local", num_cpus=cpus, logging_level=logging.WARNING, log_to_driver=False
            )
        except Exception as error:  # an address nobody answers at, a token the cluster refuses...
            where = f"join the Ray cluster at {self.address}" if self.address else "start a local Ray instance"
            hint = ""
            if "auth" in str(error).lower() or "token" in str(error).lower():
                hint = " (a cluster with token authentication: set RAY_AUTH_MODE=token and its token, README: On a Ray cluster)"
            raise ClusterError(f"cannot {where}: {_cause(error)}{hint}") from error
        finally:
            for number, handler in handlers.items():  # ray.init sets its own: Ctrl-C and SIGTERM stay the run's
                if handler is not None:
                    signal.signal(number, handler)
        self._connected = True
        place = (
            f"joined the Ray cluster at {self.address}"
            if self.address
            else f"started a local Ray instance ({cpus} CPUs) for this run"
        )
        dashboard = getattr(context, "dashboard_url", None)
        self.say(f"Ray: {place}" + (f"; dashboard http://{dashboard}" if dashboard else ""))


def _start_reaper() -> subprocess.Popen[str]:
    """The watcher of this process's Ray instance (reaper.py), once it has noted what runs already."""
    reaper = subprocess.Popen(
        [sys.executable, "-m", "extractor.bulk.reaper", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert reaper.stdout is not None
    reaper.stdout.readline()  # "ready"
    return reaper


def _knock(address: str, timeout: float = 10.0) -> None:
    """ClusterError unless something listens at a host:port address: Ray itself retries for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():  # 'auto' and the like: Ray finds the cluster itself
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise ClusterError(f"cannot join the Ray cluster at {address}: nothing answers there ({error})") from error


async def _awaited(ref: Any) -> Any:
    return await ref


def _stopped(error: BaseException) -> ClusterError:
    """A fault of the cluster itself (its raylet died, its object store is full): no document is to blame,
    so the run stops and the documents in flight stay pending for the next one."""
    return ClusterError(f"the Ray cluster failed: {_cause(error)}")


def _cause(error: BaseException) -> str:
    """A Ray error's first line, without its traceback."""
    return str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
