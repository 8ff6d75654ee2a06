"""Coverage rules: numbers a real note prints that no fact uses and nothing explains are reported, with
their spans, where they sit and what their neighbours say; a note read under the threshold fails.

Every document here is a real filing's note from the real-filing suite (inline XBRL stripped)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from extractor.backends import rules
from extractor.evals.harness.runner import run_suite
from extractor.evals.harness.terminal import GATE_PASS_SHARE, Gate
from extractor.extraction import Extraction
from extractor.loaders import load
from extractor.schemas.concepts import to_facts
from extractor.suites import load_suite
from extractor.validator import validate
from extractor.validator.coverage import NOTE_COVERAGE

REAL = Path(__file__).resolve().parents[1] / "evals" / "suites" / "real"


def _read(name: str) -> tuple:
    document = load(next((REAL / "documents").glob(f"{name}.*")))
    return document, rules.extract(document)


def _without(extraction: Extraction, drop) -> Extraction:
    """The extraction with the expense items whose printed number `drop` picks left out: an omission."""
    note = extraction.note.model_copy(deep=True)
    note.expense = [item for item in note.expense if not drop(item.amount.source.text, item)]
    return extraction.model_copy(update={"note": note})


def test_an_expense_sentence_left_out_is_named_and_the_note_fails() -> None:
    # "the Company incurred $557 and $1,816, respectively, in stock compensation expense ... compared to
    # $0 and $157": the rules backend reads the RSU table only (loose recall 0.43 against the filer's tags)
    document, extraction = _read("ggho-10q-2014q3")
    validation = validate(extraction, document)
    prose = [f for f in validation.findings if f.rule == "coverage.prose"]
    assert len(prose) == 1 and prose[0].severity == "warning"
    assert [n.text for n in prose[0].numbers] == ["557", "1,816", "0", "157"]
    assert all(document.text[n.start : n.end] == n.text for n in prose[0].numbers)
    assert prose[0].numbers[0].table is None and prose[0].numbers[0].where.startswith("paragraph")
    note = [f for f in validation.findings if f.rule == "coverage.note"]
    assert validation.coverage == Decimal("0.5") < NOTE_COVERAGE
    assert len(note) == 1 and note[0].severity == "error" and not validation.passed


def test_a_dropped_row_is_listed_with_its_row_column_and_the_period_its_column_gives() -> None:
    # IBM's expense table: three and six months of 2025 and 2024, by income-statement line
    document, extraction = _read("ibm-10q-2025q2")
    assert not [f for f in validate(extraction, document).findings if f.rule == "coverage.table"]
    dropped = _without(extraction, lambda text, item: item.line_item == "research and development")
    findings = [f for f in validate(dropped, document).findings if f.rule == "coverage.table"]
    assert len(findings) == 1 and findings[0].severity == "warning"  # 4 of 28 numbers: a row, not the table
    numbers = findings[0].numbers
    assert [n.text for n in numbers] == ["130", "90", "249", "183"]
    assert {n.row for n in numbers} == {"Research and development"}
    first = numbers[0]
    assert (first.period.start.isoformat(), first.period.end.isoformat()) == ("2025-04-01", "2025-06-30")
    assert (numbers[2].period.start.isoformat(), numbers[2].period.end.isoformat()) == ("2025-01-01", "2025-06-30")
    assert first.award is None and document.text[first.start : first.end] == "130"
    assert findings[0].coverage is not None and findings[0].coverage < 1


def test_a_table_left_unread_is_an_error() -> None:
    document, extraction = _read("ibm-10q-2025q2")
    table_numbers = {item.amount.source.start for item in extraction.note.expense}
    dropped = _without(extraction, lambda text, item: item.amount.source.start in table_numbers)
    dropped.note.line_items = [i for i in dropped.note.line_items if i.amount.source.start not in range(380, 760)]
    findings = [f for f in validate(dropped, document).findings if f.rule == "coverage.table"]
    assert findings and findings[0].severity == "error" and "mostly unread" in findings[0].message


def test_what_is_out_of_scope_is_explained_not_reported() -> None:
    # Meta's combined equity note: "declared quarterly cash dividend of $0.50 per share ... total dividend
    # and dividend equivalent payments were $4.38 billion and $691 million"; its share counts stay reported
    document, extraction = _read("meta-10k-2024")
    reported = {
        n.text for f in validate(extraction, document).findings if f.rule.startswith("coverage.") for n in f.numbers
    }
    assert not reported & {"0.50", "4.38", "691"}
    assert {"2,190", "344"} <= reported  # shares issued and outstanding: in a stock note's reach, not extracted


def test_a_quarter_and_its_year_to_date_are_two_facts_not_a_conflict() -> None:
    # before: 12 consistency.conflict errors (quarter vs six months, one end date) and 4 totals.sum errors
    document, extraction = _read("ibm-10q-2025q2")
    validation = validate(extraction, document)
    assert validation.passed, [f.message for f in validation.errors]
    facts = {(f.concept, str(f.period.start), f.value) for f in to_facts(extraction.note) if not f.dims}
    assert ("AllocatedShareBasedCompensationExpense", "2025-04-01", Decimal(441000000)) in facts  # pre-tax total
    assert ("AllocatedShareBasedCompensationExpense", "2025-01-01", Decimal(842000000)) in facts
    assert ("AllocatedShareBasedCompensationExpenseNetOfTax", "2025-04-01", Decimal(285000000)) in facts
    assert (
        "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
        "2025-04-01",
        Decimal(156000000),
    ) in facts  # about all awards, though the paragraph above names stock options


def test_plan_terms_that_differ_by_grant_cohort_are_worth_a_look_not_an_error() -> None:
    # Mastercard: "For RSUs granted on or after March 1, 2022, the awards generally vest ratably over three
    # years ... before March 1, 2022 ... over four years"
    document, extraction = _read("ma-10k-2024")
    vesting = [
        f
        for f in validate(extraction, document).findings
        if f.rule == "consistency.conflict" and "vesting period" in f.message
    ]
    assert vesting and all(f.severity == "warning" for f in vesting)


def test_the_validator_is_a_gate_on_the_real_suite() -> None:
    """Every extraction with loose recall under 0.5 fails; at least 70 % of those at 0.85 or more pass."""
    run = run_suite(load_suite(REAL), rules.extract, "rules")
    gate = Gate.of(run.documents)
    low, high = gate.low, gate.high
    assert low and high
    assert all(d.passed is False for d in low), [d.id for d in low if d.passed]
    assert sum(bool(d.passed) for d in high) / len(high) >= GATE_PASS_SHARE, [d.id for d in high if not d.passed]
    assert gate.holds
    assert all(d.coverage is not None for d in run.documents if d.loose is not None and d.loose.gold)
