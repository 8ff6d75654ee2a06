"""`extractor gold ...`: build gold facts for eval suites from filings that already carry XBRL tags."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from extractor.xbrl import XbrlError, read_gold, write_facts

gold_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Build gold facts for eval suites.")


@gold_app.command("from-xbrl")
def from_xbrl(
    file: Path = typer.Argument(
        ..., help="An XBRL instance (.xml) or an inline XBRL filing (.htm, XHTML with ix:nonFraction tags)."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the facts here (JSON Lines) instead of standard output."
    ),
) -> None:
    """Gold facts (shared/spec/facts.md) from the filer's own XBRL tags, for the concepts in scope.

    Each tagged number becomes a fact: us-gaap concepts in concepts.md keep their name, company
    extensions become ext:<Name> when the project knows that name; award types, income-statement
    lines, ranges and future years come from the context's axes. For inline XBRL every fact gets
    its span in the document text the extractor reads, so the result passes `extractor validate`
    like hand-labeled gold; a plain instance has no text, so its facts have no source. Facts out of
    scope, on other axes or without a readable value are skipped and counted on standard error.

    Exit status: 0 when facts were written; 2 when the file is not XBRL or is broken, or the
    output cannot be written.

    Examples:
      extractor gold from-xbrl filing/abc-20180731.htm -o evals/suites/mine/gold/abc_2018.facts.jsonl
      extractor validate evals/suites/mine/gold/abc_2018.facts.jsonl --document filing/abc-20180731.htm
      extractor gold from-xbrl abc-20180731_htm.xml > abc_2018.facts.jsonl
    """
    try:
        result = read_gold(file)
    except XbrlError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from error
    if output is not None:
        try:
            write_facts(result.facts, output)
        except OSError as error:
            typer.echo(f"error: cannot write {output}: {error.strerror or error}", err=True)
            raise typer.Exit(code=2) from error
        where = str(output)
    else:
        sys.stdout.write("".join(fact.to_json() + "\n" for fact in result.facts))
        where = "standard output"
    typer.echo(f"wrote {where}: {result.summary()}", err=True)
