"""`extractor extract` writes each extraction as it comes: the same bytes as writing them all at the end,
no extraction held once written (a directory of 10,000 notes fits in memory), and no half-written file."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest
from typer.testing import CliRunner

import extractor.cli.extract as extract_module
from extractor.api import extract
from extractor.cli import app
from extractor.schemas.concepts import to_facts

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [
    ROOT / "tests/fixtures/000_a279831d03f6579a.txt",
    ROOT / "tests/fixtures/html/002_59f0e0194afd947c.htm",
    ROOT / "evals/suites/real/documents/ba-10k-2024.html",  # a real 10-K note
]
runner = CliRunner()


def _all_at_once(output_format: str) -> str:
    """What the command wrote before it streamed: every extraction dumped together at the end."""
    extractions = [extract(path, backend="rules") for path in INPUTS]
    if output_format == "json":
        return json.dumps([e.model_dump(mode="json") for e in extractions], indent=2, ensure_ascii=False) + "\n"
    lines = [
        json.dumps({**fact.to_json_dict(), "document": e.document_id, "filing": e.filing.model_dump(mode="json")})
        for e in extractions
        for fact in to_facts(e.note)
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("output_format", ["json", "facts"])
def test_streamed_output_has_the_bytes_of_one_dump(tmp_path: Path, output_format: str) -> None:
    out = tmp_path / f"out.{output_format}"
    result = runner.invoke(app, ["extract", *map(str, INPUTS), "--format", output_format, "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert out.read_text(encoding="utf-8") == _all_at_once(output_format)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no partial file left


def test_no_inputs_write_an_empty_array(tmp_path: Path) -> None:
    out = tmp_path / "none.json"
    runner.invoke(app, ["extract", str(tmp_path / "missing.htm"), "-o", str(out)])
    assert out.read_text(encoding="utf-8") == "[]\n"


def test_an_extraction_is_not_kept_once_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[weakref.ref] = []
    alive_while_running: list[bool] = []
    attempt = extract_module.attempt

    def tracked(*args, **kwargs):
        gc.collect()
        # the one just written is still the loop's variable until the next arrives; any older one is gone
        alive_while_running.extend(ref() is not None for ref in written[:-1])
        tried = attempt(*args, **kwargs)
        written.append(weakref.ref(tried.extraction))
        return tried

    monkeypatch.setattr(extract_module, "attempt", tracked)
    result = runner.invoke(app, ["extract", *map(str, INPUTS), "--format", "facts", "-o", str(tmp_path / "f.jsonl")])
    assert result.exit_code in (0, 1), result.output
    assert len(written) == len(INPUTS) and alive_while_running == [False]  # the first, when the third starts


def test_an_interrupted_run_leaves_no_output_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    attempt = extract_module.attempt

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return attempt(*args, **kwargs)

    monkeypatch.setattr(extract_module, "attempt", interrupted)
    out = tmp_path / "out.json"
    runner.invoke(app, ["extract", *map(str, INPUTS), "-o", str(out)])
    assert len(calls) == 2
    assert list(tmp_path.iterdir()) == []  # neither the output nor its partial file


def test_messages_name_a_file_as_it_is_named(tmp_path: Path) -> None:
    """':ok:' in a file name is no emoji code: the validation line names the file as given."""
    path = tmp_path / "a:ok:b.txt"
    path.write_bytes(INPUTS[0].read_bytes())
    result = runner.invoke(app, ["extract", str(path), "-o", str(tmp_path / "out.json")])
    assert f"validation passed: {path}: " in result.stderr


def test_line_separators_inside_a_text_are_written_as_the_document_has_them(tmp_path: Path) -> None:
    """U+2028, U+2029 and U+0085 are line breaks to str.splitlines (and so to textwrap.indent), not to JSON: a row
    label holding one is written with it, and no indent is put inside the label."""
    separators = "\u2028\u2029\x85"
    label = "Outstanding as of February 28, 2019"
    marked = "Outstanding{}as{}of{}February 28, 2019".format(*separators)
    seed = INPUTS[0].read_text(encoding="utf-8")
    assert label in seed
    path = tmp_path / "seed.txt"
    path.write_text(seed.replace(label, marked), encoding="utf-8")
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["extract", str(path), "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    written = out.read_text(encoding="utf-8")
    expected = extract(path, backend="rules")
    assert written == json.dumps([expected.model_dump(mode="json")], indent=2, ensure_ascii=False) + "\n"
    labels = [row["label"] for table in json.loads(written)[0]["note"]["award_activity"] for row in table["rows"]]
    assert marked in labels


def test_a_loader_failing_on_one_input_fails_that_input_and_the_rest_are_extracted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception no loader foresaw (a bug) is the input's failure, named as an internal error; the batch goes on."""
    import extractor.attempt as attempt_module

    load = attempt_module.load

    def failing_on_the_seed(path: Path):
        if path == INPUTS[0]:
            raise RuntimeError("a loader bug")
        return load(path)

    monkeypatch.setattr(attempt_module, "load", failing_on_the_seed)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["extract", *map(str, INPUTS), "-o", str(out)])
    assert result.exit_code == 1
    assert f"{INPUTS[0]}: internal error, please report it: RuntimeError('a loader bug')" in result.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [item["document_path"] for item in written] == [str(path) for path in INPUTS[1:]]


@pytest.mark.parametrize("output_format", ["facts", "table", "json"])
def test_each_extraction_is_merged_into_facts_once_and_none_holds_them_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, merges: list[int], output_format: str
) -> None:
    """The facts written are those the validation merged (the same as merging again: the streaming test above),
    and no extraction still holds them once written (`extract --queue` keeps its extractions): each merges
    afresh when asked again."""
    tried = []
    attempt = extract_module.attempt

    def kept(*args, **kwargs):
        tried.append(attempt(*args, **kwargs))
        return tried[-1]

    monkeypatch.setattr(extract_module, "attempt", kept)
    out = tmp_path / "out"
    result = runner.invoke(app, ["extract", *map(str, INPUTS), "--format", output_format, "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert merges == [len(INPUTS)]
    assert out.read_text(encoding="utf-8").count('"concept"' if output_format != "table" else "\n") > len(INPUTS)
    for extraction in (t.extraction for t in tried):
        assert extraction is not None and extraction.take_facts()
    assert merges == [2 * len(INPUTS)]
