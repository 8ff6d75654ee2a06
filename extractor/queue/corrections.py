"""One round of corrections: apply them, re-validate against the document, say what the changes
resolved and what they broke, and store the next version. The review page and `extractor queue
edit` / `resolve --set` share it (`save_correction`), so a reviewer sees (and the audit log keeps)
the same account either way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from extractor.document import Document
from extractor.extraction import Extraction
from extractor.queue.documents import item_document
from extractor.queue.edits import apply_edits
from extractor.queue.store import Change, Item, Queue, check_version
from extractor.validator import Finding, Validation, validate

NAMED = 8  # findings named in the account; the rest are counted


@dataclass
class Corrected:
    extraction: Extraction  # validated
    changes: list[Change]
    resolved: list[Finding]  # findings of the version corrected that are gone
    new: list[Finding]  # findings the corrections brought

    @property
    def account(self) -> str:
        """'resolved: coverage.table (table 1: 1 number); new: grounding.readback (...)' for the audit log."""
        return f"resolved: {_named(self.resolved)}; new: {_named(self.new)}"


def correct(
    extraction: Extraction,
    fields: Mapping[str, str],
    document: Document,
    check: Callable[[Extraction, Document], Validation] = validate,
) -> Corrected:
    """The extraction with `fields` applied and re-validated; EditError when a field cannot be applied.
    `check` runs the validator (the app bounds its time)."""
    corrected, changes = apply_edits(extraction, fields, document.text)
    corrected.validation = check(corrected, document)
    resolved, new = finding_changes(extraction.validation, corrected.validation)
    return Corrected(corrected, changes, resolved, new)


def save_correction(
    queue: Queue,
    item_id: int,
    reviewer: str,
    version: int,
    fields: Mapping[str, str],
    root: Path,
    check: Callable[[Extraction, Document], Validation] = validate,
) -> tuple[Item, Corrected]:
    """Apply `fields` to version `version` of an item, re-validate against its document (read only from
    below `root`), and store the result as the next version with its account. Conflict when the item is
    not at `version`; DocumentError when the document is gone or changed; EditError for a bad field."""
    item = queue.get(item_id)
    check_version(item, version)  # the edits apply to this copy: it must be the version named
    done = correct(item.extraction, fields, item_document(item, root), check)
    return queue.save(item_id, reviewer, version, done.extraction, done.changes, done.account), done


def finding_changes(before: Validation | None, after: Validation) -> tuple[list[Finding], list[Finding]]:
    """Findings gone, and findings new, by id: a finding whose values changed is a new finding."""
    old = {f.id: f for f in before.findings} if before else {}
    now = {f.id: f for f in after.findings}
    return [f for key, f in old.items() if key not in now], [f for key, f in now.items() if key not in old]


def _named(findings: list[Finding]) -> str:
    if not findings:
        return "none"
    shown = [f"{f.rule} ({_short(f)})" for f in findings[:NAMED]]
    more = f" and {len(findings) - NAMED} more" if len(findings) > NAMED else ""
    return ", ".join(shown) + more


def _short(finding: Finding) -> str:
    if finding.numbers:
        where = finding.numbers[0].where.split(",")[0]
        return f"{where}: {len(finding.numbers)} numbers unexplained"
    message = finding.message
    return message if len(message) <= 90 else message[:89] + "…"
