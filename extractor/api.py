"""The Python front door: extract, extract_many, run, validate and evaluate, with explicit settings.

    import extractor
    result = extractor.extract("tests/fixtures/000_a279831d03f6579a.txt")
    result.validation.passed, len(result.facts())

Nothing here reads extractor.toml or the environment, or writes a cache, unless asked: LLM settings
are an `LLMConfig` the caller builds (its cache is off by default). The command line is a layer over
these same functions' building blocks.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.attempt import Attempt, attempt, extract_document, iter_files
from extractor.backends.choice import BackendName, extractor_for
from extractor.document import Document, LoadError
from extractor.errors import SettingsError
from extractor.extraction import Extraction
from extractor.findings import Validation
from extractor.llm.config import LLMConfig
from extractor.loaders import load, load_text

if TYPE_CHECKING:
    from extractor.bulk.run import RunOutcome
    from extractor.evals.harness.runner import EvalRun
    from extractor.queue.store import Queue

Source = str | os.PathLike[str] | Document
_LOOKS_LIKE_A_FILE = (".txt", ".htm", ".html", ".xml", ".md")


def extract(
    source: Source,
    backend: str = "rules",
    *,
    llm: LLMConfig | None = None,
    validate: bool = True,
    accepted: Collection[str] = (),
) -> Extraction:
    """Extract one filing section: a path, a Document, or the section's text (HTML, R-page text, an EDGAR
    .txt submission or plain text; a string naming an existing file is read as that file). `backend`:
    rules (no LLM), llm or hybrid (both need `llm`). With `validate`, the validator's findings are on
    `.validation`, those whose ids are in `accepted` set aside. Raises LoadError for unreadable input."""
    document = _document(source)
    return extract_document(document, extractor_for(*_settings(backend, llm)), validate, accepted)


def extract_many(
    sources: Iterable[str | os.PathLike[str]],
    backend: str = "rules",
    *,
    llm: LLMConfig | None = None,
    validate: bool = True,
    accepted: Collection[str] = (),
) -> Iterator[Attempt]:
    """Extract files and folders (walked recursively, name order, hidden files skipped) one after another,
    in this process. Yields an Attempt per file: `.extraction`, or `.reason` when it could not be read or
    extracted; a bad file never stops the others (only an endpoint that cannot serve, EndpointError).
    For thousands of files, resumable output and worker processes, use `run`."""
    run_one = extractor_for(*_settings(backend, llm))
    for path in iter_files(sources):
        yield attempt(path, run_one, validate, accepted)


def run(
    inputs: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    backend: str = "rules",
    *,
    llm: LLMConfig | None = None,
    workers: int | None = None,
    queue: Queue | None = None,
    qa_rate: float = 0.0,
    engine: str = "local",
    ray_address: str | None = None,
    **options: Any,
) -> RunOutcome:
    """A bulk run into the folder `out`, as `extractor run` does: worker processes, resumable, every
    document once; records.jsonl, facts.csv, facts.parquet, failures.jsonl, summary.json. Documents that
    fail validation enter `queue` when given. `engine="ray"` works on the documents in a Ray cluster (the
    'ray' extra): the one at `ray_address`, the caller's own Ray session if one is open, else a local
    instance started for the run. More options: extractor.bulk.run.run."""
    from extractor.bulk.run import run as bulk_run

    return bulk_run(
        [os.fspath(i) for i in inputs],
        Path(out),
        *_settings(backend, llm),
        workers=workers,
        queue=queue,
        qa_rate=qa_rate,
        engine=engine,
        ray_address=ray_address,
        **options,
    )


def validate(extraction: Extraction, document: Source | None = None, *, accepted: Collection[str] = ()) -> Validation:
    """Check an extraction (roll-forwards, totals, agreement, ranges, grounding); with its document (a
    path, text or Document) also its spans, scales and what it left out."""
    from extractor.validator import validate as check

    return check(extraction, _document(document) if document is not None else None, accepted)


def evaluate(
    suite: str | os.PathLike[str],
    backend: str = "rules",
    *,
    llm: LLMConfig | None = None,
    store: str | os.PathLike[str] | None = None,
    label: str | None = None,
) -> EvalRun:
    """Score a backend on an eval suite (a folder with suite.toml) against its gold; `.metrics()` holds
    precision, recall and F1 by concept group, format and document. Stored in `store` when given."""
    from extractor.evals.harness.runner import run_suite
    from extractor.evals.harness.store import RunStore
    from extractor.suites import load_suite

    chosen, settings = _settings(backend, llm)
    llm_used = chosen is not BackendName.rules
    result = run_suite(
        load_suite(Path(suite)),
        extractor_for(chosen, settings),
        chosen.value,
        model=settings.model if llm_used else None,
        prompt_id=settings.prompt if llm_used else None,
        label=label,
    )
    if store is not None:
        RunStore(Path(store)).save(result)
    return result


def _settings(backend: str, llm: LLMConfig | None) -> tuple[BackendName, LLMConfig]:
    """The backend named, and its LLM settings (required for llm and hybrid); SettingsError otherwise."""
    try:
        chosen = BackendName(backend)
    except ValueError:
        raise SettingsError(f"backend must be one of rules, llm, hybrid, not {backend!r}") from None
    if chosen is BackendName.auto:
        raise SettingsError("backend 'auto' is for the command line; choose rules, llm or hybrid")
    if llm is None and chosen is not BackendName.rules:
        raise SettingsError(f"backend {backend!r} needs llm=LLMConfig(base_url=..., model=...)")
    return chosen, llm or LLMConfig()


def _document(source: Source) -> Document:
    """A Document from a path, a Document, or text. A string is text when it has a line break or starts
    with '<'; otherwise it is a file when one exists there, and an error when it looks like a path to a
    missing file (a file suffix or a folder separator): a mistyped path never passes as an empty note."""
    if isinstance(source, Document):
        return source
    if not isinstance(source, str):
        return load(Path(os.fspath(source)))
    if "\n" in source or source.lstrip().startswith("<"):
        return load_text(source)
    if os.path.isfile(source):
        return load(source)
    if source.strip().lower().endswith(_LOOKS_LIKE_A_FILE) or os.sep in source or "/" in source:
        raise LoadError(source, "no such file (to extract text, pass the text itself)")
    return load_text(source)
