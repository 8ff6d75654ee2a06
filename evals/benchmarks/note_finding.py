"""Note finding: the cost of finding the stock-compensation note in a whole filing, against parsing it once.

A whole 10-K of about 4 MB of HTML is generated from the real excerpt tests/fixtures/whole/meta-10k-2024.txt
(its cover, table of contents, Items and notes, the combined equity note whole) with the other notes padded
by tables and paragraphs as long as a large filer's. The floor is parsing and rendering that HTML
(`html_to_text`), measured in the same run; finding the note (`sections.find_note`) should cost a small
fraction of it. Figures are the best of --repeat runs.

    python evals/benchmarks/note_finding.py [--mb 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from extractor.document import Document  # noqa: E402
from extractor.loaders.html import html_to_text  # noqa: E402
from extractor.sections import find_note  # noqa: E402

EXCERPT = ROOT / "tests" / "fixtures" / "whole" / "meta-10k-2024.txt"
TARGET_FRACTION = 0.25  # finding must stay well under one parse
T = TypeVar("T")


def filing_html(megabytes: float) -> str:
    """The excerpt as HTML paragraphs, every note but the equity note padded with a table and prose."""
    rows = "".join(
        f"<tr><td>Line item {i} of the schedule</td><td>$</td><td>{1000 + i:,}</td><td>$</td><td>{900 + i:,}</td></tr>"
        for i in range(60)
    )
    padding = (
        "<p>" + "The Company evaluates these estimates on an ongoing basis. " * 30 + "</p><table>" + rows + "</table>"
    )
    parts = ["<html><body>"]
    for line in EXCERPT.read_text(encoding="utf-8").split("\n"):
        parts.append(f"<p>{html.escape(line)}</p>")
        if line.startswith(("Note\xa0", "Item ")) and "Equity" not in line:
            parts.append(padding)
    body = "".join(parts)
    while len(body) < megabytes * 1_000_000:  # more notes' worth of padding before the Items that close the notes
        cut = body.index("<p>Item 9.")
        body = body[:cut] + padding * 20 + body[cut:]
    return body + "</body></html>"


def best(repeat: int, run: Callable[[], T]) -> tuple[float, T]:
    """The fastest of `repeat` runs (at least one), and what the last one returned."""
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - started)
    return min(times), value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    raw = filing_html(args.mb)
    parse, rendered = best(args.repeat, lambda: html_to_text("generated.htm", raw))
    text, meta, tables = rendered
    document = Document(id="generated", path="generated.htm", format="html", text=text, metadata=meta)
    find, section = best(args.repeat, lambda: find_note(document))
    ratio = find / parse
    print(
        f"whole filing: {len(raw) / 1e6:.1f} MB of HTML, {len(text) / 1e6:.2f} M characters rendered, {len(tables)} tables"
    )
    print(
        f"parse (floor): {parse:.3f} s; find the note: {find:.3f} s = {ratio:.3f}x the parse (target < {TARGET_FRACTION}x)"
    )
    print(
        f"found: {section.title!r}, {section.end - section.start:,} characters" if section else "found: nothing (wrong)"
    )
    return 0 if section and ratio < TARGET_FRACTION else 1


if __name__ == "__main__":
    sys.exit(main())
