"""A queue item with a roll-forward error: seed 002 read by rules, one RSU count misread.

The filing prints "101" thousand RSUs vested; the item says 110 thousand, as a digit swap by an
extractor would. The nonvested RSU roll-forward then fails (211 + 77 - 110 - 11 != 176) and the
number no longer reads back from its span nor agrees with the sentence saying 101,000 vested.
Setting it back to 101000 clears all three.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from extractor.backends import rules
from extractor.loaders import load
from extractor.queue.feed import absolute_ref
from extractor.queue.store import EntryReason, Queue
from extractor.validator import validate
from fixture_paths import SEED_002

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
