"""Review page speed on long notes: how long the item page takes to render and a save (one change,
re-validated against the document) takes, through the real app (Starlette's test client, no network).

    python evals/benchmarks/review_page.py [DOCUMENT ...]

Prints, per document: values, findings, unexplained numbers, page size, and the median of 5 runs of
GET /items/N and of POST /items/N/save. The issue's bar: page under 1 s, save under 1 s.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from extractor.backends import rules
from extractor.loaders import load
from extractor.queue.edits import value_fields
from extractor.queue.feed import absolute_ref
from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import EntryReason, Queue
from extractor.review.app import create_app
from extractor.validator import validate

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = [
    ROOT / "tests/fixtures/000_a279831d03f6579a.txt",
    ROOT / "evals/suites/real/documents/meta-10k-2024.html",
    ROOT / "evals/suites/real/documents/wmt-10k-2025.html",
    ROOT / "evals/suites/real/documents/aaoi-10k-2013.html",
]
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
VERSION = re.compile(r'name="version" value="(\d+)"')
RUNS = 5


def _first(pattern: re.Pattern[str], page: str) -> str:
    """The first group of `pattern` in a page the benchmark reads a form field from."""
    match = pattern.search(page)
    assert match is not None, f"no {pattern.pattern!r} in the page"
    return match.group(1)


def measure(path: Path, folder: Path) -> str:
    queue = Queue(folder / f"{path.stem}.sqlite")
    document = load(path)
    extraction = rules.extract(document)
    extraction.validation = validate(extraction, document)
    item_id = queue.add(extraction, absolute_ref(str(path)), EntryReason.validation, "benchmark")
    client = TestClient(create_app(queue, Path("/")), base_url="http://127.0.0.1:8000", follow_redirects=False)
    login = client.get("/login")
    client.post(
        "/login", data={"csrf": _first(CSRF, login.text), "name": "bench", "secret": add_reviewer(queue, "bench")}
    )
    csrf = _first(CSRF, client.get("/").text)
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    fields = value_fields(extraction.note)
    pages, saves, size = [], [], 0
    for run in range(RUNS):
        started = time.perf_counter()
        page = client.get(f"/items/{item_id}")
        pages.append(time.perf_counter() - started)
        size = len(page.content)
        version = _first(VERSION, page.text)
        form = {"csrf": csrf, "version": version, f"{fields[0].path}.value": str(fields[0].amount.value + run + 1)}
        started = time.perf_counter()
        saved = client.post(f"/items/{item_id}/save", data=form)
        saves.append(time.perf_counter() - started)
        assert saved.status_code == 303, saved.text[:300]
    validation = extraction.validation
    unexplained = sum(len(f.numbers) for f in validation.findings)
    return (
        f"{path.name:38} {len(fields):6} {len(validation.findings):8} {unexplained:11} {size / 1024:8.0f} "
        f"{statistics.median(pages) * 1000:9.0f} {statistics.median(saves) * 1000:9.0f}"
    )


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or DEFAULT
    print(
        f"{'document':38} {'values':>6} {'findings':>8} {'unexplained':>11} {'page KB':>8} {'page ms':>9} {'save ms':>9}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for path in paths:
            print(measure(path, Path(folder)), flush=True)


if __name__ == "__main__":
    main()
