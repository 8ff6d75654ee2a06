"""One document's work, in a worker process: load, extract (rules, LLM or both), validate, render.

`handle` takes a Job (bytes and where they came from) to `Rendered`: the lines to write and the
status to commit, failures included. Only an endpoint that cannot serve any document gives `Stop`.
Each stage says when it starts (`enter`), so a document stopped for taking too long
(--doc-timeout) is recorded with the stage it was in.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from extractor.attempt import INTERNAL_ERROR
from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.bulk.compute import compute, first_come
from extractor.bulk.manifest import Finished, Status
from extractor.bulk.outputs import csv_rows
from extractor.bulk.settings import DOC_TIMEOUT
from extractor.document import Document, LoadError
from extractor.extraction import Extraction
from extractor.llm.batch import BatchAnswers, RequestRecorder, request_lines
from extractor.llm.config import LLMConfig
from extractor.llm.errors import EndpointError, LLMError
from extractor.llm.limits import RateLimiter
from extractor.loaders import load_bytes
from extractor.validator import validate

if TYPE_CHECKING:  # the LLM path's modules import openai and instructor (~1.5 s): a rules run never loads them
    from extractor.backends.llm import LLMBackend

DIMS = ("award", "line_item", "bound", "year")
BLANKS = ("",) * len(DIMS)  # the dims a fact lacks


def overdue(limit: float) -> str:
    """The failure reason of a document stopped at the time limit."""
    return f"took longer than the {limit:g} s limit per document (--doc-timeout); stopped"


def _nowhere(stage: str) -> None:
    """Outside a worker process nobody listens for the stage."""


current_stage: ContextVar[list[str] | None] = ContextVar(
    "current_stage", default=None
)  # the document's own, on the LLM path
process_stage: Callable[[str], None] = _nowhere  # the worker's (workers.py), for a worker that must be killed


def enter(stage: str) -> None:
    """Say that this document's work reached `stage` (load, extract, validate)."""
    holder = current_stage.get()
    if holder is not None:
        holder[0] = stage
    process_stage(stage)


@dataclass(frozen=True)
class Job:
    """One input to extract: its reference, its content hash and its bytes."""

    key: str
    ref: str
    document_id: str
    data: bytes


@dataclass
class Rendered:
    """A finished document: its outcome for the manifest and its lines for the outputs."""

    finished: Finished
    record: str | None = None  # one line of records.jsonl
    facts: str | None = None  # rows of facts.csv
    requests: str | None = None  # lines of a Batch API request file
    ref: str = ""
    usage: dict[str, Any] | None = None


@dataclass(frozen=True)
class Stop:
    """The endpoint cannot serve any document (key, model, URL): the run stops; this job stays pending."""

    key: str
    message: str


@dataclass(frozen=True)
class BatchResults:
    """A Batch API output file and where each custom_id's line starts in it."""

    path: Path
    index: dict[str, int]


@dataclass
class Step:
    """How documents are extracted: the backend, and for the LLM its settings and the run's shared
    rate limiter; `export` writes Batch API requests instead of asking, `results` answers from a
    Batch API output file. Picklable; the LLM client is made in the worker that uses it."""

    backend: BackendName
    llm_config: LLMConfig | None = None
    limiter: RateLimiter | None = None
    export: bool = False
    results: BatchResults | None = None
    doc_timeout: float | None = DOC_TIMEOUT  # None: no limit
    _llm: LLMBackend | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_llm": None}

    def prepare(self, requests: int | None = None) -> None:
        """Make the LLM client (once per process), with at most `requests` of its requests at the endpoint
        at once (a worker's share of --concurrency), its computing in the worker's thread (compute.py) and
        what every request needs built before the first (LLMBackend.warm); raises what a bad prompt or key raises."""
        if self.llm_config is not None and self._llm is None:
            from extractor.backends.llm import LLMBackend
            from extractor.llm.client import make_clients

            answers: RequestRecorder | BatchAnswers | None = None
            if self.export:
                answers = RequestRecorder()
            elif self.results is not None:
                answers = BatchAnswers(self.results.path, self.results.index)
            clients = make_clients(self.llm_config, self.limiter, answers, requests)
            in_worker = requests is not None  # a worker's loop serves many documents: it computes beside them
            self._llm = LLMBackend(self.llm_config, clients=clients, compute=compute if in_worker else None)
            if in_worker and self.backend is BackendName.llm:  # hybrid asks about blocks, not the whole note
                self._llm.warm()

    @property
    def llm(self) -> LLMBackend:
        self.prepare()
        assert self._llm is not None, "the rules backend has no LLM"
        return self._llm


