"""Compiled regexes kept between runs, as Python keeps compiled modules: `regex` is `re.compile`, served from a
file beside the package's bytecode; `derived` keeps, in the same file, what the package reads from a regex's parse.

Compiling is the slow part of a regex: Python parses it and generates its program in pure Python, about 90 µs
each. The package compiles some 200 of them (its rules, loaders, validator and lexicon) before a command's first
extraction: a tenth of `extractor extract`'s start-up. The engine itself (`_sre.compile`) builds a pattern from
its program in microseconds, so the program of each pattern compiled is written to
`__pycache__/regex_cache.<tag>.regexes` when the process ends, and later processes build from it. For the
package's own patterns, not a document's (a pattern made of a printed number is re.compile's, kept in re's
in-process cache): the file holds what every run needs.

A program is stored only after the pattern built from it compares equal to `re.compile`'s (pattern equality
compares the compiled code) and its parse raised no warning; the file is read only by the Python build and regex
engine that wrote it and only when its checksum holds, `_sre.compile` validates every program it is given, and
anything unreadable, or a failure of any step, falls back to `re.compile`. The file is trusted as a `.pyc` is:
whoever may rewrite it may rewrite the code. Where Python would not write bytecode (`PYTHONDONTWRITEBYTECODE`, a
read-only install) nothing is kept or written, and a pattern costs what re.compile does; the file is replaced
whole (`os.replace`), so concurrent processes never read half of one.

Parsing is also what the rules backend pays to screen texts: the phrases every match of a cue contains are read
from its parse (patterns.phrases_of), 182 parses at each start. `derived` keeps such a value keyed by the pattern
and the reader: a name, then a digest of the code that reads (`code_digest` of the code running, not of a file
that may have changed since it was imported), so a changed reader is never served its old answers. When the file
is written, the values of a reader by another digest (an older version of that code) are dropped. The lexicon's
TOML files are kept the same way, parsed (tomlfile.parse_toml: the source is the file's text, the reader
tomllib, which the stamp's Python version fixes).
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
import warnings
import zlib
from collections.abc import Callable
from importlib.util import cache_from_source
from pathlib import Path
from re import _compiler as sre_compile  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from types import CodeType
from typing import Any, TypeVar, cast

Key = tuple[str, int]  # (source, flags as given)
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]  # _sre.compile's arguments after source
DerivedKey = tuple[str, int, str]  # (source, flags, the name of the code that read the value)
Value = TypeVar("Value")

# What the programs depend on: a file written by another Python build or engine version is not read.
_STAMP = ("extractor regex programs 2", sys.version, _sre.MAGIC, _sre.CODESIZE, sys.maxunicode)
MAX_PROGRAMS = 2048  # the file's bound (programs and values): a lexicon edited many times leaves old patterns behind

_lock = threading.Lock()
_stored: dict[Key | DerivedKey, Any] | None = None  # the file's programs and derived values, read on first use
_new: dict[Key | DerivedKey, Any] = {}  # made by this process and not in the file
_used: set[Key | DerivedKey] = set()  # what this process took from the file: kept first when the file is full
_writable: bool | None = None  # whether programs are kept (and written at exit), known at the first miss


def regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)` (an equal pattern, the same errors), built from its stored program when an
    earlier run, or this one, compiled it."""
    if type(source) is not str or not isinstance(flags, int) or flags & re.DEBUG:  # as re.compile, never kept
        return re.compile(source, flags)
    key = (source, int(flags))
    program = _programs().get(key)
    if program is not None:
        try:
            pattern: re.Pattern[str] = _sre.compile(source, *program)
        except Exception:  # a program the engine refuses (TypeError, RuntimeError): compiled anew below
            _programs().pop(key, None)
        else:
            _used.add(key)
            return pattern
    program = _new.get(key)
    if program is not None:
        return _sre.compile(source, *program)  # made by this process from its own parse: cannot be refused
    compiled = re.compile(source, flags)
    _remember(key, compiled)
    return compiled


def derived(source: str, flags: int, reader: str, read: Callable[[], Value], valid: Callable[[Any], bool]) -> Value:
    """`read()`, a value read from the pattern's parse (or another text: a TOML file's) by the code `reader`
    names ("NAME DIGEST", see `code_digest`), as an earlier run (or this one) stored it. Kept only where programs are kept (bytecode is
    written), only a value marshal gives back equal (tuples of strings, numbers), and not when reading it warned (a
    stored value could not warn again); a stored value `valid` refuses is read anew, as a program the engine
    refuses is compiled anew. A source or flags re.compile would not take as such are read, never kept."""
    if type(source) is not str or type(flags) not in (int, re.RegexFlag):
        return read()
    key = (source, int(flags), reader)
    stored = _programs().get(key)
    if stored is not None:
        if valid(stored):
            _used.add(key)
            return cast(Value, stored)
        _programs().pop(key, None)
    if key in _new and valid(_new[key]):  # read by this process (a file's text read again may have changed)
        return cast(Value, _new[key])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = read()
    for warning in caught:  # given as reading gave them, under the caller's filters
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if _writing() and not caught:
        with contextlib.suppress(ValueError):  # a value marshal cannot write is just not kept
            if marshal.loads(marshal.dumps(cast(Any, value))) == value:
                _keep(key, value)
    return value


