"""The rules backend against the parse floor: real notes, memory over many notes, a whole 4 MB filing.

(1) Real notes: the real-filing suite's 27 notes (evals/suites/real/documents: real 10-K/10-Q HTML, inline
    XBRL stripped) loaded, extracted and validated by the rules backend, as `extractor extract` does, against
    reading and parsing the same files with lxml (the floor), in the same run: median of --rounds, the two
    interleaved. Goal: at most 10x the parse.
(2) Memory: peak resident memory of one process extracting 1,000 and then 10,000 notes (the real notes, each
    made distinct), in fresh interpreters. Goal: flat (the larger run within 10 % of the smaller).
(3) A whole filing: a generated 10-K of about 4 MB (evals/benchmarks/note_finding.py: a real excerpt padded
    to a large filer's length) extracted whole, against parsing it with lxml. Goal: at most 3x the parse. Also
    printed: the same with the Python HTML reader (where the compiled one, html_rows.pyx, is built).
    Its padding is one plain table repeated (bare cells, a '$' cell before every amount); real filings' cells
    carry styles, spans and <p>/<span> children. So where ../shared/corpus/real is present (it is not part of
    the repository), its real whole 10-K/10-Qs (2-4 MB) are measured the same way, their inline XBRL stripped
    first by ../shared/tools/strip_ix.py, as the extraction backends must never read it.

Prints figures and ratios; asserts nothing.

    python evals/benchmarks/rules_speed.py [--rounds 5] [--notes 1000 10000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from extractor.api import extract  # noqa: E402
from extractor.evals.benchmarks.note_finding import filing_html  # noqa: E402
from extractor.loaders import html  # noqa: E402

NOTES = sorted((ROOT / "evals" / "suites" / "real" / "documents").glob("*.html"))
SHARED = ROOT.parent / "shared"
WHOLE_FILINGS = sorted((SHARED / "corpus" / "real").glob("*/filing.html"))
NOTE_BAR, FILING_BAR, MEMORY_SLACK = 10.0, 3.0, 0.10

# One interpreter extracting `count` notes (the suite's, cycled, each made distinct by a trailing comment):
# prints its peak resident memory in kB.
_MEMORY_RUN = """
import resource, sys
from pathlib import Path
from extractor.api import extract
from extractor.loaders import load_bytes
notes = [Path(p).read_bytes() for p in sys.argv[2:]]
for number in range(int(sys.argv[1])):
    data = notes[number % len(notes)] + f"<!-- copy {number} -->".encode()
    extract(load_bytes(data, f"note-{number}.html", f"note-{number}"), backend="rules", validate=True)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def parse(paths: list[Path]) -> None:
    """The floor: read each file and parse it with lxml's HTML parser (as the loader does)."""
    for path in paths:
        etree.fromstring(path.read_bytes(), etree.HTMLParser(huge_tree=True))


def parse_bytes(data: bytes) -> None:
    etree.fromstring(data, etree.HTMLParser(huge_tree=True))


def extract_all(paths: list[Path]) -> None:
    for path in paths:
        extract(path, backend="rules", validate=True)


def interleaved(rounds: int, floor: Callable[[], object], work: Callable[[], object]) -> tuple[float, float]:
    """Median seconds of `floor` and `work`, run alternately so both see the machine in the same state."""
    floors: list[float] = []
    works: list[float] = []
    for _ in range(rounds):
        for run, times in ((floor, floors), (work, works)):
            started = time.perf_counter()
            run()
            times.append(time.perf_counter() - started)
    return statistics.median(floors), statistics.median(works)


def peak_memory_kb(count: int) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_RUN, str(count), *map(str, NOTES)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return int(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--notes", type=int, nargs=2, default=[1000, 10000], metavar=("SMALL", "LARGE"))
    args = parser.parse_args()

    print(f"HTML reader: {'compiled (extractor/loaders/html_rows.pyx)' if html.COMPILED else 'Python (not compiled)'}")
    extract_all(NOTES[:3])  # warm: lexicons compiled, modules imported
    size = sum(path.stat().st_size for path in NOTES)
    floor, work = interleaved(args.rounds, lambda: parse(NOTES), lambda: extract_all(NOTES))
    print(
        f"(1) real notes: {len(NOTES)} notes, {size / 1e6:.1f} MB of HTML, median of {args.rounds}: "
        f"parse (floor) {floor * 1000:.0f} ms, rules extract + validate {work * 1000:.0f} ms "
        f"({len(NOTES) / work:.0f} notes/s) = {work / floor:.1f}x the parse (goal <= {NOTE_BAR:.0f}x)"
    )

    small, large = args.notes
    started = time.perf_counter()
    small_kb, large_kb = peak_memory_kb(small), peak_memory_kb(large)
    growth = large_kb / small_kb - 1
    print(
        f"(2) memory: peak {small_kb / 1024:.0f} MB over {small:,} notes, {large_kb / 1024:.0f} MB over {large:,} "
        f"({growth:+.1%}; goal: within {MEMORY_SLACK:.0%}); both runs {time.perf_counter() - started:.0f} s"
    )

    raw = filing_html(4.0)
    data = raw.encode()
    floor, work = interleaved(
        max(3, args.rounds // 2),
        lambda: etree.fromstring(data, etree.HTMLParser(huge_tree=True)),
        lambda: extract(raw, backend="rules", validate=True),
    )
    print(
        f"(3) a whole filing: {len(data) / 1e6:.1f} MB of HTML, parse (floor) {floor * 1000:.0f} ms, "
        f"found the note and extracted it {work * 1000:.0f} ms = {work / floor:.1f}x the parse (goal <= {FILING_BAR:.0f}x)"
    )
    if html.COMPILED:  # the same filing read by the Python reader alone (the reference), against the same floor
        with html.python_reading():
            floor, work = interleaved(
                max(3, args.rounds // 2),
                lambda: etree.fromstring(data, etree.HTMLParser(huge_tree=True)),
                lambda: extract(raw, backend="rules", validate=True),
            )
        print(f"    the same with the Python HTML reader: {work / floor:.1f}x the parse")
    if WHOLE_FILINGS:
        real_filings(max(3, args.rounds // 2))


def real_filings(rounds: int) -> None:
    """(3) on the corpus's real whole filings, stripped of inline XBRL: each one's ratio, and their median."""
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for path in WHOLE_FILINGS:
            stripped = Path(folder) / f"{path.parent.name}.html"
            strip = [sys.executable, str(SHARED / "tools" / "strip_ix.py"), str(path), str(stripped)]
            subprocess.run(strip, check=True)
            data = stripped.read_bytes()
            floor, work = interleaved(
                rounds,
                partial(parse_bytes, data),
                partial(extract, stripped, backend="rules", validate=True),
            )
            ratios.append(work / floor)
            print(
                f"    {path.parent.name:<18} {len(data) / 1e6:.1f} MB: parse {floor * 1000:.0f} ms, "
                f"extracted {work * 1000:.0f} ms = {work / floor:.1f}x"
            )
    print(
        f"(3) real whole filings (../shared/corpus/real, inline XBRL stripped): {len(ratios)} filings, "
        f"median {statistics.median(ratios):.1f}x the parse, worst {max(ratios):.1f}x (goal <= {FILING_BAR:.0f}x)"
    )


if __name__ == "__main__":
    main()
