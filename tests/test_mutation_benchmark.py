"""The mutation benchmark's targets hold (it runs in about 15 s; the figures come from the script)."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from fixture_paths import ROOT


@pytest.mark.slow
def test_validator_catches_the_benchmarks_mutations() -> None:
    spec = importlib.util.spec_from_file_location(
        "validator_mutations", ROOT / "evals" / "benchmarks" / "validator_mutations.py"
    )
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    outcomes, baseline, _ = bench.run(seed=11)
    assert sum(baseline.values()) == 0  # no finding on the unmutated gold (filing quirks accepted)
    related = [o for o in outcomes if o.related]
    assert len(related) > 900 and {o.kind for o in outcomes} == set(bench.MUTATIONS)
    assert all(o.families["document"] for o in outcomes), "a mutation went undetected"
    spans_only = sum(1 for o in related if o.families["spans only"]) / len(related)
    assert spans_only >= 0.95
    assert all(o.errors["document"] for o in outcomes if o.kind == "invented")


def test_validator_notices_what_was_left_out() -> None:
    """Issue 19: a dropped table is always noticed, a dropped row at least 95 %, a single fact 80 %;
    the unmutated gold, validated with its document, has no error finding."""
    spec = importlib.util.spec_from_file_location(
        "validator_mutations", ROOT / "evals" / "benchmarks" / "validator_mutations.py"
    )
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    omissions, baseline_errors = bench.run_drops()
    assert not any(baseline_errors.values())
    assert {o.kind for o in omissions} == set(bench.DROPS)
    for kind, target in bench.DROP_TARGETS.items():
        rows = [o for o in omissions if o.kind == kind]
        assert len(rows) >= 10 and sum(bool(o.families) for o in rows) / len(rows) >= target, kind
    tables = [o for o in omissions if o.kind == "table"]
    assert all("coverage" in o.families and o.error for o in tables)  # a whole table left out fails the note