@dataclass
class Loaded:
    """A document read, with the time each step took so far."""

    job: Job
    document: Document
    timing: dict[str, float] = field(default_factory=dict)


def failure(job: Job, stage: str, reason: str, seconds: float = 0.0, usage: dict[str, Any] | None = None) -> Rendered:
    return Rendered(Finished(job.key, Status.failed, reason, stage, seconds, usage), ref=job.ref, usage=usage)


async def handle(job: Job, step: Step) -> Rendered | Stop:
    """The whole of one document's work with the run's backend."""
    if step.backend is BackendName.rules:
        return run_rules(job)
    loaded = await step.llm.run(load_job, job)
    if isinstance(loaded, Rendered):
        return loaded
    if step.export:
        return await step.llm.run(_export, loaded, step)  # computing, like the rest: one document at a time
    started = time.perf_counter()
    enter("extract")
    try:
        if step.backend is BackendName.hybrid:
            from extractor.backends import hybrid

            extraction = await hybrid.aextract(loaded.document, step.llm, validated=True)
        else:
            extraction = await step.llm.aextract(loaded.document, validated=True)
    except EndpointError as error:
        return Stop(job.key, str(error))
    except LLMError as error:
        usage = error.usage.model_dump(mode="json") if error.usage else None
        stage = "batch" if step.results is not None else "extract"  # --retry-failed with new results reopens these
        return failure(job, stage, str(error), time.perf_counter() - started, usage)
    except Exception as error:
        return failure(job, "extract", INTERNAL_ERROR.format(error=repr(error)))
    loaded.timing["extract_seconds"] = time.perf_counter() - started
    return await step.llm.run(finish, loaded, extraction)


async def within_limit(job: Job, step: Step, handler: Callable[[Job, Step], Any]) -> Rendered | Stop:
    """The handler's outcome, or a failure naming the stage once `step.doc_timeout` has passed. Only
    work that waits (the LLM's requests) can be stopped this way; a worker busy computing is killed
    by the pool at the same deadline (workers.py)."""
    assert step.doc_timeout is not None
    stage = ["load"]
    current_stage.set(stage)
    enter("load")
    try:
        async with asyncio.timeout(step.doc_timeout) as limit:
            return await handler(job, step)
    except TimeoutError:
        if not limit.expired():  # the handler's own timeout, not this limit
            raise
        return failure(job, stage[0], overdue(step.doc_timeout), step.doc_timeout)


async def work_on(job: Job, step: Step, handler: Callable[[Job, Step], Any] = handle) -> Rendered | Stop:
    """The job's outcome in a worker, within its time limit; whatever the handler did not expect (even a
    cancellation) is the job's failure record, never a worker's end. Its computing comes after that of the
    jobs the worker began before it (compute.first_come)."""
    first_come()
    try:
        return await (within_limit(job, step, handler) if step.doc_timeout is not None else handler(job, step))
    except BaseException as error:
        return failure(job, "extract", INTERNAL_ERROR.format(error=repr(error)))


def _export(loaded: Loaded, step: Step) -> Rendered:
    """The document's requests for a Batch API file; it waits, `exported`, for the results. For
    hybrid, only the blocks holding numbers rules left unexplained or misread are asked (none: the rules'
    reading is final)."""
    job = loaded.job
    started = time.perf_counter()
    try:
        blocks = None
        if step.backend is BackendName.hybrid:
            from extractor.backends import hybrid

            planned = hybrid.plan(loaded.document, keep_facts=True)  # finish writes the facts when nothing is asked
            if not planned.asked:
                return finish(loaded, hybrid.ruled_as_is(planned, validated=True))  # finish need not validate again
            blocks = hybrid.block_spans(planned)
        lines = request_lines(step.llm, loaded.document, blocks)
    except Exception as error:
        return failure(job, "extract", INTERNAL_ERROR.format(error=repr(error)))
    seconds = sum(loaded.timing.values()) + time.perf_counter() - started
    if not lines:
        return failure(job, "extract", "the note has no text to ask about")
    return Rendered(Finished(job.key, Status.exported, None, None, seconds), requests="".join(lines), ref=job.ref)


