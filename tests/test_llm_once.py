"""The LLM path does each piece of work once: counted, never timed.

A bulk run validates a document once (the re-ask check is the validation when it checked the note
returned) and renders the facts that validation merged (a rules document's too), and instructor walks
a response model once per process, not seven times a request. Whatever is reused must equal what
would have been computed again: each test compares with a fresh validation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import FIXTURES
from llm_server import ScriptedServer, error_reply, tool_reply
from scripted_answers import quoted_answer

import extractor
from extractor import attempt, sections, validator
from extractor.backends import hybrid, rules
from extractor.backends import llm as llm_backend
from extractor.backends.choice import BackendName
from extractor.backends.llm import LLMBackend, _worth_a_reask
from extractor.bulk import work
from extractor.bulk.work import Job, Rendered, Step, handle
from extractor.extraction import Extraction
from extractor.llm import model_checks, response_model
from extractor.llm.client import make_clients
from extractor.llm.config import LLMConfig
from extractor.llm.response_model import quoted_view
from extractor.loaders import load
from extractor.schemas.concepts import to_facts
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.validator import SourceText, validate

SEED = FIXTURES / "002_59f0e0194afd947c.txt"
REAL = Path(__file__).resolve().parents[1] / "evals" / "suites" / "real" / "documents"
GGHO = REAL / "ggho-10q-2014q3.html"  # hybrid asks about one paragraph


@pytest.fixture
def server():
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def validations(monkeypatch) -> Counter[str]:
    """Every call of the validator, by the module that made it."""
    calls: Counter[str] = Counter()
    for module in (llm_backend, work, hybrid, attempt):
        monkeypatch.setattr(module, "validate", _counting(calls, module.__name__))
    # the rules backend imports it when asked to validate (the only caller that imports it late)
    monkeypatch.setattr(validator, "validate", _counting(calls, rules.__name__))
    return calls


_VALIDATE = validator.validate


def _counting(calls: Counter[str], name: str) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return _VALIDATE(*args, **kwargs)

    return counted


def settings(server: ScriptedServer, **overrides: Any) -> LLMConfig:
    values = {"base_url": server.base_url, "model": "scripted", "cache": "off", "retry_wait": 0.01, **overrides}
    return LLMConfig.model_validate(values)


def answer(path: Path = SEED) -> dict[str, Any]:
    document = load(path)
    return quoted_answer(rules.extract(document), document)


def run_one(path: Path, step: Step) -> Rendered:
    """One document through a worker's whole work (load, extract, validate, render)."""
    outcome = asyncio.run(handle(Job("key", str(path), path.stem, path.read_bytes()), step))
    assert isinstance(outcome, Rendered) and outcome.record is not None
    return outcome


def recorded_findings(rendered: Rendered) -> list[dict[str, Any]]:
    assert rendered.record is not None
    return json.loads(rendered.record)["extraction"]["validation"]["findings"]


def fresh_findings(rendered: Rendered, path: Path) -> list[dict[str, Any]]:
    """What validating the recorded extraction again against its document finds."""
    from extractor.extraction import Extraction

    assert rendered.record is not None
    extraction = Extraction.model_validate(json.loads(rendered.record)["extraction"])
    return validate(extraction, load(path)).model_dump(mode="json")["findings"]


def test_a_bulk_document_is_validated_once_and_as_a_second_validation_would(server, validations):
    server.script.append(tool_reply(answer()))
    rendered = run_one(SEED, Step(BackendName.llm, llm_config=settings(server)))
    assert sum(validations.values()) == 1 and len(server.requests) == 1
    assert json.loads(rendered.record or "")["status"] == "done"
    assert recorded_findings(rendered) == fresh_findings(rendered, SEED)


def test_after_a_reask_the_kept_answers_check_is_its_validation(server, validations):
    good = answer()
    wrong = json.loads(json.dumps(good))
    wrong["award_activity"][0]["rows"][4]["count"]["printed"] = "2,831"  # a roll-forward that does not add up
    server.script += [tool_reply(wrong), tool_reply(good)]
    rendered = run_one(SEED, Step(BackendName.llm, llm_config=settings(server)))
    assert len(server.requests) == 2 and "2,831" in server.requests[1]["messages"][-1]["content"]
    assert sum(validations.values()) == 2  # each answer checked once; the second check is the validation
    assert recorded_findings(rendered) == fresh_findings(rendered, SEED)


