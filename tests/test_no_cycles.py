"""A document's work leaves none of our objects for the cyclic garbage collector: counted, never timed.

An object in a reference cycle is freed only when the collector runs, with everything it holds, and each of a
bulk LLM worker's collections walks the young objects of every document in flight. The grounding's aligner
kept its own bound methods (a cycle): each document left it, its rows and its numbers (some 480 objects) for
the collector, whose collections took a bulk LLM worker 2.0-2.5 s of CPU per 2,048 documents, against 0.4-1.0 s
with the aligner freed at once (2026-12-04, seed 002 at concurrency 32).

With the collector off, what it would free is saved (gc.DEBUG_SAVEALL) and looked at. Only instances of the
project's classes count: tenacity's retrying objects (ours in the transport and instructor's) hold cycles of
their own, and the test server's threads make objects of their own meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_paths import FIXTURES
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.backends.choice import BackendName
from extractor.bulk.work import Job, Rendered, Step, handle, run_rules
from extractor.llm.config import LLMConfig
from extractor.loaders import load

SEED = FIXTURES / "002_59f0e0194afd947c.txt"
REAL = Path(__file__).resolve().parents[1] / "evals" / "suites" / "real" / "documents"
NOTES = [SEED, REAL / "gahc-10q-2024q3.html", REAL / "ggho-10q-2014q3.html"]


@contextlib.contextmanager
def cyclic_garbage() -> Iterator[list[object]]:
    """The objects of ours that only the cyclic collector would free, of what runs inside the block."""
    gc.collect()
    was_enabled, flags = gc.isenabled(), gc.get_debug()
    gc.disable()
    found: list[object] = []
    try:
        yield found
        gc.set_debug(flags | gc.DEBUG_SAVEALL)  # what a collection would free is kept in gc.garbage instead
        gc.collect()
        found.extend(thing for thing in gc.garbage if type(thing).__module__.startswith("extractor"))
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def _names(found: list[object]) -> list[str]:
    return sorted({f"{type(thing).__module__}.{type(thing).__qualname__}" for thing in found})


def _job(path: Path) -> Job:
    return Job("key", str(path), path.stem, path.read_bytes())


def test_the_helper_finds_an_object_of_ours_in_a_cycle():
    """The check can fail: a document that holds itself is found."""
    document = load(SEED)
    with cyclic_garbage() as found:
        held = load(SEED)
        held.metadata.__dict__["itself"] = held  # a cycle through an object of ours
        del held
    assert "extractor.document.Document" in _names(found) and document is not None


@pytest.mark.parametrize("path", NOTES, ids=lambda path: path.stem)
def test_a_rules_document_leaves_nothing_for_the_collector(path):
    """A bulk rules job: load, extract, validate and render."""
    with cyclic_garbage() as found:
        rendered = run_rules(_job(path))
        assert isinstance(rendered, Rendered) and rendered.record
        del rendered
    assert _names(found) == []


@pytest.mark.parametrize("backend", [BackendName.llm, BackendName.hybrid])
@pytest.mark.parametrize("path", NOTES, ids=lambda path: path.stem)
def test_an_llm_document_leaves_nothing_of_ours_for_the_collector(path, backend):
    """A bulk LLM or hybrid job against the test server: its grounding, validation and rendering."""
    document = load(path)
    reply = tool_reply(quoted_answer(rules.extract(document), document))
    with ScriptedServer(lambda body: reply) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", cache="off", retry_wait=0.01)
        step = Step(backend, llm_config=config)
        step.prepare()  # the client, made once per worker, is no document's garbage
        with cyclic_garbage() as found:
            rendered = asyncio.run(handle(_job(path), step))
            assert isinstance(rendered, Rendered) and rendered.record
            del rendered
    assert _names(found) == []
