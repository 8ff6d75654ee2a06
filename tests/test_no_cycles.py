"""A document's work leaves none of our objects for the cyclic garbage collector: counted, never timed.

An object in a reference cycle is freed only when the collector runs, with everything it holds, and each of a
bulk LLM worker's collections walks the young objects of every document in flight. The grounding's aligner
kept its own bound methods (a cycle): each document left it, its rows and its numbers (some 480 objects) for
the collector, whose collections took a bulk LLM worker 2.0-2.5 s of CPU per 2,048 documents, against 0.4-1.0 s
with the aligner freed at once (2026-12-04, seed 002 at concurrency 32). A document that failed left more: an
LLM error held by a frame on its own traceback kept the document, its tables and its plan (550-2,900 objects).

With the collector off, what it would free is saved (gc.DEBUG_SAVEALL) and looked at. Only instances of the
project's classes count: tenacity's retrying objects (ours in the transport and instructor's) hold cycles of
their own, about 60 objects a request, and the test server's threads make objects of their own meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixture_paths import FIXTURES
from llm_server import Reply, ScriptedServer, error_reply, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.bulk.manifest import Status
from extractor.bulk.work import Job, Rendered, Step, handle, run_rules
from extractor.llm.config import LLMConfig
from extractor.loaders import load

SEED = FIXTURES / "002_59f0e0194afd947c.txt"
REAL = Path(__file__).resolve().parents[1] / "evals" / "suites" / "real" / "documents"
NOTES = [SEED, REAL / "gahc-10q-2024q3.html", REAL / "ggho-10q-2014q3.html"]
ASKED = NOTES[1:]  # hybrid asks the LLM about these two; rules explain all of seed 002, so hybrid asks nothing


@contextlib.contextmanager
def cyclic_garbage() -> Iterator[list[object]]:
    """The objects of ours that only the cyclic collector would free, of what runs inside the block."""
    gc.collect()
    was_enabled, flags, before = gc.isenabled(), gc.get_debug(), len(gc.garbage)
    gc.disable()
    found: list[object] = []
    try:
        yield found
        gc.set_debug(flags | gc.DEBUG_SAVEALL)  # what a collection would free is kept in gc.garbage instead
        gc.collect()
        found.extend(thing for thing in gc.garbage[before:] if type(thing).__module__.startswith("extractor"))
    finally:
        gc.set_debug(flags)
        del gc.garbage[before:]
        if was_enabled:
            gc.enable()


def _names(found: list[object]) -> list[str]:
    return sorted({f"{type(thing).__module__}.{type(thing).__qualname__}" for thing in found})


def _job(path: Path) -> Job:
    return Job("key", str(path), path.stem, path.read_bytes())


def _collected(work: Callable[[], object]) -> tuple[Status, str | None]:
    """The outcome of one bulk job, asserting that it left none of our objects for the collector."""
    with cyclic_garbage() as found:
        rendered = work()
        assert isinstance(rendered, Rendered)
        outcome = rendered.finished.status, rendered.record
        del rendered
    assert _names(found) == []
    return outcome


def _llm_job(path: Path, backend: BackendName, reply: Reply) -> tuple[Status, str | None]:
    """One bulk LLM or hybrid job against a test server giving `reply` to every request, the client made before."""
    with ScriptedServer(lambda body: reply) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", cache="off", retry_wait=0.01, attempts=1)
        step = Step(backend, llm_config=config)
        step.prepare()  # the client, made once per worker, is no document's garbage
        return _collected(lambda: asyncio.run(handle(_job(path), step)))


def test_the_helper_finds_an_object_of_ours_in_a_cycle_and_puts_the_collector_back():
    """The check can fail: a document whose derived value holds the document is found. And whatever the block
    does, the collector is on again afterwards, as it was, with nothing left saved."""
    load(SEED)  # imports and compiled patterns first: the module-level objects they make are no garbage
    with cyclic_garbage() as found:
        held = load(SEED)
        held.derived("itself", lambda document: document)  # a derived value must not hold its document
        del held
    assert "extractor.document.Document" in _names(found)
    with pytest.raises(ZeroDivisionError), cyclic_garbage():
        _ = 1 / 0
    assert gc.isenabled() and not gc.get_debug() & gc.DEBUG_SAVEALL and gc.garbage == []


@pytest.mark.parametrize("path", NOTES, ids=lambda path: path.stem)
def test_a_rules_document_leaves_nothing_for_the_collector(path):
    """A bulk rules job: load, extract, validate and render."""
    _, record = _collected(lambda: run_rules(_job(path)))
    assert record


@pytest.mark.parametrize(
    ("path", "backend"),
    [(path, BackendName.llm) for path in NOTES] + [(path, BackendName.hybrid) for path in ASKED],
    ids=lambda value: getattr(value, "stem", None) or str(value.value),
)
def test_an_llm_document_leaves_nothing_of_ours_for_the_collector(path, backend):
    """A bulk LLM or hybrid job whose answer is grounded, validated and rendered."""
    document = load(path)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    status, record = _llm_job(path, backend, reply)
    assert status in (Status.done, Status.review) and record


@pytest.mark.parametrize(
    "reply",
    [tool_reply("not json at all"), error_reply(400, "the request is refused")],
    ids=["unreadable answer", "HTTP 400"],
)
@pytest.mark.parametrize("backend", [BackendName.llm, BackendName.hybrid])
def test_a_failed_llm_document_leaves_nothing_of_ours_for_the_collector(backend, reply):
    """An answer that cannot be read, or a request the endpoint refuses: the LLM document fails, the hybrid one
    keeps its rules extraction. Neither holds its work in a cycle through the error."""
    status, record = _llm_job(ASKED[0], backend, reply)
    if backend is BackendName.llm:
        assert status is Status.failed and record is None
    else:
        assert status is not Status.failed and record and "the LLM failed" in record
