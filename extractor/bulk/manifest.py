"""The run manifest: which documents a bulk run has finished, in SQLite (WAL), the source of truth.

A document is keyed by the SHA-256 of its bytes, so the same filing under two names is extracted
once and a renamed file is not extracted again. Each input name is kept too (`inputs`), so a
duplicate is visible, never silently dropped.

Exactly-once output: the writer appends a document's lines to the output files, then, in one
transaction, marks the document finished and stores each file's new length (`outputs`). On open,
every output file is cut back to its stored length. A kill between the append and the commit thus
loses the half-written lines and leaves the document pending; one after the commit loses nothing.
The connection is in autocommit mode (a WAL reader never holds a transaction open), so every write
that is more than one statement opens its own `BEGIN IMMEDIATE` (`_transaction`): Python's
`with connection:` alone would commit each statement by itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from extractor.bulk.sources import MEMBER, ref_of
from extractor.errors import ExtractorError


class Status(str, Enum):
    pending = "pending"  # seen, not finished (in flight when the run stopped)
    done = "done"  # extracted and passed validation
    review = "review"  # extracted, failed validation: for the correction queue
    failed = "failed"  # could not be read or extracted; `reason` says why
    exported = "exported"  # its requests are in a Batch API file, waiting for the results

    @property
    def finished(self) -> bool:
        return self in (Status.done, Status.review, Status.failed)


class ManifestError(ExtractorError):
    """The output folder cannot be used: another run's settings, edited outputs, a locked database."""


def _lock_folder(folder: Path) -> Any:
    """An exclusive lock on the output folder: two runs appending to one folder would corrupt it."""
    handle = open(folder / ".lock", "a+")  # noqa: SIM115 - held until the manifest closes
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as error:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise ManifestError(
            f"{folder} is in use by another run ({holder}); wait for it, or choose another --out"
        ) from error
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


@dataclass(frozen=True)
class Finished:
    """One document's outcome, as the writer commits it."""

    key: str
    status: Status
    reason: str | None = None
    stage: str | None = None  # read, load, extract, validate
    seconds: float = 0.0
    usage: dict[str, Any] | None = None


_SCHEMA = """
create table if not exists meta (key text primary key, value text not null);
create table if not exists documents (
    key text primary key,          -- sha256 of the bytes, or 'unread:<ref>' when they could not be read
    ref text not null,             -- the first input it was found as
    document_id text not null,
    status text not null,
    reason text,
    stage text,
    seconds real not null default 0,
    usage text,                    -- JSON: LLM requests, tokens, cost
    updated real not null
);
create index if not exists documents_status on documents (status);
create table if not exists inputs (ref text primary key, key text not null);
create table if not exists outputs (name text primary key, length integer not null);
"""


