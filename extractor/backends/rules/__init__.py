"""The deterministic backend: rebuilt tables and prose patterns fill the schema; no LLM, no network."""

from __future__ import annotations

from extractor import __version__
from extractor.backends.rules.implied_scale import SCALE_NAMES, apply_usd_scale, implied_usd_scale
from extractor.backends.rules.prose import extract_prose
from extractor.backends.rules.tables import LeftoverMapper, TableMapper
from extractor.document import Document
from extractor.extraction import Extraction, Filing, Provenance
from extractor.periods import fiscal_frame, latest_printed_date
from extractor.schemas.concepts import iter_located_amounts
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.tables import layout
from extractor.tables.transpose import years_as_columns


def extract(doc: Document, *, validated: bool = False) -> Extraction:
    """Fill a StockCompensationNote from the document's tables, then from its sentences. `validated`: with the
    validator's findings against the document attached, and the facts it merged kept for the writer
    (`Extraction.take_facts`), as every backend's `validated` gives them (backends.choice.Extract)."""
    tables, paragraphs = layout(doc)
    tables = [years_as_columns(table) for table in tables]
    columns = [c for t in tables for c in t.columns]
    note_text = doc.read_text  # a whole filing's note: nothing else in the filing is read
    frame = fiscal_frame(
        note_text,
        doc.metadata.fiscal_period_end,
        header_ends=[c.end for c in columns if c.end],
        header_month_days=[c.month_day for c in columns if c.month_day and (c.months or 12) == 12],
    )
    fiscal_end = frame.latest or latest_printed_date(note_text)
    calendar = frame.calendar
    note = StockCompensationNote()
    mapper = TableMapper(note, calendar, fiscal_end)
    unmapped = [t.title or t.caption or f"table at offset {t.start}" for t in tables if not mapper.map(t)]
    consumed = {amount.source.start for _, (_, amount, _) in iter_located_amounts(note) if amount.source}
    leftovers = LeftoverMapper(mapper)
    for table in tables:
        leftovers.map(table, consumed)
    usd_scale = implied_usd_scale(note, note_text)
    prose_text = doc.text.replace("\n", " ").replace("\u00a0", " ")  # same length: offsets hold
    extract_prose(note, prose_text, paragraphs, calendar, fiscal_end, usd_scale)
    apply_usd_scale(note, usd_scale, doc.text)
    note.fiscal_year_ends = note.years_reported(fiscal_end)
    warnings = list(doc.warnings)
    if not tables:
        warnings.append("no tables found; only sentences were read")
    if usd_scale:
        warnings.append(
            f"the note states no scale for its dollar amounts; read in {SCALE_NAMES[usd_scale]}, the only scale in "
            "which they are plausible next to its share counts and per-share values"
        )
    extraction = Extraction(
        document_id=doc.id,
        document_path=doc.path,
        document_sha256=doc.sha256,
        note=note,
        provenance=Provenance(backend="rules", code_version=__version__),
        section=doc.note,
        filing=Filing.of(doc),
        tables_found=len(tables),
        tables_unmapped=unmapped,
        warnings=warnings,
    )
    if validated:
        from extractor.validator import validate  # the backend alone does not load the validator

        extraction.validation = validate(extraction, doc, keep_facts=True)
    return extraction
