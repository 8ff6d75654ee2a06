"""Every error the library raises derives from ExtractorError, so callers catch one class."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sqlite3
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest
from fixture_paths import ROOT

import extractor
import extractor.evals
import extractor.schemas
from extractor.errors import ExtractorError

PACKAGES = (extractor, extractor.evals, extractor.schemas)
# Scripts in folders that are not packages (pkgutil does not see them), loaded from their files.
SCRIPTS = sorted((ROOT / "evals" / "labeling").glob("*.py"))
# Need the optional 'local' and 'ray' extras; skipped when they are not installed.
OPTIONAL = {"extractor.evals.local_model", "extractor.evals.local_model.run", "extractor.bulk.engine_ray"}
# The review web app's own control flow: raised and caught inside the app, they never reach a caller.
INTERNAL = {
    "extractor.review.app.BodyTooLarge",
    "extractor.review.app.TooSlow",
    "extractor.review.app.NotSignedIn",
    "extractor.review.app.BadCsrf",
    "extractor.loaders.html_rows.Unread",  # caught inside html_rows: the document is read in Python instead
}


def _skipped(name: str) -> bool:
    """`python -m extractor.cli`'s entry module runs the command line when imported, and bulk/frozen.py freezes
    the importing process's objects (it is for the forkserver's preload alone)."""
    return name.endswith(".__main__") or name == "extractor.bulk.frozen"


def _modules(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    for package in PACKAGES:
        yield package
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if _skipped(info.name):
                continue
            try:
                yield importlib.import_module(info.name)
            except ImportError:
                if info.name not in OPTIONAL:
                    raise
    for path in SCRIPTS:
        name = f"_script_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up while it runs
        spec.loader.exec_module(module)
        yield module


def _exceptions(module: ModuleType) -> Iterator[type[BaseException]]:
    for value in vars(module).values():
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
            yield value


def test_every_library_error_is_an_extractor_error(monkeypatch: pytest.MonkeyPatch) -> None:
    found = {
        f"{cls.__module__}.{cls.__qualname__}": cls for module in _modules(monkeypatch) for cls in _exceptions(module)
    }
    outside = sorted(
        name for name, cls in found.items() if not issubclass(cls, ExtractorError) and name not in INTERNAL
    )
    assert outside == [], (
        "derive these from extractor.errors.ExtractorError (or, if they never leave their module, allow-list them here)"
    )
    assert found.keys() >= INTERNAL, "the allow-list names a class that no longer exists"
    assert {
        "extractor.document.LoadError",
        "extractor.queue.store.QueueError",
        "_script_relocate.RelocationError",
    } <= found.keys()


def test_specific_errors_keep_their_other_bases() -> None:
    """Existing `except ValueError` / `except sqlite3.DatabaseError` clauses still catch what they caught."""
    from extractor.queue.edits import EditError
    from extractor.queue.store import QueueFileError
    from extractor.sections import NoNoteFound

    assert issubclass(EditError, ValueError) and issubclass(EditError, ExtractorError)
    assert issubclass(QueueFileError, sqlite3.DatabaseError) and issubclass(QueueFileError, ExtractorError)
    assert issubclass(NoNoteFound, ExtractorError)
