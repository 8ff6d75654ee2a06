"""Bytes to text: refuse binary, prefer UTF-8, fall back to the encodings old filings use."""

from __future__ import annotations

from extractor.document import LoadError
from extractor.limits import MAX_BYTES


def decode_bytes(path: str, data: bytes, warnings: list[str]) -> str:
    """Decode a filing; non-UTF-8 input is decoded as cp1252 (then latin-1) with a warning."""
    if not data or data.isspace():  # (not a copy of a 4 MB filing stripped)
        raise LoadError(path, "the file is empty")
    if len(data) > MAX_BYTES:
        raise LoadError(path, f"the file is {len(data):,} bytes, over the {MAX_BYTES:,}-byte limit")
    sample = data[:65536]
    if b"\x00" in sample or _control_share(sample) > 0.05:
        raise LoadError(path, "the file is binary, not a text or HTML filing")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        first_bad = err.start
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        warnings.append(f"not valid UTF-8 (first bad byte at offset {first_bad}); decoded as {encoding}")
        return text
    raise LoadError(path, "the file's text encoding could not be determined")  # pragma: no cover


_CONTROLS = bytes(b for b in range(32) if b not in (9, 10, 12, 13))


def _control_share(sample: bytes) -> float:
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    return controls / max(len(sample), 1)
