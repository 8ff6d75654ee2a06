"""Validator scaling: time to validate a long table against the time to load and extract it (issue 22).

Two generated option tables, lean HTML like an EDGAR exhibit (about 70 bytes a row: 0.14 MB at 2,000):

  roll-forward  one year's activity, every flow row labelled apart ('Granted, tranche 17') with its own
                count and price: each row reads as the year's grants, exercises, ...: thousands of printings
                of a few facts, all disagreeing (the validator reports them as conflicts)
  price ranges  options outstanding and exercisable by exercise-price range: thousands of distinct facts

The floor is loading and extracting the same document with the rules backend, measured in the same
run; the validator should stay within a small multiple of it as the table grows (linear, like the
extraction), and under TARGET_SECONDS at 8,000 rows. Figures are the best of --repeat runs.

    python evals/benchmarks/validator_scaling.py [--rows 2000 8000] [--repeat 3] [--tables roll-forward]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from extractor.backends import rules  # noqa: E402
from extractor.loaders import load_text  # noqa: E402
from extractor.schemas.concepts import iter_facts  # noqa: E402
from extractor.validator import validate  # noqa: E402

TARGET_SECONDS = 5.0
TARGET_ROWS = 8000
FLOWS = ("Granted", "Exercised", "Forfeited", "Expired")


def rollforward_html(rows: int) -> str:
    """An option roll-forward of `rows` rows: a beginning balance, distinct flow rows, an ending balance."""
    lines = [
        "<tr><td></td><td>Shares</td><td>Weighted-Average Exercise Price</td></tr>",
        "<tr><td>Outstanding at December 31, 2022</td><td>9,876,543</td><td>$ 25.00</td></tr>",
    ]
    for i in range(rows - 2):
        flow, count = FLOWS[i % len(FLOWS)], f"{10_000 + 37 * i:,}"
        printed = count if flow == "Granted" else f"({count})"
        lines.append(f"<tr><td>{flow}, tranche {i + 1}</td><td>{printed}</td><td>{20 + i % 997 / 100:.2f}</td></tr>")
    lines.append("<tr><td>Outstanding at December 31, 2023</td><td>8,765,432</td><td>$ 26.00</td></tr>")
    return _page("Stock option activity for the year ended December 31, 2023 was as follows:", lines)


def price_ranges_html(rows: int) -> str:
    """Options outstanding and exercisable at one date, one row per exercise-price range."""
    header = (
        "<tr><td>Range of Exercise Prices</td><td>Number Outstanding</td><td>Weighted-Average Remaining "
        "Contractual Life (Years)</td><td>Weighted-Average Exercise Price</td><td>Number Exercisable</td>"
        "<td>Weighted-Average Exercise Price</td></tr>"
    )
    lines = [header]
    for i in range(rows - 1):
        low = 1 + i / 2
        lines.append(
            f"<tr><td>${low:,.2f} - ${low + 0.49:,.2f}</td><td>{1_000 + 7 * i:,}</td><td>{2 + i % 80 / 10:.1f}</td>"
            f"<td>{low + 0.25:,.2f}</td><td>{500 + 3 * i:,}</td><td>{low + 0.2:,.2f}</td></tr>"
        )
    return _page("Options outstanding and exercisable by price range at December 31, 2023:", lines)


def _page(caption: str, rows: list[str]) -> str:
    return f"<html><body><p>{caption}</p>\n<table>\n" + "\n".join(rows) + "\n</table></body></html>\n"


SHAPES: dict[str, Callable[[int], str]] = {"roll-forward": rollforward_html, "price ranges": price_ranges_html}


def measure(html: str, repeat: int) -> tuple[float, float, int]:
    """(seconds to load and extract, seconds to validate, facts extracted) for one document, as `extract`
    runs them: the validation reads the document its extraction read (its table layout already built)."""
    floors, validations, facts = [], [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        document = load_text(html, path="generated.htm", doc_id="generated")
        extraction = rules.extract(document)
        extracted = time.perf_counter()
        validate(extraction, document)
        floors.append(extracted - started)
        validations.append(time.perf_counter() - extracted)
        facts = sum(1 for _ in iter_facts(extraction.note))
    return min(floors), min(validations), facts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, TARGET_ROWS])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is printed")
    parser.add_argument("--tables", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    args = parser.parse_args()
    print(
        f"{'table':<14}{'rows':>7}{'MB':>7}{'facts':>8}{'extract s':>11}{'validate s':>12}{'validate/extract':>18}"
        "   growth from the row above (extract, validate)"
    )
    worst = 0.0
    for name in args.tables:
        previous: tuple[float, float] | None = None
        for rows in args.rows:
            html = SHAPES[name](rows)
            floor, validating, facts = measure(html, args.repeat)
            growth = f"   x{floor / previous[0]:.1f}, x{validating / previous[1]:.1f}" if previous else ""
            print(
                f"{name:<14}{rows:>7}{len(html) / 1e6:>7.2f}{facts:>8}{floor:>11.2f}{validating:>12.2f}"
                f"{validating / floor:>17.1f}x{growth}"
            )
            previous = floor, validating
            if rows == TARGET_ROWS:
                worst = max(worst, validating)
    if TARGET_ROWS in args.rows:
        met = worst < TARGET_SECONDS
        print(
            f"validator on {TARGET_ROWS:,} rows: {worst:.2f} s (target under {TARGET_SECONDS:.0f} s) {'ok' if met else 'MISSED'}"
        )
        return 0 if met else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
