"""A suite: documents with their gold facts, listed in a `suite.toml` manifest.

```toml
[suite]
name = "heterogeneous"
description = "..."

[[documents]]
id = "002_prose"                       # unique; names the document in scores and reports
path = "documents/002_prose.txt"       # relative to the manifest
gold = "gold/002_prose.facts.jsonl"    # facts format (shared/spec/facts.md)
accepted = "gold/002_prose.accepted.jsonl"   # optional: filing quirks the gold keeps
format = "prose"                       # how it is laid out, for people and per-format reading
source = "Seed 002 restated in sentences only"
tags = ["synthetic"]                   # "real" or "synthetic", plus any others
xbrl_gold = "gold/x.xbrl.json"         # optional: the filer's visible XBRL facts, raw (loose matching)
tagged = "tagged/x.json"               # optional: every fact the filer tagged (tag-backed precision)
robustness = true                      # optional: no gold; the document must only extract without error
```

A robustness document has no `gold`; it is extracted and reported, never scored.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from extractor.errors import ExtractorError
from extractor.schemas.facts import Fact
from extractor.tomlfile import read_toml
from extractor.validator import read_accepted

MANIFEST = "suite.toml"


class SuiteError(ExtractorError):
    """A manifest that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class SuiteDocument:
    id: str
    path: Path
    gold: Path | None  # None for a robustness document
    accepted: Path | None
    format: str
    source: str
    tags: tuple[str, ...]
    gold_facts: tuple[Fact, ...]  # read when the suite loads: a bad line fails before any extraction
    accepted_findings: dict[str, str]
    xbrl_gold: Path | None = None
    tagged: Path | None = None
    xbrl_gold_facts: tuple[TaggedFact, ...] | None = None  # set when the suite has XBRL gold: loose scoring
    tagged_facts: tuple[TaggedFact, ...] = ()
    robustness: bool = False


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    manifest: Path
    documents: tuple[SuiteDocument, ...]

    def fingerprint(self) -> str:
        """Hash of the manifest, documents and gold: two runs are comparable fact by fact when equal."""
        digest = hashlib.sha256(self.manifest.read_bytes())
        for document in self.documents:
            for path in (document.path, document.gold, document.accepted, document.xbrl_gold, document.tagged):
                if path is not None:
                    digest.update(path.read_bytes())
        return digest.hexdigest()[:16]


def load_suite(path: Path) -> Suite:
    """Read `path/suite.toml` (or the manifest file itself); every listed file must exist."""
    manifest = path / MANIFEST if path.is_dir() else path
    data = read_toml(manifest, SuiteError, unreadable="no suite manifest here")
    header = data.get("suite", {})
    entries = data.get("documents", [])
    if not entries:
        raise SuiteError(f"{manifest}: lists no [[documents]]")
    root = manifest.parent
    documents: list[SuiteDocument] = []
    for number, entry in enumerate(entries, start=1):
        documents.append(_document(manifest, root, number, entry))
    ids = [d.id for d in documents]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SuiteError(f"{manifest}: document ids listed twice: {', '.join(duplicates)}")
    return Suite(
        name=str(header.get("name") or root.name),
        description=str(header.get("description", "")),
        manifest=manifest,
        documents=tuple(documents),
    )


def _document(manifest: Path, root: Path, number: int, entry: dict) -> SuiteDocument:
    where = f"{manifest}: document {number}"
    robustness = entry.get("robustness", False)
    if not isinstance(robustness, bool):
        raise SuiteError(f"{where}: robustness must be true or false")
    required = ("id", "path") if robustness else ("id", "path", "gold")
    missing = [key for key in required if not entry.get(key)]
    if missing:
        raise SuiteError(f"{where}: missing {', '.join(missing)}")
    where = f"{manifest}: document {entry['id']!r}"
    if robustness and entry.get("gold"):
        raise SuiteError(f"{where}: a robustness document has no gold")
    keys = ("path", "gold", "accepted", "xbrl_gold", "tagged")
    paths = {key: (root / entry[key]).resolve() for key in keys if entry.get(key)}
    for key, resolved in paths.items():
        if not resolved.is_file():
            raise SuiteError(f"{where}: {key} {entry[key]} does not exist ({resolved})")
    tags = entry.get("tags", [])
    if not isinstance(tags, list):
        raise SuiteError(f"{where}: tags must be a list of strings")
    try:
        accepted = read_accepted(paths["accepted"]) if "accepted" in paths else {}
    except (OSError, ValueError) as error:
        raise SuiteError(f"{where}: accepted findings cannot be read ({error})") from error
    try:
        xbrl_gold = read_tagged(paths["xbrl_gold"]) if "xbrl_gold" in paths else None
        tagged = read_tagged(paths["tagged"]) if "tagged" in paths else ()
    except (OSError, ValueError) as error:
        raise SuiteError(f"{where}: XBRL facts cannot be read ({str(error).splitlines()[0]})") from error
    return SuiteDocument(
        id=str(entry["id"]),
        path=paths["path"],
        gold=paths.get("gold"),
        accepted=paths.get("accepted"),
        format=str(entry.get("format", "")),
        source=str(entry.get("source", "")),
        tags=tuple(str(tag) for tag in tags),
        gold_facts=_read_gold(where, paths["gold"]) if "gold" in paths else (),
        accepted_findings=accepted,
        xbrl_gold=paths.get("xbrl_gold"),
        tagged=paths.get("tagged"),
        xbrl_gold_facts=xbrl_gold,
        tagged_facts=tagged,
        robustness=robustness,
    )


def _read_gold(where: str, path: Path) -> tuple[Fact, ...]:
    facts = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                facts.append(Fact.from_json(line))
            except ValueError as error:  # JSON and pydantic errors are both ValueErrors
                raise SuiteError(
                    f"{where}: gold {path.name}:{number} is not a fact ({str(error).splitlines()[0]})"
                ) from error
    return tuple(facts)


# -- the filer's own tagged facts (XBRL), for loose matching and tag-backed precision ----------------


@dataclass(frozen=True)
class TaggedFact:
    """One fact as the filer tagged it (corpus gold_facts.json / extension_facts.json fields we use)."""

    concept: str
    value: Decimal
    end: str | None  # the period's end or instant, ISO
    dims: tuple[tuple[str, str], ...]  # axis -> member in the file's order (the first award axis wins)
    printed: str | None = None

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> TaggedFact | None:
        """None for a fact without a number (score_real.py ignores those too)."""
        value = item.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return None
        return cls(
            concept=str(item.get("concept", "")),
            value=Decimal(str(value)) if isinstance(value, float) else Decimal(value),
            end=end_of(item.get("period")),
            dims=tuple((str(k), str(v)) for k, v in (item.get("dims") or {}).items()),
            printed=item.get("printed"),
        )


def read_tagged(path: Path) -> tuple[TaggedFact, ...]:
    """A JSON list of tagged facts (numbers read as Decimal, never float)."""
    items = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    if not isinstance(items, list):
        raise ValueError(f"{path}: not a JSON list of facts")
    return tuple(fact for item in items if isinstance(item, dict) and (fact := TaggedFact.from_json(item)) is not None)


def end_of(period: object) -> str | None:
    if not isinstance(period, dict):
        return None
    end = period.get("instant") or period.get("end")
    return str(end) if end else None
