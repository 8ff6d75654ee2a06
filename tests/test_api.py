"""The Python front door (extractor.extract / extract_many / run / validate / evaluate): what a
library user relies on besides the README's examples."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fixture_paths import ROOT, SEED_002
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

import extractor
from extractor.backends import rules
from extractor.loaders import load

HEAVY = ("openai", "instructor", "lxml", "pyarrow", "fastapi", "typer", "rich", "pydantic", "extractor.api")


def test_import_extractor_loads_nothing_heavy():
    probe = f"import sys, extractor; print([m for m in {HEAVY!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
    assert set(extractor.__all__) >= {
        "extract",
        "extract_many",
        "run",
        "validate",
        "evaluate",
        "LLMConfig",
        "ExtractorError",
    }


def test_text_and_path_give_the_same_facts_and_a_missing_file_is_an_error():
    from_path = extractor.extract(str(SEED_002))
    from_text = extractor.extract(SEED_002.read_text(encoding="utf-8"))
    assert [f.to_json_dict() for f in from_path.facts()] == [f.to_json_dict() for f in from_text.facts()]
    assert from_path.validation is not None and extractor.extract(SEED_002, validate=False).validation is None
    with pytest.raises(extractor.LoadError, match="no such file") as raised:
        extractor.extract("filings/missing-note.htm")
    assert isinstance(raised.value, extractor.ExtractorError)
    with pytest.raises(extractor.LoadError, match="no such file"):
        extractor.extract("filings 2023/10-K 2023.htm")  # spaces in a mistyped path: still an error, not text
    minified = "<table><tr><td>Options granted</td><td>1,000</td></tr></table>"
    assert extractor.extract(minified).document_path == "<text>"  # one line of HTML is text
    with pytest.raises(extractor.SettingsError, match="needs llm=LLMConfig"):
        extractor.extract(SEED_002, backend="llm")


def test_a_library_extraction_edited_in_place_gives_the_edited_facts(tmp_path):
    """The library hands its extractions on: none holds facts kept from its validation, which an edit of the note
    in place would leave stale (only the command line's writers, which write them at once, keep them)."""
    from extractor.llm.merge import amounts

    (tmp_path / "note.txt").write_bytes(SEED_002.read_bytes())
    with ScriptedServer() as server:  # hybrid: rules leave nothing of seed 002 to ask about (no request)
        settings = extractor.LLMConfig(base_url=server.base_url, model="given", retry_wait=0.01)
        hybrid = extractor.extract(SEED_002, backend="hybrid", llm=settings)
        assert not server.requests and hybrid.validation is not None
    for extraction in (extractor.extract(SEED_002), next(extractor.extract_many([tmp_path])).extraction, hybrid):
        assert extraction is not None
        before = extraction.facts()
        next(amounts(extraction.note)).value += 1
        assert extraction.take_facts() == extraction.facts() != before


def test_extract_many_goes_on_after_a_bad_file(tmp_path):
    (tmp_path / "a_empty.txt").write_bytes(b"")
    (tmp_path / "b_binary.htm").write_bytes(b"\x00\x01\x02PK\x03\x04" * 100)
    (tmp_path / "c_seed.txt").write_bytes(SEED_002.read_bytes())
    tried = list(extractor.extract_many([tmp_path]))
    assert [t.path.name for t in tried] == ["a_empty.txt", "b_binary.htm", "c_seed.txt"]
    assert tried[0].reason and tried[1].reason and tried[0].extraction is None
    assert tried[2].extraction is not None and len(tried[2].extraction.facts()) == 103


def test_the_llm_path_reads_no_config_file_or_environment_and_writes_no_cache(tmp_path, monkeypatch):
    (tmp_path / "extractor.toml").write_text('[llm]\nmodel = "from-the-file"\ncache = "read-write"\n')
    monkeypatch.setenv("EXTRACTOR_MODEL", "from-the-environment")
    monkeypatch.chdir(tmp_path)
    seed = load(SEED_002)
    with ScriptedServer(lambda body: tool_reply(quoted_answer(rules.extract(seed), seed))) as server:
        settings = extractor.LLMConfig(base_url=server.base_url, model="given", retry_wait=0.01)
        result = extractor.extract(SEED_002, backend="llm", llm=settings)
        assert server.requests[0]["model"] == "given"
    assert result.provenance.model == "given" and result.validation is not None and result.validation.passed
    assert not (tmp_path / ".extractor-cache").exists()


def test_evaluate_scores_a_suite_and_stores_it_only_when_asked(tmp_path):
    run = extractor.evaluate(ROOT / "evals/suites/seeds")
    assert run.id is None and run.metrics().overall.f1 == pytest.approx(1.0)
    stored = extractor.evaluate(ROOT / "evals/suites/seeds", store=tmp_path / "runs.sqlite", label="api")
    assert stored.id is not None and (tmp_path / "runs.sqlite").exists()
