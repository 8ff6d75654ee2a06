"""What the bulk-run tests share (test_bulk, test_ray): a corpus of good filings and every kind of bad input, as a
bulk run meets them, and waiting on a running run's records."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
import zipfile
from multiprocessing.connection import Connection
from pathlib import Path

from fixture_paths import HTML_002, SEED_000, SEED_002, TEXT_000

from extractor.bulk.reaper import processes
from extractor.evals.benchmarks.corpus import build_corpus, distinct_copy


def plant(corpus: Path) -> list[str]:
    """Write the corpus under `corpus` (good/ and bad/); the inputs to name, two of which do not exist."""
    good = build_corpus(
        corpus / "good",
        3,
        samples=(
            "tests/fixtures/000_a279831d03f6579a.txt",
            "tests/fixtures/002_59f0e0194afd947c.txt",
            "tests/fixtures/html/002_59f0e0194afd947c.htm",
        ),
    )
    bad = corpus / "bad"
    bad.mkdir()
    (bad / "copy-of-first.txt").write_bytes(good[0].read_bytes())  # same content, another name
    (bad / "empty.txt").write_bytes(b"")
    (bad / "binary.bin").write_bytes(bytes(range(256)) * 40)
    (bad / "image-named.htm").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2000))  # mislabeled: a picture called .htm
    (bad / "really-html.pdf").write_bytes(
        HTML_002.read_bytes().replace(b"</html>", b"<!-- renamed --></html>")
    )  # mislabeled the other way
    html = HTML_002.read_bytes()
    (bad / "truncated.htm").write_bytes(html[: len(html) // 2] + b"<td class=")  # cut mid-tag
    (bad / "huge.txt").write_bytes(b"Stock options outstanding 1,234\n" * 20_000)  # 660 kB, over --max-bytes
    (bad / "income-taxes.txt").write_text(
        "Note 7. Income Taxes\nCurrent federal 1,234 2,345\nDeferred state (456) 789\nTotal provision 5,678 9,012\n",
        encoding="utf-8",
    )  # a section that is not what a stock compensation run expects
    (bad / "windows-1252.txt").write_bytes(TEXT_000.read_bytes().replace(b"Weighted", b"\x93Weighted\x94", 1))
    with zipfile.ZipFile(bad / "archive.zip", "w") as archive:
        archive.writestr("inner/seed-000.txt", distinct_copy(SEED_000.read_bytes(), ".txt", 900))
        archive.writestr("inner/seed-002.txt", distinct_copy(SEED_002.read_bytes(), ".txt", 901))
        archive.writestr("inner/nested.zip", b"PK\x03\x04" + bytes(100))
    (bad / "broken.zip").write_bytes(b"PK\x03\x04" + b"not really a zip archive" * 10)
    return [str(corpus / "good"), str(bad), str(corpus / "missing-folder"), str(corpus / "nothing-*.htm")]


def wait_for_records(out: Path, at_least: int, process: subprocess.Popen[str], timeout: float = 120) -> None:
    """Until the run writing `out` has written `at_least` records (it must not end before)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = out / "records.jsonl"
        if path.exists() and path.read_bytes().count(b"\n") >= at_least:
            return
        assert process.poll() is None, f"the run ended before {at_least} records: {process.communicate()}"
        time.sleep(0.01)
    raise AssertionError(f"no {at_least} records within {timeout} s")


LLM_PACKAGES = ("openai", "instructor")


def llm_packages_loaded() -> list[str]:
    """The LLM client's packages (openai, instructor) this interpreter has imported."""
    return sorted(name for name in sys.modules if name.split(".")[0] in LLM_PACKAGES)


async def llm_packages_of_worker(job: object, step: object) -> list[str]:
    """A worker handler that answers which of the LLM client's packages its interpreter imported."""
    return llm_packages_loaded()


def send_freeze_count(connection: Connection) -> None:
    """A forked process's target: send how many objects it started with frozen (gc.freeze), then close."""
    connection.send(gc.get_freeze_count())
    connection.close()


def forkservers_started() -> list[str]:
    """The command lines of this process's children that run multiprocessing's forkserver (its preload in them)."""
    found = []
    for pid, (parent, _) in processes().items():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile
            continue
        if parent == os.getpid() and "multiprocessing.forkserver" in command:
            found.append(command)
    return found
