"""Relocate hand-labeled gold spans into another rendering of the same disclosure.

Why this exists: the eval suites hold the same filing note in several layouts (R-page text,
rendered HTML, EDGAR submissions, aligned plain text, prose). The *facts* of each rendering
are the seed's hand-labeled facts (concept, value, unit, period, dims were chosen by people
reading the filing and are copied unchanged); only `source.start`/`end` differ, because the
offsets point into `extractor.loaders.load(path).text` of each rendering. Re-typing hundreds
of offsets by hand is error-prone, and running the extractor to produce gold is not allowed
(gold would then grade the tool against itself), so this script moves the seed's spans.

How: seed facts are walked in the order of their seed offsets. Each `source.text` is searched
in the new text as a whole number (not inside a larger number or word) at or after the previous
match; when the seed prints the same text k times between the previous fact and this one (a
non-gold duplicate printing), the k+1-th occurrence is taken, so renderings that keep reading
order need no help. Where order differs (a prose rewrite), an override pins a fact: either
`after` (a context string, unique in the document, whitespace-insensitive so it matches across
line wraps; the number is the first whole-token occurrence after it, or the `skip`+1-th), or an explicit `start`, or `omit` with a `reason` when the rendering does not print
the number at all. Every result is checked: `text[start:end] == source.text`.

    .venv/bin/python evals/labeling/relocate.py SEED_GOLD DOCUMENT -o OUT.facts.jsonl \
        [--overrides OVERRIDES.json] [--review]

Overrides file: a JSON list of objects with `concept`, `end` (period end date), `dims` (exact
dims object, `{}` when none) and one of `after` (+ optional `skip`), `start`, or `omit`/`reason`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor.errors import ExtractorError
from extractor.loaders import load

ROOT = Path(__file__).resolve().parents[2]

Fact = dict[str, Any]
Key = tuple[str, str, tuple[tuple[str, str], ...]]


class RelocationError(ExtractorError):
    """A fact's printed text could not be found where the rendering should print it."""


@dataclass(frozen=True)
class Override:
    """How to place one fact when reading order alone does not find it."""

    after: str | None = None
    skip: int = 0
    start: int | None = None
    omit: bool = False
    reason: str = ""


def fact_key(fact: Fact) -> Key:
    """The fact's identity under the scoring rule: concept, period end, dims."""
    period = fact["period"]
    end = period.get("instant") or period.get("end")
    return (fact["concept"], str(end), tuple(sorted(fact.get("dims", {}).items())))


def number_pattern(printed: str) -> re.Pattern[str]:
    """`printed` as a whole token: not part of a longer number ("2" in "2020") or word ("No" in "None")."""
    return re.compile(r"(?<![\w])(?<!\d[.,])" + re.escape(printed) + r"(?![\w])(?![.,]\d)")


def anchor_pattern(anchor: str) -> re.Pattern[str]:
    """A context string, matched across line wraps: any run of whitespace matches any other."""
    return re.compile(r"\s+".join(re.escape(word) for word in anchor.split()))


def occurrences(pattern: re.Pattern[str], text: str, start: int, end: int | None = None) -> list[int]:
    """Start offsets of whole-token matches of `pattern` in text[start:end]."""
    stop = len(text) if end is None else end
    return [m.start() for m in pattern.finditer(text, start, stop)]


def read_jsonl(path: Path) -> list[Fact]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_overrides(path: Path | None) -> dict[Key, Override]:
    """Overrides keyed by fact identity."""
    if path is None:
        return {}
    out: dict[Key, Override] = {}
    for item in json.loads(path.read_text(encoding="utf-8")):
        key = (item["concept"], item["end"], tuple(sorted(item.get("dims", {}).items())))
        if key in out:
            raise ValueError(f"{path}: duplicate override for {key}")
        out[key] = Override(
            after=item.get("after"),
            skip=int(item.get("skip", 0)),
            start=item.get("start"),
            omit=bool(item.get("omit", False)),
            reason=item.get("reason", ""),
        )
    return out


def place(fact: Fact, text: str, cursor: int, skip: int, override: Override | None) -> int:
    """Start offset of this fact's printed number in `text`."""
    printed = fact["source"]["text"]
    pattern = number_pattern(printed)
    if override is not None and override.start is not None:
        return override.start
    if override is not None and override.after is not None:
        anchors = list(anchor_pattern(override.after).finditer(text))
        if len(anchors) != 1:
            raise RelocationError(f"{fact_key(fact)}: anchor {override.after!r} found {len(anchors)} times, not once")
        found = occurrences(pattern, text, anchors[0].end())
        if len(found) <= override.skip:
            raise RelocationError(f"{fact_key(fact)}: {printed!r} not found after anchor {override.after!r}")
        return found[override.skip]
    found = occurrences(pattern, text, cursor)
    if len(found) <= skip:
        raise RelocationError(f"{fact_key(fact)}: {printed!r} not found at or after offset {cursor}")
    return found[skip]


