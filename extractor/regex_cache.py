"""Compiled regexes kept between runs, as Python keeps compiled modules: `regex` is `re.compile`, served from a
file beside the package's bytecode.

Compiling is the slow part of a regex: Python parses it and generates its program in pure Python, about 90 µs
each. The package compiles some 200 of them (its rules, loaders, validator and lexicon) before a command's first
extraction: a tenth of `extractor extract`'s start-up. The engine itself (`_sre.compile`) builds a pattern from
its program in microseconds, so the program of each pattern compiled is written to
`__pycache__/regex_cache.<tag>.regexes` when the process ends, and later processes build from it.

Safe by construction: a program is stored only after the pattern built from it compares equal to
`re.compile`'s (pattern equality compares the compiled code), the file is read only by the Python build and
regex engine that wrote it, `_sre.compile` validates every program it is given, and anything unreadable, or a
failure of any step, falls back to `re.compile`. Where Python would not write bytecode (`PYTHONDONTWRITEBYTECODE`,
a read-only install) nothing is kept or written, and a pattern costs what re.compile does; the file is replaced
whole (`os.replace`), so concurrent processes never read half of one.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine re.compile hands its programs to (no stubs)
import atexit
import contextlib
import marshal
import os
import re
import sys
import threading
from importlib.util import cache_from_source
from pathlib import Path
from re import _compiler as sre_compile  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

Key = tuple[str, int]  # (source, flags as given)
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]  # _sre.compile's arguments after source

# What the programs depend on: a file written by another Python build or engine version is not read.
_STAMP = ("extractor regex programs 1", sys.version, _sre.MAGIC, _sre.CODESIZE, sys.maxunicode)
MAX_PROGRAMS = 2048  # the file's bound: a lexicon edited many times leaves old patterns behind

_lock = threading.Lock()
_stored: dict[Key, Program] | None = None  # the file's programs, read on first use
_new: dict[Key, Program] = {}  # compiled by this process and not in the file
_writable: bool | None = None  # whether programs are kept (and written at exit), known at the first miss


def regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)` (the same pattern: equal, the same errors), built from its stored program
    when an earlier run compiled it."""
    key = (source, int(flags))
    program = _programs().get(key)
    if program is not None:
        try:
            return _sre.compile(source, *program)
        except Exception:  # a program the engine refuses (TypeError, RuntimeError): compiled anew below
            _programs().pop(key, None)
    compiled = re.compile(source, flags)
    _remember(key, compiled)
    return compiled


def cache_path() -> Path | None:
    """Where the programs are kept (beside this module's bytecode, PYTHONPYCACHEPREFIX honoured), or None."""
    try:
        return Path(cache_from_source(__file__)).with_suffix(".regexes")
    except (NotImplementedError, ValueError):  # an interpreter that keeps no bytecode
        return None


def _programs() -> dict[Key, Program]:
    global _stored
    if _stored is None:
        with _lock:
            if _stored is None:
                _stored = _read(cache_path())
    return _stored


def _read(path: Path | None) -> dict[Key, Program]:
    if path is None:
        return {}
    try:
        stamp, programs = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):  # none yet, unreadable, or not ours
        return {}
    return programs if stamp == _STAMP and isinstance(programs, dict) else {}


def _program(source: str, flags: int) -> Program:
    """What re._compiler.compile hands _sre.compile for `source` (its own steps, in its order)."""
    parsed = sre_parse.parse(source, flags)
    code = [int(op) for op in sre_compile._code(parsed, flags)]  # opcodes are int subclasses: marshal wants ints
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _remember(key: Key, compiled: re.Pattern[str]) -> None:
    """Keep the program of a pattern just compiled, if the pattern it builds is re.compile's; written at exit.
    Making the program compiles the pattern a second time: only where it can be written."""
    global _writable
    if _writable is None:
        _writable = _may_write(cache_path())
    if not _writable:
        return
    try:
        program = _program(*key)
        if _sre.compile(key[0], *program) != compiled:
            return
    except Exception:  # an engine whose internals differ: the pattern is just not kept
        return
    with _lock:
        if not _new:
            atexit.register(_write)
        _new[key] = program


def _may_write(path: Path | None) -> bool:
    """As Python decides for bytecode: not under PYTHONDONTWRITEBYTECODE, nor where the folder (or the first of its
    parents that exists, to be made as for a PYTHONPYCACHEPREFIX) is not writable."""
    if path is None or sys.dont_write_bytecode:
        return False
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return os.access(folder, os.W_OK)


def _write() -> None:
    """Merge this process's programs into the file (re-read: another process may have written it since)."""
    path = cache_path()
    if path is None or not _new:
        return
    programs: dict[Key, Any] = {**_read(path), **_new}
    if len(programs) > MAX_PROGRAMS:  # the newest kept: this process's are last
        programs = dict(list(programs.items())[-MAX_PROGRAMS:])
    import tempfile  # only when writing: most runs find every program stored

    with contextlib.suppress(OSError):  # a read-only install, a full disk: the next run compiles again
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
        try:
            with os.fdopen(handle, "wb") as out:
                marshal.dump((_STAMP, programs), out)
            os.chmod(partial, Path(__file__).stat().st_mode & 0o666)  # readable by whom the code is, as a .pyc
            os.replace(partial, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(partial)
