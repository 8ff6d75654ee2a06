"""Command line: thin wrappers over the library (everything here is callable from Python)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from extractor import __version__
from extractor.backends import rules
from extractor.document import LoadError
from extractor.extraction import Extraction
from extractor.loaders import load
from extractor.render import facts_table, score_table
from extractor.scoring import Score, score
from schemas.concepts import to_facts
from schemas.facts import Fact

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Extract stock-based compensation data from SEC filing sections, grounded in the source text.",
)
err = Console(stderr=True, soft_wrap=True, highlight=False)


class Backend(str, Enum):
    rules = "rules"


class OutputFormat(str, Enum):
    json = "json"
    facts = "facts"
    table = "table"


def iter_inputs(paths: list[Path]) -> Iterator[Path]:
    """Files as given; directories walked recursively in name order (hidden files skipped)."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        else:
            yield path


@app.command()
def extract(
    paths: list[Path] = typer.Argument(..., help="Filing sections: R-page text or HTML, 10-K HTML notes, EDGAR .txt submissions, aligned plain text, or directories of them."),
    backend: Backend = typer.Option(Backend.rules, help="Extraction backend. 'rules' needs no LLM and no key."),
    output_format: OutputFormat = typer.Option(OutputFormat.json, "--format", "-f", help="json: schema instances; facts: JSON Lines in the shared facts format; table: a readable table."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of standard output."),
) -> None:
    """Extract every input; unreadable inputs are reported and the others still processed.

    Examples:
      extractor extract tests/fixtures/000_a279831d03f6579a.txt --format table
      extractor extract filings/ --format facts -o facts.jsonl
    """
    extractions: list[Extraction] = []
    failures = 0
    for path in iter_inputs(paths):
        try:
            document = load(path)
        except LoadError as error:
            err.print(f"[red]error[/red]: {escape(str(error))}")
            failures += 1
            continue
        extraction = rules.extract(document)
        for warning in extraction.warnings:
            err.print(f"[yellow]warning[/yellow]: {escape(str(path))}: {escape(warning)}")
        if extraction.tables_unmapped:
            err.print(f"[yellow]note[/yellow]: {escape(str(path))}: tables not mapped: {escape('; '.join(extraction.tables_unmapped))}")
        extractions.append(extraction)
    _write(extractions, output_format, output)
    if failures:
        err.print(f"{failures} of {failures + len(extractions)} inputs could not be read")
        raise typer.Exit(code=1)


def _write(extractions: list[Extraction], output_format: OutputFormat, output: Path | None) -> None:
    if output_format is OutputFormat.table:
        target = output.open("w", encoding="utf-8") if output else sys.stdout
        console = Console(file=target, width=None if target.isatty() else 150)
        for extraction in extractions:
            console.print(facts_table(extraction, to_facts(extraction.note)))
        return
    if output_format is OutputFormat.facts:
        lines = [
            json.dumps({**fact.to_json_dict(), "document": extraction.document_id}, ensure_ascii=False)
            for extraction in extractions
            for fact in to_facts(extraction.note)
        ]
        text = "\n".join(lines) + ("\n" if lines else "")
    else:
        text = json.dumps([e.model_dump(mode="json") for e in extractions], indent=2, ensure_ascii=False) + "\n"
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        err.print(f"wrote {output}")
    else:
        sys.stdout.write(text)


@app.command("score")
def score_command(
    facts_file: Path = typer.Argument(..., help="Predicted facts (JSON Lines, with a 'document' key per line, as 'extract --format facts' writes)."),
    gold: Path = typer.Option(Path("evals/gold"), help="Folder of <document>.facts.jsonl gold files."),
    fail_under: float | None = typer.Option(None, help="Exit non-zero when overall F1 is below this (0-1)."),
    show_errors: bool = typer.Option(True, help="List misses, extras and wrong values."),
) -> None:
    """Score extracted facts against gold: precision, recall and F1 per document and overall."""
    by_document: dict[str, list[Fact]] = {}
    for number, line in enumerate(facts_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        document = record.pop("document", None)
        if document is None:
            err.print(f"[red]error[/red]: {facts_file}:{number}: no 'document' key; cannot tell which gold file applies")
            raise typer.Exit(code=2)
        by_document.setdefault(document, []).append(Fact.from_json(json.dumps(record)))
    results: dict[str, Score] = {}
    for document, predicted in by_document.items():
        gold_file = gold / f"{document}.facts.jsonl"
        if not gold_file.exists():
            err.print(f"[yellow]note[/yellow]: no gold for {document} ({gold_file}); not scored")
            continue
        gold_facts = [Fact.from_json(l) for l in gold_file.read_text(encoding="utf-8").splitlines() if l.strip()]
        results[document] = score(predicted, gold_facts)
    total = Score()
    for result in results.values():
        total.add(result)
    Console().print(score_table(results, total, show_errors))
    if fail_under is not None and total.f1 < fail_under:
        err.print(f"[red]F1 {total.f1:.3f} is below --fail-under {fail_under}[/red]")
        raise typer.Exit(code=1)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
