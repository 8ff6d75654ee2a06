"""Whole filings against their note alone: does reading the whole 10-K/10-Q find the same facts as reading the note?

For every corpus filing that ships its whole document (`<corpus>/<id>/filing.html`, inline XBRL stripped
the same way as the real suite's notes: the tags are the answer key), the rules backend extracts the whole
filing and the note alone, and both are scored with the real suite's loose rules against the filer's tags
(`evals/suites/real`). The whole-filing figure must stay within 0.03 of the note-only one, and what it
predicts must stay backed by the filer's tags (no facts from other notes). The corpus's `negatives/`
(whole filings with no stock-compensation note) must be refused with no facts.

    .venv/bin/python -m extractor.evals.whole_filings [--corpus ../shared/corpus/real]

Prints a Markdown table (the README's "Whole filings" section) and exits 1 when a filing misses either bar.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from extractor.backends.rules import extract
from extractor.evals.build_real_suite import strip_ix
from extractor.evals.harness.loose import LooseCounts, loose_score, read_tagged
from extractor.loaders import LoadError, NoNoteFound, load_text
from extractor.schemas.concepts import to_facts

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "evals" / "suites" / "real"
MAX_RECALL_DROP = 0.03
MIN_PRECISION = 0.90


def _score(html: str, fid: str, path: str) -> tuple[LooseCounts, float, str]:
    """Loose counts of one rendering of the filing, the seconds it took, and the heading of the note read."""
    started = time.perf_counter()
    document = load_text(html, path=path, doc_id=fid)
    extraction = extract(document)
    seconds = time.perf_counter() - started
    gold = read_tagged(SUITE / "gold" / f"{fid}.xbrl.json")
    tagged = read_tagged(SUITE / "tagged" / f"{fid}.json")
    counts, _ = loose_score(to_facts(extraction.note), gold, tagged)
    heading = extraction.section.heading if extraction.section else "(the whole document)"
    return counts, seconds, heading or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", type=Path, default=ROOT.parent / "shared" / "corpus" / "real", help="the real-filing corpus"
    )
    args = parser.parse_args(argv)
    filings = sorted(p.parent for p in args.corpus.glob("*/filing.html") if (p.parent / "gold_facts.json").exists())
    if not filings:
        print(f"no whole filings under {args.corpus}", file=sys.stderr)
        return 2
    print(
        "| filing | note read | loose recall (note / whole) | tag-backed precision (note / whole) | facts (note / whole) | seconds (whole) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    bad: list[str] = []
    total_note, total_whole = LooseCounts(), LooseCounts()
    for folder in filings:
        fid = folder.name
        note, _, _ = _score(strip_ix((folder / "section.html").read_text(encoding="utf-8")), fid, f"{fid}/section.html")
        whole, seconds, heading = _score(
            strip_ix((folder / "filing.html").read_text(encoding="utf-8")), fid, f"{fid}/filing.html"
        )
        total_note.add(note)
        total_whole.add(whole)
        print(
            f"| {fid} | {heading.replace(chr(160), ' ')} | {note.loose_recall:.3f} / {whole.loose_recall:.3f} | "
            f"{note.tag_backed_precision:.3f} / {whole.tag_backed_precision:.3f} | {note.predicted} / {whole.predicted} | {seconds:.1f} |"
        )
        if whole.loose_recall < note.loose_recall - MAX_RECALL_DROP or whole.tag_backed_precision < MIN_PRECISION:
            bad.append(fid)
    print(
        f"| **all {len(filings)}** | | {total_note.loose_recall:.3f} / {total_whole.loose_recall:.3f} | "
        f"{total_note.tag_backed_precision:.3f} / {total_whole.tag_backed_precision:.3f} | {total_note.predicted} / {total_whole.predicted} | |"
    )
    print()
    for folder in sorted(p.parent for p in args.corpus.glob("negatives/*/filing.html")):
        try:
            document = load_text(
                strip_ix((folder / "filing.html").read_text(encoding="utf-8")),
                path=f"negatives/{folder.name}",
                doc_id=folder.name,
            )
        except NoNoteFound as refused:
            print(f"- negatives/{folder.name}: refused, {refused.reason.split(':')[0]}")
            continue
        except LoadError as error:
            print(f"- negatives/{folder.name}: unreadable ({error.reason})")
        else:
            print(
                f"- negatives/{folder.name}: read {document.note.heading if document.note else 'whole'}: WRONG, it has no such note"
            )
        bad.append(f"negatives/{folder.name}")
    if bad:
        print(f"\nmissed the bar: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
