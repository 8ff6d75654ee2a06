"""Accepted items as gold: each becomes a suite document with its facts, its accepted findings
and where it came from, so `extractor eval` scores the next prompt against reviewed data.

    SUITE/suite.toml                     one [[documents]] entry per exported item (appended)
    SUITE/documents/q12_<id>.htm         the filing section, copied (the suite stands alone)
    SUITE/gold/q12_<id>.facts.jsonl      the accepted extraction in the shared facts format
    SUITE/gold/q12_<id>.accepted.jsonl   findings the reviewer accepted, one by one, as true of the filing
    SUITE/gold/q12_<id>.provenance.json  the item, its extraction's provenance, its audit log, what was
                                         left out of the gold and where it is partial

Gold is what a reviewer confirmed, never what merely passed through their hands: the facts added
in review are written with the rest, but a value an unresolved error finding involves stays out
unless the reviewer accepted that finding individually. An item accepted with numbers still
unexplained (coverage findings, each with its reason) is tagged "partial".
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from extractor.bulk.sources import split_ref
from extractor.queue.documents import item_source
from extractor.queue.store import Item, ItemStatus, Queue, QueueError, clock_time
from extractor.schemas.concepts import to_facts
from extractor.schemas.facts import Fact
from extractor.suites import MANIFEST, SuiteError, load_suite
from extractor.tomlfile import read_toml
from extractor.validator import FactRef, Finding


@dataclass
class Exported:
    written: list[str] = field(default_factory=list)  # suite document ids
    skipped: list[str] = field(default_factory=list)  # why an accepted item was not exported


def export_gold(queue: Queue, suite: Path, root: Path, reviewer: str, item_ids: list[int] | None = None) -> Exported:
    """Write every accepted item (or those of `item_ids`) not yet in the suite. The new manifest is
    written beside the old one, loaded as a suite, and only then put in its place and audited."""
    manifest = suite / MANIFEST
    if suite.exists() and not suite.is_dir():
        raise QueueError(f"{suite} is a file; name a suite folder (it is created when missing)")
    listed = _listed_ids(manifest)
    wanted = list(dict.fromkeys(item_ids)) if item_ids else None
    items = [queue.get(i) for i in wanted] if wanted else queue.items([ItemStatus.accepted])
    result = Exported()
    entries: list[tuple[Item, str, str]] = []
    for item in items:
        stem = re.sub(r"\.(txt|html?|xml)$", "", item.document_id, flags=re.IGNORECASE)
        entry_id = f"q{item.id}_{re.sub(r'[^A-Za-z0-9._-]+', '_', stem)}"
        if item.status is not ItemStatus.accepted:
            result.skipped.append(f"item {item.id}: {item.status.value}, not accepted")
            continue
        if entry_id in listed:
            result.skipped.append(f"item {item.id}: in the suite already as {entry_id}")
            continue
        try:
            entries.append((item, entry_id, _write_document(queue, item, suite, entry_id, root)))
        except QueueError as error:
            result.skipped.append(f"item {item.id}: {error}")
            continue
        listed.add(entry_id)
    if not entries:
        return result
    staged = suite / f".{MANIFEST}.new"
    header = (
        ""
        if manifest.exists()
        else (
            f'[suite]\nname = {json.dumps(suite.name)}\ndescription = "Extractions reviewed and accepted in the correction queue '
            "(extractor queue export-gold); each document's provenance is in gold/<id>.provenance.json\"\n"
        )
    )
    old = manifest.read_text(encoding="utf-8") if manifest.exists() else ""
    staged.write_text(old + header + "".join(entry for _, _, entry in entries), encoding="utf-8")
    try:
        load_suite(staged)
    except SuiteError as error:
        staged.unlink()
        raise QueueError(
            f"the suite would not load with these documents, so nothing was added to {manifest}: {error}"
        ) from error
    staged.replace(manifest)
    for item, entry_id, _ in entries:
        queue.record(item.id, reviewer, "exported", f"gold {manifest} [{entry_id}]")
        result.written.append(entry_id)
    return result


def _listed_ids(manifest: Path) -> set[str]:
    if not manifest.exists():
        return set()
    data = read_toml(manifest, QueueError)
    return {str(entry.get("id")) for entry in data.get("documents", [])}


def _write_document(queue: Queue, item: Item, suite: Path, entry_id: str, root: Path) -> str:
    """The item's files in the suite; returns its [[documents]] entry for the manifest."""
    data, document = item_source(item, root)  # refuses a changed file: its spans would point elsewhere
    audit = queue.audit(item.id)
    archive, member = split_ref(item.document_ref)
    suffix = PurePosixPath(member or archive).suffix or ".txt"
    paths = {
        "path": Path("documents") / f"{entry_id}{suffix}",
        "gold": Path("gold") / f"{entry_id}.facts.jsonl",
        "provenance": Path("gold") / f"{entry_id}.provenance.json",
    }
    extraction = item.extraction
    quirks = json.loads(item.accepted_findings) if item.accepted_findings else []
    if quirks:
        paths["accepted"] = Path("gold") / f"{entry_id}.accepted.jsonl"
    for relative in paths.values():
        (suite / relative).parent.mkdir(parents=True, exist_ok=True)
    (suite / paths["path"]).write_bytes(data)
    facts, excluded = gold_facts(item)
    (suite / paths["gold"]).write_text("".join(f.to_json() + "\n" for f in facts), encoding="utf-8")
    if quirks:
        (suite / paths["accepted"]).write_text("".join(json.dumps(q) + "\n" for q in quirks), encoding="utf-8")
    provenance = {
        "item": item.id,
        "document": {
            "id": item.document_id,
            "ref": item.document_ref,
            "sha256": item.document_sha256,
            "format": document.format,
        },
        "entered": {"reason": item.reason.value, "from": item.entered_from},
        "extraction": extraction.provenance.model_dump(mode="json"),
        "resolution": item.resolution,
        "excluded": excluded,
        "partial": partial(item, quirks),
        "audit": [asdict(entry) for entry in audit],
    }
    (suite / paths["provenance"]).write_text(
        json.dumps(provenance, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    reviewers = sorted({e.reviewer for e in audit if e.action in ("corrected", "accepted")})
    source = (
        f"review queue item {item.id} ({item.reason.value}): {item.document_ref}; extracted by "
        f"{extraction.provenance.backend}, accepted by {', '.join(reviewers)} on {clock_time(item.updated)[:10]}"
    )
    lines = ["", "[[documents]]", f"id = {json.dumps(entry_id)}"]
    lines += [f"{key} = {json.dumps(path.as_posix())}" for key, path in paths.items() if key != "provenance"]
    lines += [
        f"format = {json.dumps(document.format)}",
        f"source = {json.dumps(source, ensure_ascii=False)}",
        f"tags = {json.dumps(['reviewed', 'partial'] if provenance['partial'] else ['reviewed'])}",
    ]
    return "\n".join(lines) + "\n"


def gold_facts(item: Item) -> tuple[list[Fact], list[dict[str, str]]]:
    """The facts an accepted item vouches for, and those left out with the finding that keeps each out:
    every value an error finding involves, unless the reviewer accepted that finding individually."""
    validation = item.extraction.validation
    accepted = {entry["id"] for entry in json.loads(item.accepted_findings)} if item.accepted_findings else set()
    doubted: dict[tuple[object, str], Finding] = {}
    for finding in validation.errors if validation else []:
        if finding.id not in accepted:
            for ref in finding.facts:
                doubted.setdefault(_identity(ref), finding)
    facts, excluded = [], []
    for fact in to_facts(item.extraction.note):
        blamed = doubted.get(_identity(FactRef.of(None, fact)))
        if blamed is None:
            facts.append(fact)
        else:
            excluded.append(
                {
                    "concept": fact.concept,
                    "value": format(fact.value, "f"),
                    "period_end": fact.period.end_date.isoformat(),
                    "finding": blamed.id,
                    "rule": blamed.rule,
                    "message": blamed.message,
                }
            )
    return facts, excluded


def partial(item: Item, quirks: list[dict[str, str]]) -> list[dict[str, object]]:
    """Where the gold is known to be incomplete: each coverage finding accepted with its reason, and its numbers."""
    validation = item.extraction.validation
    reasons = {q["id"]: q.get("reason", "") for q in quirks}
    return [
        {
            "finding": f.id,
            "rule": f.rule,
            "reason": reasons.get(f.id, item.resolution or ""),
            "numbers": [{"start": n.start, "end": n.end, "text": n.text, "where": n.where} for n in f.numbers],
        }
        for f in (validation.findings if validation else [])
        if f.family == "coverage"
    ]


def _identity(ref: FactRef) -> tuple[object, str]:
    return ref.key(), format(ref.value.normalize(), "f")
