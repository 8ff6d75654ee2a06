"""How extractions enter the queue: every one that fails validation, and a sample of those that pass.

The sample is drawn from the SHA-256 of the file's bytes (the bulk manifest's key), not a random
generator, so a resumed run, a second run or `extract --queue` sample the same documents, and the
rate is met over any large batch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from extractor.bulk.sources import ref_of, split_ref
from extractor.extraction import Extraction
from extractor.queue.store import EntryReason, Queue

if TYPE_CHECKING:  # the bulk package imports nothing from here
    from extractor.bulk.work import Rendered


def qa_sampled(key: str, rate: float) -> bool:
    """True for about `rate` of all keys, always the same ones."""
    if rate <= 0:
        return False
    draw = int(hashlib.sha256(f"qa:{key}".encode()).hexdigest()[:12], 16) / 16**12
    return draw < rate


def entry_reason(extraction: Extraction, key: str, qa_rate: float) -> EntryReason | None:
    """Why this extraction goes to review, or None when it does not."""
    if extraction.validation is not None and not extraction.validation.passed:
        return EntryReason.validation
    return EntryReason.qa_sample if qa_sampled(key, qa_rate) else None


def content_key(path: str, fallback: str) -> str:
    """The SHA-256 of the file's bytes, as bulk runs key documents; `fallback` if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return fallback


def absolute_ref(ref: str, root: str | None = None) -> str:
    """A ref that still names the same file when the reviewer works from another folder."""
    archive, member = split_ref(ref)
    path = os.path.abspath(os.path.join(root or os.getcwd(), archive))
    return ref_of(path, member)


def enqueue(
    queue: Queue, extractions: Sequence[Extraction], qa_rate: float, entered_from: str = "extract"
) -> tuple[int, int]:
    """Extractions that fail validation (and the QA sample of passing ones) into the queue, each under
    an absolute ref. Returns (added, due): items that went in, and items due, some already there."""
    entries = [
        (e, absolute_ref(e.document_path), reason)
        for e in extractions
        if (reason := entry_reason(e, content_key(e.document_path, e.document_sha256), qa_rate)) is not None
    ]
    added = sum(1 for item in queue.add_many(entries, entered_from) if item is not None) if entries else 0
    return added, len(entries)


class RunFeed:
    """Enqueues a bulk run's finished documents as the writer commits them. Called before the
    manifest commit, and idempotent, so a run killed in between enqueues them on resume instead."""

    def __init__(self, queue: Queue, qa_rate: float, entered_from: str, root: str | None = None) -> None:
        self.queue = queue
        self.qa_rate = qa_rate
        self.entered_from = entered_from
        self.root = root
        self.added = 0

    def __call__(self, finished: Sequence[Rendered]) -> None:
        entries = []
        for item in finished:
            status = item.finished.status.value
            if item.record is None or status not in ("review", "done"):
                continue
            if status == "done" and not qa_sampled(item.finished.key, self.qa_rate):
                continue
            extraction = Extraction.model_validate(json.loads(item.record)["extraction"])
            reason = EntryReason.validation if status == "review" else EntryReason.qa_sample
            entries.append((extraction, absolute_ref(item.ref, self.root), reason))
        if entries:
            self.added += sum(1 for added in self.queue.add_many(entries, self.entered_from) if added is not None)
