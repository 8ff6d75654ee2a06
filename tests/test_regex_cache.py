"""regex_cache.regex: re.compile's pattern, built from a program an earlier process stored, whatever is in the file."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys

import pytest
from fixture_paths import ROOT, SEED_000

from extractor import regex_cache
from extractor.regex_cache import regex


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    """The cache in tmp_path, none read yet, nothing kept by this process, bytecode writing on."""
    path = tmp_path / "regexes"
    monkeypatch.setattr(regex_cache, "cache_path", lambda: path)
    monkeypatch.setattr(regex_cache, "_stored", None)
    monkeypatch.setattr(regex_cache, "_new", {})
    monkeypatch.setattr(regex_cache, "_writable", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(regex_cache.atexit, "register", lambda function: None)  # written by the test, not at exit
    return path


def next_process(monkeypatch) -> None:
    """What a new process starts with: the file not read yet, nothing compiled."""
    monkeypatch.setattr(regex_cache, "_stored", None)
    monkeypatch.setattr(regex_cache, "_new", {})
    monkeypatch.setattr(regex_cache, "_writable", None)


SOURCES = [
    (r"(?P<shares>\d[\d,]*) shares? of (?:our )?common stock", re.I),
    (r"\b(?:January|February|March)\s+(\d{1,2}),?\s+(\d{4})\b", 0),
    (r"(?x) \$ \s* (?P<amount> \d+ ) # verbose, with an inline flag", 0),
    (r"^[^.;:\t]{2,120}$", re.M),
]


def test_a_pattern_compiled_once_is_built_from_its_stored_program_after(cache_file, monkeypatch):
    first = [regex(source, flags) for source, flags in SOURCES]
    assert first == [re.compile(source, flags) for source, flags in SOURCES]
    regex_cache._write()
    stamp, programs = marshal.loads(cache_file.read_bytes())
    assert stamp == regex_cache._STAMP and set(programs) == {(source, int(flags)) for source, flags in SOURCES}

    next_process(monkeypatch)
    monkeypatch.setattr(regex_cache.re, "compile", None)  # a stored program needs no compiling: this would raise
    again = [regex(source, flags) for source, flags in SOURCES]
    assert again == first  # equal patterns: the same flags, source and compiled code
    assert [p.groupindex for p in again] == [p.groupindex for p in first]
    match = again[0].search("Issued 1,250 Shares of our Common Stock")
    assert match is not None and match["shares"] == "1,250" and again[2].groups == 1
    assert again[2].flags == first[2].flags and again[2].flags & re.X


def test_a_file_from_another_python_or_damaged_is_ignored(cache_file, monkeypatch):
    source, flags = SOURCES[0]
    key = (source, int(flags))
    program = regex_cache._program(source, flags)
    other = regex_cache._program(r"something else", 0)  # a valid program, of another pattern
    for content in (
        marshal.dumps((("another python",), {key: other})),
        marshal.dumps((regex_cache._STAMP, {key: ("not", "a program")})),  # the engine's arguments refused
        marshal.dumps((regex_cache._STAMP, {key: (program[0], [1, 2, 3], *program[2:])})),  # code the engine refuses
        marshal.dumps(regex_cache._STAMP)[:7],
        b"",
        b"\x00binary\xff" * 10,
    ):
        cache_file.write_bytes(content)
        next_process(monkeypatch)
        assert regex(source, flags) == re.compile(source, flags)
    with pytest.raises(re.error):  # errors are re.compile's
        regex(r"(unclosed")


def test_nothing_is_kept_or_written_where_python_writes_no_bytecode(cache_file, monkeypatch, tmp_path):
    made = []  # a program made where it cannot be written: every run would compile each pattern twice
    monkeypatch.setattr(regex_cache, "_program", lambda source, flags: made.append(source))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert regex(*SOURCES[1]) == re.compile(*SOURCES[1])
    regex_cache._write()
    assert regex_cache._new == {} and made == [] and not cache_file.exists()

    next_process(monkeypatch)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(
        regex_cache.os, "access", lambda path, mode: False
    )  # a read-only install (root writes anywhere)
    assert regex(*SOURCES[1]) == re.compile(*SOURCES[1])
    assert regex_cache._new == {} and made == []


def test_a_failed_write_leaves_nothing_behind(cache_file, monkeypatch, tmp_path):
    regex(*SOURCES[0])
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(regex_cache, "cache_path", lambda: blocked / "__pycache__" / "regexes")
    regex_cache._write()  # no error: the next process compiles again
    assert blocked.read_text() == "not a folder"
    monkeypatch.setattr(regex_cache, "cache_path", lambda: cache_file)
    monkeypatch.setattr(regex_cache.os, "replace", lambda partial, path: (_ for _ in ()).throw(OSError("disk full")))
    regex_cache._write()
    assert list(tmp_path.iterdir()) == [blocked]  # the partial file removed


def test_the_file_keeps_other_processes_programs_and_stays_bounded(cache_file, monkeypatch):
    regex(*SOURCES[0])
    regex_cache._write()
    next_process(monkeypatch)
    regex(*SOURCES[1])
    regex_cache._write()  # a second process: the first one's program stays
    assert len(marshal.loads(cache_file.read_bytes())[1]) == 2

    monkeypatch.setattr(regex_cache, "MAX_PROGRAMS", 3)
    next_process(monkeypatch)
    for n in range(5):
        regex(rf"word{n}\b")
    regex_cache._write()
    kept = marshal.loads(cache_file.read_bytes())[1]
    assert list(kept) == [(rf"word{n}\b", 0) for n in (2, 3, 4)]  # the newest


def test_a_rules_extraction_stores_every_pattern_it_compiles_and_reads_them_back(tmp_path):
    """The real thing: two `extractor extract` runs. The first stores the programs of the package's patterns,
    each equal to re.compile's; the second builds from them and writes the same extraction."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")  # bytecode and the cache in tmp_path, not the checkout
    outputs = []
    for run in (1, 2):
        output = tmp_path / f"run{run}.json"
        ran = subprocess.run(
            [sys.executable, "-m", "extractor.cli", "extract", str(SEED_000), "--backend", "rules", "-o", str(output)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, ran.stderr
        outputs.append(output.read_text())
    [path] = (tmp_path / "pycache").rglob("regex_cache.*.regexes")
    stamp, programs = marshal.loads(path.read_bytes())
    assert stamp == regex_cache._STAMP and len(programs) > 150  # the loaders', rules', lexicon's, validator's
    built = {key: regex_cache._sre.compile(key[0], *program) for key, program in programs.items()}
    assert all(pattern == re.compile(*key) for key, pattern in built.items())
    assert outputs[0] == outputs[1]


def test_a_program_that_does_not_build_re_compiles_pattern_is_not_kept(cache_file, monkeypatch):
    """The program is made by re's own steps, repeated here; should a Python's steps differ, the pattern it builds
    differs from re.compile's and nothing is stored."""
    wrong = regex_cache.sre_compile._code(regex_cache.sre_parse.parse("other", 0), 0)
    monkeypatch.setattr(regex_cache.sre_compile, "_code", lambda parsed, flags: wrong)
    source, flags = SOURCES[1]
    assert regex(source, flags) == re.compile(source, flags)
    assert regex_cache._new == {}
