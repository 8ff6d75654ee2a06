"""Reading a TOML file (settings, prompts, suite manifests) with errors that name the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: Path, error: type[Exception], unreadable: str = "cannot be read") -> dict[str, Any]:
    """The file's top-level table, or `error` saying which file and what is wrong with it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as cause:
        raise error(f"{path}: {unreadable} ({cause.strerror or cause})") from cause
    except tomllib.TOMLDecodeError as cause:
        raise error(f"{path}: not valid TOML ({cause})") from cause
