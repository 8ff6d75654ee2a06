"""The Document: what every loader produces and every later stage points into."""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from extractor.errors import ExtractorError
from extractor.grid import TableGrid


class DocumentMetadata(BaseModel):
    """What the filing says about itself, where it says it."""

    form: str | None = None
    company: str | None = None
    cik: str | None = None
    title: str | None = Field(default=None, description="The note or page title, e.g. 'Stock Compensation Plan'.")
    fiscal_period_end: date | None = Field(default=None, description="End of the latest fiscal period reported.")
    source_name: str | None = Field(default=None, description="File name inside a submission, e.g. 'R19.htm'.")


class NoteSpan(BaseModel):
    """Where a whole filing's stock-compensation note lies in `Document.text`, and why it was taken."""

    start: int
    end: int
    heading: str | None = Field(
        default=None, description="The note's heading as printed, e.g. 'Note 18. Share-Based Payments'."
    )
    why: str = ""


class Document(BaseModel):
    """Plain text as a reader sees it; every span in the pipeline is an offset into `text`."""

    id: str
    path: str
    format: str = Field(description="rpage-text, html, edgar-submission, aligned-text")
    text: str
    metadata: DocumentMetadata = Field(default_factory=DocumentMetadata)
    warnings: list[str] = Field(default_factory=list)
    grids: list[TableGrid] = Field(
        default_factory=list,
        description="HTML tables as drawn, with cell spans into `text` (a whole filing's: only its note's tables).",
    )
    note: NoteSpan | None = Field(
        default=None,
        description="A whole filing's stock-compensation note: the only part any backend reads. None: the document is the note.",
    )
    _derived: dict[str, tuple[str, Any, Any]] = PrivateAttr(default_factory=dict)

    def derived(self, name: str, build: Any) -> Any:
        """`build(self)`, computed once per text and format (its tables, say, which every stage reads).

        Kept with the text it was built from, so a copy with another text never sees a stale value.
        """
        kept = self._derived.get(name)
        key = (self.format, self.span)
        if kept is not None and kept[0] is self.text and kept[1] == key:
            return kept[2]
        value = build(self)
        self._derived[name] = (self.text, key, value)
        return value

    @property
    def span(self) -> tuple[int, int]:
        """The part of `text` the backends read: the note of a whole filing, else all of it."""
        return (self.note.start, self.note.end) if self.note else (0, len(self.text))

    @property
    def read_text(self) -> str:
        """`text[span]`: what a search over 'the note' should scan (offsets in it are relative to span[0])."""
        start, end = self.span
        return self.text[start:end]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


class LoadError(ExtractorError):
    """An input that cannot become a Document; the message names the file and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
