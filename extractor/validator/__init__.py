"""The deterministic validator: pure checks over an extraction (and, when given, its document).

    from extractor.validator import validate
    report = validate(extraction, document)   # Validation: findings, passed

Rules and their ids: rollforward.count, rollforward.weighted_average, totals.sum,
consistency.{conflict,subset,outstanding_split,exercise_proceeds,range},
plausibility.{bounds,dates}, grounding.{missing,span,readback}, scale.context,
coverage.{empty,table,prose,note} (with the document: numbers printed but neither extracted nor explained).
No LLM, no network, no clock: the same input gives the same findings.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import date

from extractor.document import Document
from extractor.extraction import Extraction
from extractor.findings import FactRef, Finding, Validation, read_accepted
from extractor.numbers import NUMBER_RE
from extractor.schemas.concepts import iter_located_facts
from extractor.schemas.facts import Fact
from extractor.validator.arithmetic import (
    check_rollforwards,
    check_totals,
    rollforward_years,
    total_groups,
)
from extractor.validator.consistency import (
    check_conflicts,
    check_exercise_proceeds,
    check_outstanding_split,
    check_ranges,
    check_subsets,
    proceeds_triples,
    range_pairs,
    split_triples,
    subset_pairs,
    within_range_triples,
)
from extractor.validator.coverage import check_coverage
from extractor.validator.factset import FactSet, Located
from extractor.validator.grounding import SourceText, check_grounding
from extractor.validator.plausibility import check_bounds, check_dates

__all__ = [
    "FactRef",
    "Finding",
    "SourceText",
    "Validation",
    "read_accepted",
    "relation_members",
    "set_aside",
    "validate",
    "validate_facts",
]


def validate(
    extraction: Extraction,
    document: Document | SourceText | None = None,
    accepted: Collection[str] = (),
    facts: FactSet | None = None,
    keep_facts: bool = False,
) -> Validation:
    """Validate an extraction; with its document, spans and scales are checked against the text too.
    `facts`: FactSet(iter_located_facts(extraction.note)), when the caller renders its merged facts too.
    `keep_facts`: the facts as the validation merged them kept on the extraction (`Extraction.take_facts`), for
    the caller that writes them next (a bulk run's facts rows, `extract --format facts`), which then does not
    merge the note's numbers a second time (about a tenth of a rules extraction's work)."""
    if keep_facts and facts is None:
        facts = FactSet(iter_located_facts(extraction.note))
    printings = facts if facts is not None else iter_located_facts(extraction.note)
    validation = _run(printings, document, accepted, extraction.note.fiscal_year_ends, expect_facts=True)
    if keep_facts and facts is not None:
        extraction.keep_facts([fact for _, fact in facts])
    return validation


def amounts_printed(text: str) -> int:
    """Numbers that read as amounts: not bare years (2019) or small counts (Note 9, two plans)."""
    count = 0
    for match in NUMBER_RE.finditer(text):
        digits = match.group("digits")
        bare = not (
            match.group("currency")
            or match.group("lead_currency")
            or match.group("percent")
            or match.group("trail_percent")
            or "," in digits
            or "." in digits
        )
        if bare and (len(digits) < 3 or (len(digits) == 4 and digits[:2] in ("19", "20"))):
            continue
        count += 1
    return count


def check_empty(facts: FactSet, source: SourceText | None) -> list[Finding]:
    """Nothing extracted from a text that prints amounts is a miss to review, not a pass."""
    if source is None or next(iter(facts), None) is not None:
        return []
    printed = amounts_printed(source.text)
    if printed < EMPTY_THRESHOLD:
        return []
    return [
        Finding(
            rule="coverage.empty",
            severity="error",
            message=f"nothing was extracted, although the document prints {printed} amounts: its layout was not "
            "understood, or it is not a stock-compensation note",
        )
    ]


EMPTY_THRESHOLD = 3  # fewer amounts than this: a note that says there is nothing to report


def validate_facts(
    facts: Sequence[Fact],
    document: Document | SourceText | None = None,
    accepted: Collection[str] = (),
    paths: Sequence[str] | None = None,
) -> Validation:
    """Validate a flat facts list (a facts file, gold); paths default to 'line N' of the file."""
    names = paths or [f"line {i}" for i in range(1, len(facts) + 1)]
    return _run(zip(names, facts), document, accepted, None)


def _run(
    printings: Iterable[Located] | FactSet,
    document: Document | SourceText | None,
    accepted: Collection[str],
    fiscal_year_ends: list[date] | None,
    expect_facts: bool = False,
) -> Validation:
    facts = printings if isinstance(printings, FactSet) else FactSet(printings)
    source = SourceText.of(document) if isinstance(document, Document) else document
    findings: list[Finding] = [
        *check_grounding(facts, source),
        *check_conflicts(facts),
        *check_rollforwards(facts),
        *check_totals(facts),
        *check_subsets(facts),
        *check_outstanding_split(facts),
        *check_exercise_proceeds(facts),
        *check_ranges(facts),
        *check_bounds(facts),
        *check_dates(facts, fiscal_year_ends),
        *(check_empty(facts, source) if expect_facts else []),
    ]
    coverage = check_coverage(facts, document) if isinstance(document, Document) else None
    if coverage is not None and next(iter(facts), None) is not None:  # nothing extracted: coverage.empty says it
        findings.extend(coverage.findings)
    kept, aside = _split(findings, accepted)
    return Validation(
        findings=kept,
        accepted=aside,
        grounded_in_document=source is not None,
        coverage=coverage.share if coverage is not None else None,
    )


def set_aside(validation: Validation, accepted: Collection[str]) -> Validation:
    """`validation` with the findings whose ids are in `accepted` moved to its accepted ones: for a validation a
    backend made on its way (backends.choice.Extract), which knew nothing of what reviewers accepted."""
    if not accepted:
        return validation
    kept, aside = _split(validation.findings, accepted)
    return validation.model_copy(update={"findings": kept, "accepted": [*validation.accepted, *aside]})


def _split(findings: list[Finding], accepted: Collection[str]) -> tuple[list[Finding], list[Finding]]:
    """(findings kept, findings set aside as accepted), each in its order."""
    if not accepted:  # an id hashes the finding's facts: computed only when there are ids to compare it with
        return findings, []
    ids = [f.id for f in findings]
    kept = [f for f, id_ in zip(findings, ids, strict=True) if id_ not in accepted]
    return kept, [f for f, id_ in zip(findings, ids, strict=True) if id_ in accepted]


def relation_members(facts: Sequence[Fact]) -> set[tuple]:
    """Identities of the facts that take part in an arithmetic or cross-table relation."""
    fact_set = FactSet((None, f) for f in facts)
    groups: list[Iterable[Located]] = []
    for year in rollforward_years(fact_set):
        groups.append([p for t in [*year.terms, year.ending] for p in (t.count, t.price) if p is not None])
    for total, parts, _ in total_groups(fact_set):
        groups.append([total, *parts])
    for enumerate_relation in (subset_pairs, split_triples, proceeds_triples, range_pairs, within_range_triples):
        groups.extend(enumerate_relation(fact_set))
    return {pair[1].key() for group in groups for pair in group}