def test_a_reask_that_does_not_help_keeps_the_first_answers_check(server, validations):
    wrong = answer()
    wrong["award_activity"][0]["rows"][4]["count"]["printed"] = "2,831"
    server.script += [tool_reply(wrong), tool_reply(wrong)]
    rendered = run_one(SEED, Step(BackendName.llm, llm_config=settings(server)))
    assert sum(validations.values()) == 2 and json.loads(rendered.record or "")["status"] == "review"
    assert recorded_findings(rendered) == fresh_findings(rendered, SEED)


def test_an_answer_without_fiscal_years_is_validated_again_once_they_are_filled_in(server, validations):
    unnamed = answer()
    unnamed.pop("fiscal_year_ends")
    server.script.append(tool_reply(unnamed))
    rendered = run_one(SEED, Step(BackendName.llm, llm_config=settings(server)))
    assert json.loads(rendered.record or "")["extraction"]["note"]["fiscal_year_ends"]  # filled by the plan
    assert validations == {llm_backend.__name__: 2}  # the re-ask check saw no years: not the validation
    assert recorded_findings(rendered) == fresh_findings(rendered, SEED)


def test_without_feedback_reasks_the_only_validation_is_the_final_one(server, validations):
    server.script.append(tool_reply(answer()))
    rendered = run_one(SEED, Step(BackendName.llm, llm_config=settings(server, feedback_reasks=0)))
    assert sum(validations.values()) == 1
    assert recorded_findings(rendered) == fresh_findings(rendered, SEED)


@pytest.mark.parametrize("path", [SEED, GGHO], ids=["no-call", "one-block"])
def test_a_hybrid_document_is_not_validated_again_after_its_merge(server, validations, path):
    server.script.append(tool_reply({"expense": []}))
    rendered = run_one(path, Step(BackendName.hybrid, llm_config=settings(server)))
    assert validations[work.__name__] == 0
    assert validations[hybrid.__name__] == (1 if path == SEED else 2)  # the rules', then the merged extraction's
    assert recorded_findings(rendered) == fresh_findings(rendered, path)


@pytest.mark.parametrize("backend", ["llm", "hybrid"])
def test_the_front_door_validates_a_document_once_and_as_a_second_validation_would(server, validations, backend):
    """extractor.extract (and so `extractor extract` and the eval harness, through the same attempt) takes the
    validation the LLM and hybrid backends made on their way instead of validating the document again."""
    server.script.append(tool_reply(answer()))
    extraction = extractor.extract(SEED, backend, llm=settings(server))
    assert validations[attempt.__name__] == 0
    assert sum(validations.values()) == 1  # the LLM's re-ask check; hybrid's check of the rules (no block asked)
    assert extraction.validation == _VALIDATE(extraction, load(SEED))
    validations.clear()
    ruled = extractor.extract(SEED, "rules")
    assert validations == {rules.__name__: 1}
    assert ruled.validation == _VALIDATE(rules.extract(load(SEED)), load(SEED))


def test_the_front_door_returns_the_validation_of_the_answer_it_keeps_after_a_worse_reask(server):
    """A re-ask that made things worse is dropped with its check: the front door's validation is the kept
    (first) answer's, not the worse one's."""
    wrong, worse = answer(), answer()
    wrong["award_activity"][0]["rows"][4]["count"]["printed"] = "2,831"  # a roll-forward that does not add up
    for row in (3, 4):
        worse["award_activity"][0]["rows"][row]["count"]["printed"] = "9,999"
    server.script += [tool_reply(wrong), tool_reply(worse)]
    extraction = extractor.extract(SEED, "llm", llm=settings(server))
    assert len(server.requests) == 2 and extraction.usage is not None and extraction.usage.reasks == 1
    assert extraction.validation is not None
    fresh = _VALIDATE(extraction, load(SEED))
    assert extraction.validation == fresh and any("2,831" in f.message for f in fresh.errors)
    assert not any("9,999" in f.message for f in fresh.findings)


