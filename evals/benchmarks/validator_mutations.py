"""Mutation benchmark for the validator: how many plausible extraction errors does it catch?

For every gold file, perturb one numeric fact at a time and validate the result:

  x1000 / /1000   a thousands table read as units, or the reverse (span kept)
  digit           one printed digit changed (span kept)
  swap            the values of two facts of the same unit exchanged (spans kept)
  sign            the sign flipped (a parenthesis taken as a minus)
  invented        a number that appears nowhere in the source, with no span
  inv+span        the same number with a made-up span: the original offsets, its own digits as text

Each mutation is validated twice: against the document text (as `extract` does) and against
the span texts alone (a saved extraction whose document is gone). A mutation counts as detected
when the validator reports any finding; the tables also say which rule families fired.

Then omissions, validated with the loaded document (coverage needs its tables and paragraphs):

  fact            one fact left out
  row             every fact of one table row left out
  table           every fact of one table left out
  prose fact      one fact read from a sentence left out

An omission counts as detected when a finding the unmutated gold does not have appears.

    python evals/benchmarks/validator_mutations.py [--seed 7] [--show-undetected 40]

Gold documents are tests/fixtures/<stem>.txt; accepted filing quirks are <stem>.accepted.jsonl.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from extractor.document import Document  # noqa: E402
from extractor.loaders import load  # noqa: E402
from extractor.schemas.facts import Fact, read_facts  # noqa: E402
from extractor.validator import SourceText, read_accepted, relation_members, validate_facts  # noqa: E402
from extractor.validator.coverage import blocks  # noqa: E402
from extractor.validator.grounding import printed_magnitude, readback_exponent  # noqa: E402

FAMILIES = ("grounding", "scale", "rollforward", "totals", "consistency", "plausibility", "coverage")
DROPS = ("fact", "row", "table", "prose fact")
DROP_TARGETS = {"table": 1.0, "row": 0.95, "fact": 0.8}
RELATION_FAMILIES = frozenset({"rollforward", "totals", "consistency"})
Mutator = Callable[[list[Fact], int, random.Random, SourceText], list[Fact] | None]


def _replace(facts: list[Fact], index: int, **changes: object) -> list[Fact]:
    mutated = list(facts)
    mutated[index] = facts[index].model_copy(update=changes)
    return mutated


def scale_up(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    return _replace(facts, i, value=facts[i].value * 1000) if facts[i].value else None


def scale_down(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    return _replace(facts, i, value=facts[i].value / 1000) if facts[i].value else None


def digit(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    """Change one printed digit: the value moves by that digit's weight at the printed scale."""
    fact = facts[i]
    printed = printed_magnitude(fact.source.text) if fact.source else None
    exponent = readback_exponent(fact, printed) if printed is not None else None
    if printed is None or exponent is None or printed.scaleb(exponent) != abs(fact.value):
        return None  # printed as months, or not grounded: no printed digit to change
    text = format(printed, "f")
    positions = [p for p, char in enumerate(text) if char.isdigit()]
    position = rng.choice(positions)
    choices = [
        d for d in "0123456789" if d != text[position] and not (position == 0 and d == "0" and len(positions) > 1)
    ]
    changed = Decimal(text[:position] + rng.choice(choices) + text[position + 1 :])
    return _replace(facts, i, value=changed.scaleb(exponent))


