"""Turn any supported input file into one Document, or fail with a LoadError naming why."""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path

from extractor.document import Document, DocumentMetadata, LoadError
from extractor.loaders.cover import with_cover
from extractor.loaders.dates import parse_header_date
from extractor.loaders.decode import decode_bytes
from extractor.loaders.edgar import choose_document, is_submission, split_documents, submission_metadata
from extractor.numbers import ANY_DIGIT
from extractor.regex_cache import regex
from extractor.sections import NoNoteFound, focus

__all__ = ["load", "load_bytes", "load_text", "LoadError", "NoNoteFound"]

_HTML_RE = regex(r"<(html|body|table|div|p|tr|td|span|font)\b", re.IGNORECASE)
# "Label      1,234   $ 56.78": a label, two or more spaces, then a number.
_ALIGNED_ROW_RE = regex(r"\S[ \t]{2,}[\$(]?[ \t]*\d", re.MULTILINE)


def load(path: str | Path) -> Document:
    """Read a filing section from disk; the format is sniffed from content, not the name."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError as err:
        raise LoadError(str(path), "is a directory, not a file") from err
    except OSError as err:
        raise LoadError(str(path), f"cannot be read ({err.strerror or err})") from err
    return load_bytes(data, str(path), path.stem)


def load_bytes(data: bytes, path: str, doc_id: str) -> Document:
    """Build a Document from a file's raw bytes (read from disk, an archive, or another process)."""
    warnings: list[str] = []
    text = decode_bytes(path, data, warnings)
    doc = load_text(text, path=path, doc_id=doc_id)
    doc.warnings[:0] = warnings
    return doc


def load_text(text: str, path: str = "<text>", doc_id: str = "document") -> Document:
    """Build a Document from already-decoded content; a whole filing comes narrowed to its stock-compensation
    note (`Document.note`), or raises NoNoteFound when it has none."""
    if "\r" in text:  # a one-character test is a memchr; the two-character search alone took 2 ms in a 10-K
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if is_submission(text):
        return _load_submission(text, path, doc_id)
    if _HTML_RE.search(text[:20000]):
        from extractor.loaders.html import grids, html_to_text  # lxml: for HTML inputs only

        rendered, meta, tables = html_to_text(path, text)
        meta = with_cover(meta, rendered)
        document = focus(_checked(Document(id=doc_id, path=path, format="html", text=rendered, metadata=meta)))
        document.grids = grids(tables, *document.span)  # only the note's tables are rebuilt
        return document
    prolog = _XML_PROLOG.match(text)
    if prolog:
        _refuse_xml(text[prolog.end() :], path)
    fmt = "aligned-text" if _aligned(text) else "rpage-text"
    meta = rpage_text_metadata(text) if fmt == "rpage-text" else DocumentMetadata()
    return focus(_checked(Document(id=doc_id, path=path, format=fmt, text=text, metadata=with_cover(meta, text))))


def _aligned(text: str) -> bool:
    """Three rows or more laid out in columns (text, two spaces or more, a number). Each has two spaces or a tab
    in a row: a text with neither (an R page's, a cell per line) is not scanned, and a scan stops at the third."""
    if "  " not in text and "\t" not in text:
        return False
    return next(islice(_ALIGNED_ROW_RE.finditer(text), 2, None), None) is not None


_RPAGE_NAME = regex(r"\b(R\d+\.html?)\b", re.IGNORECASE)


def rpage_text_metadata(text: str) -> DocumentMetadata:
    """The stripped R page starts: 'XML 44 R19.htm IDEA: XBRL DOCUMENT', title, period, date."""
    lines = [line.strip() for line in text.split("\n")[:8]]
    meta = DocumentMetadata()
    offset = 0
    if lines and "XBRL DOCUMENT" in lines[0].upper():
        match = _RPAGE_NAME.search(lines[0])
        meta.source_name = match.group(1) if match else None
        offset = 1
    if len(lines) > offset and lines[offset]:
        meta.title = lines[offset]
    for line in lines[offset + 1 :]:
        parsed = parse_header_date(line)
        if parsed:
            meta.fiscal_period_end = parsed
            break
    return meta


def _load_submission(text: str, path: str, doc_id: str) -> Document:
    warnings: list[str] = []
    meta = submission_metadata(text, warnings)
    docs = split_documents(text)
    if not docs:
        raise LoadError(path, "looks like an EDGAR submission but holds no <DOCUMENT> block")
    chosen = choose_document(docs, meta.form)
    if chosen is None or not chosen.body.strip():
        raise LoadError(path, "the EDGAR submission holds no readable text document")
    inner = load_text(chosen.body, path=path, doc_id=doc_id)
    merged = inner.metadata.model_copy(  # the SEC header's fields where it has them, else the cover page's
        update={
            "form": meta.form or inner.metadata.form,
            "company": meta.company or inner.metadata.company,
            "cik": meta.cik,
            "source_name": chosen.filename or chosen.type,
            "fiscal_period_end": inner.metadata.fiscal_period_end or meta.fiscal_period_end,
        }
    )
    return inner.model_copy(
        update={"metadata": merged, "format": f"edgar-submission/{inner.format}", "warnings": warnings + inner.warnings}
    )


def _refuse_xml(rest: str, path: str) -> None:
    """An XML document that is not HTML (an XBRL instance, an EDGAR FilingSummary.xml, a lone declaration) is no
    filing section: read as text, its tags and attributes would be taken for a note's words and numbers. `rest`
    is what follows its prolog; text there that opens no element is read as text."""
    if not rest.strip():
        raise LoadError(path, "holds only an XML declaration: nothing to extract")
    root = _XML_ELEMENT.match(rest)
    if root is None:
        return
    gold = (
        "; an XBRL instance's facts are gold: extractor gold from-xbrl" if root[1].rpartition(":")[2] == "xbrl" else ""
    )
    raise LoadError(
        path,
        f"is an XML document (root <{root[1]}>), not a filing section: the extractor reads HTML (inline XBRL "
        f"included), EDGAR submissions and plain text{gold}",
    )


# An XML document's declaration and the comments, processing instructions and doctype after it (possessive:
# a comment left open is not retried against every later '-->')
_XML_PROLOG = regex(r"[\ufeff\s]*<\?xml\b[^>]*\?>(?:\s*<!--.*?-->|\s*<\?.*?\?>|\s*<!DOCTYPE[^>]*>)*+", re.S)
_XML_ELEMENT = regex(r"\s*<([A-Za-z_][\w.:-]*)")


def _checked(doc: Document) -> Document:
    if not ANY_DIGIT.search(doc.text):
        raise LoadError(doc.path, "no numbers found: nothing to extract")
    return doc
