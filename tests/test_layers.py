"""Layers point one way: the library never imports the command line or the eval harness; the harness
never imports the command line. The front doors (extractor/api.py, extractor/cli/) may import both."""

from __future__ import annotations

import ast

from fixture_paths import ROOT

FRONT_DOORS = ("extractor/cli/", "extractor/api.py", "extractor/__init__.py")


def imported(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def offenders(folder: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(allowed):
            continue
        found += [f"{relative}: {name}" for name in imported(path) if name.startswith(forbidden)]
    return found


def test_the_library_imports_neither_the_cli_nor_the_harness():
    forbidden = ("extractor.cli", "extractor.evals", "evals", "schemas", "typer")
    assert offenders("extractor", forbidden, FRONT_DOORS) == []
    assert offenders("schemas", forbidden) == []


def test_the_harness_does_not_import_the_cli():
    assert offenders("evals", ("extractor.cli", "typer")) == []
