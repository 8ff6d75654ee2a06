"""The README's Python examples run as written (section "From Python"), from a folder laid out like
the repository, against the scripted OpenAI-compatible server on 127.0.0.1 for the LLM one."""

from __future__ import annotations

import re

import pytest
from fixture_paths import ROOT
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.loaders import load

SECTION = re.compile(r"^## From Python\n(.*?)^## ", re.MULTILINE | re.DOTALL)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
README_URL = "http://127.0.0.1:8000/v1"


def examples() -> list[str]:
    section = SECTION.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert section, "README.md has no '## From Python' section"
    return BLOCK.findall(section.group(1))


def test_the_readme_python_examples_run(tmp_path, monkeypatch, capsys):
    for folder in ("tests", "evals"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    monkeypatch.chdir(tmp_path)  # what the examples write (out/python-run) lands here, not in the repository
    blocks = examples()
    assert len(blocks) == 3 and all(README_URL not in block for block in blocks[:2]) and README_URL in blocks[2]
    seed = load(ROOT / "tests/fixtures/002_59f0e0194afd947c.txt")
    namespace: dict[str, object] = {}
    with ScriptedServer(lambda body: tool_reply(quoted_answer(rules.extract(seed), seed))) as server:
        for block in blocks:
            exec(compile(block.replace(README_URL, server.base_url), "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "ShareBasedCompensationArrangementByShareBasedPaymentAward" in printed  # facts were printed
    assert "000_a279831d03f6579a.htm 179 facts" in printed  # extract_many, per file
    assert (
        namespace["outcome"].complete
        and namespace["outcome"].summary["documents"]["done"] + namespace["outcome"].summary["documents"]["review"] == 2
    )
    assert (tmp_path / "out/python-run/records.jsonl").exists()
    assert namespace["report"].passed and namespace["run"].metrics().overall.f1 == pytest.approx(1.0)
    assert (
        namespace["result"].provenance.backend == "llm"
        and namespace["result"].provenance.model == "Qwen/Qwen2.5-7B-Instruct"
    )
    assert not (tmp_path / ".extractor-cache").exists()  # no cache unless asked
