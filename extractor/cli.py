"""Command line: thin wrappers over the library (everything here is callable from Python)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from enum import Enum
from decimal import Decimal
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable
from rich.text import Text

from extractor.evals.harness.compare import compare
from extractor.evals.harness.html_report import render_report, write_report
from extractor.evals.harness.runner import EvalRun, run_suite
from extractor.evals.harness.store import DEFAULT_STORE, RunStore, StoreError
from extractor.evals.harness.suite import SuiteError, load_suite
from extractor.evals.harness.terminal import comparison_report, run_report
from extractor import __version__
from extractor.attempt import attempt
from extractor.backends.choice import BackendName
from extractor.cli_options import (
    ApiKeyOption, BackendOption, BaseUrlOption, CacheDirOption, CacheOption, ConfigOption, MaxCharsOption,
    ModelOption, ModeOption, PromptOption, TemperatureOption, TimeoutOption, backend_runner, err, llm_flags,
)  # fmt: skip
from extractor.document import Document, LoadError
from extractor.extraction import Extraction
from extractor.gold_cli import gold_app
from extractor.local_model_cli import local_model_app
from extractor.queue.feed import absolute_ref, content_key, entry_reason
from extractor.queue.store import Queue
from extractor.queue_cli import open_queue, queue_app, queue_settings, review_command, unusable_queue_file
from extractor.run_cli import run_command
from extractor.llm.client import EndpointError
from extractor.llm.usage import Usage
from extractor.loaders import load
from extractor.render import facts_table, findings_table, score_table
from extractor.scoring import Score, gold_files, read_predictions, score
from extractor.validator import Validation, read_accepted, validate, validate_facts
from extractor.schemas.concepts import to_facts
from extractor.schemas.facts import Fact, read_facts

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Extract stock-based compensation data from SEC filing sections, grounded in the source text.",
)


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


ACCEPT_HELP = "Accepted findings (JSON Lines of {id, reason}) to set aside, e.g. evals/gold/<document>.accepted.jsonl."


@app.command()
def extract(
    paths: list[Path] = typer.Argument(..., help="Filing sections: R-page text or HTML, 10-K HTML notes, EDGAR .txt submissions, aligned plain text, or directories of them."),
    backend: BackendOption = BackendName.rules,
    output_format: OutputFormat = typer.Option(OutputFormat.json, "--format", "-f", help="json: schema instances with their validation; facts: JSON Lines in the shared facts format; table: facts and findings, readable."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of standard output."),
    validate_output: bool = typer.Option(True, "--validate/--no-validate", help="Check every extraction against itself and its document."),
    accept: Path | None = typer.Option(None, help=ACCEPT_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every table no rule mapped, one per line (by default: how many, and the first few titles; the JSON output's tables_unmapped always holds them all), and every block the hybrid backend sent to the LLM, with why (provenance.asked in the JSON)."),
    send_to_queue: bool = typer.Option(False, "--queue", help="Send extractions that fail validation (and a sample of passing ones, qa_rate in extractor.toml's queue table) to the correction queue (extractor.toml's queue table, env EXTRACTOR_QUEUE, else out/queue.sqlite)."),
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    temperature: TemperatureOption = None,
    timeout: TimeoutOption = None,
    mode: ModeOption = None,
    cache: CacheOption = None,
    cache_dir: CacheDirOption = None,
    prompt: PromptOption = None,
    max_chars: MaxCharsOption = None,
    config: ConfigOption = None,
) -> None:
    """Extract every input and validate it; unreadable inputs are reported and the others still processed.

    Exit status: 0 when every input was read and passed validation; 1 when an input could not
    be read or extracted, or an extraction has a finding of error severity (the output is written
    anyway); 2 for bad settings.

    Examples:
      extractor extract tests/fixtures/000_a279831d03f6579a.txt --format table
      extractor extract filings/ --format facts -o facts.jsonl
      extractor extract note.htm --backend llm --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
    """
    accepted = _accepted(accept)
    if send_to_queue and not validate_output:
        err.print("[red]error[/red]: --queue sends what fails validation: it cannot be used with --no-validate")
        raise typer.Exit(code=2)
    review_settings = queue_settings(None, config) if send_to_queue else None
    review_queue = open_queue(review_settings, must_exist=False) if review_settings else None
    flags = llm_flags(locals())
    chosen, run, _ = backend_runner(backend, flags, config)
    extractions: list[Extraction] = []
    failures = 0
    usage = Usage()
    inputs = list(iter_inputs(paths))
    for index, path in enumerate(inputs):
        try:
            tried = attempt(path, run)
        except EndpointError as error:  # a key, model or URL problem: no other input would fare better
            usage.add(error.usage or Usage())
            left = len(inputs) - index - 1
            err.print(f"[red]error[/red]: {escape(str(path))}: {escape(str(error))}")
            err.print(f"stopped: the endpoint cannot serve any input; {left} more not extracted")
            failures += left + 1
            break
        if tried.extraction is None or tried.document is None:
            usage.add(tried.usage or Usage())
            err.print(f"[red]error[/red]: {escape(tried.message)}")
            failures += 1
            continue
        document, extraction = tried.document, tried.extraction
        if validate_output:
            extraction.validation = validate(extraction, document, accepted)
        if extraction.usage is not None:
            usage.add(extraction.usage)
        if extraction.section:
            where = f"characters {extraction.section.start:,}-{extraction.section.end:,}"
            err.print(f"read: {escape(str(path))}: {escape(extraction.section.heading or 'an untitled note')} ({where} of the whole filing)")
        for warning in extraction.warnings:
            err.print(f"[yellow]warning[/yellow]: {escape(str(path))}: {escape(warning)}")
        if extraction.tables_unmapped:
            err.print(f"[yellow]note[/yellow]: {escape(str(path))}: {escape(unmapped_note(extraction.tables_unmapped, verbose))}")
        for block in extraction.provenance.asked if verbose else ():
            where = f"{block.kind} {block.index + 1} (characters {block.start:,}-{block.end:,})"
            err.print(f"asked the LLM: {escape(str(path))}: {where}: {escape(block.reason)}")
        extractions.append(extraction)
    _write(extractions, output_format, output)
    if review_queue is not None and review_settings is not None:
        with unusable_queue_file():  # damage SQLite finds only while adding items: exit 2 naming the file
            _enqueue(review_queue, extractions, review_settings.qa_rate)
    failed = [e for e in extractions if e.validation and not e.validation.passed]
    for extraction in extractions:
        if extraction.validation and output_format is not OutputFormat.table:
            _report_validation(extraction.document_path, extraction.validation)
    if chosen is not BackendName.rules:
        err.print(f"LLM usage: {usage.summary()}")
    if failures:
        err.print(f"{failures} of {len(inputs)} inputs could not be read or extracted")
    if failed:
        err.print(f"{len(failed)} of {len(extractions)} extractions failed validation")
    if failures or failed:
        raise typer.Exit(code=1)


app.command("run")(run_command)  # listed after extract: bulk runs are the next thing a user looks for


UNMAPPED_SHOWN = 3  # titles named in the one-line note
TITLE_CHARS = 40  # each clipped to this


def unmapped_note(titles: list[str], verbose: bool = False) -> str:
    """The 'tables not mapped' note: one short line (how many, the first few titles, clipped), or with
    `verbose` every title on a line of its own. A whole 10-K has some 60 of them."""
    count = f"{len(titles)} table{'s' if len(titles) != 1 else ''} not mapped"
    if verbose:
        return f"{count}:" + "".join(f"\n  - {' '.join(title.split())}" for title in titles)
    distinct = list(dict.fromkeys(_clip(title) for title in titles))
    worded = [title for title in distinct if any(char.isalpha() for char in title)]  # not a rule line or a page number
    shown = (worded or distinct)[:UNMAPPED_SHOWN]
    more = f" and {len(titles) - len(shown)} more" if len(titles) > len(shown) else ""
    return f"{count}: " + ", ".join(f"'{title}'" for title in shown) + f"{more} (all: --verbose, or tables_unmapped in --format json)"


def _clip(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def _enqueue(review_queue: Queue, extractions: list[Extraction], qa_rate: float) -> None:
    """Failing extractions (and the QA sample of passing ones) into the correction queue."""
    entries = [(e, absolute_ref(e.document_path), reason) for e in extractions
               if (reason := entry_reason(e, content_key(e.document_path, e.document_sha256), qa_rate)) is not None]  # fmt: skip
    added = sum(1 for item in review_queue.add_many(entries, "extract") if item is not None) if entries else 0
    there = f" ({len(entries) - added} were there already)" if len(entries) > added else ""
    err.print(f"{added} extractions entered the review queue {escape(str(review_queue.path))}{there}")


def _print_findings(console: Console, name: str, validation: Validation) -> None:
    rendered = findings_table(name, validation)
    console.print(rendered, soft_wrap=isinstance(rendered, Text))  # a one-line verdict stays one line (grep-able)


def _accepted(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        return read_accepted(path)
    except (OSError, ValueError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error


def _report_validation(name: str, validation: Validation) -> None:
    """One line per extraction on stderr; the findings themselves are in the output."""
    verdict = "[green]passed[/green]" if validation.passed else "[red]failed[/red]"
    err.print(f"validation {verdict}: {escape(name)}: {len(validation.errors)} errors, {len(validation.warnings)} warnings")


def _write(extractions: list[Extraction], output_format: OutputFormat, output: Path | None) -> None:
    if output_format is OutputFormat.table:
        target = output.open("w", encoding="utf-8") if output else sys.stdout
        console = Console(file=target, width=None if target.isatty() else 150)
        for extraction in extractions:
            console.print(facts_table(extraction, to_facts(extraction.note)))
            if extraction.validation is not None:
                _print_findings(console, extraction.document_path, extraction.validation)
        return
    if output_format is OutputFormat.facts:
        lines = [
            json.dumps({**fact.to_json_dict(), "document": extraction.document_id, "filing": filing}, ensure_ascii=False)
            for extraction in extractions
            for filing in [extraction.filing.model_dump(mode="json")]
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
    facts_file: Path = typer.Argument(..., help="Predicted facts: JSON Lines with a 'document' key per line (as 'extract --format facts' writes), or a folder of <document>.jsonl files (an empty file: extracted, no facts)."),
    gold: Path = typer.Option(Path("evals/gold"), help="Folder of <document>.facts.jsonl gold files, or one gold file."),
    all_gold: bool = typer.Option(False, "--all-gold", help="Count every gold file of the folder, predicted or not (a document with no prediction is all missed)."),
    fail_under: float | None = typer.Option(None, help="Exit non-zero when overall F1 is below this (0-1)."),
    show_errors: bool = typer.Option(True, help="List misses, extras and wrong values."),
) -> None:
    """Score extracted facts against gold: precision, recall and F1 per document and overall.

    Every gold document in play counts, predicted or not: with --gold FILE that document; with a
    folder, the documents the predictions name (a folder of predictions names its empty files
    too), every gold document when the predictions name none, or all of them with --all-gold.

    Exit status: 0; 1 when F1 is below --fail-under; 2 for unreadable input or predictions that
    cannot be told apart from one gold file.
    """
    try:
        predictions = read_predictions(facts_file)
        golds = gold_files(gold)
    except (OSError, ValueError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    pairs = _score_pairs(predictions, golds, gold.is_file(), all_gold)
    results: dict[str, Score] = {}
    for document, (predicted, gold_file) in pairs.items():
        try:
            gold_facts = read_facts(str(gold_file))
        except (OSError, ValueError) as error:
            err.print(f"[red]error[/red]: {escape(str(gold_file))}: not a gold facts file ({escape(str(error).splitlines()[0])})")
            raise typer.Exit(code=2) from error
        if not predicted:
            err.print(f"[yellow]note[/yellow]: no predicted facts for {escape(document)}; its {len(gold_facts)} gold facts count as missed")
        results[document] = score(predicted, gold_facts)
    total = Score()
    for result in results.values():
        total.add(result)
    Console().print(score_table(results, total, show_errors))
    if fail_under is not None and total.f1 < fail_under:
        err.print(f"[red]F1 {total.f1:.3f} is below --fail-under {fail_under}[/red]")
        raise typer.Exit(code=1)


def _score_pairs(predictions: dict[str | None, list[Fact]], golds: dict[str, Path], one_file: bool,
                 all_gold: bool) -> dict[str, tuple[list[Fact], Path]]:
    """Predicted facts and gold file per scored document; exits 2 when they cannot be paired."""
    if one_file:
        (name, path), = golds.items()
        others = sorted(d for d in predictions if d not in (name, None))
        if name in predictions or None in predictions or not others:
            if others:
                err.print(f"[yellow]note[/yellow]: facts of {escape(', '.join(others))} not scored (the gold is {escape(str(path))} only)")
            return {name: (predictions.get(name, []) + predictions.get(None, []), path)}
        if len(others) == 1:
            err.print(f"[yellow]note[/yellow]: the facts are of document {escape(others[0])}; scored against {escape(str(path))}")
            return {name: (predictions[others[0]], path)}
        err.print(f"[red]error[/red]: the facts are of {len(others)} documents ({escape(', '.join(others))}), none named {escape(name)}:"
                  f" which one {escape(str(path))} is the gold of is ambiguous; pass a gold folder, or facts of that document only")
        raise typer.Exit(code=2)
    if None in predictions:
        err.print("[red]error[/red]: a predicted fact has no 'document' key; cannot tell which gold file applies (pass --gold FILE)")
        raise typer.Exit(code=2)
    named = [d for d in predictions if d is not None]
    for document in named:
        if document not in golds:
            err.print(f"[yellow]note[/yellow]: no gold for {escape(document)} in {len(golds)} gold files; not scored")
    wanted = list(golds) if all_gold or not named else [d for d in named if d in golds]
    if not wanted:  # scoring nothing would print a perfect-looking empty table and exit 0
        err.print("[red]error[/red]: nothing to score: " + ("no gold files in the gold folder" if not golds else
                  "none of the predicted documents has a gold file (<document>.facts.jsonl)"))
        raise typer.Exit(code=2)
    unscored = sorted(set(golds) - set(wanted))
    if unscored:
        err.print(f"[yellow]note[/yellow]: {len(unscored)} gold documents not named by the predictions, not scored"
                  f" ({escape(', '.join(unscored[:5]))}{' …' if len(unscored) > 5 else ''}); --all-gold counts them")
    return {d: (predictions.get(d, []), golds[d]) for d in sorted(wanted)}


class ReportFormat(str, Enum):
    table = "table"
    json = "json"


class InputError(Exception):
    """A file `validate` cannot read as extractions or facts; the message names the file and line."""


@app.command("validate")
def validate_command(
    files: list[Path] = typer.Argument(..., help="Saved extractions ('extract --format json' output, .json), facts files (JSON Lines, .jsonl), or directories of them."),
    document: Path | None = typer.Option(None, help="For a facts file of one document: the document its spans point into, to check spans and scales against."),
    accept: Path | None = typer.Option(None, help=ACCEPT_HELP),
    output_format: ReportFormat = typer.Option(ReportFormat.table, "--format", "-f", help="table: findings, readable; json: one Validation per extraction."),
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
    inputs = [p for p in iter_inputs(files) if p.suffix in (".json", ".jsonl") or p in files]
    if document is not None and len(inputs) > 1:
        err.print("[red]error[/red]: --document names the text of one facts file; validate one file at a time with it")
        raise typer.Exit(code=2)
    accepted = _accepted(accept)
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
            _print_findings(console, name, result)
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
        raise InputError(f"{path}: not an extraction as 'extract --format json' writes it ({error.error_count()} problems, first: {error.errors()[0]['msg']} at {error.errors()[0]['loc']})") from error
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
        err.print(f"[yellow]note[/yellow]: {escape(extraction.document_path)} changed since extraction; checking span texts only")
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


@app.command("eval")
def eval_command(
    suite_path: Path = typer.Argument(..., metavar="SUITE", help="A suite folder holding suite.toml (or the manifest itself), e.g. evals/suites/heterogeneous."),
    backend: BackendOption = BackendName.rules,
    baseline: str | None = typer.Option(None, help="A stored run id to compare against, or 'latest' (the newest stored run of this suite)."),
    fail_under: float | None = typer.Option(None, min=0, max=1, help="Exit 1 when the run's F1 is below this (0-1): a CI gate."),
    no_regressions: bool = typer.Option(False, "--no-regressions", help="Exit 1 when a gold fact right in the baseline is not right now, or a new extra appears (needs --baseline)."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite file of stored runs (created when missing)."),
    html: Path | None = typer.Option(None, help="Where to write the HTML report (default: out/eval/run-<id>.html)."),
    label: str | None = typer.Option(None, help="A note stored with the run, e.g. 'lexicon: forfeited rows'."),
    show: int = typer.Option(25, help="Changed facts listed per kind in the terminal (the HTML report lists all)."),
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    temperature: TemperatureOption = None,
    timeout: TimeoutOption = None,
    mode: ModeOption = None,
    cache: CacheOption = None,
    cache_dir: CacheDirOption = None,
    prompt: PromptOption = None,
    max_chars: MaxCharsOption = None,
    config: ConfigOption = None,
) -> None:
    """Score a backend (and prompt) on a suite against its gold; store the run; compare with a baseline.

    Prints precision, recall and F1 (value right, and 'found F1' for finding the fact whatever its
    value) per concept group, award type, document format and document, the grounding rate, the
    validator pass rate and LLM usage, then, with --baseline, the facts newly right and newly
    wrong and a paired bootstrap over documents that says whether the change is more than noise.
    Every run is stored in --store; the HTML report has a drill-down per document.

    Exit status: 0; 1 when a gate fails (--fail-under, --no-regressions) or the endpoint cannot
    serve; 2 for a bad suite, store, baseline or settings.

    Examples:
      extractor eval evals/suites/heterogeneous
      extractor eval evals/suites/heterogeneous --baseline latest --no-regressions --fail-under 0.5
      extractor eval evals/suites/seeds --backend llm --prompt stock_compensation@v1 --cache replay --cache-dir evals/cassettes
    """
    try:
        suite = load_suite(suite_path)
        runs = RunStore(store)
        base = _baseline(runs, suite.name, baseline)
    except (SuiteError, StoreError) as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if no_regressions and base is None:
        err.print("[red]error[/red]: --no-regressions needs a baseline run (--baseline ID or latest, with a stored run)")
        raise typer.Exit(code=2)
    flags = llm_flags(locals())
    chosen, extract_one, settings = backend_runner(backend, flags, config)
    llm = chosen is not BackendName.rules
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as progress:
        task = progress.add_task(f"eval {suite.name} ({chosen.value})", total=len(suite.documents))
        try:
            run = run_suite(suite, extract_one, chosen.value, model=settings.model if llm else None,
                            prompt_id=settings.prompt if llm else None, label=label,
                            on_document=lambda document: progress.advance(task))
        except EndpointError as error:
            err.print(f"[red]error[/red]: {escape(str(error))}")
            err.print("stopped: the endpoint cannot serve any document; the run was not stored")
            raise typer.Exit(code=1) from error
    metrics = run.metrics()
    try:
        runs.save(run)
    except StoreError as error:  # the scores are still shown; the exit status says they were not kept
        err.print(f"[red]error[/red]: {escape(str(error))}; the run below was not stored")
    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(run_report(run, metrics))
    comparison = compare(base, run) if base is not None else None
    if comparison is not None:
        console.print(comparison_report(comparison, limit=show))
    if run.id is None:
        raise typer.Exit(code=2)
    report = html or Path("out/eval") / f"run-{run.id}.html"
    try:
        write_report(report, render_report(run, metrics, suite, runs.runs(suite.name), comparison))
    except OSError as error:
        err.print(f"[red]error[/red]: the report cannot be written to {escape(str(report))} ({escape(error.strerror or str(error))}); run {run.id} is stored in {store}")
        raise typer.Exit(code=2) from error
    err.print(f"run {run.id} stored in {store}; report: {report}")
    failed_gates = []
    if fail_under is not None and metrics.overall.f1 < fail_under:
        failed_gates.append(f"F1 {metrics.overall.f1:.3f} is below --fail-under {fail_under}")
    if no_regressions and comparison is not None and comparison.regressions:
        failed_gates.append(f"{len(comparison.newly_wrong)} facts newly wrong and {len(comparison.new_extras)} new extras against run {comparison.baseline.id}")
    for message in failed_gates:
        err.print(f"[red]gate failed[/red]: {escape(message)}")
    if failed_gates:
        raise typer.Exit(code=1)


def _baseline(runs: RunStore, suite: str, baseline: str | None) -> EvalRun | None:
    if baseline is None:
        return None
    if baseline == "latest":
        latest = runs.latest(suite)
        if latest is None:
            err.print(f"[yellow]note[/yellow]: no stored run of suite {escape(suite)} yet; nothing to compare with")
            return None
        return runs.load(latest)
    if not (baseline.isascii() and baseline.isdigit() and len(baseline) < 19):
        raise StoreError(f"--baseline must be a run id or 'latest', not {baseline!r}")
    run = runs.load(int(baseline))
    if run.suite != suite:
        raise StoreError(f"run {run.id} is of suite {run.suite!r}, not {suite!r}: runs compare fact by fact only within one suite")
    return run


@app.command("eval-runs")
def eval_runs_command(
    suite: str | None = typer.Option(None, help="Only runs of this suite (its name in suite.toml)."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite file of stored runs."),
) -> None:
    """List stored eval runs, oldest first: the ids to pass to 'eval --baseline'."""
    if not store.exists():
        err.print(f"[red]error[/red]: {store} does not exist yet; 'extractor eval SUITE' creates it")
        raise typer.Exit(code=2)
    try:
        summaries = RunStore(store).runs(suite)
    except StoreError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    table = RichTable(title=f"Eval runs in {store}", title_justify="left")
    for column in ("id", "created", "suite", "backend", "model", "prompt", "code", "label", "F1"):
        table.add_column(column, justify="right" if column in ("id", "F1") else "left", overflow="fold")
    for r in summaries:
        prompt_name = f"{r.prompt_id} {r.prompt_hash or ''}".strip() if r.prompt_id else ""
        table.add_row(str(r.id), r.created, escape(r.suite), r.backend, escape(r.model or ""), escape(prompt_name),
                      escape(r.code_version), escape(r.label or ""), f"{r.f1:.3f}")
    Console(width=None if sys.stdout.isatty() else 150).print(table)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


app.add_typer(queue_app, name="queue")
app.command("review")(review_command)
app.add_typer(gold_app, name="gold", help="Build gold facts for eval suites.")
app.add_typer(local_model_app, name="local-model")


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
