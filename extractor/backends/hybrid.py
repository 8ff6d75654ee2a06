"""Rules first; the LLM only for the tables and paragraphs where rules left numbers unread or misread.

The validator says where the rules extraction falls short: coverage lists the numbers the note prints
that no fact uses and nothing explains, and error findings blame facts by their spans. The blocks (one
rebuilt table or one paragraph) holding either are sent to the LLM, one request each, and nothing else
is: the model reads a few hundred characters instead of the note, and cannot unsettle what rules read
well. Its reading is merged in without reading a number twice: a number a rules fact uses stays the
rules fact, unless the block was sent for an error finding and the LLM read that number too (a table
whose award type rules lost is misread in every row, though a conflict blames only some). No
unexplained number and no error: no call. Every block sent is recorded, with why, in `provenance.asked`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from extractor.backends import rules
from extractor.backends.llm import LLMBackend
from extractor.document import Document
from extractor.extraction import AskedBlock, Extraction
from extractor.findings import Validation
from extractor.llm.client import EndpointError, LLMError
from extractor.llm.merge import amounts, merge, prune
from extractor.schemas.concepts import iter_located_facts
from extractor.schemas.values import Amount
from extractor.tables import layout
from extractor.validator import validate
from extractor.validator.coverage import check_coverage
from extractor.validator.factset import FactSet

SHOWN = 12  # unexplained numbers named in a block's reason

Span = tuple[int, int]


@dataclass(frozen=True)
class Plan:
    """The rules extraction (its provenance naming the blocks to ask about) and what the merge needs."""

    ruled: Extraction
    validation: Validation  # the rules extraction's, against the document (coverage and errors before the merge)
    blamed: list[Span]  # blocks sent for an error finding: there the LLM's reading replaces the rules'

    @property
    def asked(self) -> list[AskedBlock]:
        return self.ruled.provenance.asked


def plan(document: Document, keep_facts: bool = False) -> Plan:
    """Run rules, validate, and choose the blocks holding unexplained numbers or facts an error blames.
    `keep_facts`: the facts the validation merged kept on the rules extraction, for a caller that writes them
    right after (a bulk run; see `Extraction.take_facts`)."""
    ruled = rules.extract(document)
    ruled.provenance.backend = "hybrid"
    validation = validate(ruled, document, keep_facts=keep_facts)
    errors = [f for f in validation.errors if not f.rule.startswith("coverage.")]
    unread = [f for f in validation.findings if f.rule.startswith("coverage.")]
    if next(iter_located_facts(ruled.note), None) is None:
        # validate leaves coverage out when rules read nothing (coverage.empty says it): every block is a gap
        unread = check_coverage(FactSet([]), document).findings
    tables, paragraphs = layout(document)
    units: list[tuple[Literal["table", "paragraph"], int, int, int]]  # (kind, index, start, end)
    units = [("table", i, t.start, t.end) for i, t in enumerate(tables)]
    units += [("paragraph", i, low, high) for i, (low, high) in enumerate(paragraphs)]
    numbers: dict[int, list[str]] = {}
    blamers: dict[int, list[str]] = {}
    for finding in unread:
        for number in finding.numbers:
            if (at := _unit_of(units, number.start)) is not None:
                numbers.setdefault(at, []).append(number.text)
    for finding in errors:
        for ref in finding.facts:
            at = _unit_of(units, ref.source.start) if ref.source is not None else None
            if at is not None and finding.rule not in blamers.get(at, []):
                blamers.setdefault(at, []).append(finding.rule)
    chosen = sorted(set(numbers) | set(blamers), key=lambda at: units[at][2])
    ruled.provenance.asked = [
        AskedBlock(
            kind=kind, index=index, start=start, end=end, reason=_reason(numbers.get(at, []), blamers.get(at, []))
        )
        for at in chosen
        for kind, index, start, end in [units[at]]
    ]
    if not chosen:
        ruled.warnings.append("hybrid: rules left no number of the note unexplained and no error; no LLM call")
    blamed = [(units[at][2], units[at][3]) for at in blamers]
    return Plan(ruled, validation, blamed)


def combine(planned: Plan, asked: Extraction | LLMError, document: Document, validated: bool = False) -> Extraction:
    """The rules extraction with the LLM's reading of the blocks sent (kept as it is if the LLM failed);
    `validated`: with the validation of the result attached (computed here anyway), and the facts it merged
    kept for the writer."""
    ruled = planned.ruled
    sent = f"{len(planned.asked)} block(s) sent ({', '.join(f'{b.kind} {b.index + 1}' for b in planned.asked)})"
    if isinstance(asked, LLMError):
        ruled.warnings.append(f"hybrid: {sent}; the LLM failed ({asked}); the rules extraction is kept as it is")
        ruled.usage = asked.usage
        if validated:
            ruled.validation = planned.validation
        return ruled
    protected = [span for a in amounts(ruled.note) if (span := _span(a)) and not _overlaps(span, planned.blamed)]
    ungrounded = sum(a.source is None for a in amounts(asked.note))
    read = prune(asked.note, lambda a: a.source is None or _overlaps(_span(a), protected))
    assert read is not None  # a note has no required amount
    new = [span for a in amounts(read) if (span := _span(a))]
    kept = prune(ruled.note, lambda a: _overlaps(_span(a), planned.blamed) and _overlaps(_span(a), new))
    assert kept is not None
    replaced = sum(1 for _ in amounts(ruled.note)) - sum(1 for _ in amounts(kept))
    conflicts: list[str] = []
    note = merge(kept, read, conflicts)
    merged = ruled.model_copy(
        update={
            "note": note,
            "provenance": asked.provenance.model_copy(update={"backend": "hybrid", "asked": planned.asked}),
            "usage": asked.usage,
            "warnings": [
                *ruled.warnings,
                *asked.warnings,
                *(f"hybrid: rules and the LLM disagree: {c}" for c in conflicts),
            ],
        }
    )
    after = validate(merged, document, keep_facts=validated)
    merged.warnings.append(
        f"hybrid: {sent}; the LLM read {len(new)} value(s), {replaced} of them in place of rules readings in blocks with an error"
        + (f", {ungrounded} it gave with no span in its block left out" if ungrounded else "")
        + f"; coverage {_share(planned.validation.coverage)} -> {_share(after.coverage)}, "
        + f"errors {len(planned.validation.errors)} -> {len(after.errors)}"
    )
    if validated:
        merged.validation = after
    return merged


def extract(document: Document, llm: LLMBackend, validated: bool = False) -> Extraction:
    """Rules, then the LLM for the blocks rules fell short on. `validated`: with the validator's findings
    against the document attached, from the validation this backend runs anyway (none run twice), and the
    facts it merged kept for the writer (a bulk run)."""
    planned = plan(document, validated)
    if not planned.asked:
        return ruled_as_is(planned, validated)
    try:
        asked: Extraction | LLMError = llm.extract(document, blocks=block_spans(planned))
    except EndpointError:
        raise
    except LLMError as error:
        asked = error.with_traceback(None)  # combine reads its message and usage; its traceback holds this frame
    return combine(planned, asked, document, validated)


async def aextract(document: Document, llm: LLMBackend, validated: bool = False) -> Extraction:
    """As `extract`, with the LLM on the async client (bulk runs), computing where the LLM backend does."""
    planned = await llm.run(plan, document, validated)
    if not planned.asked:
        return ruled_as_is(planned, validated)
    try:
        asked: Extraction | LLMError = await llm.aextract(document, blocks=block_spans(planned))
    except EndpointError:
        raise
    except LLMError as error:
        asked = error.with_traceback(None)  # combine reads its message and usage; its traceback holds this frame
    return await llm.run(combine, planned, asked, document, validated)


def ruled_as_is(planned: Plan, validated: bool) -> Extraction:
    """The rules extraction as it is (nothing to ask), with its validation when `validated`."""
    if validated:
        planned.ruled.validation = planned.validation
    return planned.ruled


def block_spans(planned: Plan) -> list[Span]:
    """The character ranges of the blocks to ask about (a Batch API file's requests, too)."""
    return [(block.start, block.end) for block in planned.asked]


def _unit_of(units: Sequence[tuple[str, int, int, int]], offset: int) -> int | None:
    return next((at for at, (_, _, start, end) in enumerate(units) if start <= offset < end), None)


def _reason(numbers: list[str], rules_: list[str]) -> str:
    parts = []
    if numbers:
        shown = ", ".join(numbers[:SHOWN]) + (", …" if len(numbers) > SHOWN else "")
        parts.append(f"{len(numbers)} unexplained number{'s' if len(numbers) != 1 else ''}: {shown}")
    parts += [f"error finding {rule}" for rule in rules_]
    return "; ".join(parts)


def _span(amount: Amount) -> Span | None:
    return (amount.source.start, amount.source.end) if amount.source is not None else None


def _overlaps(span: Span | None, spans: list[Span]) -> bool:
    return span is not None and any(span[0] < end and start < span[1] for start, end in spans)


def _share(share: Decimal | None) -> str:
    return "-" if share is None else f"{share:.0%}"