def swap(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    partners = [j for j, f in enumerate(facts) if j != i and f.unit == facts[i].unit and f.value != facts[i].value]
    if not partners:
        return None
    j = rng.choice(partners)
    mutated = _replace(facts, i, value=facts[j].value)
    mutated[j] = facts[j].model_copy(update={"value": facts[i].value})
    return mutated


def sign(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    return _replace(facts, i, value=-facts[i].value) if facts[i].value else None


def invented(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    """A plausible-looking number near the real one that the document never prints; no span."""
    fact = facts[i]
    quantum = Decimal(1).scaleb(int(fact.value.normalize().as_tuple().exponent)) if fact.value else Decimal(1)
    for _ in range(50):
        candidate = (fact.value * Decimal(rng.uniform(1.07, 1.9))).quantize(quantum) or quantum * rng.randint(2, 9)
        probe = fact.model_copy(update={"value": candidate, "source": None})
        if source.find(probe) is None:
            return _replace(facts, i, value=candidate, source=None)
    return None


def invented_span(facts: list[Fact], i: int, rng: random.Random, source: SourceText) -> list[Fact] | None:
    """An invented number that brings a made-up span: the original offsets, its own digits as text."""
    mutated = invented(facts, i, rng, source)
    fact = facts[i]
    if mutated is None or fact.source is None:
        return None
    printed = printed_magnitude(fact.source.text)
    exponent = readback_exponent(fact, printed) if printed is not None else None
    if exponent is None:
        return None
    digits = mutated[i].value.scaleb(-exponent)
    places = max(0, -int(digits.normalize().as_tuple().exponent))
    text = f"{digits:,.{places}f}"
    return _replace(facts, i, value=mutated[i].value, source=fact.source.model_copy(update={"text": text}))


MUTATIONS: dict[str, Mutator] = {
    "x1000": scale_up,
    "/1000": scale_down,
    "digit": digit,
    "swap": swap,
    "sign": sign,
    "invented": invented,
    "inv+span": invented_span,
}


@dataclass
class Outcome:
    stem: str
    kind: str
    fact: Fact
    mutated_value: Decimal
    related: bool
    families: dict[str, set[str]] = field(default_factory=dict)  # mode -> families that fired
    errors: dict[str, bool] = field(default_factory=dict)  # mode -> an error-severity finding fired


def run(seed: int) -> tuple[list[Outcome], dict[str, int], float]:
    outcomes: list[Outcome] = []
    baseline_findings: dict[str, int] = {}
    started = time.perf_counter()
    validations = 0
    for gold in sorted((ROOT / "evals" / "gold").glob("*.facts.jsonl")):
        stem = gold.name.removesuffix(".facts.jsonl")
        document = load(ROOT / "tests" / "fixtures" / f"{stem}.txt")
        source = SourceText.of(document)
        accepted_file = gold.with_name(f"{stem}.accepted.jsonl")
        accepted = read_accepted(accepted_file) if accepted_file.exists() else {}
        facts = read_facts(str(gold))
        baseline = validate_facts(facts, source, accepted)
        baseline_findings[stem] = len(baseline.findings)
        for finding in baseline.findings:
            print(f"UNMUTATED GOLD FINDING {stem}: {finding.severity} {finding.rule}: {finding.message}")
        related = relation_members(facts)
        rng = random.Random(f"{seed}:{stem}")
        for index, fact in enumerate(facts):
            for kind, mutate in MUTATIONS.items():
                mutated = mutate(facts, index, rng, source)
                if mutated is None:
                    continue
                outcome = Outcome(stem, kind, fact, mutated[index].value, fact.key() in related)
                for mode, text in (("document", source), ("spans only", None)):
                    result = validate_facts(mutated, text, accepted)
                    validations += 1
                    outcome.families[mode] = {f.family for f in result.findings}
                    outcome.errors[mode] = not result.passed
                outcomes.append(outcome)
    elapsed = time.perf_counter() - started
    return outcomes, baseline_findings, elapsed / max(validations, 1)


@dataclass
class Omission:
    stem: str
    kind: str
    what: str  # the left-out facts, as a reader would name them
    families: set[str] = field(default_factory=set)  # families of the findings the gold does not have
    error: bool = False


def _drop_groups(facts: list[Fact], document: Document) -> dict[str, list[tuple[str, list[int]]]]:
    """Which facts make up each row, table and prose block of the document, by the spans they cite."""
    where: dict[int, tuple[str, int, int | None]] = {}  # a printed number's first offset -> (kind, block, row)
    for block in blocks(document):
        for number in block.numbers:
            for offset in range(number.start, number.end):
                where[offset] = (block.kind, block.index, number.row_index)
    rows: dict[tuple, list[int]] = defaultdict(list)
    tables: dict[int, list[int]] = defaultdict(list)
    prose: list[int] = []
    for index, fact in enumerate(facts):
        place = where.get(fact.source.start) if fact.source else None
        if place is None:
            continue
        kind, block_index, row = place
        if kind == "table":
            rows[(block_index, row)].append(index)
            tables[block_index].append(index)
        else:
            prose.append(index)
    return {
        "fact": [(f"{facts[i].concept} {facts[i].period.end_date}", [i]) for i in range(len(facts))],
        "row": [(f"table {t + 1} row {r + 1}", members) for (t, r), members in rows.items()],
        "table": [(f"table {t + 1}", members) for t, members in tables.items()],
        "prose fact": [(f"{facts[i].concept} '{facts[i].source.text}'", [i]) for i in prose],  # type: ignore[union-attr]
    }


def run_drops() -> tuple[list[Omission], dict[str, int]]:
    """Leave out one fact, row, table or prose fact of every gold file at a time; validate with the document."""
    omissions: list[Omission] = []
    baseline_errors: dict[str, int] = {}
    for gold in sorted((ROOT / "evals" / "gold").glob("*.facts.jsonl")):
        stem = gold.name.removesuffix(".facts.jsonl")
        document = load(ROOT / "tests" / "fixtures" / f"{stem}.txt")
        accepted_file = gold.with_name(f"{stem}.accepted.jsonl")
        accepted = read_accepted(accepted_file) if accepted_file.exists() else {}
        facts = read_facts(str(gold))
        baseline = validate_facts(facts, document, accepted)
        baseline_errors[stem] = len(baseline.errors)
        known = {f.id for f in baseline.findings}
        for kind, groups in _drop_groups(facts, document).items():
            for what, members in groups:
                left = [f for i, f in enumerate(facts) if i not in set(members)]
                result = validate_facts(left, document, accepted)
                new = [f for f in result.findings if f.id not in known]
                omissions.append(
                    Omission(stem, kind, what, {f.family for f in new}, any(f.severity == "error" for f in new))
                )
    return omissions, baseline_errors


def drop_table(omissions: list[Omission]) -> None:
    print("\n== omissions, validated against the document ==")
    header = f"{'left out':<12}{'n':>6}{'detected':>10}{'as error':>10}" + "".join(f"{f:>13}" for f in FAMILIES)
    print(header)
    print("-" * len(header))
    for kind in DROPS:
        rows = [o for o in omissions if o.kind == kind]
        fired = Counter(f for o in rows for f in o.families)
        detected = sum(1 for o in rows if o.families)
        errors = sum(1 for o in rows if o.error)
        print(
            f"{kind:<12}{len(rows):>6}{share(detected, len(rows)):>10}{share(errors, len(rows)):>10}"
            + "".join(f"{share(fired[f], len(rows)):>13}" for f in FAMILIES)
        )


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    –"


def table(title: str, outcomes: list[Outcome], mode: str) -> None:
    print(f"\n{title}")
    header = f"{'mutation':<10}{'n':>6}{'detected':>10}{'as error':>10}{'relations':>11}" + "".join(
        f"{f:>13}" for f in FAMILIES
    )
    print(header)
    print("-" * len(header))
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.kind].append(outcome)
        groups["ALL"].append(outcome)
    for kind in [*MUTATIONS, "ALL"]:
        rows = groups.get(kind, [])
        fired = Counter(f for o in rows for f in o.families[mode])
        detected = sum(1 for o in rows if o.families[mode])
        as_error = sum(1 for o in rows if o.errors[mode])
        by_relations = sum(1 for o in rows if o.families[mode] & RELATION_FAMILIES)
        print(
            f"{kind:<10}{len(rows):>6}{share(detected, len(rows)):>10}{share(as_error, len(rows)):>10}"
            f"{share(by_relations, len(rows)):>11}" + "".join(f"{share(fired[f], len(rows)):>13}" for f in FAMILIES)
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--seed", type=int, default=7, help="seed for digit positions, swap partners and invented numbers"
    )
    parser.add_argument(
        "--show-undetected", type=int, default=40, help="how many undetected-by-relations cases to list"
    )
    args = parser.parse_args()
    outcomes, baseline, per_validation = run(args.seed)
    related = [o for o in outcomes if o.related]
    print(
        f"gold files: {len(baseline)}; mutations: {len(outcomes)} ({len(related)} on facts in a relation); "
        f"{per_validation * 1000:.1f} ms per validation"
    )
    for mode in ("document", "spans only"):
        table(
            f"== all facts, validated against the {'document text' if mode == 'document' else 'span texts only'} ==",
            outcomes,
            mode,
        )
        table(f"== facts in an arithmetic or cross-table relation ({mode}) ==", related, mode)

    def rate(rows: list[Outcome], mode: str, test: Callable[[Outcome], bool]) -> float:
        return sum(1 for o in rows if test(o)) / len(rows) if rows else 1.0

    invented_rows = [o for o in outcomes if o.kind in ("invented", "inv+span")]
    checks = [
        ("related facts, any rule (document)", rate(related, "document", lambda o: bool(o.families["document"])), 0.95),
        (
            "related facts, any rule (spans only)",
            rate(related, "spans only", lambda o: bool(o.families["spans only"])),
            0.95,
        ),
        ("invented numbers flagged as errors", rate(invented_rows, "document", lambda o: o.errors["document"]), 1.0),
    ]
    print("\n== targets ==")
    ok = all(v == 0 for v in baseline.values())
    print(f"{'unmutated gold: findings':<48}{sum(baseline.values()):>8}   target 0   {'ok' if ok else 'MISSED'}")
    for name, value, target in checks:
        met = value >= target
        ok &= met
        print(f"{name:<48}{100 * value:>7.1f}%   target {100 * target:.0f}%  {'ok' if met else 'MISSED'}")
    relations_rate = rate(related, "document", lambda o: bool(o.families["document"] & RELATION_FAMILIES))
    print(
        f"{'related facts, relation rules alone (document)':<48}{100 * relations_rate:>7.1f}%   (no target: grounding usually fires first)"
    )

    omissions, baseline_errors = run_drops()
    drop_table(omissions)
    print(
        f"{'unmutated gold: error findings (with document)':<48}{sum(baseline_errors.values()):>8}   target 0   "
        f"{'ok' if not any(baseline_errors.values()) else 'MISSED'}"
    )
    ok &= not any(baseline_errors.values())
    for kind, target in DROP_TARGETS.items():
        rows = [o for o in omissions if o.kind == kind]
        value = sum(1 for o in rows if o.families) / len(rows) if rows else 1.0
        met = value >= target
        ok &= met
        print(
            f"{'left out: one ' + kind + ', detected':<48}{100 * value:>7.1f}%   target {100 * target:.0f}%  {'ok' if met else 'MISSED'}"
        )
    quiet = [o for o in omissions if not o.families and o.kind != "fact"]
    print(f"\n== omissions of a row, table or prose fact nothing noticed: {len(quiet)} ==")
    for omission in quiet[: args.show_undetected]:
        print(f"  {omission.stem[:3]} {omission.kind:<10} {omission.what}")

    undetected = [o for o in outcomes if not o.families["document"]]
    print(f"\n== undetected with the document: {len(undetected)} ==")
    for o in undetected:
        print(
            f"  {o.stem[:3]} {o.kind:<8} {o.fact.concept} {o.fact.dims} {o.fact.period.end_date}: {o.fact.value:f} -> {o.mutated_value:f}"
        )
    missed = [o for o in related if not o.families["document"] & RELATION_FAMILIES]
    print(f"\n== related facts the relation rules alone miss: {len(missed)} (first {args.show_undetected}) ==")
    for o in missed[: args.show_undetected]:
        caught = ",".join(sorted(o.families["document"])) or "nothing"
        print(
            f"  {o.stem[:3]} {o.kind:<8} {o.fact.concept.split('Award')[-1]} {o.fact.dims} {o.fact.period.end_date}: "
            f"{o.fact.value:f} -> {o.mutated_value:f} (caught by {caught})"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