def test_the_front_door_sets_aside_accepted_findings_of_a_validation_made_on_the_way(server):
    """A reviewer's accepted findings are set aside from the backend's validation as validate would set them aside."""
    wrong = answer()
    wrong["award_activity"][0]["rows"][4]["count"]["printed"] = "2,831"  # a roll-forward that does not add up
    server.script += [tool_reply(wrong)] * 4
    config = settings(server, feedback_reasks=0)
    first = extractor.extract(SEED, "llm", llm=config).validation
    assert first is not None and len(first.findings) >= 2 and not first.accepted
    accepted = {f.id for f in first.findings[::-1]}  # every one, named in the other order
    extraction = extractor.extract(SEED, "llm", llm=config, accepted=accepted)
    assert extraction.validation == _VALIDATE(extraction, load(SEED), accepted)
    assert extraction.validation.accepted == first.findings and not extraction.validation.findings  # in their order
    assert extraction.validation.passed and not first.passed
    some = {first.errors[0].id}
    partly = extractor.extract(SEED, "llm", llm=config, accepted=some).validation
    assert partly == _VALIDATE(extraction, load(SEED), some)
    assert partly is not None and partly.findings == [f for f in first.findings if f.id not in some]
    assert extractor.extract(SEED, "llm", llm=config, validate=False).validation is None


@pytest.mark.parametrize("keep", [True, False])
def test_an_attempt_keeps_the_backends_merged_facts_only_for_a_writer(server, keep):
    """With keep_facts (extract --format facts, the eval harness) the facts the backend's validation merged are
    handed over; without (the Python front door hands the extraction on) they are not kept beside it."""
    server.script.append(tool_reply(answer()))
    tried = attempt.attempt(SEED, extractor_for_llm(server), validated=True, keep_facts=keep)
    assert tried.extraction is not None
    kept = tried.extraction.__dict__.get("kept_facts_for")
    assert (kept is not None) is keep
    if keep:
        assert kept[0] is tried.extraction.note and kept[1] == to_facts(tried.extraction.note)


@pytest.mark.parametrize(
    "overrides",
    [{"feedback_reasks": 0}, {"max_chars": 4000}],
    ids=["no re-asks", "several parts"],
)
def test_the_llm_backends_own_final_validation_keeps_its_merged_facts(server, overrides):
    """Where the re-ask check cannot be the validation (none made; a note read in several parts), the final
    validation keeps the facts it merged for the writer, as every backend's `validated` does."""
    server.responder = lambda body: tool_reply(answer())
    extraction = LLMBackend(settings(server, **overrides)).extract(load(SEED), validated=True)
    kept = extraction.__dict__.get("kept_facts_for")
    assert kept is not None and kept[0] is extraction.note and kept[1] == to_facts(extraction.note)
    assert extraction.validation == _VALIDATE(extraction, load(SEED))


def extractor_for_llm(server: ScriptedServer) -> Any:
    from extractor.backends.choice import extractor_for

    return extractor_for(BackendName.llm, settings(server))


def test_a_bulk_document_renders_the_facts_its_validation_merged_and_the_same_rows(server):
    """The note's numbers are merged into facts once, by the final check; its facts.csv rows and record are
    those of the same extraction rendered with its facts merged again."""
    server.script.append(tool_reply(answer()))
    extraction = LLMBackend(settings(server)).extract(load(SEED), validated=True)
    twin = extraction.model_copy()  # holds the same kept facts
    kept_facts = twin.take_facts()
    assert kept_facts == to_facts(extraction.note) and twin.take_facts() is not kept_facts  # handed over once
    data = SEED.read_bytes()
    loaded = work.load_job(Job("key", str(SEED), SEED.stem, data))
    assert isinstance(loaded, work.Loaded)
    again = Extraction.model_validate(extraction.model_dump())  # nothing kept: merged again
    assert again == extraction and again.model_dump_json() == extraction.model_dump_json()  # keeping is no field
    kept, merged = work.finish(loaded, extraction), work.finish(loaded, again)
    assert kept.facts == merged.facts and kept.facts and kept.facts.count("\n") == len(to_facts(extraction.note))
    assert _untimed(kept.record) == _untimed(merged.record)


def test_a_bulk_rules_document_renders_the_facts_its_validation_merged(merges):
    """A rules document too: its numbers are merged into facts once (the validation's), and its rows are those of
    its facts merged again."""
    path = FIXTURES / "000_a279831d03f6579a.txt"
    rendered = run_one(path, Step(BackendName.rules))
    assert merges == [1]
    assert rendered.facts and rendered.facts.count("\n") == len(to_facts(rules.extract(load(path)).note)) > 100


