"""`extractor validate`: check saved extractions and facts files, against their documents when still there."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from enum import Enum
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from extractor.attempt import iter_files
from extractor.cli.common import ACCEPT_HELP, accepted_findings, err, print_findings
from extractor.document import Document, LoadError
from extractor.errors import ExtractorError
from extractor.extraction import Extraction
from extractor.findings import Validation
from extractor.loaders import load
from extractor.schemas.facts import Fact
from extractor.validator import validate, validate_facts


class ReportFormat(str, Enum):
    table = "table"
    json = "json"


class InputError(ExtractorError):
    """A file `validate` cannot read as extractions or facts; the message names the file and line."""


def validate_command(
    files: list[Path] = typer.Argument(
        ...,
        help="Saved extractions ('extract --format json' output, .json), facts files (JSON Lines, .jsonl), or directories of them.",
    ),
    document: Path | None = typer.Option(
        None,
        help="For a facts file of one document: the document its spans point into, to check spans and scales against.",
    ),
    accept: Path | None = typer.Option(None, help=ACCEPT_HELP),
    output_format: ReportFormat = typer.Option(
        ReportFormat.table, "--format", "-f", help="table: findings, readable; json: one Validation per extraction."
    ),
) -> None:
    """Check saved extractions: roll-forwards, totals, cross-table agreement, ranges, scale, grounding.

    A saved extraction is checked against its document (re-read from the path it records) when
    that file is still there and unchanged; otherwise against the span texts it carries. A facts
    file written by 'extract --format facts' is checked per document (its 'document' key). Exit
    status: 0 when everything passed, 1 when a finding of error severity remains, 2 when an
    input cannot be read.

    Examples:
      extractor extract tests/fixtures/002_59f0e0194afd947c.txt -o out/002.json
      extractor validate out/002.json
      extractor validate evals/gold/002_59f0e0194afd947c.facts.jsonl --document tests/fixtures/002_59f0e0194afd947c.txt
    """
    inputs = [p for p in iter_files(files) if p.suffix in (".json", ".jsonl") or p in files]
    if document is not None and len(inputs) > 1:
        err.print("[red]error[/red]: --document names the text of one facts file; validate one file at a time with it")
        raise typer.Exit(code=2)
    accepted = accepted_findings(accept)
    try:
        text = load(document) if document else None
    except LoadError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    results: list[tuple[str, Validation]] = []
    for path in inputs:
        try:
            results.extend(_validate_file(path, text, accepted))
        except InputError as error:
            err.print(f"[red]error[/red]: {escape(str(error))}")
            raise typer.Exit(code=2) from error
    if not results:
        err.print("[red]error[/red]: nothing to validate (no .json or .jsonl files given)")
        raise typer.Exit(code=2)
    if output_format is ReportFormat.json:
        payload = [{"name": name, **result.model_dump(mode="json")} for name, result in results]
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        console = Console(width=None if sys.stdout.isatty() else 150)
        for name, result in results:
            print_findings(console, name, result)
    failed = [name for name, result in results if not result.passed]
    if failed:
        err.print(f"{len(failed)} of {len(results)} failed validation")
        raise typer.Exit(code=1)


def _validate_file(path: Path, document: Document | None, accepted: dict[str, str]) -> list[tuple[str, Validation]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot be read ({error})") from error
    if path.suffix == ".jsonl":
        by_document = _read_facts_file(path, text)
        if document is not None and len(by_document) > 1:
            raise InputError(f"{path}: facts of {len(by_document)} documents; --document can only be the text of one")
        return [
            (f"{path} [{name}]" if name else str(path), validate_facts(facts, document, accepted, paths))
            for name, (facts, paths) in by_document.items()
        ]
    try:
        data = json.loads(text, parse_float=Decimal)
        extractions = [Extraction.model_validate(item) for item in (data if isinstance(data, list) else [data])]
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not JSON ({error}); a facts file must end in .jsonl") from error
    except ValidationError as error:
        raise InputError(
            f"{path}: not an extraction as 'extract --format json' writes it ({error.error_count()} problems, first: {error.errors()[0]['msg']} at {error.errors()[0]['loc']})"
        ) from error
    if not extractions:
        raise InputError(f"{path}: holds no extractions")
    return [(e.document_path, validate(e, _saved_document(e), accepted)) for e in extractions]


def _saved_document(extraction: Extraction) -> Document | None:
    """The extraction's document, if it is still where it was and unchanged."""
    try:
        document = load(Path(extraction.document_path))
    except LoadError as error:
        err.print(f"[yellow]note[/yellow]: {escape(str(error))}; checking span texts only")
        return None
    if document.sha256 != extraction.document_sha256:
        err.print(
            f"[yellow]note[/yellow]: {escape(extraction.document_path)} changed since extraction; checking span texts only"
        )
        return None
    return document


def _read_facts_file(path: Path, text: str) -> dict[str | None, tuple[list[Fact], list[str]]]:
    """Facts by their 'document' key (None when the file has none), each with its 'line N' path."""
    by_document: dict[str | None, tuple[list[Fact], list[str]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_float=Decimal)
            if not isinstance(record, dict):
                raise ValueError("a fact is a JSON object")
            name = record.pop("document", None)
            fact = Fact.model_validate(record)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InputError(f"{path}:{number}: not a fact ({where}: {first['msg']})") from error
        except ValueError as error:
            raise InputError(f"{path}:{number}: not a fact ({error})") from error
        facts, paths = by_document.setdefault(name, ([], []))
        facts.append(fact)
        paths.append(f"line {number}")
    if not by_document:
        raise InputError(f"{path}: holds no facts")
    return by_document
