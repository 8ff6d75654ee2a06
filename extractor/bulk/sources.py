"""What a bulk run reads: files, folders, globs and zip archives, listed lazily, read one at a time.

A `Source` is one input by reference ("filings/a/R19.htm", "q3.zip::a/R19.htm"); its bytes are read
only when its turn comes, so 50,000 filings never sit in memory together. An input that cannot even
be listed (a missing path, a corrupt archive) is still a Source, carrying its problem, so that it
becomes a failure record instead of vanishing.
"""

from __future__ import annotations

import glob
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from extractor.document import LoadError

MEMBER = "::"  # archive.zip::member/path.htm
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class Source:
    ref: str  # where it is: a path, or archive::member
    document_id: str  # the path below the input it was found in, without its suffix
    size: int | None = None  # bytes, when known before reading
    problem: str | None = None  # why it cannot be read at all
    expected: str | None = None  # the content hash it must still have (a batch import re-reads exported files)


def discover(inputs: list[str]) -> Iterator[Source]:
    """Every input file in a stable order: folders walked recursively by name (hidden names skipped),
    globs expanded (`**` recursive), zip archives opened to their members."""
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            for file in _walk(path):
                yield from _expand(file, _stem(file.relative_to(path)))
        elif path.exists():
            yield from _expand(path, path.stem)
        elif glob.has_magic(given):
            matches = sorted(glob.iglob(given, recursive=True))
            if not matches:
                yield Source(given, Path(given).stem or "input", problem="the pattern matches no file")
            for match in matches:
                if Path(match).is_file():
                    yield from _expand(Path(match), Path(match).stem)
        else:
            yield Source(given, path.stem or "input", problem="no such file or folder")


def count(inputs: list[str]) -> int:
    """How many sources `discover` will give (names only: nothing is read), for the progress bar."""
    return sum(1 for _ in discover(inputs))


def read(source: Source, max_bytes: int) -> bytes:
    """The source's bytes; LoadError (with the reason) when it is missing, too big or unreadable."""
    if source.problem is not None:
        raise LoadError(source.ref, source.problem)
    if source.size is not None and source.size > max_bytes:
        raise LoadError(source.ref, f"{source.size:,} bytes, over the {max_bytes:,}-byte limit (--max-bytes)")
    archive, member = split_ref(source.ref)
    try:
        if member is None:
            with open(archive, "rb") as handle:
                data = handle.read(max_bytes + 1)
        else:
            with zipfile.ZipFile(archive) as opened, opened.open(member) as handle:
                data = handle.read(max_bytes + 1)
    except (OSError, zipfile.BadZipFile, KeyError, EOFError, RuntimeError) as error:
        raise LoadError(source.ref, f"cannot be read ({getattr(error, 'strerror', None) or error})") from error
    if len(data) > max_bytes:
        raise LoadError(source.ref, f"over the {max_bytes:,}-byte limit (--max-bytes)")
    if member is not None and data.startswith(ZIP_MAGIC):
        raise LoadError(source.ref, "a zip archive inside a zip archive is not opened: unpack it first")
    return data


def split_ref(ref: str) -> tuple[str, str | None]:
    """(file path, archive member or None)."""
    if MEMBER in ref:
        archive, member = ref.split(MEMBER, 1)
        return archive, member
    return ref, None


def source_of(ref: str, document_id: str, expected: str) -> Source:
    """A Source again from its reference and content hash (a batch import re-reads exported documents)."""
    archive, member = split_ref(ref)
    try:
        if member is None:
            return Source(ref, document_id, os.stat(archive).st_size, expected=expected)
        with zipfile.ZipFile(archive) as opened:
            return Source(ref, document_id, opened.getinfo(member).file_size, expected=expected)
    except (OSError, zipfile.BadZipFile, KeyError) as error:
        problem = f"cannot be read any more ({getattr(error, 'strerror', None) or error})"
        return Source(ref, document_id, problem=problem, expected=expected)


def _walk(folder: Path) -> Iterator[Path]:
    """Files under a folder, depth first, each folder's entries in name order; symlinked folders
    are not followed (no loops)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def _expand(path: Path, document_id: str) -> Iterator[Source]:
    """A file, or each member of a zip archive (recognised by content, whatever its name)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            is_zip = handle.read(4) == ZIP_MAGIC
    except OSError as error:
        yield Source(str(path), document_id, problem=f"cannot be read ({error.strerror or error})")
        return
    if not is_zip:
        yield Source(str(path), document_id, size)
        return
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError) as error:
        yield Source(str(path), document_id, problem=f"a zip archive that cannot be opened ({error})")
        return
    for info in sorted(members, key=lambda i: i.filename):
        name = PurePosixPath(info.filename)
        if any(part.startswith(".") or part == "__MACOSX" for part in name.parts):
            continue
        yield Source(f"{path}{MEMBER}{info.filename}", f"{document_id}/{_stem(name)}", info.file_size)


def _stem(relative: Path | PurePosixPath) -> str:
    return str(PurePosixPath(*relative.parts).with_suffix("")) if relative.suffix else str(PurePosixPath(*relative.parts))
