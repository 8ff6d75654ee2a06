"""Eval runs in a local SQLite file: one row per run, one row per fact outcome (queryable with SQL).

SELECT concept, outcome FROM outcomes WHERE run_id = 3 AND outcome != 'correct';
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, TypeAdapter

from extractor.errors import ExtractorError
from extractor.evals.harness.outcomes import FactOutcome
from extractor.evals.harness.runner import DocumentResult, EvalRun

DEFAULT_STORE = Path("evals/runs.sqlite")
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    created TEXT NOT NULL,
    suite TEXT NOT NULL,
    suite_fingerprint TEXT NOT NULL,
    backend TEXT NOT NULL,
    model TEXT,
    prompt_id TEXT,
    prompt_hash TEXT,
    code_version TEXT NOT NULL,
    label TEXT,
    f1 REAL NOT NULL,
    metrics TEXT NOT NULL,
    documents TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outcomes (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    document TEXT NOT NULL,
    concept TEXT NOT NULL,
    period_end TEXT NOT NULL,
    dims TEXT NOT NULL,
    grp TEXT NOT NULL,
    outcome TEXT NOT NULL,
    gold_value TEXT,
    predicted_value TEXT,
    fact TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outcomes_run ON outcomes(run_id);
"""
_DOCUMENTS = TypeAdapter(list[DocumentResult])


class StoreError(ExtractorError):
    """The run store cannot be opened or has no such run."""


class RunSummary(BaseModel):
    id: int
    created: str
    suite: str
    backend: str
    model: str | None
    prompt_id: str | None
    prompt_hash: str | None
    code_version: str
    label: str | None
    f1: float


class RunStore:
    """Open (and create) the store; each call uses its own short transaction."""

    def __init__(self, path: Path = DEFAULT_STORE) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise StoreError(f"{path}: written by a newer version of this tool (schema {version})")
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"{path}: cannot be used as a run store ({error})") from error

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)  # another eval writing: wait, do not fail
        try:
            db.execute("PRAGMA foreign_keys = ON")
            with db:
                yield db
        finally:
            db.close()

    def save(self, run: EvalRun) -> int:
        """Store the run with its outcomes; returns its id (also set on `run`)."""
        metrics = run.metrics()
        try:
            return self._insert(run, metrics.overall.f1, metrics.model_dump_json())
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: the run cannot be stored ({error})") from error

    def _insert(self, run: EvalRun, f1: float, metrics: str) -> int:
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO runs (created, suite, suite_fingerprint, backend, model, prompt_id, prompt_hash,"
                " code_version, label, f1, metrics, documents) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run.created,
                    run.suite,
                    run.suite_fingerprint,
                    run.backend,
                    run.model,
                    run.prompt_id,
                    run.prompt_hash,
                    run.code_version,
                    run.label,
                    f1,
                    metrics,
                    _DOCUMENTS.dump_json(run.documents).decode(),
                ),
            )
            run_id = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT INTO outcomes VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        run_id,
                        row.document,
                        row.concept,
                        row.key[2],
                        json.dumps(row.dims, sort_keys=True),
                        row.group,
                        row.outcome,
                        _text(row.gold_value),
                        _text(row.predicted_value),
                        row.model_dump_json(),
                    )
                    for row in run.outcomes
                ],
            )
        run.id = run_id
        return run_id

    def load(self, run_id: int) -> EvalRun:
        with self._connect() as db:
            row = db.execute(
                "SELECT id, created, suite, suite_fingerprint, backend, model, prompt_id, prompt_hash, code_version,"
                " label, documents FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: no run {run_id} (see 'extractor eval-runs')")
            facts = db.execute("SELECT fact FROM outcomes WHERE run_id = ? ORDER BY rowid", (run_id,)).fetchall()
        names = (
            "id",
            "created",
            "suite",
            "suite_fingerprint",
            "backend",
            "model",
            "prompt_id",
            "prompt_hash",
            "code_version",
            "label",
        )
        return EvalRun(
            **dict(zip(names, row[:10])),
            documents=_DOCUMENTS.validate_json(row[10]),
            outcomes=[FactOutcome.model_validate_json(fact) for (fact,) in facts],
        )

    def runs(self, suite: str | None = None) -> list[RunSummary]:
        """Stored runs, oldest first (of one suite when named)."""
        query = (
            "SELECT id, created, suite, backend, model, prompt_id, prompt_hash, code_version, label, f1"
            " FROM runs" + (" WHERE suite = ?" if suite else "") + " ORDER BY id"
        )
        with self._connect() as db:
            rows = db.execute(query, (suite,) if suite else ()).fetchall()
        names = RunSummary.model_fields.keys()
        return [RunSummary(**dict(zip(names, row))) for row in rows]

    def latest(self, suite: str, before: int | None = None) -> int | None:
        """The newest run of a suite (older than `before` when given), the default baseline."""
        ids = [r.id for r in self.runs(suite) if before is None or r.id < before]
        return ids[-1] if ids else None


def _text(value: object) -> str | None:
    return None if value is None else str(value)
