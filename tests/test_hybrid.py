"""The hybrid backend over real HTTP: rules first, then only the blocks coverage or an error points at.

No model runs here: the scripted server (tests/llm_server.py) answers, and counts what it was sent.
"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import pytest
from fixture_paths import FIXTURES
from llm_server import ScriptedServer, error_reply, tool_reply
from scripted_answers import quoted_answer
from typer.testing import CliRunner

from extractor.backends import hybrid, rules
from extractor.backends.llm import LLMBackend
from extractor.cli import app
from extractor.extraction import AskedBlock
from extractor.llm.config import LLMConfig
from extractor.llm.markdown import flat
from extractor.loaders import load
from extractor.schemas.concepts import to_facts
from extractor.validator import validate

REAL = Path(__file__).resolve().parents[1] / "evals" / "suites" / "real" / "documents"
GGHO = REAL / "ggho-10q-2014q3.html"  # rules read the RSU table, not the one sentence on expense
SENTENCE = "the Company incurred $557 and $1,816, respectively, in stock compensation expense"
GGHO_PARAGRAPH = AskedBlock(
    kind="paragraph", index=2, start=392, end=667, reason="4 unexplained numbers: 557, 1,816, 0, 157"
)


@pytest.fixture
def server():
    with ScriptedServer() as running:
        yield running


def backend(server: ScriptedServer) -> LLMBackend:
    settings = {"base_url": server.base_url, "model": "scripted", "cache": "off", "retry_wait": 0.01}
    return LLMBackend(LLMConfig.model_validate(settings))


def _usd(printed: str, quote: str, start: str, end: str) -> dict:
    return {"amount": {"printed": printed, "quote": quote, "unit": "USD", "period": {"start": start, "end": end}}}


# What a model reads in GGHO's expense sentence (the note prints these amounts as they are).
GGHO_EXPENSE = {
    "expense": [
        _usd("557", "the Company incurred $557 and $1,816, respectively", "2014-07-01", "2014-09-30"),
        _usd("1,816", "the Company incurred $557 and $1,816, respectively", "2014-01-01", "2014-09-30"),
        _usd("0", "compared to $0 and $157, respectively", "2013-07-01", "2013-09-30"),
        _usd("157", "compared to $0 and $157, respectively", "2013-01-01", "2013-09-30"),
    ]
}


def test_hybrid_sends_only_the_paragraph_whose_numbers_rules_left_unread(server):
    doc = load(GGHO)
    ruled = rules.extract(doc)
    server.script.append(tool_reply(GGHO_EXPENSE))
    extraction = hybrid.extract(doc, backend(server))

    assert len(server.requests) == 1  # one block, no re-ask
    [body] = server.requests
    user = body["messages"][-1]["content"]
    assert SENTENCE in user and "1,369,987" not in user and "Outstanding at" not in user  # not the RSU table
    assert list(body["tools"][0]["function"]["parameters"]["properties"]) == ["expense"]
    assert extraction.provenance.asked == [GGHO_PARAGRAPH] and extraction.provenance.backend == "hybrid"
    expense = [
        (item.amount.value, item.amount.source.text, item.amount.source.start) for item in extraction.note.expense
    ]
    assert expense == [
        (Decimal(557), "557", 477),
        (Decimal(1816), "1,816", 486),
        (Decimal(0), "0", 613),
        (Decimal(157), "157", 620),
    ]
    assert extraction.note.award_activity == ruled.note.award_activity  # the rules' reading of the table is untouched
    assert all(doc.text[f.source.start : f.source.end] == f.source.text for f in to_facts(extraction.note))
    validation = validate(extraction, doc)
    assert validation.coverage == Decimal(1) and validation.passed  # rules alone: 0.5, failed by coverage.note
    assert "coverage 50% -> 100%, errors 1 -> 0" in extraction.warnings[-1]


def test_hybrid_async_sends_the_same_blocks_and_merges_the_same(server):
    doc = load(GGHO)
    server.script.append(tool_reply(GGHO_EXPENSE))
    synced = hybrid.extract(doc, backend(server))
    server.script.append(tool_reply(GGHO_EXPENSE))
    awaited = asyncio.run(hybrid.aextract(doc, backend(server)))
    first, second = server.requests
    assert (first["messages"], first["tools"]) == (second["messages"], second["tools"])
    assert awaited.note == synced.note and awaited.provenance.asked == [GGHO_PARAGRAPH]


@pytest.mark.parametrize(
    "path", [REAL / "unh-10k-2024.html", FIXTURES / "002_59f0e0194afd947c.txt"], ids=["unh-10k", "seed-002"]
)
def test_hybrid_makes_no_call_when_nothing_is_unexplained_and_nothing_wrong(server, path):
    doc = load(path)
    validation = validate(rules.extract(doc), doc)
    assert validation.passed and not [f for f in validation.findings if f.rule.startswith("coverage.")]
    extraction = hybrid.extract(doc, backend(server))
    assert server.requests == [] and extraction.provenance.asked == [] and extraction.usage is None
    assert extraction.note == rules.extract(doc).note and "no LLM call" in extraction.warnings[-1]


def test_an_llm_failure_keeps_the_rules_extraction_and_says_what_was_sent(server):
    doc = load(GGHO)
    server.script.append(error_reply(400, "scripted: refused"))
    extraction = hybrid.extract(doc, backend(server))
    assert len(server.requests) == 1 and extraction.note == rules.extract(doc).note
    assert extraction.provenance.asked == [GGHO_PARAGRAPH]
    assert (
        "1 block(s) sent (paragraph 3); the LLM failed" in extraction.warnings[-1]
        and "HTTP 400" in extraction.warnings[-1]
    )


def _full_reading(source_path: Path):
    """A responder answering every block with the whole rules reading of `source_path`, restricted to the
    parts the block is asked for: a model that re-reads all it can. Grounding keeps what lies in the block."""
    source = load(source_path)
    answer = quoted_answer(rules.extract(source), source)

    def respond(body: dict):
        asked = body["tools"][0]["function"]["parameters"]["properties"]
        return tool_reply({part: value for part, value in answer.items() if part in asked})

    return respond


def test_numbers_rules_read_are_not_read_twice(server):
    doc = load(FIXTURES / "000_a279831d03f6579a.txt")  # four paragraphs hold a few unexplained numbers
    planned = hybrid.plan(doc)
    assert [(b.kind, b.index) for b in planned.asked] == [
        ("paragraph", 6),
        ("paragraph", 7),
        ("paragraph", 10),
        ("paragraph", 11),
    ]
    assert planned.asked[3].reason == "2 unexplained numbers: 7,500, 10,000"
    server.responder = _full_reading(FIXTURES / "000_a279831d03f6579a.txt")
    extraction = hybrid.extract(doc, backend(server))
    assert len(server.requests) == 4
    for block, body in zip(planned.asked, server.requests):  # each request holds its paragraph and no table
        user = body["messages"][-1]["content"]
        assert flat(doc.text[block.start : block.end]) in user and "\nTable: " not in user
    assert extraction.note == rules.extract(doc).note  # every value it gave was the rules' own: nothing duplicated
    assert "the LLM read 0 value(s)" in extraction.warnings[-1]


def test_blocks_with_an_error_are_read_again_and_the_llm_reading_replaces_the_rules(server):
    aligned = load(FIXTURES / "text" / "002_aligned.txt")  # rules lose the award types here: conflict errors
    planned = hybrid.plan(aligned)
    sent_for_errors = [b for b in planned.asked if "error finding consistency.conflict" in b.reason]
    assert [b.kind for b in sent_for_errors] == ["table"] * 3
    server.responder = _full_reading(FIXTURES / "002_59f0e0194afd947c.txt")  # the same note, as an R page
    extraction = hybrid.extract(aligned, backend(server))
    assert len(server.requests) == len(planned.asked) == 6
    assert validate(rules.extract(aligned), aligned).errors and validate(extraction, aligned).errors == []
    assert all(aligned.text[f.source.start : f.source.end] == f.source.text for f in to_facts(extraction.note))


def test_extract_verbose_and_json_say_which_blocks_were_sent_and_why(server, tmp_path):
    server.script.append(tool_reply(GGHO_EXPENSE))
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app,
        [
            "extract",
            str(GGHO),
            "--backend",
            "hybrid",
            "--base-url",
            server.base_url,
            "--model",
            "scripted",
            "--cache",
            "off",
            "--verbose",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert (
        "asked the LLM: " in result.stderr
        and "paragraph 3 (characters 392-667): 4 unexplained numbers: 557, 1,816, 0, 157" in result.stderr
    )
    [written] = json.loads(out.read_text())
    assert written["provenance"]["asked"] == [GGHO_PARAGRAPH.model_dump(mode="json")]


def test_with_a_block_prompt_the_quotes_are_the_blocks_own_numbers(server):
    doc = load(GGHO)
    period = {"start": "2014-07-01", "end": "2014-09-30"}
    server.script.append(
        tool_reply(
            {"expense": [{"amount": {"quote": "30, 2014, the Company incurred $557", "unit": "USD", "period": period}}]}
        )
    )
    settings = {"base_url": server.base_url, "model": "scripted", "cache": "off", "prompt": "stock_compensation@v2"}
    extraction = hybrid.extract(doc, LLMBackend(LLMConfig.model_validate(settings)))
    [body] = server.requests
    quotes = body["tools"][0]["function"]["parameters"]["$defs"]["CellAmount"]["properties"]["quote"]["enum"]
    assert "the Company incurred $557 and $1,816" in quotes and not any("1,369,987" in quote for quote in quotes)
    assert [(e.amount.value, e.amount.source.start) for e in extraction.note.expense] == [(Decimal(557), 477)]
    assert (
        extraction.provenance.asked == [GGHO_PARAGRAPH] and extraction.provenance.prompt_id == "stock_compensation@v2"
    )