@pytest.mark.parametrize("path", [SEED, FIXTURES / "whole" / "meta-10k-2024.txt"], ids=["note", "whole filing"])
def test_a_bulk_documents_note_is_found_once(server, monkeypatch, path):
    """Loading narrows a document to its note (sections.focus) and the LLM backend asks where the note is
    again: the second answer is the first, not another scan of every heading."""
    found: list[Any] = []

    def counted(document: Any) -> Any:
        found.append(sections_find(document))
        return found[-1]

    server.script.append(tool_reply(answer(path)))
    sections_find = sections._find_note
    monkeypatch.setattr(sections, "_find_note", counted)
    record = json.loads(run_one(path, Step(BackendName.llm, llm_config=settings(server))).record or "")
    assert len(found) == 1 and found[0] is not None
    read = [w for w in record["extraction"]["warnings"] if w.startswith("read ")]
    if path == SEED:  # the document is its note
        assert (found[0].start, found[0].end) == (0, len(load(path).text)) and not read
    else:  # the filing's note, found on loading, is what was read
        assert record["extraction"]["section"]["start"] == found[0].start > 0
        assert read == [f"read {found[0].why}, offsets {found[0].start}-{found[0].end}, in 1 part(s)"]


def test_a_bulk_record_holds_its_extraction_as_model_dump_gives_it():
    """The record's extraction (written by pydantic's serializer) reads back as model_dump(mode='json') gives it,
    its text as printed (a real note's curly quotes and non-breaking spaces, not \\u escapes)."""
    path = REAL / "gahc-10q-2024q3.html"
    rendered = run_one(path, Step(BackendName.rules))
    loaded = work.load_job(Job("key", str(path), path.stem, path.read_bytes()))
    assert isinstance(loaded, work.Loaded) and rendered.record is not None
    extraction = rules.extract(loaded.document)
    extraction.validation = validate(extraction, loaded.document)
    assert json.loads(rendered.record)["extraction"] == extraction.model_dump(mode="json")
    assert "\\u" not in rendered.record and "\u2019" in rendered.record and "\xa0" in rendered.record


def _untimed(record: str | None) -> dict[str, Any]:
    assert record is not None
    loaded = json.loads(record)
    loaded.pop("timing")
    return loaded


def test_the_library_extraction_comes_unvalidated_unless_asked(server):
    server.script += [tool_reply(answer()), tool_reply(answer())]
    backend = LLMBackend(settings(server))
    assert backend.extract(load(SEED)).validation is None
    assert backend.extract(load(SEED), validated=True).validation is not None


def test_a_reask_is_decided_on_the_same_errors_whole_document_or_text(server):
    """The re-ask check against the whole document (coverage included) gives the same errors worth a
    re-ask as against its text alone: the two differ only in coverage findings."""
    for path in (SEED, FIXTURES / "000_a279831d03f6579a.txt", FIXTURES / "text" / "002_aligned.txt"):
        document = load(path)
        extraction = rules.extract(document)
        whole, text = validate(extraction, document), validate(extraction, SourceText.of(document))
        assert whole.coverage is not None and text.coverage is None
        assert _worth_a_reask(whole) == _worth_a_reask(text)
        assert _worth_a_reask(text) == [f for f in text.errors if f.rule != "coverage.empty"]


def test_instructor_walks_a_response_model_once_per_process(server, monkeypatch):
    walked: Counter[Any] = Counter()
    assert model_checks.install() and model_checks._walk is not None
    original = model_checks._walk
    monkeypatch.setattr(model_checks, "_passed", weakref.WeakSet())

    def walk(response_model: Any) -> None:
        walked[response_model] += 1
        original(response_model)

    monkeypatch.setattr(model_checks, "_walk", walk)
    schemas: Counter[str] = Counter()
    view = quoted_view(StockCompensationNote)
    build = view.model_json_schema

    def counted_schema(*args: Any, **kwargs: Any) -> Any:
        schemas["built"] += 1
        return build(*args, **kwargs)

    monkeypatch.setattr(view, "model_json_schema", counted_schema)
    server.script += [tool_reply(answer()) for _ in range(3)]
    backend = LLMBackend(settings(server))
    for _ in range(3):
        backend.extract(load(SEED))
    assert len(server.requests) == 3
    assert walked[view] == 1  # instructor asks seven times a request: 21 walks before
    assert schemas["built"] <= 1  # instructor keeps the schema of a class it was given (none if built before)


