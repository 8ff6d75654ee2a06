"""Which code produced a result: stored with eval runs and bulk-run fingerprints, so results made by
different code are never mixed up or silently resumed together."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
from pathlib import Path

from extractor import __version__

# The code and data an extraction depends on (the eval harness is not one of them).
PACKAGES = ("extractor", "extractor.schemas", "extractor.prompts")
NOT_HASHED = (
    "evals",
    "schemas",
    "prompts",
)  # folders inside an installed extractor/ hashed on their own, or not at all


def code_version() -> str:
    """Package version, git commit (+dirty) when run from a checkout, and a hash of code and prompts.

    The hash tells apart two runs of uncommitted edits, which a commit id alone cannot.
    """
    parts = [__version__]
    checkout = _folder("extractor").parent
    try:
        top = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5
        )
        if (
            top.returncode == 0 and Path(top.stdout.strip()).resolve() == checkout.resolve()
        ):  # a checkout, not a venv inside one
            commit = subprocess.run(
                ["git", "-C", str(checkout), "describe", "--always", "--dirty"],
                capture_output=True,
                text=True,
                timeout=5,
            )
            if commit.returncode == 0 and commit.stdout.strip():
                parts.append(commit.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    parts.append(f"src:{source_hash()}")
    return " ".join(parts)


def source_hash() -> str:
    """A hash of the code and prompts an extraction depends on: the same wherever the same code is
    installed (a checkout, a wheel on a cluster's workers), whatever its commit or folder."""
    digest = hashlib.sha256()
    for name in PACKAGES:
        root = _folder(name)
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if name == "extractor" and relative.parts[0] in NOT_HASHED:
                continue
            if path.suffix in (".py", ".pyx", ".toml") and path.is_file():
                digest.update(f"{name}/{relative.as_posix()}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:10]


def _folder(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))
