"""An Extraction: the schema instance a backend filled, and where it came from."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from extractor.document import Document, NoteSpan
from extractor.findings import Validation
from extractor.llm.usage import Usage
from extractor.schemas.facts import Fact
from extractor.schemas.stock_compensation import StockCompensationNote


class AskedBlock(BaseModel):
    """A table or paragraph the hybrid backend sent to the LLM, and why: where a reviewer looks first."""

    kind: Literal["table", "paragraph"]
    index: int = Field(
        ge=0, description="Its number among the note's tables, or paragraphs, from 0 (as in coverage findings)."
    )
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    reason: str = Field(description="'3 unexplained numbers: 557, 1,816, 157', 'error finding totals.sum', or both.")


class Provenance(BaseModel):
    """Which backend, model, prompt (id and content hash) and code produced an extraction: what makes a
    result reproducible and two results comparable."""

    backend: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_hash: str | None = None
    code_version: str | None = None
    asked: list[AskedBlock] = Field(
        default_factory=list, description="Hybrid: the blocks sent to the LLM and why; empty when none was."
    )


class Filing(BaseModel):
    """Who filed the document and for which period, as the document states it (its EDGAR header or cover
    page): what joins these facts to other data about the filer. A field the document does not state is None."""

    company: str | None = None
    cik: str | None = None
    form: str | None = None
    fiscal_period_end: date | None = None

    @classmethod
    def of(cls, document: Document) -> Filing:
        meta = document.metadata
        return cls(company=meta.company, cik=meta.cik, form=meta.form, fiscal_period_end=meta.fiscal_period_end)


class Extraction(BaseModel):
    """What a backend read from one document: the filled schema (`note`), where it came from
    (`provenance`, `section`, `filing`), what it could not map (`tables_unmapped`, `warnings`), and, once
    validated, the validator's findings. `facts()` flattens it to the shared facts format."""

    document_id: str
    document_path: str
    document_sha256: str
    note: StockCompensationNote
    provenance: Provenance
    section: NoteSpan | None = Field(
        default=None,
        description="The note read in a whole filing (heading, character range); None: the document is the note.",
    )
    filing: Filing = Field(default_factory=Filing, description="The filer and period the document states, for joining.")
    tables_found: int = 0
    tables_unmapped: list[str] = Field(default_factory=list, description="Titles of tables no rule understood.")
    warnings: list[str] = Field(default_factory=list)
    validation: Validation | None = Field(default=None, description="The validator's findings and verdict, once run.")
    usage: Usage | None = Field(default=None, description="LLM calls, tokens, cost and time (LLM backends only).")

    def facts(self) -> list[Fact]:
        """The note as flat facts (concept, value, unit, period, dims, source span): the shared facts
        format that `extract --format facts` writes and scoring reads."""
        from extractor.schemas.concepts import to_facts

        return to_facts(self.note)

    def keep_facts(self, facts: list[Fact]) -> None:
        """Keep `facts()` as the validator just merged them for this note, for the writer that renders them
        right after (`take_facts`: a bulk worker, `extract --format facts`), so that it does not merge the
        note's numbers a second time. Kept beside the fields, not as a private attribute: pydantic compares
        those, and an extraction must still equal one read back from its JSON."""
        self.__dict__[_KEPT] = (self.note, facts)

    def take_facts(self) -> list[Fact]:
        """The facts `keep_facts` kept, while `note` is still the note they came from, else `facts()`. Handed
        over once: the extraction holds them no more (a batch that keeps its extractions does not keep their
        facts twice), and a later call merges them afresh."""
        kept = self.__dict__.pop(_KEPT, None)
        if kept is not None and kept[0] is self.note:
            return kept[1]
        return self.facts()

    def forget_facts(self) -> None:
        """Drop what `keep_facts` kept, for a caller that hands the extraction on instead of writing its facts."""
        self.__dict__.pop(_KEPT, None)


_KEPT = "kept_facts_for"  # the key of keep_facts in an extraction's __dict__ (no field has this name)