def test_a_model_instructor_refuses_is_refused_every_time(monkeypatch):
    assert model_checks.install()
    monkeypatch.setattr(model_checks, "_passed", weakref.WeakSet())

    def refuse(response_model: Any) -> None:
        raise ValueError("async validators are not supported")

    monkeypatch.setattr(model_checks, "_walk", refuse)
    for _ in range(2):
        with pytest.raises(ValueError, match="async validators"):
            model_checks.check_once(StockCompensationNote)


def _most_at_once(server: ScriptedServer, delay: float) -> int:
    """The most requests the server was answering at once: each takes `delay` from its arrival, and the
    next from the same client arrives only after an answer, so counting arrivals is exact (not timed)."""
    arrivals = server.arrivals
    return max(sum(1 for other in arrivals if start - delay < other <= start) for start in arrivals)


def sharing(config: LLMConfig, requests: int) -> LLMBackend:
    """A backend whose clients have at most `requests` requests at the endpoint at once (a bulk worker's)."""
    return LLMBackend(config, clients=make_clients(config, requests=requests))


def test_a_bulk_backend_has_at_most_its_share_of_requests_at_the_endpoint(server):
    reply = tool_reply(answer())
    reply.delay = 0.05
    server.responder = lambda body: reply
    backend = sharing(settings(server), 2)

    async def five() -> list[Any]:
        return await asyncio.gather(*(backend.aextract(load(SEED), validated=True) for _ in range(5)))

    extractions = asyncio.run(five())
    assert len(server.requests) == 5 and all(e.validation is not None for e in extractions)
    assert _most_at_once(server, reply.delay) == 2


def sends_and_reads(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two documents, A then B, through one request slot: each request handed to the HTTP connection
    ("sent") and each answer reaching instructor ("read"), in the event loop's order."""
    backend = sharing(settings(server), 1)
    events: list[str] = []
    # what the AsyncLLMTransport under openai's client sends through
    inner = backend.clients.run_async.client._client._transport.inner
    send = inner.handle_async_request

    async def logged(request: Any) -> Any:
        events.append(f"sent {asyncio.current_task().get_name()}")  # type: ignore[union-attr]
        return await send(request)

    monkeypatch.setattr(inner, "handle_async_request", logged)
    backend.clients.run_async.on(
        "completion:response",
        lambda *_: events.append(f"read {asyncio.current_task().get_name()}"),  # type: ignore[union-attr]
    )

    async def two() -> None:
        first = asyncio.create_task(backend.aextract(load(SEED)), name="A")
        second = asyncio.create_task(backend.aextract(load(SEED)), name="B")
        await asyncio.gather(first, second)

    asyncio.run(two())
    return events


def test_a_request_holds_its_place_through_its_retries_and_makes_way_before_its_answer_is_read(server, monkeypatch):
    """The share counts requests at the endpoint. A retried request keeps its place while it backs off (a
    struggling endpoint is not sent another document's request instead); once its answer has arrived, the
    next document's request, built while it waited, is handed to the HTTP connection before openai and
    instructor make the answer into the response model. Ordered by the event loop, not timed."""
    server.script += [error_reply(503, "overloaded"), tool_reply(answer()), tool_reply(answer())]
    assert sends_and_reads(server, monkeypatch) == ["sent A", "sent A", "sent B", "read A", "read B"]


def test_a_reask_waits_for_a_place_like_any_request(server, monkeypatch):
    """An answer that does not fit the schema is asked again in a request of its own, which waits behind
    the request that took the freed place meanwhile."""
    server.script += [tool_reply({"award_activity": "a table"}), tool_reply(answer()), tool_reply(answer())]
    assert sends_and_reads(server, monkeypatch) == ["sent A", "sent B", "read A", "sent A", "read B", "read A"]


def test_an_llm_worker_holds_twice_its_share_of_documents_and_rules_one_each():
    from extractor.bulk.workers import WorkerPool

    llm = WorkerPool(2, Step(BackendName.llm, llm_config=LLMConfig()), concurrency=5)
    assert llm.shares == [3, 2] and llm.capacities == [6, 4]
    rules_pool = WorkerPool(2, Step(BackendName.rules), concurrency=2)
    assert rules_pool.shares == rules_pool.capacities == [1, 1]


def test_a_workers_documents_compute_beside_its_event_loop_and_come_out_the_same(server, monkeypatch):
    """In a worker (prepared with its share of requests), reading, grounding, validating and rendering
    run in the worker's computing thread, not on the loop that serves the endpoint: same records."""
    threads: Counter[str] = Counter()

    def validated(*args: Any, **kwargs: Any) -> Any:
        threads[threading.current_thread().name.split("_")[0]] += 1
        return validator.validate(*args, **kwargs)

    monkeypatch.setattr(llm_backend, "validate", validated)
    server.script += [tool_reply(answer()), tool_reply(answer())]
    inline = run_one(SEED, Step(BackendName.llm, llm_config=settings(server)))
    worker_step = Step(BackendName.llm, llm_config=settings(server))
    worker_step.prepare(requests=2)
    beside = run_one(SEED, worker_step)
    assert threads == {"MainThread": 1, "compute": 1}
    assert untimed(beside) == untimed(inline) and beside.facts == inline.facts


def untimed(rendered: Rendered) -> dict[str, Any]:
    """A record without what the clock says (timings, seconds spent waiting on the endpoint)."""
    record = json.loads(rendered.record or "")
    record["timing"] = None
    record["extraction"]["usage"]["latency_seconds"] = None
    return record


def test_a_computation_is_not_abandoned_when_its_document_times_out():
    """A computation cannot be interrupted: the document's time limit waits for it to end (a
    pathological one is killed with its worker), instead of reporting the document stopped while
    its computation still holds the worker's thread."""
    from extractor.bulk.compute import compute

    ended = threading.Event()
    started = threading.Event()

    def slow() -> str:
        started.set()
        ended.wait(5)  # released from the loop once the time limit has fired
        return "done"

    async def limited() -> bool:
        loop = asyncio.get_running_loop()
        await_started = loop.run_in_executor(None, started.wait, 5)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(None) as limit:
                task = asyncio.ensure_future(compute(slow))
                await await_started
                limit.reschedule(loop.time())  # the limit fires now, mid-computation
                loop.call_later(0.05, ended.set)
                await task
        return ended.is_set()

    assert asyncio.run(limited())  # the TimeoutError came only after the computation ended


def test_compute_returns_what_the_function_returns_or_raises_in_the_callers_context():
    import contextvars

    from extractor.bulk.compute import compute

    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="none")

    def read() -> tuple[str, str]:
        return seen.get(), threading.current_thread().name

    def fail() -> None:
        raise ValueError("computed badly")

    async def both() -> tuple[str, str]:
        seen.set("caller's")
        with pytest.raises(ValueError, match="computed badly"):
            await compute(fail)
        return await compute(read)

    value, thread = asyncio.run(both())
    assert value == "caller's" and thread.startswith("compute")


