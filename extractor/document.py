"""The Document: what every loader produces and every later stage points into."""

from __future__ import annotations

import hashlib
from datetime import date

from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from extractor.grid import TableGrid


class DocumentMetadata(BaseModel):
    """What the filing says about itself, where it says it."""

    form: str | None = None
    company: str | None = None
    cik: str | None = None
    title: str | None = Field(default=None, description="The note or page title, e.g. 'Stock Compensation Plan'.")
    fiscal_period_end: date | None = Field(default=None, description="End of the latest fiscal period reported.")
    source_name: str | None = Field(default=None, description="File name inside a submission, e.g. 'R19.htm'.")


class Document(BaseModel):
    """Plain text as a reader sees it; every span in the pipeline is an offset into `text`."""

    id: str
    path: str
    format: str = Field(description="rpage-text, html, edgar-submission, aligned-text")
    text: str
    metadata: DocumentMetadata = Field(default_factory=DocumentMetadata)
    warnings: list[str] = Field(default_factory=list)
    grids: list[TableGrid] = Field(default_factory=list, description="HTML tables as drawn, with cell spans into `text`.")
    _derived: dict[str, tuple[str, str, Any]] = PrivateAttr(default_factory=dict)

    def derived(self, name: str, build: Any) -> Any:
        """`build(self)`, computed once per text and format (its tables, say, which every stage reads).

        Kept with the text it was built from, so a copy with another text never sees a stale value.
        """
        kept = self._derived.get(name)
        if kept is not None and kept[0] is self.text and kept[1] == self.format:
            return kept[2]
        value = build(self)
        self._derived[name] = (self.text, self.format, value)
        return value

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


class LoadError(Exception):
    """An input that cannot become a Document; the message names the file and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
