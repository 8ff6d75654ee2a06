"""The mutation benchmark's targets hold (it runs in about 15 s; the figures come from the script)."""

from __future__ import annotations

import importlib.util
import sys

from fixture_paths import ROOT


def test_validator_catches_the_benchmarks_mutations() -> None:
    spec = importlib.util.spec_from_file_location("validator_mutations", ROOT / "evals" / "benchmarks" / "validator_mutations.py")
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
