"""`extractor queue ...`: the correction queue from the shell (the browser app is `extractor review`)."""

from __future__ import annotations

import getpass
import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from extractor.cli.common import (
    QueueConfigOption,
    QueueUrlOption,
    ReviewerOption,
    RootOption,
    err,
    open_queue,
    queue_settings,
    unusable_queue_file,
)
from extractor.queue.corrections import save_correction
from extractor.queue.documents import item_document
from extractor.queue.edits import check_first, value_fields
from extractor.queue.facts import search_concepts
from extractor.queue.gold import export_gold
from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import Item, ItemStatus, QueueError, clock_time
from extractor.render import findings_table
from extractor.schemas.values import Period

queue_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The correction queue: extractions that failed validation (or were sampled for QA), for people to fix.",
)


def _default_reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def _refused(error: QueueError) -> typer.Exit:
    err.print(f"[red]refused[/red]: {escape(str(error))}")
    return typer.Exit(code=1)


@queue_app.command("list")
@unusable_queue_file()
def list_command(
    status: list[ItemStatus] = typer.Option([], help="Only items of this status (repeat for several)."),
    rule: str | None = typer.Option(None, help="Only items with a finding of this rule, e.g. rollforward.count."),
    limit: int = typer.Option(200, min=1, help="Show at most this many items."),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON object per item (without the extraction), for scripts."
    ),
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Counts by status and by finding rule, then the items, oldest first.

    Examples:
      extractor queue list
      extractor queue list --status open --rule rollforward.count
    """
    store = open_queue(queue_settings(queue, config))
    items = store.items(status, rule, limit, brief=True)
    if as_json:
        for item in items:
            sys.stdout.write(json.dumps(_summary(item, store.clock())) + "\n")
        return
    console = Console(width=None if sys.stdout.isatty() else 150)
    counts = store.counts()
    console.print("  ".join(f"{s.value} {n}" for s, n in counts.items()) + f"  · {store.path}")
    rules = store.rule_counts()
    if rules:
        console.print("open items by rule: " + ", ".join(f"{escape(r)} {n}" for r, n in rules.items()))
    table = Table(title_justify="left")
    for column in ("id", "status", "document", "entered", "errors", "warnings", "claimed by", "version", "updated"):
        table.add_column(
            column, justify="right" if column in ("id", "errors", "warnings", "version") else "left", overflow="fold"
        )
    for item in items:
        table.add_row(
            str(item.id),
            item.shown_status(store.clock()).value,
            escape(item.document_id),
            item.reason.value,
            str(item.errors),
            str(item.warnings),
            escape(item.holder(store.clock()) or ""),
            str(item.version),
            clock_time(item.updated),
        )
    console.print(table)


def _summary(item: Item, now: float) -> dict[str, object]:
    return {
        "id": item.id,
        "status": item.shown_status(now).value,
        "document_id": item.document_id,
        "document_ref": item.document_ref,
        "reason": item.reason.value,
        "errors": item.errors,
        "warnings": item.warnings,
        "claimed_by": item.holder(now),
        "version": item.version,
        "updated": item.updated,
    }


@queue_app.command("show")
@unusable_queue_file()
def show_command(
    item_id: int = typer.Argument(..., metavar="ID"),
    as_json: bool = typer.Option(False, "--json", help="The item with its extraction and audit log as JSON."),
    values: bool = typer.Option(False, "--values", help="Also every value with its path and span, for 'queue edit'."),
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """One item: where its document is, who holds it, its findings (finding ids, and the numbers
    nobody extracted with their START:END spans) and its audit log."""
    store = open_queue(queue_settings(queue, config))
    try:
        item = store.get(item_id)
    except QueueError as error:
        raise _refused(error) from error
    audit = store.audit(item_id)
    if as_json:
        payload = _summary(item, store.clock()) | {
            "extraction": json.loads(item.extraction_json),
            "resolution": item.resolution,
            "audit": [entry.__dict__ for entry in audit],
        }
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    console = Console(width=None if sys.stdout.isatty() else 150)
    holder = item.holder(store.clock())
    console.print(
        f"item {item.id} · {item.shown_status(store.clock()).value} · version {item.version} · entered: {item.reason.value} ({escape(item.entered_from)})"
    )
    console.print(f"document {escape(item.document_id)}: {escape(item.document_ref)}")
    if holder:
        console.print(f"claimed by {escape(holder)} until {clock_time(item.lease_until)}")
    if item.resolution:
        console.print(f"{item.status.value}: {escape(item.resolution)}")
    if item.extraction.validation is not None:
        console.print(findings_table(item.document_id, item.extraction.validation))
        _print_unexplained(console, item)
    if values:
        shown = Table(title="values (paths for queue edit --delete / --span / --set)", title_justify="left")
        for column in ("path", "value", "unit", "period end", "span", "printed"):
            shown.add_column(column, overflow="fold")
        for value in check_first(value_fields(item.extraction.note)):  # shaky quotes first, in the review page's order
            source = value.amount.source
            printed = (
                escape(source.text) + (f" (quote matched {source.alignment}: check)" if source.shaky else "")
                if source
                else ""
            )
            shown.add_row(
                escape(value.path),
                format(value.amount.value, "f"),
                value.amount.unit,
                value.fact.period.end_date.isoformat(),
                f"{source.start}:{source.end}" if source else "",
                printed,
            )
        console.print(shown)
    table = Table(title="audit log", title_justify="left")
    for column in ("when", "who", "action", "version", "field", "from", "to", "note"):
        table.add_column(column, overflow="fold")
    for entry in audit:
        table.add_row(
            clock_time(entry.at),
            escape(entry.reviewer),
            entry.action,
            str(entry.version),
            escape(entry.field or ""),
            escape(entry.before or ""),
            escape(entry.after or ""),
            escape(entry.note or ""),
        )
    console.print(table)


@queue_app.command("claim")
@unusable_queue_file()
def claim_command(
    item_id: int | None = typer.Argument(None, metavar="[ID]", help="The item; leave out with --next."),
    next_item: bool = typer.Option(False, "--next", help="Claim the next item waiting (validation errors first)."),
    release: bool = typer.Option(False, "--release", help="Give your claim on ID back instead."),
    reviewer: ReviewerOption = None,
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Hold an item for yourself for claim_minutes (30 by default); an expired claim can be taken over.

    Exit status: 0 when claimed; 1 when someone else holds it or it is resolved; 2 for bad arguments.
    """
    reviewer = reviewer or _default_reviewer()
    if (item_id is None) == (not next_item):
        err.print("[red]error[/red]: name an item ID, or --next")
        raise typer.Exit(code=2)
    store = open_queue(queue_settings(queue, config))
    try:
        if next_item:
            item = store.next_for(reviewer)
            if item is None:
                err.print("nothing left to claim")
                return
        elif release:
            item = store.release(item_id, reviewer)  # type: ignore[arg-type]
            err.print(f"released item {item.id}")
            return
        else:
            item = store.claim(item_id, reviewer)  # type: ignore[arg-type]
    except QueueError as error:
        raise _refused(error) from error
    err.print(
        f"item {item.id} ({escape(item.document_id)}) is yours until {clock_time(item.lease_until)}; version {item.version}"
    )


