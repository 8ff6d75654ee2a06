"""regex_cache.regex: re.compile's pattern, built from the program an earlier process stored; a file from another
Python, damaged since written, or refused by the engine is not used. regex_cache.derived: a value read from a
regex's parse (patterns.phrases_of), kept in the same file under a digest of the code that read it."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
import tomllib
import warnings
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from fixture_paths import ROOT, SEED_000

from extractor import patterns, regex_cache
from extractor.regex_cache import regex
from extractor.tomlfile import parse_toml


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    """The cache in tmp_path, none read yet, nothing kept by this process, bytecode writing on."""
    path = tmp_path / "regexes"
    monkeypatch.setattr(regex_cache, "cache_path", lambda: path)
    next_process(monkeypatch)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(regex_cache.atexit, "register", lambda function: None)  # written by the test, not at exit
    return path


def next_process(monkeypatch) -> None:
    """What a new process starts with: the file not read yet, nothing compiled."""
    monkeypatch.setattr(regex_cache, "_stored", None)
    monkeypatch.setattr(regex_cache, "_new", {})
    monkeypatch.setattr(regex_cache, "_used", set())
    monkeypatch.setattr(regex_cache, "_writable", None)


def compiles_counted(monkeypatch) -> list[str]:
    """The sources regex_cache hands re.compile from now on (its own `re` only: other modules' stay re's)."""
    counted: list[str] = []

    def compile(source, flags=0):
        counted.append(source)
        return re.compile(source, flags)

    monkeypatch.setattr(regex_cache, "re", SimpleNamespace(compile=compile, DEBUG=re.DEBUG))
    return counted


def file_of(programs: dict, stamp=None, checksum_off: int = 0) -> bytes:
    """A cache file as regex_cache writes one (its stamp, the payload's checksum, the payload), or altered."""
    payload = marshal.dumps(programs)
    return marshal.dumps((stamp or regex_cache._STAMP, zlib.crc32(payload) ^ checksum_off, payload))


def programs_in(path) -> dict:
    stamp, checksum, payload = marshal.loads(path.read_bytes())
    assert stamp == regex_cache._STAMP and checksum == zlib.crc32(payload)
    return marshal.loads(payload)


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
    assert set(programs_in(cache_file)) == {(source, int(flags)) for source, flags in SOURCES}

    next_process(monkeypatch)
    compiled = compiles_counted(monkeypatch)
    again = [regex(source, flags) for source, flags in SOURCES]
    assert compiled == []  # a stored program needs no compiling
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
        file_of({key: other}, stamp=("another python",)),
        file_of({key: other}, checksum_off=1),  # damaged since written
        file_of({key: ("not", "a program")}),  # the engine's arguments refused
        file_of({key: (program[0], [1, 2, 3], *program[2:])}),  # code the engine refuses
        file_of({key: program})[:-9],
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
    assert len(programs_in(cache_file)) == 2

    monkeypatch.setattr(regex_cache, "MAX_PROGRAMS", 3)
    next_process(monkeypatch)
    for n in range(5):
        regex(rf"word{n}\b")
    regex_cache._write()
    kept = programs_in(cache_file)
    assert list(kept) == [(rf"word{n}\b", 0) for n in (2, 3, 4)]  # the newest

    next_process(monkeypatch)
    regex(r"word2\b")  # used by this process: kept before the file's others
    regex(r"fresh\b")
    regex_cache._write()
    assert list(programs_in(cache_file)) == [(r"word4\b", 0), (r"word2\b", 0), (r"fresh\b", 0)]  # word3 dropped


def test_a_rules_extraction_stores_every_pattern_it_compiles_and_reads_them_back(tmp_path):
    """The real thing: two `extractor extract` runs. The first stores the programs of the package's patterns,
    each equal to re.compile's; the second builds from them and writes the same extraction."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")  # bytecode and the cache in tmp_path, not the checkout
    outputs, files = [], []
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
        files.append((path.stat().st_ino, path.stat().st_mtime_ns))
    assert files[1] == files[0]  # the second run found every program and phrase stored: it wrote nothing
    stored = programs_in(path)
    programs = {key: value for key, value in stored.items() if len(key) == 2}
    assert len(programs) > 150  # the loaders', rules', lexicon's, validator's
    tables = {key: value for key, value in stored.items() if len(key) == 3 and key[2] == "tomllib.loads"}
    assert len(tables) == 3  # the lexicon's files, parsed (tomlfile.parse_toml)
    for (path, _, _), (text, table) in tables.items():  # each file by its path, with the text it was parsed from
        assert text == Path(path).read_bytes().decode() and table == tomllib.loads(text)
    phrases = {key: value for key, value in stored.items() if len(key) == 3 and key not in tables}
    assert len(phrases) > 150  # the phrases of the prose cues and lexicon patterns
    assert all(key[2] == patterns._reader() for key in phrases)
    assert all(value == patterns._phrases(regex_cache.sre_parse.parse(*key[:2])) for key, value in phrases.items())
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


def test_a_pattern_is_compiled_once_per_process_and_as_re_compile_would(cache_file, monkeypatch, recwarn):
    compiled = compiles_counted(monkeypatch)
    first, again = regex(r"(?P<year>\d{4})"), regex(r"(?P<year>\d{4})")
    assert compiled == [r"(?P<year>\d{4})"] and again == first and again.groupindex == {"year": 1}

    nested = regex(r"[[a]")  # re warns "Possible nested set" when compiling: once, and it is not kept
    assert nested == re.compile(r"[[a]") and [str(w.message) for w in recwarn] == ["Possible nested set at position 1"]
    assert list(regex_cache._new) == [(r"(?P<year>\d{4})", 0)]
    with pytest.raises(TypeError):  # flags re.compile refuses
        regex("a", 2.0)


def test_a_value_read_from_a_parse_is_kept_and_the_next_process_reads_it_back(cache_file, monkeypatch):
    reads = []

    def read() -> tuple[str, ...]:
        reads.append(1)
        return ("stock option",)

    def valid(value: object) -> bool:
        return type(value) is tuple

    key = (r"stock options? granted", re.I)
    assert regex_cache.derived(*key, "reader 1", read, valid) == ("stock option",)
    assert regex_cache.derived(*key, "reader 1", read, valid) == ("stock option",) and len(reads) == 1
    regex_cache._write()
    assert programs_in(cache_file) == {(key[0], int(key[1]), "reader 1"): ("stock option",)}

    next_process(monkeypatch)
    assert regex_cache.derived(*key, "reader 1", read, valid) == ("stock option",) and len(reads) == 1
    assert regex_cache.derived(*key, "reader 2", read, valid) == ("stock option",) and len(reads) == 2  # new code

    cache_file.write_bytes(file_of({(key[0], int(key[1]), "reader 1"): ["a list"]}))
    next_process(monkeypatch)
    assert regex_cache.derived(*key, "reader 1", read, valid) == ("stock option",) and len(reads) == 3  # refused
    assert regex_cache.derived(*key, "reader 1", lambda: {1, 2}, valid) == ("stock option",)  # made this process

    next_process(monkeypatch)
    assert regex_cache.derived("x", 0, "reader 1", lambda: object, valid) is object  # marshal cannot write it
    assert regex_cache.derived(type("Text", (str,), {})("x"), 0, "reader 1", read, valid) == ("stock option",)
    assert regex_cache.derived("x", 2.0, "reader 1", read, valid) == ("stock option",)  # as re.compile would not
    assert regex_cache._new == {}  # neither kept: a key marshal cannot write would lose the whole file


def test_nothing_derived_is_kept_where_python_writes_no_bytecode(cache_file, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert regex_cache.derived("x", 0, "reader 1", lambda: ("x",), bool) == ("x",)
    regex_cache._write()
    assert regex_cache._new == {} and not cache_file.exists()


def test_reading_that_warns_warns_every_time_and_is_not_kept(cache_file, monkeypatch):
    """re's parser warns of a nested set; a stored value would hide the warning from later runs."""
    for _ in range(2):
        with pytest.warns(FutureWarning, match="Possible nested set"):
            assert patterns.phrases_of(r"[[a] stock", 0) == (" stock",)
        assert regex_cache._new == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning):  # -W error still stops at it
            patterns.phrases_of(r"[[a] stock", 0)
    with pytest.raises(TypeError):  # flags re refuses, refused again once other flags are stored
        patterns.Screened("stock units", 2.0)  # type: ignore[arg-type]


