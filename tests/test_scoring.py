"""The spec's matching rule: same fact by concept, dims and period end (±1 day); values agree at printed precision."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from extractor.schemas.facts import Fact, values_agree
from extractor.schemas.values import Period, SourceSpan
from extractor.scoring import score


def fact(value: str, printed: str, end: date = date(2020, 2, 29), concept: str = "C", **dims: str) -> Fact:
    return Fact(
        concept=concept,
        value=Decimal(value),
        unit="shares",
        period=Period.at(end),
        dims=dims,
        source=SourceSpan(start=0, end=len(printed), text=printed),
    )


def test_thousands_agree_with_units_at_printed_precision() -> None:
    assert values_agree(fact("1601000", "1,601"), fact("1601489", "1,601,489"))
    assert not values_agree(fact("1602000", "1,602"), fact("1601489", "1,601,489"))
    assert values_agree(fact("1550000000", "1.55"), fact("1552300000", "1,552.3"))
    assert not values_agree(fact("1560000000", "1.56"), fact("1552300000", "1,552.3"))


def test_score_counts_found_correct_missed_and_extra() -> None:
    gold = [fact("100", "100", award="rsu"), fact("200", "200", concept="D"), fact("300", "300", concept="E")]
    predicted = [
        fact("100", "100", end=date(2020, 3, 1), award="rsu"),  # one day off: same fact
        fact("250", "250", concept="D"),  # found, wrong value
        fact("300", "300", concept="E", award="option"),  # other dims: an extra, and E is missed
    ]
    result = score(predicted, gold)
    assert (result.found, result.correct) == (2, 1)
    assert [f.concept for f in result.missed] == ["E"]
    assert [f.concept for f in result.extra] == ["E"]
    assert abs(result.precision - 1 / 3) < 1e-9 and abs(result.recall - 1 / 3) < 1e-9


# -- extractor score: every gold document in play counts --------------------------------------------

import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from fixture_paths import GOLD, SEED_002  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from extractor.cli import app  # noqa: E402

GOLD_000 = GOLD / "000_a279831d03f6579a.facts.jsonl"
GOLD_002 = GOLD / "002_59f0e0194afd947c.facts.jsonl"


def _gold_count(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def _predict_002(tmp_path: Path) -> Path:
    out = tmp_path / "facts.jsonl"
    assert CliRunner().invoke(app, ["extract", str(SEED_002), "-f", "facts", "-o", str(out)]).exit_code == 0
    return out


def _total(output: str) -> tuple[int, int, int]:
    total = re.search(r"ALL\W+(\d+)\W+(\d+)\W+(\d+)", output)
    assert total, output
    return int(total[1]), int(total[2]), int(total[3])


def test_score_with_a_gold_file_scores_that_file(tmp_path: Path) -> None:
    facts = _predict_002(tmp_path)
    result = CliRunner().invoke(app, ["score", str(facts), "--gold", str(GOLD_002), "--no-show-errors"])
    assert result.exit_code == 0, result.output
    assert _total(result.output) == (_gold_count(GOLD_002), 103, 103)


def test_a_gold_file_with_no_predicted_facts_counts_as_missed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(
        app, ["score", str(empty), "--gold", str(GOLD_002), "--fail-under", "0.5", "--no-show-errors"]
    )
    assert result.exit_code == 1 and _total(result.output) == (_gold_count(GOLD_002), 0, 0)


def test_a_predictions_folder_counts_its_documents_with_no_facts(tmp_path: Path) -> None:
    folder = tmp_path / "pred"
    folder.mkdir()
    _predict_002(tmp_path).rename(folder / "002_59f0e0194afd947c.jsonl")
    (folder / "000_a279831d03f6579a.jsonl").write_text("")  # extracted, nothing found
    result = CliRunner().invoke(app, ["score", str(folder), "--gold", str(GOLD), "--no-show-errors"])
    assert result.exit_code == 0, result.output
    assert _total(result.output) == (_gold_count(GOLD_000) + _gold_count(GOLD_002), 103, 103)


def test_all_gold_and_empty_predictions_count_every_gold_document(tmp_path: Path) -> None:
    facts = _predict_002(tmp_path)
    every = _gold_count(GOLD_000) + _gold_count(GOLD_002)
    result = CliRunner().invoke(app, ["score", str(facts), "--gold", str(GOLD), "--all-gold", "--no-show-errors"])
    assert _total(result.output)[0] == every
    facts.write_text("")
    result = CliRunner().invoke(app, ["score", str(facts), "--gold", str(GOLD), "--no-show-errors"])
    assert _total(result.output) == (every, 0, 0)


def test_a_gold_file_that_matches_several_predicted_documents_is_a_clear_error(tmp_path: Path) -> None:
    lines = _predict_002(tmp_path).read_text().splitlines()
    other = [json.dumps({**json.loads(line), "document": "another"}) for line in lines[:3]]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(lines + other) + "\n")
    result = CliRunner().invoke(app, ["score", str(mixed), "--gold", str(GOLD_000)])
    assert result.exit_code == 2 and "ambiguous" in result.output
    missing = CliRunner().invoke(app, ["score", str(mixed), "--gold", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such gold file or folder" in missing.output
