"""An Extraction: the schema instance a backend filled, and where it came from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from extractor.document import NoteSpan
from extractor.llm.usage import Usage
from extractor.validator.findings import Validation
from schemas.stock_compensation import StockCompensationNote


class Provenance(BaseModel):
    backend: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_hash: str | None = None
    code_version: str | None = None


class Extraction(BaseModel):
    document_id: str
    document_path: str
    document_sha256: str
    note: StockCompensationNote
    provenance: Provenance
    section: NoteSpan | None = Field(
        default=None, description="The note read in a whole filing (heading, character range); None: the document is the note."
    )
    tables_found: int = 0
    tables_unmapped: list[str] = Field(default_factory=list, description="Titles of tables no rule understood.")
    warnings: list[str] = Field(default_factory=list)
    validation: Validation | None = Field(default=None, description="The validator's findings and verdict, once run.")
    usage: Usage | None = Field(default=None, description="LLM calls, tokens, cost and time (LLM backends only).")