@contextlib.asynccontextmanager
async def computing_thread_held() -> AsyncIterator[None]:
    """The worker's computing thread kept busy for the block: work asked for meanwhile waits in its queue."""
    from extractor.bulk.compute import compute

    busy, free = threading.Event(), threading.Event()

    def hold() -> None:
        busy.set()
        free.wait(5)

    blocker = asyncio.ensure_future(compute(hold))
    await asyncio.get_running_loop().run_in_executor(None, busy.wait, 5)  # the thread is busy from here on
    try:
        yield
    finally:
        free.set()
        await blocker


def test_the_computing_thread_takes_the_oldest_documents_work_first():
    """A worker handed many documents at once prepares the first one's request before reading the rest: work
    waiting for the thread is taken by the age of its document (compute.first_come), not by when it was asked."""
    import contextvars

    from extractor.bulk.compute import compute, first_come

    ran: list[str] = []

    async def main() -> None:
        async with computing_thread_held():
            documents = {name: contextvars.copy_context() for name in "abc"}
            for context in documents.values():
                context.run(first_come)  # the documents start in the order a, b, c
            # the youngest asks first and the oldest last; each task queues its work at its first step, and the
            # three first steps run before this coroutine resumes (the loop runs ready callbacks in order)
            asked = [asyncio.create_task(compute(ran.append, name), context=documents[name]) for name in "cba"]
            await asyncio.sleep(0)
        await asyncio.gather(*asked)

    asyncio.run(main())
    assert ran == ["a", "b", "c"]


