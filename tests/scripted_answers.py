"""TEST FIXTURE: model-shaped answers written by code, not by a model.

`quoted_answer` turns an extraction (the rules backend's, whose facts match gold) into the JSON a
model is asked for: each number as printed, with a quote of its table row or sentence. Served by
the scripted server, it exercises the whole LLM path: HTTP, instructor parsing, quote alignment,
value computation and validation.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from extractor.document import Document
from extractor.extraction import Extraction
from extractor.schemas.values import SCALED_UNITS, Amount
from extractor.tables import layout

_WORD_EDGE = re.compile(r"\s")


def quoted_answer(extraction: Extraction, document: Document) -> dict[str, Any]:
    tables, _ = layout(document)
    labels = {(n.start, n.end): row.label for t in tables for row in t.rows for c in row.cells for n in c.numbers}

    def quote(amount: Amount) -> dict[str, Any]:
        span = amount.source
        assert span is not None, "scripted answers are built from grounded extractions"
        printed = span.text + ("%" if amount.scale == -2 else "")
        label = labels.get((span.start, span.end))
        if label is not None:
            text = f"{label} | {printed}"
        else:
            low, high = max(0, span.start - 45), min(len(document.text), span.end + 25)
            while low > 0 and not _WORD_EDGE.match(document.text[low - 1]):
                low -= 1
            while high < len(document.text) and not _WORD_EDGE.match(document.text[high]):
                high += 1
            text = document.text[low:high]
        return {
            "printed": printed,
            "quote": text,
            "unit": amount.unit,
            "scale": amount.scale if amount.unit in SCALED_UNITS else 0,
            "period": amount.period.model_dump(mode="json", exclude_none=True),
        }

    def walk(value: Any) -> Any:
        if isinstance(value, Amount):
            return quote(value)
        if isinstance(value, BaseModel):
            items = {name: walk(getattr(value, name)) for name in type(value).model_fields}
            return {name: item for name, item in items.items() if item not in (None, [], "")}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value.isoformat() if hasattr(value, "isoformat") else value

    return walk(extraction.note)
