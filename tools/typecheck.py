"""Type-check the whole package with mypy, as it installs: `python tools/typecheck.py [mypy options]`.

The repository keeps schemas/, prompts/ and evals/ as top-level folders that install as extractor.schemas,
extractor.prompts and extractor.evals (setup.py's package-dir mapping). mypy runs no import hooks, so it
cannot follow that mapping from the repository itself. This script stages the installed layout in a temporary
folder with hard links (copies where linking fails), runs `mypy -p extractor` there with pyproject.toml's
[tool.mypy] settings, and prints mypy's report with the staged paths turned back into repository paths
(extractor/schemas/values.py -> schemas/values.py), so every error points at a real file. The exit status
is mypy's.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_folders() -> dict[str, str]:
    """setup.py's FOLDERS (package -> repository folder), read from its source: one mapping for both."""
    for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FOLDERS" for t in node.targets):
            return dict(ast.literal_eval(node.value))
    sys.exit("typecheck: setup.py has no FOLDERS mapping")


# Repository folder -> folder of the staged package.
LAYOUT = {folder: package.replace(".", "/") for package, folder in _setup_folders().items()}
TYPED = {".py", ".pyi"}


def stage(target: Path) -> int:
    """Link every .py/.pyi file and py.typed marker of the mapped folders into `target`; the number staged."""
    staged = 0
    for folder, package in LAYOUT.items():
        for source in sorted((ROOT / folder).rglob("*")):
            if not source.is_file() or "__pycache__" in source.parts:
                continue
            if source.suffix not in TYPED and source.name != "py.typed":
                continue
            destination = target / package / source.relative_to(ROOT / folder)
            if destination.exists():
                sys.exit(
                    f"typecheck: {source.relative_to(ROOT)} and another folder both map to {destination.relative_to(target)}"
                )
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, destination)
            except OSError:  # another file system, or links not allowed: a copy keeps the mtime mypy's cache reads
                shutil.copy2(source, destination)
            staged += 1
    return staged


def repository_paths(report: str, staged: Path) -> str:
    """mypy's report with staged paths turned into repository paths (relative, as mypy prints them)."""
    report = report.replace(f"{staged}{os.sep}", "")
    mapped = "|".join(re.escape(package + "/") for folder, package in LAYOUT.items() if folder != package)
    return re.sub(rf"(?m)^({mapped})", lambda match: _folder(match.group(1)), report)


def _folder(package_prefix: str) -> str:
    return next(folder for folder, package in LAYOUT.items() if package + "/" == package_prefix) + "/"


def main(arguments: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="extractor-typecheck-") as folder:
        staged = Path(folder)
        if not stage(staged):
            sys.exit("typecheck: no Python files found to stage")
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *arguments,
            "-p",
            "extractor",
        ]
        # cwd: the staged folder, so `extractor` resolves there and never to the editable install.
        result = subprocess.run(command, cwd=staged, capture_output=True, text=True)
        sys.stdout.write(repository_paths(result.stdout, staged))
        sys.stderr.write(repository_paths(result.stderr, staged))
        return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
