"""`extractor extract`: read filing sections, extract, validate, write; failures to the correction queue."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING

import typer

from extractor.attempt import attempt, iter_files
from extractor.backends.choice import BackendName, Extract
from extractor.cli.common import (
    ACCEPT_HELP,
    accepted_findings,
    err,
    open_queue,
    print_findings,
    queue_settings,
    unusable_queue_file,
)
from extractor.cli.console import escape
from extractor.cli.options import (
    ApiKeyOption,
    BackendOption,
    BaseUrlOption,
    CacheDirOption,
    CacheOption,
    ConfigOption,
    MaxCharsOption,
    ModelOption,
    ModeOption,
    PromptOption,
    TemperatureOption,
    TimeoutOption,
    backend_runner,
    llm_flags,
)
from extractor.extraction import Extraction
from extractor.findings import Validation
from extractor.llm.errors import EndpointError
from extractor.llm.usage import Usage

if TYPE_CHECKING:
    from rich.console import Console


class OutputFormat(str, Enum):
    json = "json"
    facts = "facts"
    table = "table"


def extract_command(
    paths: list[Path] = typer.Argument(
        ...,
        help="Filing sections: R-page text or HTML, 10-K HTML notes, EDGAR .txt submissions, aligned plain text, or directories of them.",
    ),
    backend: BackendOption = BackendName.rules,
    output_format: OutputFormat = typer.Option(
        OutputFormat.json,
        "--format",
        "-f",
        help="json: schema instances with their validation; facts: JSON Lines in the shared facts format; table: facts and findings, readable.",
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of standard output."),
    validate_output: bool = typer.Option(
        True, "--validate/--no-validate", help="Check every extraction against itself and its document."
    ),
    accept: Path | None = typer.Option(None, help=ACCEPT_HELP),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="List every table no rule mapped, one per line (by default: how many, and the first few titles; the JSON output's tables_unmapped always holds them all), and every block the hybrid backend sent to the LLM, with why (provenance.asked in the JSON).",
    ),
    send_to_queue: bool = typer.Option(
        False,
        "--queue",
        help="Send extractions that fail validation (and a sample of passing ones, qa_rate in extractor.toml's queue table) to the correction queue (extractor.toml's queue table, env EXTRACTOR_QUEUE, else out/queue.sqlite).",
    ),
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
    accepted = accepted_findings(accept)
    if send_to_queue and not validate_output:
        err.print("[red]error[/red]: --queue sends what fails validation: it cannot be used with --no-validate")
        raise typer.Exit(code=2)
    review_settings = queue_settings(None, config) if send_to_queue else None
    review_queue = open_queue(review_settings, must_exist=False) if review_settings else None
    flags = llm_flags(locals())
    chosen, run, _ = backend_runner(backend, flags, config)
    queued: list[Extraction] | None = [] if review_queue is not None else None  # else each is only written
    verdicts: list[tuple[str, Validation | None]] = []
    usage = Usage()
    inputs = list(iter_files(paths))
    writer = _Writer(output_format, output)
    try:
        failures = _extract_each(inputs, run, validate_output, accepted, verbose, writer, queued, verdicts, usage)
    except BaseException:
        writer.discard()
        raise
    writer.close()
    if review_queue is not None and review_settings is not None and queued is not None:
        from extractor.queue.feed import enqueue  # only with --queue: the queue is SQLite, the rest never needs it

        with unusable_queue_file():  # damage SQLite finds only while adding items: exit 2 naming the file
            added, due = enqueue(review_queue, queued, review_settings.qa_rate)
        there = f" ({due - added} were there already)" if due > added else ""
        err.print(f"{added} extractions entered the review queue {escape(str(review_queue.path))}{there}")
    failed = [name for name, validation in verdicts if validation and not validation.passed]
    for name, validation in verdicts:
        if validation and output_format is not OutputFormat.table:
            _report_validation(name, validation)
    if chosen is not BackendName.rules:
        err.print(f"LLM usage: {usage.summary()}")
    if failures:
        err.print(f"{failures} of {len(inputs)} inputs could not be read or extracted")
    if failed:
        err.print(f"{len(failed)} of {len(verdicts)} extractions failed validation")
    if failures or failed:
        raise typer.Exit(code=1)


def _extract_each(
    inputs: list[Path],
    run: Extract,
    validate_output: bool,
    accepted: Collection[str],
    verbose: bool,
    writer: _Writer,
    queued: list[Extraction] | None,
    verdicts: list[tuple[str, Validation | None]],
    usage: Usage,
) -> int:
    """Extract the inputs in turn, reporting each on stderr and writing it out; returns how many failed."""
    failures = 0
    for index, path in enumerate(inputs):
        try:
            tried = attempt(path, run, validate_output, accepted, keep_facts=writer.writes_facts)
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
        extraction = tried.extraction
        if extraction.usage is not None:
            usage.add(extraction.usage)
        if extraction.section:
            where = f"characters {extraction.section.start:,}-{extraction.section.end:,}"
            err.print(
                f"read: {escape(str(path))}: {escape(extraction.section.heading or 'an untitled note')} ({where} of the whole filing)"
            )
        for warning in extraction.warnings:
            err.print(f"[yellow]warning[/yellow]: {escape(str(path))}: {escape(warning)}")
        if extraction.tables_unmapped:
            err.print(
                f"[yellow]note[/yellow]: {escape(str(path))}: {escape(unmapped_note(extraction.tables_unmapped, verbose))}"
            )
        for block in extraction.provenance.asked if verbose else ():
            where = f"{block.kind} {block.index + 1} (characters {block.start:,}-{block.end:,})"
            err.print(f"asked the LLM: {escape(str(path))}: {where}: {escape(block.reason)}")
        writer.add(extraction)
        verdicts.append((extraction.document_path, extraction.validation))
        if queued is not None:
            queued.append(extraction)
    return failures


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
    return (
        f"{count}: "
        + ", ".join(f"'{title}'" for title in shown)
        + f"{more} (all: --verbose, or tables_unmapped in --format json)"
    )


def _clip(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def _report_validation(name: str, validation: Validation) -> None:
    """One line per extraction on stderr; the findings themselves are in the output."""
    verdict = "[green]passed[/green]" if validation.passed else "[red]failed[/red]"
    err.print(
        f"validation {verdict}: {escape(name)}: {len(validation.errors)} errors, {len(validation.warnings)} warnings"
    )


class _Writer:
    """Writes each extraction as it comes, so a directory of 10,000 notes is not held in memory; the bytes are
    those of writing them all at once. A file given with -o is written under a temporary name and renamed at
    the end: it appears whole or not at all."""

    def __init__(self, output_format: OutputFormat, output: Path | None) -> None:
        self.format, self.output, self.count = output_format, output, 0
        self.partial: Path | None = None
        if output is None:
            self.target: IO[str] = sys.stdout
        else:
            output.parent.mkdir(parents=True, exist_ok=True)
            self.partial = output.with_name(f".{output.name}.partial")
            self.target = self.partial.open("w", encoding="utf-8")
        self.console: Console | None = None
        if output_format is OutputFormat.table:
            from rich.console import Console  # rich tables only for --format table

            self.console = Console(file=self.target, width=None if self.target.isatty() else 150)

    @property
    def writes_facts(self) -> bool:
        """Whether `add` writes the facts (facts and table formats): only then are they kept from the validation."""
        return self.format is not OutputFormat.json

    def add(self, extraction: Extraction) -> None:
        if self.console is not None:
            from extractor.render import facts_table  # rich tables only for --format table

            self.console.print(facts_table(extraction, extraction.take_facts()))
            if extraction.validation is not None:
                print_findings(self.console, extraction.document_path, extraction.validation)
        elif self.format is OutputFormat.facts:
            filing = extraction.filing.model_dump(mode="json")
            for fact in extraction.take_facts():
                document = {**fact.to_json_dict(), "document": extraction.document_id, "filing": filing}
                self.target.write(json.dumps(document, ensure_ascii=False) + "\n")
        else:  # one JSON array, indented as json.dumps(list, indent=2) indents it
            # pydantic's serializer writes the text of json.dumps(model_dump(mode="json"), indent=2, ensure_ascii=False)
            # (but a float under 1e-4, only ever an LLM latency: 0.00005 for 5e-05, 1e-6 for 1e-06), in a fifth of the
            # time: json.dumps indents in pure Python (2.3 ms for a seed's 100 KB, 1.1 ms a real note). Its line breaks
            # are "\n" alone: a text's U+2028 or U+0085 is written as is, and textwrap.indent would break lines there.
            item = extraction.model_dump_json(indent=2)
            self.target.write(("[\n  " if not self.count else ",\n  ") + item.replace("\n", "\n  "))
        self.count += 1

    def close(self) -> None:
        if self.format is OutputFormat.json:
            self.target.write("\n]\n" if self.count else "[]\n")
        if self.output is None or self.partial is None:
            self.target.flush()
            return
        self.target.close()
        os.replace(self.partial, self.output)
        err.print(f"wrote {self.output}")

    def discard(self) -> None:
        """After a failure: no half-written file left behind."""
        if self.partial is not None:
            self.target.close()
            self.partial.unlink(missing_ok=True)
