"""Where the correction queue lives and how it behaves: flags, then the environment, then the
`[queue]` table of extractor.toml, then defaults.

```toml
[queue]
url = "sqlite:///review/queue.sqlite"   # or a plain path; SQLite (WAL) is the one store
root = "/data/filings"                  # documents are read from below this folder only
qa_rate = 0.02                          # share of passing extractions sampled for review
claim_minutes = 30                      # a claim expires after this; then anyone may take it over
hosts = ["review.example.org"]          # host names the review server answers besides localhost
max_save_mb = 4                         # the largest edit form the review server reads
save_seconds = 20                       # a save whose re-validation takes longer is refused, unsaved
```
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from extractor.llm.config import ConfigError, merge_settings
from extractor.regex_cache import regex

DEFAULT_QUEUE = "out/queue.sqlite"
ENVIRONMENT = {"EXTRACTOR_QUEUE": "url", "EXTRACTOR_REVIEW_ROOT": "root"}
HOST_NAME = regex(
    r"(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\]"
)  # as a Host header names it, port left off


class QueueSettings(BaseModel):
    url: str = Field(default=DEFAULT_QUEUE, description="A SQLite file path or sqlite:///path URL.")
    root: Path = Field(default_factory=Path.cwd, description="Documents outside this folder are never read.")
    qa_rate: float = Field(default=0.0, ge=0, le=1, description="Share of passing extractions sampled for QA review.")
    claim_minutes: float = Field(
        default=30.0, gt=0, description="How long a claim holds before others may take it over."
    )
    hosts: list[str] = Field(
        default_factory=list, description="Host names the review server answers besides localhost."
    )
    max_save_mb: float = Field(
        default=4.0, gt=0, le=1024, description="The largest edit form the review server reads, in MiB."
    )
    save_seconds: float = Field(
        default=20.0, gt=0, le=3600, description="A save whose re-validation takes longer is refused, unsaved."
    )

    @field_validator("hosts")
    @classmethod
    def _names_only(cls, hosts: list[str]) -> list[str]:
        """The Host header is matched without its port: a scheme or port here would never match."""
        for host in hosts:
            if not HOST_NAME.fullmatch(host):
                raise ValueError(
                    f"{host!r}: give the host name only, as in 'review.example.org', '*.example.org' or '[::1]' "
                    "(no scheme or port)"
                )
        return hosts

    @property
    def path(self) -> Path:
        return queue_path(self.url)


def queue_path(url: str) -> Path:
    """The SQLite file a queue URL names: 'sqlite:///rel/q.sqlite', 'sqlite:////abs/q.sqlite' or a path."""
    if "://" not in url:
        return Path(url)
    scheme, _, rest = url.partition("://")
    if scheme != "sqlite":
        raise ConfigError(f"queue url {url!r}: only SQLite queues are supported (a file path or sqlite:///path)")
    if not rest.startswith("/") or rest == "/":
        raise ConfigError(f"queue url {url!r}: write sqlite:///relative/path.sqlite or sqlite:////absolute/path.sqlite")
    return Path(rest[1:])


def resolve_queue_settings(
    flags: Mapping[str, Any], config_file: Path | None = None, environ: Mapping[str, str] | None = None
) -> QueueSettings:
    """Merge settings: flags (None = not given) over environment over the [queue] table."""
    settings = merge_settings(QueueSettings, "queue", flags, ENVIRONMENT, environ, config_file)
    settings.path  # noqa: B018 - a bad URL is said now, not at first use
    return settings
