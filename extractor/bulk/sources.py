r"""What a bulk run reads: files, folders, globs and zip archives, listed lazily, read one at a time.

A `Source` is one input by reference ("filings/a/R19.htm", "q3.zip::a/R19.htm"); its bytes are read
only when its turn comes, so 50,000 filings never sit in memory together. An input that cannot even
be listed (a missing path, a FIFO, a symlink loop, an unreadable folder, a corrupt archive, a member
named to climb out of its archive) is still a Source, carrying its problem, so that it becomes a
failure record instead of vanishing or hanging the run.

A ref is text that reads back to exactly one file (`split_ref`): in its path part a backslash and a
colon are escaped (`\\`, `\:`) so that "a::b.txt" the file cannot be member "b.txt" of archive "a",
and bytes of a name that are not UTF-8 are written `\xe9`, so every ref can be stored and printed.
"""

from __future__ import annotations

import errno
import glob
import itertools
import os
import re
import stat
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from extractor.document import LoadError
from extractor.regex_cache import regex

MEMBER = "::"  # archive.zip::member/path.htm
ZIP_MAGIC = b"PK\x03\x04"
_ESCAPED = regex(r"\\(x[0-9a-f]{2}|.)", re.DOTALL)
_SPECIAL = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


@dataclass(frozen=True)
class Source:
    ref: str  # where it is: a path, or archive::member
    document_id: str  # the path below the input it was found in, without its suffix
    size: int | None = None  # bytes, when known before reading
    problem: str | None = None  # why it cannot be read at all
    expected: str | None = None  # the content hash it must still have (a batch import re-reads exported files)
    root: str | None = None  # the folder a relative ref is relative to (default: the working directory)


def discover(inputs: list[str], skip: Path | None = None) -> Iterator[Source]:
    """Every input file once, in a stable order: folders walked recursively by name (hidden names
    skipped), globs expanded (`**` recursive; a folder it matches is walked), zip archives opened to
    their members. A document's id is its path below the folder given (or below a glob's fixed
    part, or its name), suffix kept, so `a/x.htm` and `a/x.txt` stay two ids. Files under `skip`
    (the run's own output folder) are never inputs."""
    seen: set[str] = set()
    skipped = os.path.join(skip.resolve(), "") if skip is not None else None  # the folder, resolved, and a separator
    for given in inputs:
        path = Path(given)
        if os.path.lexists(path) or not glob.has_magic(given):
            found = _file_or_folder(path, path if path.is_dir() else path.parent)
        else:
            found = _matches(given)
        for source in found:
            if skipped is not None and _is_below(split_ref(source.ref)[0], skipped):
                continue
            if source.ref not in seen:  # 'data/**' matches a folder and the files in it
                seen.add(source.ref)
                yield source


def _is_below(path: str, folder: str) -> bool:
    """Whether the file, links followed, is under `folder` (resolved, ending in a separator): what
    `folder in Path(path).resolve().parents` says, in a third of its time (asked of every input, twice). A symlink
    loop is not below anything: it becomes a failure record when read, as Path.resolve's check for it made it
    (os.path.realpath does not raise on one)."""
    real = os.path.realpath(path)
    if not real.startswith(folder):
        return False
    try:
        os.stat(real)
    except OSError as error:
        return error.errno != errno.ELOOP
    return True


def ref_of(path: str, member: str | None = None) -> str:
    """The ref of a file, or of an archive's member: escaped so that it reads back to them alone."""
    escaped = printable(path.replace("\\", "\\\\").replace(":", "\\:"))
    return escaped if member is None else f"{escaped}{MEMBER}{member}"


