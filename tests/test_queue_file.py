"""The queue file itself: a damaged file, found at open or only in the middle of a query, and
another tool's SQLite file are refused by every command with exit 2 naming the file, and are
left byte for byte as they were; queues made before the file carried its marker still open."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from fixture_paths import ROOT, SEED_002
from review_seed import seed_rollforward_error

from extractor.bulk.manifest import Manifest
from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import Queue

QUEUE_MARKER = 0x65787175  # b"exqu", the application_id every queue file carries: part of the file format


def extractor(*args: str, queue_file: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process, as a user runs it, with `queue_file` as the queue."""
    env = {**os.environ, "EXTRACTOR_QUEUE": str(queue_file), "EXTRACTOR_REVIEW_ROOT": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "extractor.cli", *args], env=env, capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def assert_refused(result: subprocess.CompletedProcess[str], queue_file: Path, says: str) -> None:
    assert result.returncode == 2, result.stderr
    assert f"{queue_file} {says}" in result.stderr
    assert "Traceback" not in result.stderr


def seeded_queue(path: Path) -> Path:
    """A real queue with an item and a reviewer, checkpointed: every page is in the file itself."""
    queue = Queue(path)
    seed_rollforward_error(queue)
    add_reviewer(queue, "alice")
    with closing(sqlite3.connect(path)) as db:
        db.execute("pragma wal_checkpoint(truncate)")
    return path


def root_pages(path: Path) -> list[int]:
    """The first page of every table and index (page 1 holds the file header and the schema)."""
    with closing(sqlite3.connect(path)) as db:
        return [page for (page,) in db.execute("select rootpage from sqlite_master where rootpage")]


def scribble(path: Path, page: int) -> None:
    """Garbage over the start of one page, as a bad sector or a torn write leaves it."""
    with closing(sqlite3.connect(path)) as db:
        size = db.execute("pragma page_size").fetchone()[0]
    with path.open("r+b") as file:
        file.seek((page - 1) * size)
        file.write(b"\xde\xad\xbe\xef" * 32)


def cut_mid_page(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.truncate(size // 2 + 1000)


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "cut mid-page": (cut_mid_page, "is damaged"),
    "garbage over its header page": (
        lambda path: scribble(path, 1),
        "is not a correction queue (it is not a SQLite database",
    ),
    "a CSV file": (
        lambda path: path.write_text("id,status\n1,open\n"),
        "is not a correction queue (it is not a SQLite database",
    ),
    "an empty file": (lambda path: path.write_bytes(b""), "is not a correction queue (it looks like an empty file)"),
    "a folder": (lambda path: (path.unlink(), path.mkdir()), "cannot be opened"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_queue_file_is_named_and_left_as_it_is(tmp_path, damage):
    queue_file = seeded_queue(tmp_path / "queue.sqlite")
    harm, says = DAMAGE[damage]
    harm(queue_file)
    before = queue_file.read_bytes() if queue_file.is_file() else None
    assert_refused(extractor("queue", "list", queue_file=queue_file), queue_file, says)
    assert (queue_file.read_bytes() if queue_file.is_file() else None) == before


@pytest.fixture(scope="module")
def damaged_deep(tmp_path_factory) -> Path:
    """A queue whose header page is whole (it opens) but whose tables and indexes start with garbage:
    SQLite only notices when a query reads them."""
    path = seeded_queue(tmp_path_factory.mktemp("deep") / "queue.sqlite")
    for page in root_pages(path):
        assert page > 1
        scribble(path, page)
    Queue(path)  # opening reads no page of those tables
    return path


COMMANDS = {
    "list": ("queue", "list"),
    "show": ("queue", "show", "1"),
    "claim": ("queue", "claim", "1", "--reviewer", "bob"),
    "resolve": ("queue", "resolve", "1", "--reject", "--reason", "not the note", "--reviewer", "bob"),
    "export-gold": ("queue", "export-gold", "{tmp}/suite"),
    "add-reviewer": ("queue", "add-reviewer", "carol"),
    # an address this machine lacks: a server that was not refused fails to bind instead of waiting
    "review": ("review", "--host", "192.0.2.1"),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_damage_found_in_the_middle_of_a_command_is_named_with_exit_2(tmp_path, damaged_deep, command):
    queue_file = tmp_path / "queue.sqlite"
    shutil.copyfile(damaged_deep, queue_file)
    before = queue_file.read_bytes()
    args = [arg.format(tmp=tmp_path) for arg in COMMANDS[command]]
    assert_refused(extractor(*args, queue_file=queue_file), queue_file, "is damaged (database disk image is malformed)")
    assert queue_file.read_bytes() == before


@pytest.fixture
def run_manifest(tmp_path) -> Path:
    """The manifest `extractor run` keeps in its out folder: SQLite, but no queue."""
    (tmp_path / "run").mkdir()
    manifest = Manifest(tmp_path / "run" / "manifest.sqlite")
    manifest.check_settings({"backend": "rules"})
    manifest.close()
    return manifest.path


FOREIGN = "is not a correction queue (it looks like a SQLite database with tables "  # its tables follow: the manifest's own business


@pytest.mark.parametrize("command", [("queue", "list"), ("queue", "add-reviewer", "carol")])
def test_another_tools_sqlite_file_is_refused_untouched(run_manifest, command):
    before = run_manifest.read_bytes()
    assert_refused(extractor(*command, queue_file=run_manifest), run_manifest, FOREIGN)
    assert run_manifest.read_bytes() == before


def test_a_run_does_not_enqueue_into_another_tools_file(tmp_path, run_manifest):
    before = run_manifest.read_bytes()
    ran = extractor(
        "run",
        str(SEED_002),
        "--out",
        str(tmp_path / "out"),
        "--workers",
        "1",
        "--qa-rate",
        "1",
        queue_file=run_manifest,
    )
    assert_refused(ran, run_manifest, FOREIGN)
    assert run_manifest.read_bytes() == before


def test_a_new_queue_file_carries_the_marker(tmp_path):
    queue = Queue(tmp_path / "queue.sqlite")
    with closing(sqlite3.connect(queue.path)) as db:
        assert db.execute("pragma application_id").fetchone()[0] == QUEUE_MARKER


def test_a_queue_made_before_the_marker_opens_and_is_stamped(tmp_path):
    queue_file = seeded_queue(tmp_path / "queue.sqlite")
    with closing(sqlite3.connect(queue_file)) as db:  # as every queue was before: its tables, no marker
        db.execute("pragma application_id = 0")
    listed = extractor("queue", "list", "--json", queue_file=queue_file)
    assert listed.returncode == 0, listed.stderr
    assert "002_59f0e0194afd947c" in listed.stdout
    with closing(sqlite3.connect(queue_file)) as db:
        assert db.execute("pragma application_id").fetchone()[0] == QUEUE_MARKER
    assert Queue(queue_file).get(1).errors == 3