@queue_app.command("resolve")
@unusable_queue_file()
def resolve_command(
    item_id: int = typer.Argument(..., metavar="ID"),
    accept: bool = typer.Option(None, "--accept/--reject", help="Accept the (corrected) extraction, or reject it."),
    reason: str = typer.Option(
        "", help="Why; needed to reject, and to accept while error findings remain (they are kept as filing quirks)."
    ),
    set_fields: list[str] = typer.Option(
        [],
        "--set",
        metavar="FIELD=VALUE",
        help="Correct a field first, e.g. 'award_activity[0].rows[2].count.value=1234' (.unit, .period.end, <group>.award). Repeatable; re-validated before resolving.",
    ),
    accept_finding: list[str] = typer.Option(
        [],
        "--accept-finding",
        metavar="ID=REASON",
        help="Accept one finding as true of the filing (ids: 'queue show ID'). Its values stay in the gold; an error left without one keeps the values it involves out. Each coverage finding needs one to accept. Repeatable.",
    ),
    version: int | None = typer.Option(
        None, help="The version you reviewed; refused if the item changed since (default: the current one)."
    ),
    reviewer: ReviewerOption = None,
    root: RootOption = None,
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Correct (optionally) and accept or reject an item; every change goes to its audit log.

    Exit status: 0 when resolved; 1 when refused (someone else's claim, a newer version, a bad
    correction); 2 for bad arguments.

    Examples:
      extractor queue resolve 7 --accept
      extractor queue resolve 7 --set 'award_activity[0].rows[2].count.value=1234' --accept
      extractor queue resolve 9 --reject --reason 'a pension note, not stock compensation'
      extractor queue resolve 7 --accept --accept-finding 'coverage.prose:1a2b3c4d5e=dividends, out of scope'
    """
    reviewer = reviewer or _default_reviewer()
    if accept is None:
        err.print("[red]error[/red]: say --accept or --reject")
        raise typer.Exit(code=2)
    settings = queue_settings(queue, config, root)
    store = open_queue(settings)
    try:
        item = store.get(item_id)
        expected = item.version if version is None else version
        if set_fields:
            fields = _pairs(set_fields, "--set", "FIELD=VALUE")
            item, done = save_correction(store, item_id, reviewer, expected, fields, settings.root)
            expected = item.version
            left = done.extraction.validation.errors if done.extraction.validation else []
            err.print(f"saved version {item.version}: {len(done.changes)} fields changed; {len(left)} errors left")
        if accept:  # gold must come from a document that is still there, unchanged
            item_document(item, settings.root)
        reasons = _pairs(accept_finding, "--accept-finding", "ID=REASON")
        item = store.resolve(item_id, reviewer, expected, accept, reason, reasons)
    except (QueueError, ValueError) as error:
        raise _refused(error) from error  # type: ignore[arg-type]
    err.print(f"item {item.id} {item.status.value} (version {item.version})")


@queue_app.command("edit")
@unusable_queue_file()
def edit_command(
    item_id: int = typer.Argument(..., metavar="ID"),
    add: list[str] = typer.Option(
        [],
        "--add",
        metavar="FIELDS",
        help="Add a fact the extractor missed, as comma-separated key=value: concept, value (base units), unit, span (START:END in the document text), instant or end (and start) dates; optional award, label, scale. Repeatable.",
    ),
    delete: list[str] = typer.Option(
        [],
        "--delete",
        metavar="PATH",
        help="Delete a wrong value, e.g. 'expense[3].amount' (paths: 'queue show ID --values'). Repeatable.",
    ),
    span: list[str] = typer.Option(
        [],
        "--span",
        metavar="PATH=START:END",
        help="Re-point a value at the number printed at START:END of the document text. Repeatable.",
    ),
    set_fields: list[str] = typer.Option(
        [],
        "--set",
        metavar="FIELD=VALUE",
        help="Correct a field, e.g. 'award_activity[0].rows[2].count.value=1234' (.unit, .period.end, <group>.award). Repeatable.",
    ),
    version: int | None = typer.Option(
        None, help="The version you reviewed; refused if the item changed since (default: the current one)."
    ),
    reviewer: ReviewerOption = None,
    root: RootOption = None,
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Correct an item as the review page does: add missed facts, delete wrong values, re-point spans,
    set fields. Re-validates against the document, prints what was resolved and what is new, and
    audits every change (who, when, what, from, to). Accept or reject afterwards with 'queue resolve'.

    Find what to work on with 'queue show ID --values': the values with their paths and spans, and the numbers the coverage rules found unexplained, with their START:END spans and hints. 'queue concepts WORDS' searches the concepts to add a fact under.

    Exit status: 0 when saved; 1 when refused (a bad field, someone else's claim, a newer version); 2 for bad arguments.

    Examples:
      extractor queue edit 7 --add 'concept=CommonStockCapitalSharesReservedForFutureIssuance,value=633000000,unit=shares,instant=2024-12-31,span=633:636,award=rsu'
      extractor queue edit 7 --delete 'expense[3].amount' --span 'award_activity[0].rows[0].count=1954:1957'
    """
    reviewer = reviewer or _default_reviewer()
    fields: dict[str, str] = {}
    for number, text in enumerate(add):
        for key, value in _pairs(text.split(","), "--add", "KEY=VALUE,...").items():
            key = {"instant": "period.instant", "start": "period.start", "end": "period.end"}.get(key, key)
            fields[f"add[{number}].{key}"] = value
    fields |= {f"{path}.delete": "1" for path in delete}
    fields |= {f"{path}.span": where for path, where in _pairs(span, "--span", "PATH=START:END").items()}
    fields |= _pairs(set_fields, "--set", "FIELD=VALUE")
    if not fields:
        err.print("[red]error[/red]: nothing to do: give --add, --delete, --span or --set")
        raise typer.Exit(code=2)
    settings = queue_settings(queue, config, root)
    store = open_queue(settings)
    try:
        item = store.get(item_id)
        expected = item.version if version is None else version
        item, done = save_correction(store, item_id, reviewer, expected, fields, settings.root)
    except (QueueError, ValueError) as error:
        raise _refused(error) from error  # type: ignore[arg-type]
    for change in done.changes:
        err.print(f"  {escape(change.field)}: {escape(change.before or '-')} -> {escape(change.after or '-')}")
    left = done.extraction.validation.errors if done.extraction.validation else []
    err.print(
        f"saved version {item.version}: {len(done.changes)} changes; {escape(done.account)}; {len(left)} errors left"
    )


@queue_app.command("concepts")
def concepts_command(
    words: list[str] = typer.Argument(None, help="Words to look for, e.g. 'reserved' or 'options granted'."),
) -> None:
    """The concepts a fact can be added under (the schema's, and common us-gaap line items), with the
    unit their facts take. Any us-gaap name or ext:CamelCaseName is accepted too."""
    for concept in search_concepts(" ".join(words or []), limit=200):
        sys.stdout.write(f"{concept.name}\t{concept.unit}\t{concept.words}\n")


def _pairs(items: list[str], option: str, shape: str) -> dict[str, str]:
    """'KEY=VALUE' items as a dict; exit 2 naming the option when one has no '='."""
    pairs = [item.split("=", 1) for item in items if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        err.print(f"[red]error[/red]: {option} takes {shape}")
        raise typer.Exit(code=2)
    return {key.strip(): value for key, value in pairs}


@queue_app.command("export-gold")
@unusable_queue_file()
def export_gold_command(
    suite: Path = typer.Argument(..., help="Suite folder to add to (created with its suite.toml when missing)."),
    item: list[int] = typer.Option(
        [], help="Only these items (repeatable); default: every accepted item not yet in the suite."
    ),
    reviewer: ReviewerOption = None,
    root: RootOption = None,
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Accepted items become gold: the document, its facts, accepted findings and provenance, in an eval suite.

    Then 'extractor eval SUITE' scores any backend or prompt against what reviewers confirmed.
    Exit status: 0; 1 when an item could not be exported (the reason is printed); 2 for a bad queue or suite.
    """
    reviewer = reviewer or _default_reviewer()
    settings = queue_settings(queue, config, root)
    store = open_queue(settings)
    try:
        result = export_gold(store, suite, settings.root, reviewer, item or None)
    except QueueError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    for note in result.skipped:
        err.print(f"[yellow]skipped[/yellow] {escape(note)}")
    if not result.written:
        err.print(
            "nothing to export: no accepted item that is not in the suite already"
            + (" among those named" if item else "")
        )
    else:
        err.print(f"wrote {len(result.written)} gold documents to {escape(str(suite))}: {', '.join(result.written)}")
    if result.written:
        err.print(f"score against them: extractor eval {escape(str(suite))}")
    if any("not accepted" not in note and "already" not in note for note in result.skipped):
        raise typer.Exit(code=1)


@queue_app.command("add-reviewer")
@unusable_queue_file()
def add_reviewer_command(
    name: str = typer.Argument(..., help="The name they sign in with."),
    password: bool = typer.Option(
        False, "--password", help="Prompt for a password (12+ characters) instead of generating a token."
    ),
    replace: bool = typer.Option(False, "--replace", help="Give an existing reviewer a new secret (signs them out)."),
    queue: QueueUrlOption = None,
    config: QueueConfigOption = None,
) -> None:
    """Create a reviewer for the web UI; prints their token once (only its hash is stored)."""
    store = open_queue(queue_settings(queue, config), must_exist=False)
    secret = typer.prompt("password", hide_input=True, confirmation_prompt=True) if password else None
    try:
        made = add_reviewer(store, name, secret, replace)
    except QueueError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if password:
        err.print(f"reviewer {escape(name)} can sign in with their password")
    else:
        err.print(f"reviewer {escape(name)}: sign in with this token (shown once):")
        sys.stdout.write(made + "\n")


def _print_unexplained(console: Console, item: Item) -> None:
    """Each finding's id, and the numbers coverage findings list, with what 'queue edit --add' needs."""
    validation = item.extraction.validation
    if validation is None or not validation.findings:
        return
    ids = Table(title="finding ids (for queue resolve --accept-finding ID=REASON)", title_justify="left")
    for column in ("id", "severity", "unexplained numbers (span text · where · period · award)"):
        ids.add_column(column, overflow="fold")
    for finding in validation.findings:
        numbers = "\n".join(
            f"{n.start}:{n.end} {n.text} · {n.where} · {_period_words(n.period)} · {n.award or '-'}"
            for n in finding.numbers[:50]
        ) + (f"\n… and {len(finding.numbers) - 50} more" if len(finding.numbers) > 50 else "")
        ids.add_row(escape(finding.id), finding.severity, escape(numbers))
    console.print(ids)


def _period_words(period: Period | None) -> str:
    if period is None:
        return "-"
    instant, start, end = period.instant, period.start, period.end
    return f"instant={instant}" if instant else f"start={start or ''},end={end}"