def relocate(
    seed_facts: list[Fact], seed_text: str, text: str, overrides: dict[Key, Override]
) -> tuple[list[Fact], list[tuple[Fact, str]]]:
    """New facts (seed file order, only `source` changed) and the facts omitted with their reasons."""
    unused = set(overrides)
    order = sorted(range(len(seed_facts)), key=lambda i: seed_facts[i]["source"]["start"])
    placed: dict[int, Fact] = {}
    omitted: list[tuple[Fact, str]] = []
    cursor = 0
    seed_cursor = 0
    for index in order:
        fact = seed_facts[index]
        key = fact_key(fact)
        override = overrides.get(key)
        unused.discard(key)
        src = fact["source"]
        if override is not None and override.omit:
            omitted.append((fact, override.reason))
            seed_cursor = src["end"]
            continue
        pattern = number_pattern(src["text"])
        skip = len(occurrences(pattern, seed_text, seed_cursor, src["start"]))
        start = place(fact, text, cursor, skip, override)
        end = start + len(src["text"])
        if text[start:end] != src["text"]:
            raise RelocationError(f"{key}: text[{start}:{end}] is {text[start:end]!r}, not {src['text']!r}")
        new = {**fact, "source": {"start": start, "end": end, "text": src["text"]}}
        placed[index] = new
        cursor, seed_cursor = end, src["end"]
    if unused:
        raise RelocationError(f"overrides match no seed fact: {sorted(unused)}")
    return [placed[i] for i in range(len(seed_facts)) if i in placed], omitted


def check(facts: list[Fact], text: str) -> list[str]:
    """Problems: spans that do not hold their text, and two facts on one span."""
    problems: list[str] = []
    seen: dict[tuple[int, int], Key] = {}
    for fact in facts:
        src = fact["source"]
        if text[src["start"] : src["end"]] != src["text"]:
            problems.append(f"{fact_key(fact)}: span {src['start']}-{src['end']} does not hold {src['text']!r}")
        span = (src["start"], src["end"])
        if span in seen:
            problems.append(f"{fact_key(fact)} and {seen[span]} share span {span}")
        seen[span] = fact_key(fact)
    return problems


def context(text: str, start: int, end: int, width: int = 40) -> str:
    """The text around a span, on one line, with the span bracketed."""
    left = text[max(0, start - width) : start]
    right = text[end : end + width // 2]
    return re.sub(r"\s+", " ", f"{left}[{text[start:end]}]{right}")


def review(seed_facts: list[Fact], new_facts: list[Fact], seed_text: str, text: str) -> None:
    """Print each fact's seed context beside its new context, in new reading order, for a human look."""
    seed_by_key = {fact_key(f): f for f in seed_facts}
    for fact in sorted(new_facts, key=lambda f: f["source"]["start"]):
        old = seed_by_key[fact_key(fact)]["source"]
        new = fact["source"]
        concept = fact["concept"].split("Award")[-1][:48]
        dims = ",".join(f"{v}" for _, v in sorted(fact.get("dims", {}).items()))
        print(f"{new['start']:>6} {concept:<48} {dims:<20} {fact['period'].get('instant') or fact['period']['end']}")
        print(f"         seed: {context(seed_text, old['start'], old['end'])}")
        print(f"         new : {context(text, new['start'], new['end'])}")


def write_jsonl(path: Path, facts: list[Fact]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for fact in facts:
            handle.write(json.dumps(fact, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seed_gold", type=Path, help="hand-labeled gold of the seed (…/<stem>.facts.jsonl)")
    parser.add_argument("document", type=Path, help="the new rendering")
    parser.add_argument("-o", "--output", type=Path, required=True, help="gold to write for the new rendering")
    parser.add_argument("--seed-document", type=Path, help="default: tests/fixtures/<seed stem>.txt")
    parser.add_argument("--overrides", type=Path, help="JSON list of per-fact overrides")
    parser.add_argument("--review", action="store_true", help="print seed and new context of every fact")
    args = parser.parse_args(argv)

    seed_facts = read_jsonl(args.seed_gold)
    stem = args.seed_gold.name.removesuffix(".facts.jsonl")
    seed_doc = args.seed_document or ROOT / "tests" / "fixtures" / f"{stem}.txt"
    seed_text = load(seed_doc).text
    text = load(args.document).text
    problems = check(seed_facts, seed_text)
    if problems:
        print("seed gold does not match its document:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    try:
        new_facts, omitted = relocate(seed_facts, seed_text, text, read_overrides(args.overrides))
    except RelocationError as err:
        print(f"relocation failed: {err}", file=sys.stderr)
        return 1
    problems = check(new_facts, text)
    if problems:
        print("relocated spans do not hold their text:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    if args.review:
        review(seed_facts, new_facts, seed_text, text)
    write_jsonl(args.output, new_facts)
    print(f"{args.output}: {len(new_facts)} facts relocated, {len(omitted)} omitted", file=sys.stderr)
    for fact, reason in omitted:
        print(f"  omitted {fact_key(fact)} {fact['source']['text']!r}: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