def code_digest(*functions: Callable[..., object]) -> str:
    """A SHA-256 of the functions' running code (bytecode, constants, names; the functions defined inside them
    included; not where it lies in its file), to name a `derived` reader: the same for a module run from its
    source or its .pyc, another once the code changes."""
    import hashlib  # only when a reader is first named

    return hashlib.sha256(repr(tuple(_code_shape(f.__code__) for f in functions)).encode()).hexdigest()


def _code_shape(code: CodeType) -> tuple[object, ...]:
    return (
        code.co_code,
        tuple(_constant_shape(constant) for constant in code.co_consts),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
    )


def _constant_shape(constant: object) -> object:
    if isinstance(constant, CodeType):
        return _code_shape(constant)
    if isinstance(constant, frozenset):  # its order follows the hash seed
        return ("frozenset", tuple(sorted(map(repr, constant))))
    if isinstance(constant, tuple):
        return tuple(_constant_shape(item) for item in constant)
    return (type(constant).__name__, repr(constant))


def cache_path() -> Path | None:
    """Where the programs and values are kept (beside this module's bytecode, PYTHONPYCACHEPREFIX honoured), or
    None."""
    try:
        return Path(cache_from_source(__file__)).with_suffix(".regexes")
    except (NotImplementedError, ValueError):  # an interpreter that keeps no bytecode
        return None


def _programs() -> dict[Key | DerivedKey, Any]:
    global _stored
    if _stored is None:
        with _lock:
            if _stored is None:
                _stored = _read(cache_path())
    return _stored


def _read(path: Path | None) -> dict[Key | DerivedKey, Any]:
    if path is None:
        return {}
    try:
        stamp, checksum, payload = marshal.loads(path.read_bytes())
        if stamp != _STAMP or checksum != zlib.crc32(payload):
            return {}
        programs = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):  # none yet, unreadable, or not ours
        return {}
    return programs if isinstance(programs, dict) else {}


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
    Making the program parses the pattern a second time: only where it can be written, and silently (re.compile
    has given its warnings; a pattern that warns is not kept, as a stored one could not warn again)."""
    if not _writing():
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            program = _program(*key)
        if _sre.compile(key[0], *program) != compiled:
            return
    except Exception:  # a warning, or an engine whose internals differ: the pattern is just not kept
        return
    _keep(key, program)


def _writing() -> bool:
    """Whether this process keeps what it makes (known at its first miss)."""
    global _writable
    if _writable is None:
        _writable = _may_write(cache_path())
    return _writable


def _keep(key: Key | DerivedKey, value: object) -> None:
    """Hold a value for the file, written when the process ends."""
    with _lock:
        if not _new:
            atexit.register(_write)
        _new[key] = value


def _may_write(path: Path | None) -> bool:
    """As Python decides for bytecode: not under PYTHONDONTWRITEBYTECODE, nor where the folder (or the first of its
    parents that exists, to be made as for a PYTHONPYCACHEPREFIX) is not a writable folder."""
    if path is None or sys.dont_write_bytecode:
        return False
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK)


def _outdated(key: Key | DerivedKey, names: set[str], readers: set[str]) -> bool:
    """A value of a reader named as one this process used, by another digest: an older version of its code."""
    return len(key) == 3 and key[2] not in readers and key[2].rpartition(" ")[0] in names


def _write() -> None:
    """Merge this process's programs and values into the file (re-read: another process may have written it
    since), without the values of an older version of a reader this process used. When it is full, what this
    process used is kept before the file's others."""
    import tempfile  # only when writing: most runs find every program stored

    path = cache_path()
    with _lock:
        new, used = dict(_new), set(_used)
    if path is None or not new:
        return
    with contextlib.suppress(Exception):  # a read-only folder, a full disk: the next run compiles again
        old = _read(path)
        readers = {key[2] for key in (*new, *used) if len(key) == 3}
        names = {reader.rpartition(" ")[0] for reader in readers}
        old = {key: value for key, value in old.items() if not _outdated(key, names, readers)}
        programs = {key: old[key] for key in old if key not in used}
        programs.update((key, old[key]) for key in old if key in used)
        programs.update(new)
        if len(programs) > MAX_PROGRAMS:
            programs = dict(list(programs.items())[-MAX_PROGRAMS:])
        payload = marshal.dumps(programs)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
        try:
            with os.fdopen(handle, "wb") as out:
                marshal.dump((_STAMP, zlib.crc32(payload), payload), out)
            os.chmod(partial, Path(__file__).stat().st_mode & 0o666)  # readable by whom the code is, as a .pyc
            os.replace(partial, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(partial)