class Manifest:
    """Open (or create) `<out>/manifest.sqlite`, holding the folder's lock until `close`; all calls
    come from one thread (the run's event loop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = _lock_folder(path.parent)
        try:
            self.db = sqlite3.connect(path, timeout=5, isolation_level=None)
            self.db.execute("pragma journal_mode=wal")
            self.db.execute("pragma synchronous=normal")
            self.db.executescript(_SCHEMA)
            self._escape_old_refs()
        except sqlite3.DatabaseError as error:
            raise ManifestError(f"{path}: not a usable run manifest ({error})") from error

    def _escape_old_refs(self) -> None:
        """Refs stored before they were escaped (sources.ref_of) are rewritten once, so a resumed run
        finds its inputs under the refs it lists now (a ':' or '\\' in a path reads differently)."""
        if self.recall("refs") == "escaped":
            return
        with self._transaction():
            for table in ("inputs", "documents"):
                rows = self.db.execute(
                    f"select rowid, ref from {table} where ref like '%:%' or ref like '%\\%'"
                ).fetchall()
                for rowid, ref in rows:
                    path, member = ref.split(MEMBER, 1) if MEMBER in ref else (ref, None)
                    self.db.execute(f"update {table} set ref = ? where rowid = ?", (ref_of(path, member), rowid))
            self._set_meta("refs", json.dumps("escaped"))

    def close(self) -> None:
        self.db.close()
        self._lock.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One real transaction: every statement inside commits, or none does."""
        self.db.execute("begin immediate")
        try:
            yield self.db
            self.db.execute("commit")
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back by itself (a full disk, an I/O error)
                self.db.execute("rollback")
            raise

    # settings ---------------------------------------------------------------------------------

    def check_settings(self, settings: dict[str, Any]) -> None:
        """The first run stores its settings; a later run in the same folder must use the same ones,
        or its records would mix two extractors' output."""
        row = self.db.execute("select value from meta where key = 'settings'").fetchone()
        if row is None:
            self._set_meta("settings", json.dumps(settings, sort_keys=True))
            return
        stored = json.loads(row[0])
        changed = {name: (stored.get(name), value) for name, value in settings.items() if stored.get(name) != value}
        if changed:
            said = "; ".join(f"{name}: {old!r} before, {new!r} now" for name, (old, new) in sorted(changed.items()))
            raise ManifestError(
                f"{self.path.parent} holds a run with other settings ({said}); "
                "resume it with the same settings, or choose another --out"
            )

    def settings(self) -> dict[str, Any] | None:
        return self.recall("settings")

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("insert or replace into meta (key, value) values (?, ?)", (key, value))

    def remember(self, key: str, value: Any) -> None:
        """Keep a setting a later run needs (the LLM request settings of a batch export)."""
        self._set_meta(key, json.dumps(value, sort_keys=True))

    def recall(self, key: str) -> Any:
        row = self.db.execute("select value from meta where key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    # documents --------------------------------------------------------------------------------

    def status(self, key: str) -> Status | None:
        row = self.db.execute("select status from documents where key = ?", (key,)).fetchone()
        return Status(row[0]) if row else None

    def saw(self, ref: str, key: str, document_id: str) -> None:
        """Record an input and its document (pending unless already known)."""
        now = time.time()
        with self._transaction():
            self.db.execute("insert or replace into inputs (ref, key) values (?, ?)", (ref, key))
            self.db.execute(
                "insert or ignore into documents (key, ref, document_id, status, updated) values (?, ?, ?, 'pending', ?)",
                (key, ref, document_id, now),
            )

    def reopen(self, statuses: Iterable[Status], stage: str | None = None, to: Status = Status.pending) -> int:
        """Set documents of these statuses (failed at `stage`, if given) to `to` again (--retry-failed);
        returns how many."""
        names = [s.value for s in statuses]
        query = f"update documents set status = ?, reason = null where status in ({','.join('?' * len(names))})"
        if stage is not None:
            query += " and stage = ?"
        with self._transaction():
            cursor = self.db.execute(query, [to.value, *names, *([stage] if stage is not None else [])])
        return cursor.rowcount

    def forget_unread(self) -> None:
        """Drop the inputs that could not be read last time: this run lists and reads them again."""
        with self._transaction():
            self.db.execute("delete from inputs where key like 'unread:%'")
            self.db.execute("delete from documents where key like 'unread:%'")

    def superseded(self) -> list[str]:
        """Documents no input holds any more (the file was edited, or fixed after failing): their
        lines stay in the logs, but they are left out of every count, failures.jsonl and facts.parquet."""
        return [
            key for (key,) in self.db.execute("select key from documents where key not in (select key from inputs)")
        ]

    def commit(self, finished: list[Finished], lengths: dict[str, int]) -> None:
        """Mark documents finished and record the output lengths that hold their lines, atomically."""
        now = time.time()
        with self._transaction():
            self.db.executemany(
                "update documents set status = ?, reason = ?, stage = ?, seconds = ?, usage = ?, updated = ? where key = ?",
                [
                    (f.status.value, f.reason, f.stage, f.seconds, json.dumps(f.usage) if f.usage else None, now, f.key)
                    for f in finished
                ],
            )
            self.db.executemany("insert or replace into outputs (name, length) values (?, ?)", lengths.items())

    def lengths(self) -> dict[str, int]:
        return dict(self.db.execute("select name, length from outputs").fetchall())

    def documents(
        self, statuses: Iterable[Status] | None = None
    ) -> Iterator[tuple[str, str, str, Status, str | None, str | None]]:
        """Current documents (some input holds them): (key, ref, document_id, status, reason, stage), in
        the order they were first seen."""
        query = (
            "select key, ref, document_id, status, reason, stage from documents where key in (select key from inputs)"
        )
        args: list[str] = []
        if statuses is not None:
            args = [s.value for s in statuses]
            query += f" and status in ({','.join('?' * len(args))})"
        for key, ref, document_id, status, reason, stage in self.db.execute(query + " order by rowid", args):
            yield key, ref, document_id, Status(status), reason, stage

    def refs(self, key: str) -> list[str]:
        return [ref for (ref,) in self.db.execute("select ref from inputs where key = ? order by ref", (key,))]

    def counts(self) -> dict[Status, int]:
        """Current documents by status."""
        rows = self.db.execute(
            "select status, count(*) from documents where key in (select key from inputs) group by status"
        ).fetchall()
        return {Status(status): n for status, n in rows}

    def input_count(self) -> int:
        return self.db.execute("select count(*) from inputs").fetchone()[0]

    def usage_rows(self) -> Iterator[tuple[float, str | None]]:
        """Time and LLM usage of every finished document, superseded ones included (they were paid for)."""
        yield from self.db.execute("select seconds, usage from documents where status in ('done', 'review', 'failed')")
