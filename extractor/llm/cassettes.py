"""Recorded completions, content-addressed: one plain JSON file per (model, messages, schema, parameters).

The key is the SHA-256 of the request body with its keys sorted, and the body holds all four. Files
can be committed: an eval re-run on unchanged prompts then replays them, costs nothing and gives
identical results. Only successful (HTTP 200) answers are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from enum import Enum
from pathlib import Path

from extractor.errors import ExtractorError


class CacheMode(str, Enum):
    off = "off"
    read_write = "read-write"
    replay = "replay"


class CassetteMiss(ExtractorError):
    """Replay-only mode met a request that was never recorded."""


def request_key(body: bytes) -> str:
    """The request's identity: its JSON body canonicalized (key order and spacing do not matter)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        canonical = body.decode("utf-8", "replace")
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Cassettes:
    """A folder of recorded completions: <root>/<key[:2]>/<key>.json."""

    def __init__(self, root: Path, mode: CacheMode) -> None:
        self.root = Path(root)
        self.mode = mode

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, body: bytes) -> bytes | None:
        """The recorded response body, or None (in replay mode, a miss is an error)."""
        if self.mode is CacheMode.off:
            return None
        key = request_key(body)
        path = self.path(key)
        if path.exists():
            try:
                return json.dumps(json.loads(path.read_text(encoding="utf-8"))["response"]).encode("utf-8")
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise CassetteMiss(
                    f"{path}: not a readable recorded completion ({error}); delete it to record again"
                ) from error
        if self.mode is CacheMode.replay:
            model = _model(body)
            raise CassetteMiss(
                f"no recorded completion for this request (model {model}, key {key[:12]}) in {self.root}; "
                "replay mode never calls the endpoint: record it first with --cache read-write"
            )
        return None

    def put(self, body: bytes, response: bytes) -> None:
        if self.mode is not CacheMode.read_write:
            return
        path = self.path(request_key(body))
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"request": json.loads(body), "response": json.loads(response)}
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # readers never see half a file
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(record, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(temporary, path)


def _model(body: bytes) -> str:
    try:
        return str(json.loads(body).get("model"))
    except (ValueError, AttributeError):
        return "unknown"