def printable(name: str) -> str:
    """A name with the bytes that are not UTF-8 written as `\\xe9` (a document id: printed, stored)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def split_ref(ref: str) -> tuple[str, str | None]:
    """(file path, archive member or None): the inverse of `ref_of`."""
    if "\\" not in ref and ":" not in ref:  # nothing escaped, no member: most refs
        return ref, None
    parts: list[str] = []
    position = 0
    while position < len(ref):
        if ref.startswith("\\", position) and (escape := _ESCAPED.match(ref, position)):
            code = escape.group(1)
            parts.append(chr(0xDC00 + int(code[1:], 16)) if len(code) == 3 else code)
            position = escape.end()
        elif ref.startswith(MEMBER, position):
            return "".join(parts), ref[position + len(MEMBER) :]
        else:
            parts.append(ref[position])
            position += 1
    return "".join(parts), None


def _matches(pattern: str) -> Iterator[Source]:
    matches = sorted(glob.iglob(pattern, recursive=True))
    fixed = Path(*list(itertools.takewhile(lambda part: not glob.has_magic(part), Path(pattern).parts)) or ["."])
    yield from _unlisted(fixed, pattern)
    if not matches:
        yield Source(ref_of(pattern), printable(Path(pattern).name) or "input", problem="the pattern matches no file")
    for match in matches:
        yield from _file_or_folder(Path(match), fixed)


def _unlisted(fixed: Path, pattern: str) -> Iterator[Source]:
    """Folders a pattern would look into but cannot list (glob skips them without a word): down to
    the pattern's depth below its fixed part, or all the way for `**`."""
    if not fixed.is_dir():
        return
    wild = Path(pattern).parts[len(fixed.parts) :]
    depth = None if "**" in wild else len(wild) - 1
    unreadable: list[OSError] = []
    for root, dirs, _ in os.walk(fixed, onerror=unreadable.append):
        if depth is not None and len(Path(root).relative_to(fixed).parts) >= depth:
            dirs.clear()
    yield from _unreadable_folders(unreadable, fixed)


def _file_or_folder(path: Path, base: Path) -> Iterator[Source]:
    """A file, or the files under a folder, with ids relative to `base`."""
    if path.is_dir():
        for file in _walk(path):
            if isinstance(file, Source):
                yield file
            else:
                yield from _expand(file, _relative(file, base))
    elif os.path.lexists(path):  # a file, or a link that leads nowhere (read says why)
        yield from _expand(path, _relative(path, base))
    else:
        yield Source(ref_of(str(path)), printable(path.name) or "input", problem="no such file or folder")


def _relative(path: Path, base: Path) -> str:
    try:
        return printable(path.relative_to(base).as_posix())
    except ValueError:
        return printable(path.name)


def count(inputs: list[str], skip: Path | None = None) -> int:
    """How many sources `discover` will give (names only: nothing is read), for the progress bar."""
    return sum(1 for _ in discover(inputs, skip))


def read(source: Source, max_bytes: int) -> bytes:
    """The source's bytes; LoadError (with the reason) when it is missing, too big or unreadable."""
    if source.problem is not None:
        raise LoadError(source.ref, source.problem)
    if source.size is not None and source.size > max_bytes:
        raise LoadError(source.ref, f"{source.size:,} bytes, over the {max_bytes:,}-byte limit (--max-bytes)")
    archive, member = split_ref(source.ref)
    if source.root is not None:
        archive = os.path.join(source.root, archive)
    try:
        if member is None:
            with _open_regular(archive) as handle:
                data = handle.read(max_bytes + 1)
        else:
            with _archives.open(archive) as opened, opened.open(member) as handle:
                data = handle.read(max_bytes + 1)
    except (OSError, zipfile.BadZipFile, KeyError, EOFError, RuntimeError) as error:
        raise LoadError(source.ref, f"cannot be read ({getattr(error, 'strerror', None) or error})") from error
    if len(data) > max_bytes:
        raise LoadError(source.ref, f"over the {max_bytes:,}-byte limit (--max-bytes)")
    if member is not None and data.startswith(ZIP_MAGIC):
        raise LoadError(source.ref, "a zip archive inside a zip archive is not opened: unpack it first")
    return data