def test_a_computation_that_raises_stop_iteration_fails_instead_of_hanging():
    """asyncio cannot set StopIteration on a future: passed on as it was, the awaiting document waited forever.
    (Checked on the thread's own future, with a time limit, so that a regression fails instead of hanging.)"""
    from extractor.bulk.compute import _Thread

    thread = _Thread()
    error = thread.submit(0, lambda: next(iter([]))).exception(timeout=10)
    assert isinstance(error, RuntimeError) and "StopIteration" in str(error)
    assert thread.submit(0, lambda: sum([1, 2])).result(timeout=10) == 3  # the thread goes on

    async def awaited() -> None:
        from extractor.bulk.compute import compute

        with pytest.raises(RuntimeError, match="StopIteration"):
            await compute(next, iter([]))

    asyncio.run(awaited())


def test_a_computation_still_queued_when_its_document_is_cancelled_never_runs():
    """A document past its time limit while its work waits for the thread: the work is dropped, not run for a
    record already reported stopped."""
    from extractor.bulk.compute import compute

    ran: list[str] = []

    async def main() -> None:
        async with computing_thread_held():
            queued = asyncio.ensure_future(compute(ran.append, "dropped"))
            await asyncio.sleep(0)  # queued behind the work holding the thread
            queued.cancel()
            with pytest.raises(asyncio.CancelledError):
                await queued
        await compute(ran.append, "later")

    asyncio.run(main())
    assert ran == ["later"]


@pytest.mark.parametrize("mode", ["tools", "json_schema"])
def test_a_worker_builds_the_answer_schema_before_its_first_document(server, schema_builds, mode):
    """Building the note's answer model and its JSON schema is start-up work: a worker does it when it is
    prepared, so its first request does not wait for it (nor every request queued behind it)."""
    server.script += [reply_in(mode), reply_in(mode)]
    for in_worker, expected in ((False, 1), (True, 0)):
        fresh_views()
        step = Step(BackendName.llm, llm_config=settings(server, mode=mode))
        step.prepare(requests=2 if in_worker else None)
        schema_builds.clear()
        run_one(SEED, step)
        assert schema_builds["schema"] == expected, in_worker


@pytest.fixture
def schema_builds(monkeypatch) -> Counter[str]:
    """Every JSON schema pydantic builds, counted under "schema"."""
    from pydantic.json_schema import GenerateJsonSchema

    built: Counter[str] = Counter()
    generate = GenerateJsonSchema.generate

    def counted(self: GenerateJsonSchema, *args: Any, **kwargs: Any) -> Any:
        built["schema"] += 1
        return generate(self, *args, **kwargs)

    monkeypatch.setattr(GenerateJsonSchema, "generate", counted)
    return built


def fresh_views() -> None:
    """Forget the views built so far: the next is a new class, whose kept schema and instructor's are cold."""
    quoted_view.cache_clear()
    response_model._view.cache_clear()


def reply_in(mode: str) -> Any:
    """Seed 002's scripted answer as the mode carries it: a tool call, or the message's text."""
    reply = tool_reply(answer())
    if mode != "tools":
        content = json.dumps(answer())
        reply.body["choices"][0]["message"] = {
            "role": "assistant",
            "content": f"```json\n{content}\n```" if mode == "md_json" else content,
        }
        reply.body["choices"][0]["finish_reason"] = "stop"
    return reply


@pytest.mark.parametrize("mode", ["json_schema", "json", "md_json"])
def test_the_answer_schema_is_built_once_per_view_in_every_mode(server, schema_builds, mode):
    """instructor asks for the response model's JSON schema on every request in these modes (tools mode has its
    own cache): a view builds it once, and every request carries the schema pydantic builds."""
    from pydantic import BaseModel

    server.script += [reply_in(mode), reply_in(mode), reply_in(mode)]
    fresh_views()  # a view no earlier test built a schema for
    step = Step(BackendName.llm, llm_config=settings(server, mode=mode))
    records = [json.loads(run_one(SEED, step).record or "") for _ in range(3)]
    assert schema_builds["schema"] == 1
    assert all(record["extraction"]["note"] == records[0]["extraction"]["note"] for record in records)
    view = quoted_view(StockCompensationNote)
    fresh = BaseModel.model_json_schema.__func__(view)  # type: ignore[attr-defined]  # pydantic's own, not kept
    for body in server.requests:  # the schema as each mode sends it
        if mode == "json_schema":
            assert body["response_format"]["json_schema"]["schema"] == fresh
        else:
            assert json.dumps(fresh, indent=2, ensure_ascii=False) in body["messages"][0]["content"]
    view.model_json_schema()["properties"].clear()  # a caller's copy: changing it changes nothing kept
    assert view.model_json_schema() == fresh