def test_the_values_of_an_older_reader_are_dropped_and_those_used_kept_first(cache_file, monkeypatch):
    old = {("a", 0, "phrases OLD"): ("a",), ("b", 0, "phrases OLD"): ("b",), ("c", 0, "other OLD"): ("c",)}
    cache_file.write_bytes(file_of({**old, ("d", 0, "phrases NEW"): ("d",)}))
    assert regex_cache.derived("d", 0, "phrases NEW", lambda: pytest.fail("read again"), bool) == ("d",)
    regex_cache.derived("e", 0, "phrases NEW", lambda: ("e",), bool)
    regex_cache._write()
    assert programs_in(cache_file) == {
        ("c", 0, "other OLD"): ("c",),
        ("d", 0, "phrases NEW"): ("d",),
        ("e", 0, "phrases NEW"): ("e",),
    }

    monkeypatch.setattr(regex_cache, "MAX_PROGRAMS", 2)
    next_process(monkeypatch)
    regex_cache.derived("d", 0, "phrases NEW", lambda: pytest.fail("read again"), bool)  # used: kept before c and e
    regex(r"fresh\b")
    regex_cache._write()
    assert list(programs_in(cache_file)) == [("d", 0, "phrases NEW"), (r"fresh\b", 0)]


def test_phrases_are_kept_under_a_digest_of_the_code_that_reads_them(cache_file, monkeypatch):
    """A cue's phrases are read from the file by a later process, only under the digest of the running code:
    phrases stored by another version of it are read anew, and its pattern checked."""
    source, flags = r"(?:restricted|performance) stock units? (?:were )?(?:granted|awarded)", re.I
    expected = (" stock unit",)
    assert patterns.phrases_of(source, flags) == expected
    regex_cache._write()
    reader = "required_phrases " + regex_cache.code_digest(patterns.phrases_of, patterns._phrases)
    assert programs_in(cache_file) == {(source, int(flags), reader): expected}

    next_process(monkeypatch)
    with monkeypatch.context() as patched:  # no parse: the stored phrases are used
        patched.setattr(patterns, "_phrases", lambda parsed: pytest.fail("parsed again"))
        assert patterns.Screened(source, flags).phrases == expected

    older = [((source, int(flags), "required_phrases an-older-digest"), ("granted",))]
    refused = [((source, int(flags), reader), bad) for bad in [("",), [" stock unit"], (b" stock unit",)]]
    for key, value in older + refused:
        cache_file.write_bytes(file_of({key: value}))
        next_process(monkeypatch)
        assert patterns.phrases_of(source, flags) == expected
    with pytest.raises(re.error):  # a pattern that is none is never stored: its error is raised again
        patterns.Screened(r"(unclosed", re.I)