def source_of(ref: str, document_id: str, expected: str, root: str) -> Source:
    """A Source again from its reference (relative to `root`, the folder the export ran in) and its
    content hash: a batch import re-reads the documents its export listed."""
    archive, member = split_ref(ref)
    where = os.path.join(root, archive)
    try:
        if member is None:
            size = os.stat(where).st_size
        else:
            with zipfile.ZipFile(where) as opened:
                size = opened.getinfo(member).file_size
    except (OSError, zipfile.BadZipFile, KeyError) as error:
        problem = f"cannot be read any more ({getattr(error, 'strerror', None) or error})"
        return Source(ref, document_id, problem=problem, expected=expected, root=root)
    return Source(ref, document_id, size, expected=expected, root=root)


class _OpenArchives:
    """The zip archive being read, kept open while its members are read one after another: opening
    one parses its whole directory, which for 50,000 members takes longer than reading one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int, int] | None = None  # path, size, modification time
        self._archive: zipfile.ZipFile | None = None

    @contextmanager
    def open(self, path: str) -> Iterator[zipfile.ZipFile]:
        with self._lock:  # sources are read one at a time; the lock keeps it so
            status = os.stat(path)
            key = (path, status.st_size, status.st_mtime_ns)  # an archive rewritten in place is opened again
            if self._key != key or self._archive is None:
                if self._archive is not None:
                    self._archive.close()
                self._archive, self._key = None, None
                self._archive, self._key = zipfile.ZipFile(path), key
            yield self._archive


_archives = _OpenArchives()


def _walk(folder: Path) -> Iterator[Path | Source]:
    """Files under a folder, depth first, each folder's entries in name order; symlinked folders
    are not followed (no loops). A folder that cannot be listed is a Source with its problem."""
    unreadable: list[OSError] = []
    for root, dirs, files in os.walk(folder, onerror=unreadable.append):
        yield from _unreadable_folders(unreadable, folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name
    yield from _unreadable_folders(unreadable, folder)


def _unreadable_folders(errors: list[OSError], base: Path) -> Iterator[Source]:
    for error in errors:
        where = str(error.filename)
        yield Source(
            ref_of(where),
            _relative(Path(where), base),
            problem=f"a folder that cannot be read ({error.strerror or error})",
        )
    errors.clear()


@contextmanager
def _open_regular(path: str | Path) -> Iterator[BinaryIO]:
    """Open a regular file to read; OSError for anything else. Opened without waiting (a FIFO with
    no writer would block open() forever) and checked on the open handle, so a file swapped for a
    FIFO after it was listed cannot hang the run either."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
        if kind != stat.S_IFREG:
            raise OSError(f"not a regular file ({_SPECIAL.get(kind, 'a special file')})")
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle


def _expand(path: Path, document_id: str) -> Iterator[Source]:
    """A file, or each member of a zip archive (recognised by content, whatever its name)."""
    ref = ref_of(str(path))
    try:
        with _open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            is_zip = handle.read(4) == ZIP_MAGIC
    except OSError as error:
        yield Source(ref, document_id, problem=_unreadable(error))
        return
    if not is_zip:
        yield Source(ref, document_id, size)
        return
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError) as error:
        yield Source(ref, document_id, problem=f"a zip archive that cannot be opened ({error})")
        return
    for info in sorted(members, key=lambda i: i.filename):
        name = PurePosixPath(info.filename.replace("\\", "/"))
        member_id = f"{document_id}/{name.as_posix()}"
        if name.is_absolute() or ".." in name.parts:  # never read outside the archive, nor an id that climbs
            problem = "refused: an archive member whose name climbs out of the archive (absolute, or with '..')"
            yield Source(ref_of(str(path), info.filename), member_id, problem=problem)
        elif not any(part.startswith(".") or part == "__MACOSX" for part in name.parts):
            yield Source(ref_of(str(path), info.filename), member_id, info.file_size)


def _unreadable(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "cannot be read (a symbolic link that loops)"
    if error.errno == errno.ENOENT:
        return "cannot be read (a symbolic link to nothing)" if os.path.islink(error.filename or "") else "no such file"
    return error.strerror and f"cannot be read ({error.strerror})" or str(error)
