"""A queue item with a roll-forward error: seed 002 read by rules, one RSU count misread.

The filing prints "101" thousand RSUs vested; the item says 110 thousand, as a digit swap by an
extractor would. The nonvested RSU roll-forward then fails (211 + 77 - 110 - 11 != 176) and the
number no longer reads back from its span nor agrees with the sentence saying 101,000 vested.
Setting it back to 101000 clears all three.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

from fixture_paths import ROOT, SEED_002

from extractor.backends import rules
from extractor.loaders import load
from extractor.queue.feed import absolute_ref
from extractor.queue.store import EntryReason, Queue
from extractor.schemas.stock_compensation import ExpenseItem
from extractor.schemas.values import Amount, Period, SourceSpan
from extractor.validator import validate

WRONG_FIELD = "award_activity[2].rows[2].count"  # RSU nonvested, "Vested" row
RIGHT, WRONG = Decimal("101000"), Decimal("110000")


def seed_rollforward_error(queue: Queue, path: Path = SEED_002) -> int:
    document = load(path)
    extraction = rules.extract(document)
    row = extraction.note.award_activity[2].rows[2]
    assert row.kind == "vested" and row.count is not None and row.count.value == RIGHT
    row.count.value = WRONG
    extraction.validation = validate(extraction, document)
    assert {"rollforward.count", "grounding.readback"} <= {f.rule for f in extraction.validation.errors}
    item_id = queue.add(extraction, absolute_ref(str(path)), EntryReason.validation, "test seed")
    assert item_id is not None
    return item_id


# A real note (Alphabet's 10-K 2024 stock compensation note, inline XBRL stripped) as an extractor
# might leave it: the sentence's "633 million shares ... reserved" missed, a year read as an expense
# amount, and the opening RSU balance pointing at the closing balance's printed number.
GOOGL = ROOT / "evals" / "suites" / "real" / "documents" / "googl-10k-2024.html"
GOOGL_GOLD = ROOT / "evals" / "suites" / "real" / "gold" / "googl-10k-2024.facts.jsonl"
MISSED_CONCEPT = "CommonStockCapitalSharesReservedForFutureIssuance"
JUNK_PATH = "expense[3].amount"  # 2,022 dollars of expense, read from the year "2022"
MOVED_PATH = "award_activity[0].rows[0].count"  # 338 million, its span moved onto the printed "299"


def seed_missed_number(queue: Queue) -> tuple[int, dict[str, tuple[int, int]]]:
    """The item, and the spans a reviewer works with: 'missed' (633), 'junk' (2022), 'right' (338), 'wrong' (299)."""
    document = load(GOOGL)
    text = document.text
    extraction = rules.extract(document)
    note = extraction.note
    missed = next(i for i, item in enumerate(note.line_items) if item.concept == MISSED_CONCEPT)
    source = note.line_items.pop(missed).amount.source
    assert source is not None and source.text == "633"
    year = text.index("2022", text.index("total SBC expense") - 60)
    note.expense.append(
        ExpenseItem(
            amount=Amount(
                value=Decimal(2022),
                unit="USD",
                period=Period(start=date(2022, 1, 1), end=date(2022, 12, 31)),
                source=SourceSpan(start=year, end=year + 4, text="2022"),
            )
        )
    )
    assert len(note.expense) == 4
    row = note.award_activity[0].rows[0]
    assert row.count is not None and row.count.source is not None and row.count.source.text == "338"
    right = (row.count.source.start, row.count.source.end)
    wrong = text.index("299", right[1])
    row.count.source = SourceSpan(start=wrong, end=wrong + 3, text="299")
    extraction.validation = validate(extraction, document)
    rules_seen = {f.rule for f in extraction.validation.errors}
    assert {"grounding.readback", "consistency.conflict"} <= rules_seen
    assert any(
        n.start == source.start for f in extraction.validation.findings if f.rule == "coverage.prose" for n in f.numbers
    )
    item_id = queue.add(extraction, absolute_ref(str(GOOGL)), EntryReason.validation, "test seed")
    assert item_id is not None
    return item_id, {
        "missed": (source.start, source.end),
        "junk": (year, year + 4),
        "right": right,
        "wrong": (wrong, wrong + 3),
    }
