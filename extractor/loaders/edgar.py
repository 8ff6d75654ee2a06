"""EDGAR full-submission .txt: header fields, <DOCUMENT> blocks, and which block to read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from extractor.document import DocumentMetadata
from extractor.patterns import deferred
from extractor.periods import calendar_day
from extractor.sections import STOCK_COMP_TITLE

_DOCUMENT_RE = deferred(r"<DOCUMENT>(.*?)(?:</DOCUMENT>|\Z)", re.DOTALL | re.IGNORECASE)
_TEXT_RE = deferred(r"<TEXT>(.*?)(?:</TEXT>|\Z)", re.DOTALL | re.IGNORECASE)
_TAG_RE = deferred(r"^<(TYPE|SEQUENCE|FILENAME|DESCRIPTION)>[ \t]*(.*)$", re.MULTILINE | re.IGNORECASE)


@dataclass
class SubmissionDocument:
    type: str
    filename: str
    description: str
    body: str


def is_submission(text: str) -> bool:
    head = text[:4096].upper()
    return "<SEC-DOCUMENT>" in head or "<SEC-HEADER>" in head or ("<DOCUMENT>" in head and "<TYPE>" in head)


def submission_metadata(text: str, warnings: list[str]) -> DocumentMetadata:
    """Fields of the <SEC-HEADER>: company, CIK, form and period of report. A period of report that is no
    YYYYMMDD date (a damaged header) is left out with a warning: the document's own period is read instead."""
    header = text[:20000]

    def field(name: str) -> str | None:
        match = re.search(rf"^\s*{name}:\s*(.+?)\s*$", header, re.MULTILINE | re.IGNORECASE)
        return match.group(1) if match else None

    period = field("CONFORMED PERIOD OF REPORT")
    period_end = _yyyymmdd(period) if period else None
    if period and period_end is None:
        warnings.append(f"the SEC header's CONFORMED PERIOD OF REPORT {period!r} is not a date (YYYYMMDD); ignored")
    return DocumentMetadata(
        form=field("CONFORMED SUBMISSION TYPE"),
        company=field("COMPANY CONFORMED NAME"),
        cik=field("CENTRAL INDEX KEY"),
        fiscal_period_end=period_end,
    )


def _yyyymmdd(value: str) -> date | None:
    match = _YYYYMMDD.fullmatch(value)
    return calendar_day(int(match[1]), int(match[2]), int(match[3])) if match else None  # None for 20200230 too


_YYYYMMDD = deferred(r"(\d{4})(\d{2})(\d{2})")


def split_documents(text: str) -> list[SubmissionDocument]:
    docs = []
    for block in _DOCUMENT_RE.findall(text):
        tags = {k.upper(): v.strip() for k, v in _TAG_RE.findall(block.split("<TEXT>")[0])}
        body_match = _TEXT_RE.search(block)
        docs.append(
            SubmissionDocument(
                type=tags.get("TYPE", ""),
                filename=tags.get("FILENAME", ""),
                description=tags.get("DESCRIPTION", ""),
                body=body_match.group(1) if body_match else "",
            )
        )
    return docs


def choose_document(docs: list[SubmissionDocument], form: str | None) -> SubmissionDocument | None:
    """Prefer the R page of the stock-compensation note; else the main filing document."""
    rpages = [d for d in docs if re.fullmatch(r"R\d+\.html?", d.filename, re.IGNORECASE)]
    for doc in rpages:
        if STOCK_COMP_TITLE.search(_title_of(doc.body)):
            return doc
    main_types = {form.upper()} if form else set()
    main_types |= {"10-K", "10-K405", "10-KSB", "10-K/A", "10-Q", "20-F", "40-F"}
    for doc in docs:
        if doc.type.upper() in main_types:
            return doc
    texty = [d for d in docs if d.type.upper() != "GRAPHIC" and not d.body.lstrip().startswith("begin ")]
    return texty[0] if texty else None


def _title_of(body: str) -> str:
    """An R page's title is its first header cell; enough text to recognise the note."""
    match = re.search(r"<th[^>]*>(.*?)</th>", body, re.DOTALL | re.IGNORECASE)
    return re.sub(r"<[^>]+>", " ", match.group(1)) if match else body[:300]
