"""`extractor score`: predicted facts against gold, per document and overall."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from extractor.cli.common import err
from extractor.render import score_table
from extractor.schemas.facts import Fact, read_facts
from extractor.scoring import Score, gold_files, read_predictions, score


def score_command(
    facts_file: Path = typer.Argument(
        ...,
        help="Predicted facts: JSON Lines with a 'document' key per line (as 'extract --format facts' writes), or a folder of <document>.jsonl files (an empty file: extracted, no facts).",
    ),
    gold: Path = typer.Option(
        Path("evals/gold"), help="Folder of <document>.facts.jsonl gold files, or one gold file."
    ),
    all_gold: bool = typer.Option(
        False,
        "--all-gold",
        help="Count every gold file of the folder, predicted or not (a document with no prediction is all missed).",
    ),
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
            err.print(
                f"[red]error[/red]: {escape(str(gold_file))}: not a gold facts file ({escape(str(error).splitlines()[0])})"
            )
            raise typer.Exit(code=2) from error
        if not predicted:
            err.print(
                f"[yellow]note[/yellow]: no predicted facts for {escape(document)}; its {len(gold_facts)} gold facts count as missed"
            )
        results[document] = score(predicted, gold_facts)
    total = Score()
    for result in results.values():
        total.add(result)
    Console().print(score_table(results, total, show_errors))
    if fail_under is not None and total.f1 < fail_under:
        err.print(f"[red]F1 {total.f1:.3f} is below --fail-under {fail_under}[/red]")
        raise typer.Exit(code=1)


def _score_pairs(
    predictions: dict[str | None, list[Fact]], golds: dict[str, Path], one_file: bool, all_gold: bool
) -> dict[str, tuple[list[Fact], Path]]:
    """Predicted facts and gold file per scored document; exits 2 when they cannot be paired."""
    if one_file:
        ((name, path),) = golds.items()
        others = sorted(d for d in predictions if d not in (name, None))
        if name in predictions or None in predictions or not others:
            if others:
                err.print(
                    f"[yellow]note[/yellow]: facts of {escape(', '.join(others))} not scored (the gold is {escape(str(path))} only)"
                )
            return {name: (predictions.get(name, []) + predictions.get(None, []), path)}
        if len(others) == 1:
            err.print(
                f"[yellow]note[/yellow]: the facts are of document {escape(others[0])}; scored against {escape(str(path))}"
            )
            return {name: (predictions[others[0]], path)}
        err.print(
            f"[red]error[/red]: the facts are of {len(others)} documents ({escape(', '.join(others))}), none named {escape(name)}:"
            f" which one {escape(str(path))} is the gold of is ambiguous; pass a gold folder, or facts of that document only"
        )
        raise typer.Exit(code=2)
    if None in predictions:
        err.print(
            "[red]error[/red]: a predicted fact has no 'document' key; cannot tell which gold file applies (pass --gold FILE)"
        )
        raise typer.Exit(code=2)
    named = [d for d in predictions if d is not None]
    for document in named:
        if document not in golds:
            err.print(f"[yellow]note[/yellow]: no gold for {escape(document)} in {len(golds)} gold files; not scored")
    wanted = list(golds) if all_gold or not named else [d for d in named if d in golds]
    if not wanted:  # scoring nothing would print a perfect-looking empty table and exit 0
        err.print(
            "[red]error[/red]: nothing to score: "
            + (
                "no gold files in the gold folder"
                if not golds
                else "none of the predicted documents has a gold file (<document>.facts.jsonl)"
            )
        )
        raise typer.Exit(code=2)
    unscored = sorted(set(golds) - set(wanted))
    if unscored:
        err.print(
            f"[yellow]note[/yellow]: {len(unscored)} gold documents not named by the predictions, not scored"
            f" ({escape(', '.join(unscored[:5]))}{' …' if len(unscored) > 5 else ''}); --all-gold counts them"
        )
    return {d: (predictions.get(d, []), golds[d]) for d in sorted(wanted)}
