"""The spec's matching rule: same fact by concept, dims and period end (±1 day); values agree at printed precision."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from extractor.scoring import score
from schemas.facts import Fact, values_agree
from schemas.values import Period, SourceSpan


def fact(value: str, printed: str, end: date = date(2020, 2, 29), concept: str = "C", **dims: str) -> Fact:
    return Fact(concept=concept, value=Decimal(value), unit="shares", period=Period.at(end), dims=dims,
                source=SourceSpan(start=0, end=len(printed), text=printed))


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
