"""The files a bulk run writes into its output folder, and the one writer that appends to them.

records.jsonl and facts.csv are append-only logs, written only by `OutputWriter` (one writer, so
lines are never interleaved) and cut back to the manifest's committed lengths when a run starts:
see manifest.py for why that makes them exactly-once. failures.jsonl, facts.parquet and
summary.json are derived from the manifest and facts.csv at the end of every run, written to a
temporary file and renamed, so a kill never leaves half of one.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from extractor.bulk.manifest import Manifest, ManifestError, Status

RECORDS = "records.jsonl"
FACTS_CSV = "facts.csv"
FACTS_PARQUET = "facts.parquet"
FAILURES = "failures.jsonl"
SUMMARY = "summary.json"
MANIFEST = "manifest.sqlite"

FACT_COLUMNS = (
    "document_id",
    "document_ref",
    "document_sha256",
    "status",
    "company",
    "cik",
    "form",
    "fiscal_period_end",
    "concept",
    "value",
    "unit",
    "period_start",
    "period_end",
    "period_instant",
    "award",
    "line_item",
    "bound",
    "year",
    "source_start",
    "source_end",
    "source_text",
)
REQUESTS = "batch requests"  # the --batch-export file, wherever it is


def csv_rows(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


HEADER = csv_rows([list(FACT_COLUMNS)]).encode("utf-8")


def _head(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(size)


def _custom_ids(handle: Any, path: Path) -> set[str]:
    """The custom_ids a Batch API request file holds already (each is written once)."""
    handle.seek(0)
    ids = set()
    for number, line in enumerate(handle, start=1):
        try:
            ids.add(json.loads(line)["custom_id"])
        except (ValueError, KeyError, TypeError) as error:
            raise ManifestError(
                f"{path}:{number}: not a Batch API request line ({error!r}); is this the right file?"
            ) from error
    handle.seek(0, os.SEEK_END)
    return ids


class OutputWriter:
    """Appends documents' lines to the logs; the caller then commits the lengths with the statuses.

    With `requests` (a Batch API input file), request lines go there, each custom_id once: two
    documents asking the very same question share one request (and its answer).
    """

    def __init__(self, folder: Path, manifest: Manifest, requests: Path | None = None, durable: bool = True) -> None:
        self.manifest = manifest
        self.durable = durable  # fsync before each commit: survives a power cut, not just a kill
        _remove_leftovers(folder)
        committed = manifest.lengths()
        paths = {RECORDS: folder / RECORDS, FACTS_CSV: folder / FACTS_CSV} | ({REQUESTS: requests} if requests else {})
        self.handles = {name: self._open(path, committed.get(name)) for name, path in paths.items()}
        self.columns: tuple[str, ...] = FACT_COLUMNS  # those of facts.csv: an earlier version's, in a folder it began
        self.notice: str | None = None
        if self.handles[FACTS_CSV].tell() == 0:
            self.handles[FACTS_CSV].write(HEADER)
        else:
            self.columns = _columns_of(self.handles[FACTS_CSV], paths[FACTS_CSV])
            left_out = [name for name in FACT_COLUMNS if name not in self.columns]
            if left_out:
                self.notice = (
                    f"{paths[FACTS_CSV]} was begun by an earlier version of this tool, without the columns "
                    f"{', '.join(left_out)}: its rows keep its columns, so facts.csv and facts.parquet leave these out "
                    "(records.jsonl has them); start a new --out to have them"
                )
        self.exported: set[str] = set()
        if requests is not None:
            self.exported = _custom_ids(self.handles[REQUESTS], requests)
        manifest.commit([], self._flush())  # every log now has a committed length, the header included

    def _open(self, path: Path, length: int | None) -> BinaryIO:
        """The log, cut back to its committed length. A file this folder never committed to (another
        tool's, or one a user named by mistake) is refused, not emptied."""
        size = path.stat().st_size if path.exists() else 0
        if length is None:
            if size and _head(path, len(HEADER) + 1) != HEADER:
                raise ManifestError(
                    f"{path} exists and was not written by this run: move it, or choose another --out or file"
                )
            length = 0
        if size < length:
            raise ManifestError(
                f"{path} is shorter ({size:,} bytes) than the run manifest recorded ({length:,}): "
                "it was edited or replaced; start a new --out"
            )
        handle = open(path, "r+b" if path.exists() else "w+b")  # noqa: SIM115 - held for the run
        handle.truncate(length)  # drop lines written after the last commit (a killed run)
        handle.seek(length)
        return handle

    def append(self, batch: list[tuple[str | None, str | None, str | None]]) -> dict[str, int]:
        """Append documents' lines (record line, facts rows, batch request lines) and make them
        durable; returns the new lengths, for the manifest commit that makes them count. Safe in a
        thread (fsync is slow)."""
        for record, facts, requests in batch:
            if record:
                self.handles[RECORDS].write(record.encode("utf-8"))
            if facts:
                self.handles[FACTS_CSV].write(self._in_columns(facts).encode("utf-8"))
            for line in (requests or "").splitlines(keepends=True):
                custom_id = json.loads(line)["custom_id"]
                if custom_id not in self.exported:
                    self.exported.add(custom_id)
                    self.handles[REQUESTS].write(line.encode("utf-8"))
        return self._flush()

    def _in_columns(self, facts: str) -> str:
        """Rows (in FACT_COLUMNS) as the file's own columns: one header per file, whichever version began it."""
        if self.columns == FACT_COLUMNS:
            return facts
        where = [FACT_COLUMNS.index(name) for name in self.columns]
        return csv_rows([[row[i] for i in where] for row in csv.reader(io.StringIO(facts, newline=""))])

    def _flush(self) -> dict[str, int]:
        lengths = {}
        for name, handle in self.handles.items():
            handle.flush()
            if self.durable:
                os.fsync(handle.fileno())
            lengths[name] = handle.tell()
        return lengths

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()


def _columns_of(handle: Any, path: Path) -> tuple[str, ...]:
    """The columns a committed facts.csv was begun with: this version's, or an earlier one's (fewer);
    a header naming a column this version does not write is refused (its rows could not be continued)."""
    handle.seek(0)
    first = handle.readline().decode("utf-8", errors="replace")
    handle.seek(0, os.SEEK_END)
    columns = tuple(next(csv.reader([first]), []))
    unknown = [name for name in columns if name not in FACT_COLUMNS]
    if not columns or unknown or len(set(columns)) != len(columns):
        raise ManifestError(
            f"{path} does not start with the header of a facts file this tool writes ({first.strip()[:200]!r}): "
            "it was edited or replaced; start a new --out"
        )
    return columns


def _remove_leftovers(folder: Path) -> None:
    """Temporary files of a run killed while writing its derived files (`_temporary`): the folder is
    locked by this run, so no other writer owns them."""
    for name in (FACTS_PARQUET, FAILURES, SUMMARY):
        for leftover in folder.glob(f".{glob.escape(name)}.*.tmp"):
            leftover.unlink(missing_ok=True)


def _temporary(path: Path) -> str:
    """A new file beside `path`, with the permissions a plain open() would give it (mkstemp's are 0600)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)
    return temporary


@contextmanager
def _replacing(path: Path) -> Iterator[str]:
    """A temporary file that becomes `path` once written; removed if writing it fails (a full disk)."""
    temporary = _temporary(path)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomically(path: Path, text: str) -> None:
    with _replacing(path) as temporary, open(temporary, "w", encoding="utf-8") as out:
        out.write(text)


def write_failures(folder: Path, manifest: Manifest) -> int:
    """failures.jsonl: one line per input whose document failed, with the reason; returns the count."""
    lines = []
    for key, _, document_id, _, reason, stage in manifest.documents([Status.failed]):
        sha = None if key.startswith("unread:") else key
        for ref in manifest.refs(key) or [key.removeprefix("unread:")]:
            lines.append(
                json.dumps(
                    {"ref": ref, "document_id": document_id, "sha256": sha, "stage": stage, "reason": reason},
                    ensure_ascii=False,
                )
            )
    write_atomically(folder / FAILURES, "".join(line + "\n" for line in lines))
    return len(lines)


def write_parquet(folder: Path, superseded: list[str]) -> int:
    """facts.parquet from facts.csv, streamed in row groups; values stay exact (decimal128).
    Facts of superseded documents (see Manifest.superseded) are left out."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    types: dict[str, Any] = {name: pa.string() for name in FACT_COLUMNS}
    types.update(
        {
            "value": pa.decimal128(38, 12),
            "source_start": pa.int64(),
            "source_end": pa.int64(),
            "period_start": pa.date32(),
            "period_end": pa.date32(),
            "period_instant": pa.date32(),
            "fiscal_period_end": pa.date32(),
        }
    )
    convert = pacsv.ConvertOptions(column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False)
    reader = pacsv.open_csv(
        folder / FACTS_CSV,
        convert_options=convert,
        read_options=pacsv.ReadOptions(block_size=1 << 20, use_threads=False),
    )
    rows = 0
    with _replacing(folder / FACTS_PARQUET) as temporary, pq.ParquetWriter(temporary, reader.schema) as out:
        stale = pa.array(superseded, pa.string())
        for batch in reader:
            if superseded:
                batch = batch.filter(pc.invert(pc.is_in(batch.column("document_sha256"), value_set=stale)))
            out.write_batch(batch)
            rows += batch.num_rows
    return rows
