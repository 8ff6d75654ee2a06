"""The correction queue in SQLite (WAL): items, claims with leases, versions and an append-only audit log.

Every change is one `BEGIN IMMEDIATE` transaction, so two reviewers racing for an item are
serialized by SQLite itself: exactly one claim wins, and a save names the version it was made
from, so it cannot overwrite a newer one. Each call opens its own connection, which makes a
Queue safe to share between a web server's threads and separate processes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path

from extractor.errors import ExtractorError
from extractor.extraction import Extraction
from extractor.validator import Finding


class ItemStatus(str, Enum):
    open = "open"  # waiting for a reviewer
    claimed = "claimed"  # a reviewer holds it (until the lease expires)
    corrected = "corrected"  # saved with changes, not yet accepted or rejected
    accepted = "accepted"  # the reviewer confirmed the (corrected) extraction: it may become gold
    rejected = "rejected"  # not usable (not the note it claims to be, unreadable...); the reason says why

    @property
    def resolved(self) -> bool:
        return self in (ItemStatus.accepted, ItemStatus.rejected)


class EntryReason(str, Enum):
    validation = "validation"  # the validator found errors
    qa_sample = "qa_sample"  # passed, sampled for quality checks


class QueueError(ExtractorError):
    """An operation the queue refuses; the message says why and what to do."""


class Conflict(QueueError):
    """Someone else holds the claim or saved a newer version: nothing was changed."""


class QueueFileError(ExtractorError, sqlite3.DatabaseError):
    """The queue file is damaged or is not a queue; the message names it. Not a QueueError, which
    refuses one operation, since no other operation would fare better; a DatabaseError, so what
    stops on database errors (a bulk run's writer) stops on this one too; an ExtractorError like
    every error the library raises."""


@dataclass(frozen=True)
class Change:
    """One field a reviewer changed: 'award_activity[0].rows[2].count.value' from before to after."""

    field: str
    before: str
    after: str


@dataclass(frozen=True)
class AuditEntry:
    id: int
    item_id: int
    at: float
    reviewer: str
    action: str  # enqueued, claimed, taken_over, released, corrected, revalidated, finding_accepted, accepted, rejected, exported
    version: int
    field: str | None = None
    before: str | None = None
    after: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Item:
    id: int
    origin: str
    document_id: str
    document_ref: str
    document_sha256: str
    reason: EntryReason
    entered_from: str
    status: ItemStatus
    extraction_json: str
    errors: int
    warnings: int
    claimed_by: str | None
    lease_until: float | None
    version: int
    resolution: str | None
    accepted_findings: str | None
    created: float
    updated: float
    updated_by: str | None

    @cached_property
    def extraction(self) -> Extraction:
        return Extraction.model_validate_json(self.extraction_json)

    def shown_status(self, now: float) -> ItemStatus:
        """The status a reviewer sees: a claim that ran out is open again."""
        return ItemStatus.open if self.status is ItemStatus.claimed and self.holder(now) is None else self.status

    def holder(self, now: float) -> str | None:
        """Who holds a live claim now (None when unclaimed or the lease ran out)."""
        if self.claimed_by is None or self.lease_until is None or self.lease_until <= now:
            return None
        return self.claimed_by


SCHEMA = """
create table if not exists items (
    id integer primary key,
    origin text not null unique,        -- document content + extraction settings: one item per extraction
    document_id text not null,
    document_ref text not null,         -- absolute path, or archive.zip::member
    document_sha256 text not null,      -- of the document text, to notice a changed file
    reason text not null,
    entered_from text not null,         -- 'run <out folder>', 'extract'
    status text not null,
    extraction text not null,           -- the Extraction as JSON, its validation included
    errors integer not null,
    warnings integer not null,
    claimed_by text,
    lease_until real,
    version integer not null default 1,
    resolution text,                    -- the accept or reject reason
    accepted_findings text,             -- JSON [{id, rule, reason}]: findings the reviewer accepted one by one as true of the filing
    created real not null,
    updated real not null,
    updated_by text
);
create index if not exists items_status on items (status);
create table if not exists item_rules (item_id integer not null references items(id), rule text not null);
create index if not exists item_rules_item on item_rules (item_id);
create table if not exists audit (
    id integer primary key,
    item_id integer not null references items(id),
    at real not null,
    reviewer text not null,
    action text not null,
    version integer not null,
    field text,
    before text,
    after text,
    note text
);
create index if not exists audit_item on audit (item_id);
create trigger if not exists audit_no_update before update on audit
    begin select raise(abort, 'the audit log is append-only'); end;
create trigger if not exists audit_no_delete before delete on audit
    begin select raise(abort, 'the audit log is append-only'); end;
create table if not exists reviewers (
    name text primary key,
    secret_hash text not null,
    created real not null
);
create table if not exists sessions (
    token_hash text primary key,
    reviewer text not null references reviewers(name),
    csrf text not null,
    expires real not null
);
"""

BRIEF_COLUMNS = (
    "id, origin, document_id, document_ref, document_sha256, reason, entered_from, status, '' as extraction, "
    "errors, warnings, claimed_by, lease_until, version, resolution, accepted_findings, created, updated, updated_by"
)
SYSTEM = "system"  # the reviewer name of entries no person made
SHOWN_STATUS = (
    "case when status = 'claimed' and lease_until <= ? then 'open' else status end"  # Item.shown_status in SQL
)
PRIORITY = "reason != 'validation'"  # validation errors first, then QA samples
APPLICATION_ID = 0x65787175  # b"exqu" in the file's header (PRAGMA application_id): this file is a correction queue
UNMARKED_QUEUE = frozenset(
    {"items", "item_rules", "audit", "reviewers", "sessions"}
)  # the tables of queues made before it
FILE_FAULTS = {  # SQLite's primary error codes that are the file's fault, and what to say
    sqlite3.SQLITE_CORRUPT: "is damaged ({error}): restore it from a backup, or move it aside to start an empty queue",
    sqlite3.SQLITE_NOTADB: "is not a correction queue (it is not a SQLite database, or its first page is damaged)",
    sqlite3.SQLITE_CANTOPEN: "cannot be opened ({error}): is it a folder, or unreadable?",
    sqlite3.SQLITE_IOERR: "cannot be read or written ({error})",
}


class Queue:
    """The queue in one SQLite file (created when missing; a file that is not a queue is refused untouched)."""

    def __init__(self, path: Path, lease_seconds: float = 1800.0, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.lease_seconds = lease_seconds
        self.clock = clock
        existed = self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise QueueFileError(f"{self.path} cannot be made ({error})") from error
        with self.connect() as db:
            _make_queue(db, self.path, existed)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection; a fault of the file itself, found at open or only deep in a query, is raised as
        a QueueFileError naming the file, other database errors (a lock, a constraint) as they are."""
        try:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            try:
                db.row_factory = sqlite3.Row
                db.execute("pragma foreign_keys=on")
                yield db
            finally:
                db.close()
        except sqlite3.DatabaseError as error:
            if (fault := _file_fault(self.path, error)) is None:
                raise
            raise fault from error

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; BEGIN IMMEDIATE takes the write lock first, so racing writers queue up."""
        with self.connect() as db:
            db.execute("begin immediate")
            try:
                yield db
            except BaseException:
                db.execute("rollback")
                raise
            db.execute("commit")

    # entering ---------------------------------------------------------------------------------

    def add(self, extraction: Extraction, document_ref: str, reason: EntryReason, entered_from: str) -> int | None:
        """Enqueue one extraction; None when the same extraction of the same document is there already."""
        return self.add_many([(extraction, document_ref, reason)], entered_from)[0]

    def add_many(self, entries: Sequence[tuple[Extraction, str, EntryReason]], entered_from: str) -> list[int | None]:
        """Enqueue several in one transaction (a bulk run's batch); idempotent per extraction."""
        now = self.clock()
        ids: list[int | None] = []
        with self.transaction() as db:
            for extraction, ref, reason in entries:
                cursor = db.execute(
                    "insert or ignore into items (origin, document_id, document_ref, document_sha256, reason, "
                    "entered_from, status, extraction, errors, warnings, created, updated) "
                    "values (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)",
                    (
                        origin(extraction),
                        extraction.document_id,
                        ref,
                        extraction.document_sha256,
                        reason.value,
                        entered_from,
                        extraction.model_dump_json(),
                        *_tally(extraction),
                        now,
                        now,
                    ),
                )
                if not cursor.rowcount:
                    ids.append(None)
                    continue
                item_id = int(cursor.lastrowid or 0)
                _set_rules(db, item_id, extraction)
                _audit(db, item_id, now, SYSTEM, "enqueued", 1, note=f"{reason.value}, from {entered_from}")
                ids.append(item_id)
        return ids

    # reading ----------------------------------------------------------------------------------

    def get(self, item_id: int) -> Item:
        with self.connect() as db:
            return _get(db, item_id, self.path)

    def items(
        self,
        statuses: Sequence[ItemStatus] = (),
        rule: str | None = None,
        limit: int | None = None,
        brief: bool = False,
    ) -> list[Item]:
        """Items oldest first, optionally of some statuses and with a finding of `rule`; `brief` leaves
        out the extractions (a listing of thousands reads kilobytes, not megabytes)."""
        columns = BRIEF_COLUMNS if brief else "*"
        sql, args = f"select {columns} from items where 1", []
        if statuses:
            sql += f" and {SHOWN_STATUS} in ({','.join('?' * len(statuses))})"
            args += [self.clock(), *(s.value for s in statuses)]
        if rule:
            sql += " and id in (select item_id from item_rules where rule = ?)"
            args.append(rule)
        sql += " order by id" + (f" limit {int(limit)}" if limit else "")
        with self.connect() as db:
            return [_item(row) for row in db.execute(sql, args)]

    def counts(self) -> dict[ItemStatus, int]:
        """Items by status, every status named (claims that ran out count as open)."""
        counts = dict.fromkeys(ItemStatus, 0)
        with self.connect() as db:
            for status, number in db.execute(f"select {SHOWN_STATUS}, count(*) from items group by 1", (self.clock(),)):
                counts[ItemStatus(status)] = number
        return counts

    def rule_counts(self) -> dict[str, int]:
        """Unresolved items by the rules of their findings, most common first."""
        with self.connect() as db:
            rows = db.execute(
                "select rule, count(distinct item_id) from item_rules join items on items.id = item_id "
                "where status not in ('accepted', 'rejected') group by rule order by 2 desc, rule"
            ).fetchall()
        return dict(rows)

    def audit(self, item_id: int) -> list[AuditEntry]:
        with self.connect() as db:
            rows = db.execute("select * from audit where item_id = ? order by id", (item_id,)).fetchall()
        return [AuditEntry(**dict(row)) for row in rows]

    # claims -----------------------------------------------------------------------------------

    def claim(self, item_id: int, reviewer: str) -> Item:
        """Hold the item for `reviewer` for a lease; a claim that ran out can be taken over.
        Conflict when someone else's claim is live or the item is resolved."""
        now = self.clock()
        with self.transaction() as db:
            item = _get(db, item_id, self.path)
            _refuse_resolved(item)
            holder = item.holder(now)
            if holder is not None and holder != reviewer:
                raise Conflict(
                    f"item {item_id} is claimed by {holder} until {clock_time(item.lease_until)}; "
                    "it can be taken over once the claim expires"
                )
            status = ItemStatus.claimed if item.status is ItemStatus.open else item.status
            db.execute(
                "update items set claimed_by = ?, lease_until = ?, status = ?, updated = ? where id = ?",
                (reviewer, now + self.lease_seconds, status.value, now, item_id),
            )
            if holder != reviewer:
                _audit_claim(db, item, reviewer, now)
        return self.get(item_id)

    def next_for(self, reviewer: str) -> Item | None:
        """The reviewer's own live claim, else the first unclaimed (or expired) unresolved item,
        validation errors before QA samples; claimed for them. None when nothing is left."""
        while True:
            now = self.clock()
            with self.connect() as db:
                row = db.execute(
                    "select id from items where status not in ('accepted', 'rejected') and "
                    "(claimed_by = ? and lease_until > ? or claimed_by is null or lease_until <= ?) "
                    f"order by claimed_by = ? desc, {PRIORITY}, id limit 1",
                    (reviewer, now, now, reviewer),
                ).fetchone()
            if row is None:
                return None
            try:
                return self.claim(row[0], reviewer)
            except Conflict:  # another reviewer took it between the two statements: look again
                continue

    def release(self, item_id: int, reviewer: str) -> Item:
        """Give a claim back: the item is open again for anyone."""
        now = self.clock()
        with self.transaction() as db:
            item = _get(db, item_id, self.path)
            if item.claimed_by != reviewer:
                raise Conflict(f"item {item_id} is not claimed by {reviewer}")
            status = ItemStatus.open if item.status is ItemStatus.claimed else item.status
            db.execute(
                "update items set claimed_by = null, lease_until = null, status = ?, updated = ? where id = ?",
                (status.value, now, item_id),
            )
            _audit(db, item_id, now, reviewer, "released", item.version)
        return self.get(item_id)

    # changes ----------------------------------------------------------------------------------

    def save(
        self,
        item_id: int,
        reviewer: str,
        expected_version: int,
        extraction: Extraction,
        changes: Sequence[Change],
        revalidated: str | None = None,
    ) -> Item:
        """Store a corrected extraction (validated by the caller) as the next version, each change audited,
        and `revalidated` (which findings the changes resolved and which are new) as an entry of its own.
        Conflict when the item moved on since `expected_version` or another reviewer holds it."""
        if not changes:
            raise QueueError(
                "nothing changed: no value, unit, period, award type or span differs from the saved version, "
                "and nothing was added or deleted"
            )
        now = self.clock()
        with self.transaction() as db:
            item = self._writable(db, item_id, reviewer, expected_version, now)
            version = item.version + 1
            db.execute(
                "update items set extraction = ?, errors = ?, warnings = ?, status = 'corrected', version = ?, "
                "claimed_by = ?, lease_until = ?, updated = ?, updated_by = ? where id = ?",
                (
                    extraction.model_dump_json(),
                    *_tally(extraction),
                    version,
                    reviewer,
                    now + self.lease_seconds,
                    now,
                    reviewer,
                    item_id,
                ),
            )
            _set_rules(db, item_id, extraction)
            for change in changes:
                _audit(db, item_id, now, reviewer, "corrected", version, change.field, change.before, change.after)
            if revalidated:
                _audit(db, item_id, now, reviewer, "revalidated", version, note=revalidated)
        return self.get(item_id)

    def resolve(
        self,
        item_id: int,
        reviewer: str,
        expected_version: int,
        accept: bool,
        reason: str,
        finding_reasons: Mapping[str, str] | None = None,
    ) -> Item:
        """Accept or reject. Findings accepted individually (`finding_reasons`: finding id -> why it is
        true of the filing) are kept as the filing's quirks and leave their values in the gold; an error
        left without one keeps the values it involves out of the gold. Coverage findings (numbers nobody
        extracted) each need a reason to accept, so partial gold says where it is partial."""
        reason = reason.strip()
        reasons = {key: why.strip() for key, why in (finding_reasons or {}).items() if why.strip()}
        now = self.clock()
        with self.transaction() as db:
            item = self._writable(db, item_id, reviewer, expected_version, now)
            findings = item.extraction.validation.findings if item.extraction.validation else []
            known = {f.id: f for f in findings}
            if unknown := sorted(set(reasons) - set(known)):
                raise QueueError(f"no finding {', '.join(unknown)} on version {item.version}; reload the page")
            if accept and (uncovered := [f for f in findings if f.family == "coverage" and f.id not in reasons]):
                raise QueueError(
                    f"accepting with {len(uncovered)} coverage findings left needs a reason for each (why the numbers "
                    f"of {', '.join(_where(f) for f in uncovered[:5])} are not extracted), or add the facts first"
                )
            errors = [f for f in findings if f.severity == "error" and f.id not in reasons]
            if not reason and (not accept or errors):
                what = (
                    "rejecting"
                    if not accept
                    else f"accepting with {len(errors)} error findings left that no reason accepts"
                )
                raise QueueError(f"a reason is needed when {what}")
            kept = (
                [{"id": key, "rule": known[key].rule, "reason": why} for key, why in reasons.items()] if accept else []
            )
            status = ItemStatus.accepted if accept else ItemStatus.rejected
            db.execute(
                "update items set status = ?, resolution = ?, accepted_findings = ?, version = ?, claimed_by = null, "
                "lease_until = null, updated = ?, updated_by = ? where id = ?",
                (
                    status.value,
                    reason or None,
                    json.dumps(kept) if kept else None,
                    item.version + 1,
                    now,
                    reviewer,
                    item_id,
                ),
            )
            for entry in kept:
                _audit(
                    db, item_id, now, reviewer, "finding_accepted", item.version + 1, entry["id"], note=entry["reason"]
                )
            _audit(db, item_id, now, reviewer, status.value, item.version + 1, note=reason or None)
        return self.get(item_id)

    def record(self, item_id: int, reviewer: str, action: str, note: str) -> None:
        """An audit entry for something done with the item elsewhere (exported as gold, say)."""
        with self.transaction() as db:
            item = _get(db, item_id, self.path)
            _audit(db, item_id, self.clock(), reviewer, action, item.version, note=note)

    def _writable(self, db: sqlite3.Connection, item_id: int, reviewer: str, expected: int, now: float) -> Item:
        item = _get(db, item_id, self.path)
        _refuse_resolved(item)
        check_version(item, expected)
        holder = item.holder(now)
        if holder is not None and holder != reviewer:
            raise Conflict(
                f"item {item_id} is claimed by {holder} until {clock_time(item.lease_until)}; nothing was saved"
            )
        if holder is None:  # unclaimed, or a claim ran out: claimed now, in this transaction, and said so
            _audit_claim(db, item, reviewer, now)
        return item


def check_version(item: Item, expected: int) -> None:
    """Conflict unless `item` is at the version the reviewer opened. A save checks the copy it edits,
    then again in its write transaction: equal versions mean equal extractions, so the edits apply
    to exactly the version they replace."""
    if item.version == expected:
        return
    if item.version < expected:
        raise Conflict(
            f"item {item.id} is at version {item.version}, not the version {expected} the form names; "
            "nothing was saved: reload the page, then redo your changes"
        )
    by = f" by {item.updated_by}" if item.updated_by else ""
    raise Conflict(
        f"item {item.id} was changed{by} at {clock_time(item.updated)} (version {item.version}) after "
        f"you opened version {expected}; nothing was saved: reload to see the new version, then redo your changes"
    )


def origin(extraction: Extraction) -> str:
    """One item per document text and extraction settings: re-running the same extraction adds nothing."""
    p = extraction.provenance
    return f"{extraction.document_sha256}:{p.backend}:{p.model or ''}:{p.prompt_hash or ''}"


def clock_time(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment)) if moment else "-"


def _make_queue(db: sqlite3.Connection, path: Path, existed: bool) -> None:
    """A new file becomes a queue, and a queue made before the marker gets it; any other file that
    was there already (another tool's database, an empty file) is refused before anything is written."""
    if db.execute("pragma application_id").fetchone()[0] == APPLICATION_ID:
        db.executescript(SCHEMA)  # tables added since the file was made
    elif existed and not _tables(db) >= UNMARKED_QUEUE:
        raise QueueFileError(
            f"{path} is not a correction queue (it looks like {_looks_like(db, path)}); it was left as it was"
        )
    else:  # the schema and the marker in one transaction: a file is never half a queue
        db.executescript(f"begin immediate; {SCHEMA} pragma application_id = {APPLICATION_ID}; commit;")
    db.execute("pragma journal_mode=wal")


def _tables(db: sqlite3.Connection) -> set[str]:
    return {
        name
        for (name,) in db.execute("select name from sqlite_master where type = 'table'")
        if not name.startswith("sqlite_")
    }


def _looks_like(db: sqlite3.Connection, path: Path) -> str:
    """What a file that is not a queue seems to be, for the refusal."""
    tables = sorted(_tables(db))
    if tables:
        return "a SQLite database with tables " + ", ".join(tables[:8]) + (", ..." if len(tables) > 8 else "")
    return "an empty file" if path.stat().st_size == 0 else "an empty SQLite database"


def _file_fault(path: Path, error: sqlite3.DatabaseError) -> QueueFileError | None:
    """The error as a fault of the file, named; None when the statement, not the file, failed."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    said = FILE_FAULTS.get(code)
    return QueueFileError(f"{path} {said.format(error=error)}") if said else None


def _item(row: sqlite3.Row) -> Item:
    values = dict(row)
    values["extraction_json"] = values.pop("extraction")
    values["status"] = ItemStatus(values["status"])
    values["reason"] = EntryReason(values["reason"])
    return Item(**values)


def _get(db: sqlite3.Connection, item_id: int, path: Path) -> Item:
    row = db.execute("select * from items where id = ?", (item_id,)).fetchone()
    if row is None:
        raise QueueError(f"there is no item {item_id} in {path}")
    return _item(row)


def _refuse_resolved(item: Item) -> None:
    if item.status.resolved:
        raise Conflict(
            f"item {item.id} was {item.status.value} by {item.updated_by} at {clock_time(item.updated)}; "
            "it takes no more changes"
        )


def _audit_claim(db: sqlite3.Connection, item: Item, reviewer: str, now: float) -> None:
    took_over = item.claimed_by is not None and item.claimed_by != reviewer
    note = f"{item.claimed_by}'s claim had expired" if took_over else None
    _audit(db, item.id, now, reviewer, "taken_over" if took_over else "claimed", item.version, note=note)


def _where(finding: Finding) -> str:
    """Where a coverage finding's numbers are ('table 2'), for a refusal that names them."""
    return finding.numbers[0].where.split(",")[0] if finding.numbers else finding.rule


def _tally(extraction: Extraction) -> tuple[int, int]:
    """Error and warning findings, kept in columns so listings need not read the extraction."""
    validation = extraction.validation
    return (len(validation.errors), len(validation.warnings)) if validation else (0, 0)


def _set_rules(db: sqlite3.Connection, item_id: int, extraction: Extraction) -> None:
    db.execute("delete from item_rules where item_id = ?", (item_id,))
    rules = sorted({f.rule for f in extraction.validation.findings}) if extraction.validation else []
    db.executemany("insert into item_rules (item_id, rule) values (?, ?)", [(item_id, rule) for rule in rules])


def _audit(
    db: sqlite3.Connection,
    item_id: int,
    at: float,
    reviewer: str,
    action: str,
    version: int,
    field: str | None = None,
    before: str | None = None,
    after: str | None = None,
    note: str | None = None,
) -> None:
    db.execute(
        "insert into audit (item_id, at, reviewer, action, version, field, before, after, note) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (item_id, at, reviewer, action, version, field, before, after, note),
    )
