"""The review page's parts: the source pane for a document too long to show whole, and which values come first."""

from __future__ import annotations

import re

from fixture_paths import SEED_002

from extractor.backends import rules
from extractor.loaders import load
from extractor.queue.edits import value_fields
from extractor.review.page import CONTEXT_CHARS, SOURCE_CHARS, item_view


def test_a_very_long_source_is_shown_as_excerpts_around_every_marked_value() -> None:
    document = load(SEED_002)
    extraction = rules.extract(document)
    whole = item_view(extraction, document.text)  # a short source is shown whole
    assert "characters not shown" not in whole.source and len(whole.source) > len(document.text)
    filler = "Exhibit text without any value. " * 150_000  # about 5 MB each side of the note: a whole filing's worth
    moved = extraction.model_copy(deep=True)
    for value in value_fields(moved.note):
        if value.amount.source is not None:
            value.amount.source.start += len(filler)
            value.amount.source.end += len(filler)
    view = item_view(moved, filler + document.text + filler)
    assert 2 * len(filler) > SOURCE_CHARS and len(view.source) < len(whole.source) + 4 * CONTEXT_CHARS + 1_000
    marks = [int(start) for start in re.findall(r'<mark id="m(\d+)"', view.source)]
    assert len(marks) == whole.source.count("<mark id=") > 50  # every value still marked ...
    assert min(marks) >= len(filler)  # ... at its offset in the whole text
    assert view.source.count("characters not shown") == 2


def test_a_very_long_source_without_marks_or_with_a_huge_mark_stays_small() -> None:
    document = load(SEED_002)
    extraction = rules.extract(document)
    filler = "Exhibit text without any value. " * 150_000
    unmarked = extraction.model_copy(deep=True)
    for value in value_fields(unmarked.note):
        value.amount.source = None
    view = item_view(unmarked, filler)
    shown = re.sub(r"<[^>]+>", "", view.source)
    assert CONTEXT_CHARS < len(shown) < 2 * CONTEXT_CHARS and shown.startswith("Exhibit text")  # its first lines
    huge = extraction.model_copy(deep=True)
    first = next(value for value in value_fields(huge.note) if value.amount.source is not None)
    whole_text = first.amount.source.model_copy(update={"start": 0, "end": len(filler)})  # a span over the whole text
    for value in value_fields(huge.note):
        value.amount.source = None
    first.amount.source = whole_text
    view = item_view(huge, filler)
    assert view.source.count("<mark id=") == 1 and len(view.source) < 4 * CONTEXT_CHARS + 1_000


def test_a_value_placed_by_a_loose_quote_is_marked_shaky_and_listed_first() -> None:
    document = load(SEED_002)
    extraction = rules.extract(document)
    plain = item_view(extraction, document.text)
    assert [row.path for group in plain.groups for row in group.rows] == [
        f.path for f in value_fields(extraction.note)
    ]  # rules: note order
    fuzzy, exact, group = (
        "valuation_assumptions[2].expected_term_max",
        "valuation_assumptions[2].risk_free_rate_min",
        "valuation_assumptions[2]",
    )
    llm = extraction.model_copy(deep=True)
    spans = {value.path: value.amount.source for value in value_fields(llm.note)}
    spans[fuzzy].alignment = "fuzzy"  # type: ignore[union-attr]
    spans[exact].alignment = "exact"  # type: ignore[union-attr]
    view = item_view(llm, document.text)
    first = view.groups[0].rows[0]
    assert (view.groups[0].key, first.path, first.number, first.shaky) == (group, fuzzy, 1, "fuzzy")
    rows = {row.path: row for g in view.groups for row in g.rows}
    assert rows[exact].shaky is None and len(rows) == len(spans)
    rest = [row.path for row in view.groups[0].rows[1:]]
    assert rest == [
        row.path for g in plain.groups if g.key == group for row in g.rows if row.path != fuzzy
    ]  # the group's order otherwise
    assert [g.key for g in view.groups[1:]] == [g.key for g in plain.groups if g.key != group]
    assert [row.number for g in view.groups for row in g.rows] == list(range(1, len(rows) + 1))  # numbered as listed
    assert re.search(rf'<mark id="{first.mark}" class="value[a-z ]* shaky"', view.source)
    assert not re.search(rf'<mark id="{rows[exact].mark}" class="[a-z ]*shaky', view.source)
