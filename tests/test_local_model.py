"""A real model, end to end: llama.cpp's server on the packaged Gemma 3 270M, started by `extractor
local-model serve`, answers a real extraction through the unchanged CLI (`--backend llm --base-url`).

Run by `make test-local-llm` (and `.ci/run`), which installs the 'local' extra; `make test` leaves
this tier out (marker local_llm). No recorded answers: every completion comes from the model.
Run with -s to see the extraction's facts, findings and score.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from extractor.loaders import load
from extractor.local_model import DEFAULT_ALIAS, free_port, missing_packages

# timeout: its server start and each extraction may take up to 900 s on their own (pyproject.toml's timeout is 900)
pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(3600)]

ROOT = Path(__file__).resolve().parents[1]
EXTRACTOR = [sys.executable, "-m", "extractor.cli"]
SETTINGS = ROOT / "evals" / "local_model" / "settings.toml"
# A pre-2001 fixed-width filing: one options roll-forward over three years and per-year assumptions,
# four blocks, so four requests (about a minute on 2 cores).
DOCUMENT = ROOT / "evals" / "suites" / "heterogeneous" / "documents" / "new_aligned_2000.txt"
GOLD = ROOT / "evals" / "suites" / "heterogeneous" / "gold"


def _packages_or_skip() -> None:
    missing = missing_packages()
    if not missing:
        return
    reason = f"the 'local' extra is not installed ({', '.join(missing)}); make test-local-llm installs it"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and in CI it must be")
    pytest.skip(reason)


def _hears_ctrl_c() -> None:
    """In the server's process before it starts: Ctrl-C as a terminal delivers it. A shell that starts a job in
    the background (`make test-local-llm &`) has it ignored, and an ignored signal stays ignored in children."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """`extractor local-model serve` on a free port: its printed base URL, while it runs."""
    _packages_or_skip()
    log = tmp_path_factory.mktemp("server") / "server.log"
    port = free_port()
    command = [*EXTRACTOR, "local-model", "serve", "--port", str(port), "--threads", "2", "--log", str(log)]
    server = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=_hears_ctrl_c,
    )
    line = server.stdout.readline()  # printed once the server answers
    if not line:
        server.wait(timeout=30)
        pytest.fail(f"local-model serve exited {server.returncode}: {server.stderr.read()}")
    assert line.strip() == f"serving model '{DEFAULT_ALIAS}' at http://127.0.0.1:{port}/v1"
    yield line.split(" at ")[1].strip()
    server.send_signal(signal.SIGINT)
    _, errors = server.communicate(timeout=120)  # a clean stop, however busy the machine is
    assert server.returncode == 0 and "stopped" in errors


def _extractor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXTRACTOR, *args], capture_output=True, text=True, cwd=ROOT, timeout=900)


def test_serve_answers_as_an_openai_compatible_endpoint(served):
    models = httpx2.get(f"{served}/models", timeout=10).json()
    assert [model["id"] for model in models["data"]] == [DEFAULT_ALIAS]


def test_a_real_extraction_is_parsed_grounded_validated_and_scored(served, tmp_path):
    cassettes = tmp_path / "cassettes"
    llm = ["--backend", "llm", "--config", str(SETTINGS), "--base-url", served, "--cache-dir", str(cassettes)]
    asked = _extractor(
        "extract", str(DOCUMENT), *llm, "--cache", "read-write", "--format", "json", "-o", str(tmp_path / "out.json")
    )
    assert asked.returncode in (0, 1), asked.stderr  # 1: the extraction fails validation, as a 270M model's will
    [result] = json.loads((tmp_path / "out.json").read_text())

    # Every answer came from the model: one request per block, none from a recording, tokens counted.
    usage = result["usage"]
    assert usage["requests"] == 4 and usage["cache_hits"] == 0 and usage["completion_tokens"] > 0, usage
    assert (
        result["provenance"]["prompt_id"] == "stock_compensation@v2" and result["provenance"]["model"] == DEFAULT_ALIAS
    )

    # Parsed into the schema: the answers that fit became StockCompensationNote values.
    amounts = list(_amounts(result["note"]))
    unread = [w for w in result["warnings"] if w.startswith("nothing read from")]
    assert amounts and len(unread) < 4, result["warnings"]

    # Quotes aligned to spans: every value points at the number it was read from.
    text = load(DOCUMENT).text
    for amount in amounts:
        span = amount["source"]
        assert span is not None, amount
        assert text[span["start"] : span["end"]] == span["text"] and span["text"].replace(",", "") in amount[
            "quote"
        ].replace(",", "")

    # Validator findings produced, each about values the extraction holds.
    validation = result["validation"]
    assert validation["passed"] == (not any(f["severity"] == "error" for f in validation["findings"]))
    for finding in validation["findings"]:
        assert finding["rule"] and finding["message"]

    # The same answers replayed (no model call) into facts, a readable table, and a score against gold.
    facts_file = tmp_path / "new_aligned_2000.facts.jsonl"
    replayed = _extractor(
        "extract", str(DOCUMENT), *llm, "--cache", "replay", "--format", "facts", "-o", str(facts_file)
    )
    assert replayed.returncode in (0, 1), replayed.stderr
    facts = facts_file.read_text().splitlines()
    assert facts, "the grounded values map to facts"
    shown = _extractor("extract", str(DOCUMENT), *llm, "--cache", "replay", "--format", "table")
    scored = _extractor("score", str(facts_file), "--gold", str(GOLD))
    assert scored.returncode == 0, scored.stderr
    gold = (GOLD / "new_aligned_2000.facts.jsonl").read_text().splitlines()
    total = re.search(r"ALL\W+(\d+)\W+(\d+)\W+(\d+)", scored.stdout)
    assert total, scored.stdout
    assert (int(total[1]), int(total[2])) == (len(gold), len(facts)) and int(total[3]) <= len(facts)
    print(f"\n--- real extraction of {DOCUMENT.name} by {DEFAULT_ALIAS} (stock_compensation@v2), usage: {usage}")
    print(shown.stdout, shown.stderr)
    print(scored.stdout)


def _amounts(value: object):
    """Every Amount (a dict with value, unit and period) in a dumped note."""
    if isinstance(value, dict):
        if {"value", "unit", "period"} <= value.keys():
            yield value
        else:
            for item in value.values():
                yield from _amounts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _amounts(item)