def run_rules(job: Job) -> Rendered:
    """Load, extract with rules and validate: the whole job of the rules backend."""
    loaded = load_job(job)
    if isinstance(loaded, Rendered):
        return loaded
    started = time.perf_counter()
    enter("extract")
    try:
        extraction = rules.extract(loaded.document)
    except Exception as error:
        return failure(job, "extract", INTERNAL_ERROR.format(error=repr(error)))
    loaded.timing["extract_seconds"] = time.perf_counter() - started
    return finish(loaded, extraction)


def load_job(job: Job) -> Loaded | Rendered:
    """Read the document; a failure record if it cannot be."""
    started = time.perf_counter()
    try:
        document = load_bytes(job.data, job.ref, job.document_id)
    except LoadError as error:
        return failure(job, "load", error.reason, time.perf_counter() - started)
    except Exception as error:
        return failure(job, "load", INTERNAL_ERROR.format(error=repr(error)))
    return Loaded(job, document, {"load_seconds": time.perf_counter() - started})


def finish(loaded: Loaded, extraction: Extraction) -> Rendered:
    """Validate and render: done when it passes, for review when it does not. An extraction that comes
    validated against this document (the LLM and hybrid backends asked with `validated=True` reuse the
    check they made anyway) is not validated again; its validation time is then in extract_seconds."""
    job, document = loaded.job, loaded.document
    started = time.perf_counter()
    enter("validate")
    try:
        if extraction.validation is None:
            extraction.validation = validate(extraction, document, keep_facts=True)
    except Exception as error:
        return failure(job, "validate", INTERNAL_ERROR.format(error=repr(error)))
    timing = {**loaded.timing, "validate_seconds": time.perf_counter() - started}
    status = Status.done if extraction.validation.passed else Status.review
    usage = extraction.usage.model_dump(mode="json") if extraction.usage else None
    record = {
        "document": {
            "id": document.id,
            "ref": job.ref,
            "sha256": job.key,
            "bytes": len(job.data),
            "format": document.format,
            "metadata": document.metadata.model_dump(mode="json", exclude_none=True),
        },
        "status": status.value,
        "needs_review": status is Status.review,
        "extraction": extraction,  # pydantic serializes it below, in a third of the time of model_dump and json.dumps
        "timing": {name: round(value, 6) for name, value in timing.items()},
    }
    filing = extraction.filing
    # what every row of the document starts with: its id, ref, hash, status and filing
    first: tuple[str, ...] = (document.id, job.ref, job.key, status.value, filing.company or "", filing.cik or "")
    first += (filing.form or "", _day(filing.fiscal_period_end))
    rows = [
        [
            *first,
            fact.concept,
            format(fact.value, "f"),
            fact.unit,
            _day((period := fact.period).start),
            _day(period.end),
            _day(period.instant),
            *map(fact.dims.get, DIMS, BLANKS),
            *((str(source.start), str(source.end), source.text) if (source := fact.source) else ("", "", "")),
        ]
        for fact in extraction.take_facts()
    ]
    seconds = sum(timing.values())
    reason = None if status is Status.done else f"{len(extraction.validation.errors)} validation errors"
    return Rendered(
        Finished(job.key, status, reason, "validate" if reason else None, seconds, usage),
        # pydantic's serializer: UTF-8 as it is (as ensure_ascii=False wrote it), no space after a separator
        record=to_json(record, by_alias=False).decode() + "\n",
        facts=csv_rows(rows),
        ref=job.ref,
        usage=usage,
    )


def _day(day: Any) -> str:
    return day.isoformat() if day is not None else ""
