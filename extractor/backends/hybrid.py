"""Rules first; the LLM only for the parts of the note rules left empty or got wrong.

A part is a top-level field of the note (award_activity, expense, ...). Parts with an error finding
are asked again and replaced by the LLM's reading when it has one; empty parts the filing mentions
(schemas.stock_compensation.PART_SIGNALS) are filled. When rules read every mentioned part and
pass validation, no LLM call is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from extractor.backends import rules
from extractor.backends.llm import LLMBackend
from extractor.document import Document
from extractor.llm.client import EndpointError, LLMError
from extractor.extraction import Extraction
from extractor.validator import validate
from schemas.stock_compensation import PART_SIGNALS

PARTS = tuple(PART_SIGNALS)
_TOP = re.compile(r"^[a-z_]+")


def gaps(extraction: Extraction, document: Document) -> tuple[frozenset[str], frozenset[str]]:
    """(empty parts the document mentions, parts with an error finding) of a rules extraction."""
    note = extraction.note
    empty = frozenset(
        name
        for name in PARTS
        if getattr(note, name) in (None, []) and re.search(PART_SIGNALS[name], document.read_text, re.IGNORECASE)
    )
    validation = validate(extraction, document)
    wrong = frozenset(
        match.group() for finding in validation.errors for ref in finding.facts if (match := _TOP.match(ref.path))
    )
    return empty, wrong & frozenset(PARTS)


@dataclass(frozen=True)
class Plan:
    """The rules extraction, and the parts to ask the LLM for: empty ones the note mentions, wrong ones."""

    ruled: Extraction
    empty: frozenset[str]
    wrong: frozenset[str]

    @property
    def parts(self) -> frozenset[str]:
        return self.empty | self.wrong


def plan(document: Document) -> Plan:
    """Run rules and find their gaps; with none, `ruled` is final and no LLM call is needed."""
    ruled = rules.extract(document)
    empty, wrong = gaps(ruled, document)
    ruled.provenance.backend = "hybrid"
    if not empty and not wrong:
        ruled.warnings.append("hybrid: rules read every part the note mentions and it passed validation; no LLM call")
    return Plan(ruled, empty, wrong)


def combine(planned: Plan, asked: Extraction | LLMError) -> Extraction:
    """The rules extraction with the LLM's reading of the asked parts (kept as it is if the LLM failed)."""
    ruled = planned.ruled
    if isinstance(asked, LLMError):
        ruled.warnings.append(f"hybrid: the LLM failed ({asked}); the rules extraction is kept as it is")
        ruled.usage = asked.usage
        return ruled
    filled = [name for name in sorted(planned.parts) if getattr(asked.note, name) not in (None, [])]
    note = ruled.note.model_copy(update={name: getattr(asked.note, name) for name in filled})
    provenance = asked.provenance.model_copy(update={"backend": "hybrid"})
    described = ", ".join(f"{name} ({'replaced' if name in planned.wrong else 'filled'})" for name in filled) or "nothing"
    return ruled.model_copy(
        update={
            "note": note,
            "provenance": provenance,
            "usage": asked.usage,
            "warnings": [*ruled.warnings, *asked.warnings, f"hybrid: the LLM read {described}; rules read the rest"],
        }
    )


def extract(document: Document, llm: LLMBackend) -> Extraction:
    planned = plan(document)
    if not planned.parts:
        return planned.ruled
    try:
        asked: Extraction | LLMError = llm.extract(document, only=planned.parts)
    except EndpointError:
        raise
    except LLMError as error:
        asked = error
    return combine(planned, asked)


async def aextract(document: Document, llm: LLMBackend) -> Extraction:
    """As `extract`, with the LLM on the async client (bulk runs)."""
    planned = plan(document)
    if not planned.parts:
        return planned.ruled
    try:
        asked: Extraction | LLMError = await llm.aextract(document, only=planned.parts)
    except EndpointError:
        raise
    except LLMError as error:
        asked = error
    return combine(planned, asked)
