"""A queued item's document, read again for review and gold export, never from outside the root.

Items name their document by path (or archive.zip::member). A reviewer's browser must not be able
to make the server read anything else, so every path is resolved (symlinks followed) and refused
unless it lies below the configured root.
"""

from __future__ import annotations

from pathlib import Path

from extractor.bulk.sources import Source, read, ref_of, split_ref
from extractor.document import Document, LoadError
from extractor.limits import MAX_BYTES
from extractor.loaders import load_bytes
from extractor.queue.store import Item, QueueError


class DocumentError(QueueError):
    """The document cannot be shown: outside the root, gone, unreadable or changed since extraction."""


def confined(ref: str, root: Path) -> str:
    """The ref with its file resolved below `root`; DocumentError when it escapes."""
    archive, member = split_ref(ref)
    base = root.resolve()
    path = (base / archive).resolve()  # an absolute `archive` stays itself
    if not path.is_relative_to(base):
        raise DocumentError(
            f"{ref}: outside the review root {base}; documents are read only from below it "
            "(start the review with --root, or set root in extractor.toml's [queue] table)"
        )
    return ref_of(str(path), member)


def document_bytes(ref: str, root: Path) -> bytes:
    """The raw bytes of a document below `root`."""
    where = confined(ref, root)
    try:
        return read(Source(where, Path(split_ref(where)[0]).stem), MAX_BYTES)
    except LoadError as error:
        raise DocumentError(f"{ref}: {error.reason}") from error


def item_document(item: Item, root: Path) -> Document:
    """The item's document as the extractor read it; DocumentError if it changed since."""
    return item_source(item, root)[1]


def item_source(item: Item, root: Path) -> tuple[bytes, Document]:
    """The item's document bytes (read once) and the Document read from them, checked unchanged."""
    data = document_bytes(item.document_ref, root)
    try:
        document = load_bytes(data, item.document_ref, item.document_id)
    except LoadError as error:
        raise DocumentError(f"{item.document_ref}: {error.reason}") from error
    if document.sha256 != item.document_sha256:
        raise DocumentError(
            f"{item.document_ref} changed since it was extracted: its spans no longer point at the "
            "numbers they were read from; extract it again"
        )
    return data, document