def test_a_code_digest_follows_the_code_not_its_place_or_the_hash_seed(tmp_path):
    def compiled(source: str, line: int):
        namespace: dict = {}
        exec(compile("\n" * line + source, "reader.py", "exec"), namespace)
        return namespace["read"]

    body = "def read(word):\n    def inner():\n        return word in {'alpha', 'beta', 'gamma'}\n    return inner()\n"
    digest = regex_cache.code_digest(compiled(body, 0))
    assert regex_cache.code_digest(compiled(body, 40)) == digest  # moved down its file
    assert regex_cache.code_digest(compiled(body.replace("gamma", "delta"), 0)) != digest  # a constant within
    assert regex_cache.code_digest(compiled(body.replace("return inner()", "return not inner()"), 0)) != digest

    script = tmp_path / "digest.py"  # the set above is a frozenset constant, whose order follows the hash seed
    script.write_text(f"from extractor import regex_cache\nexec({body!r})\nprint(regex_cache.code_digest(read))\n")
    seen = {
        subprocess.run(
            [sys.executable, str(script)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(seen) == 1


def test_a_lexicon_file_is_kept_parsed_by_its_path_and_parsed_again_once_edited(cache_file, monkeypatch, tmp_path):
    """tomlfile.parse_toml: one entry per file, with the text it was parsed from; an edit replaces it, in this
    process and the next (the cache does not fill with a lexicon's old versions)."""
    lexicon = tmp_path / "prose.toml"
    first, edited = '[[cue]]\nname = "granted"\n', '[[cue]]\nname = "vested"\n'
    assert parse_toml(lexicon, first) == tomllib.loads(first)
    parse_toml(lexicon, first)["cue"][0]["name"] = "changed by a caller"  # a copy: the kept tables stay as parsed
    assert parse_toml(lexicon, first) == tomllib.loads(first)
    assert parse_toml(lexicon, edited) == tomllib.loads(edited)  # the file changed while this process ran
    regex_cache._write()
    assert programs_in(cache_file) == {(str(lexicon), 0, "tomllib.loads"): (edited, tomllib.loads(edited))}

    next_process(monkeypatch)
    monkeypatch.setitem(sys.modules, "tomllib", None)  # a kept text is not parsed: tomllib is not even imported
    assert parse_toml(lexicon, edited) == tomllib.loads(edited)
    with pytest.raises(ImportError):
        parse_toml(lexicon, first)  # edited back: parsed again
