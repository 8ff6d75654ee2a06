"""The real-filing suite (evals/build_real_suite.py) and loose matching against the filers' XBRL
tags (evals/harness/loose.py), cross-checked against the independent ../shared/tools/score_real.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import pytest
from fixture_paths import ROOT

from extractor.backends import rules
from extractor.evals.build_real_suite import build, our_dims
from extractor.evals.build_real_suite import main as build_main
from extractor.evals.harness.loose import TaggedFact, agree, loose_score, read_tagged, visible
from extractor.evals.harness.runner import run_suite
from extractor.schemas.concepts import to_facts
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period
from extractor.suites import load_suite

SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "real"
TOOLS = SHARED / "tools"
needs_corpus = pytest.mark.skipif(
    not (CORPUS / "manifest.json").is_file() or not (TOOLS / "score_real.py").is_file(),
    reason="../shared/corpus/real and ../shared/tools are not here (they are not part of the repository)",
)
TWO = ("ba-10q-2025q2", "ggho-10q-2014q3")  # one inline XBRL 10-Q, one 2014 instance


def score_real() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_real", TOOLS / "score_real.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_corpus(tmp_path: Path) -> Path:
    """A copy of two corpus filings and one nogold document, with manifests listing only them."""
    corpus = tmp_path / "corpus"
    entries = [e for e in json.loads((CORPUS / "manifest.json").read_text()) if e["id"] in TWO]
    (corpus / "nogold" / "loncor-20f-2015").mkdir(parents=True)
    for fid in TWO:
        (corpus / fid).mkdir()
        for name in ("section.html", "gold_facts.json", "extension_facts.json"):
            if (CORPUS / fid / name).exists():
                (corpus / fid / name).write_bytes((CORPUS / fid / name).read_bytes())
    (corpus / "manifest.json").write_text(json.dumps(entries))
    nogold = [e for e in json.loads((CORPUS / "nogold" / "manifest.json").read_text()) if e["id"] == "loncor-20f-2015"]
    (corpus / "nogold" / "manifest.json").write_text(json.dumps(nogold))
    (corpus / "nogold" / "loncor-20f-2015" / "section.html").write_bytes(
        (CORPUS / "nogold" / "loncor-20f-2015" / "section.html").read_bytes()
    )
    return corpus


# -- the builder ----------------------------------------------------------------------------------


@needs_corpus
def test_builder_writes_stripped_documents_visible_gold_tags_and_a_loadable_suite(tmp_path):
    out = tmp_path / "real"
    build(small_corpus(tmp_path), out)
    suite = load_suite(out)
    assert [d.id for d in suite.documents] == [*TWO, "loncor-20f-2015"]
    for fid in TWO:
        document = out / "documents" / f"{fid}.html"
        expected = tmp_path / f"{fid}.stripped.html"  # the shared tool's own output, byte for byte
        subprocess.run(
            [sys.executable, str(TOOLS / "strip_ix.py"), str(CORPUS / fid / "section.html"), str(expected)], check=True
        )
        assert document.read_bytes() == expected.read_bytes() and "ix:" not in document.read_text().lower()
        raw = json.loads((CORPUS / fid / "gold_facts.json").read_text())
        shown = [f for f in raw if f["shown_in_section"] and f["in_note"] is not False and f["value"] != 0]
        entry = next(d for d in suite.documents if d.id == fid)
        assert len(entry.gold_facts) == len(shown) == len(entry.xbrl_gold_facts or ()) > 0
        extension = CORPUS / fid / "extension_facts.json"
        assert len(entry.tagged_facts) == len(raw) + len(
            json.loads(extension.read_text()) if extension.exists() else []
        )
    ba = next(d for d in suite.documents if d.id == "ba-10q-2025q2")
    assert all(g.printed for g in ba.xbrl_gold_facts or ())  # inline facts keep what was printed
    assert {f.unit for f in ba.gold_facts} <= {"shares", "USD", "USD/share", "pure", "years"}
    robust = suite.documents[-1]
    assert robust.robustness and robust.gold is None and robust.gold_facts == ()
    again = tmp_path / "again"
    build(small_corpus(tmp_path / "b"), again)  # re-runnable, same bytes
    assert (again / "suite.toml").read_text() == (out / "suite.toml").read_text()
    assert "dgunning/edgartools@" in (out / "README.md").read_text()


def test_builder_says_clearly_when_the_corpus_is_missing(tmp_path, capsys):
    assert build_main(["--corpus", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert "no real-filing corpus here" in capsys.readouterr().err


def test_award_axes_map_to_our_award_classes():
    assert our_dims("X", {"AwardTypeAxis": "RestrictedStockUnitsRSUMember"}) == {"award": "rsu"}
    assert our_dims("X", {"PlanNameAxis": "EmployeeStockPurchasePlanMember"}) == {"award": "espp"}
    assert our_dims("X", {"AwardTypeAxis": "PerformanceSharesMember", "RangeAxis": "MaximumMember"}) == {
        "award": "psu",
        "bound": "max",
    }
    assert our_dims("X", {"IncomeStatementLocationAxis": "ResearchAndDevelopmentExpenseMember"}) == {
        "line_item": "research and development expense"
    }


def test_the_committed_suite_loads_with_its_robustness_documents():
    suite = load_suite(ROOT / "evals" / "suites" / "real")
    gold = [d for d in suite.documents if not d.robustness]
    assert len(gold) == 23 and all(d.xbrl_gold_facts and d.tagged_facts for d in gold)
    assert sum(len(d.xbrl_gold_facts or ()) for d in gold) == 1415
    assert sum(d.robustness for d in suite.documents) == 4


# -- loose matching ---------------------------------------------------------------------------------

END = date(2024, 12, 31)
RSU_MEMBER = {"AwardTypeAxis": "RestrictedStockUnitsRSUMember"}
CONCEPT = "ShareBasedCompensationArrangementByShareBasedPaymentAwardEquityInstrumentsOtherThanOptionsNonvestedNumber"


def tagged(
    value: int | str, dims: dict[str, str] | None = None, concept: str = CONCEPT, printed: str | None = None
) -> TaggedFact:
    fact = TaggedFact.from_json(
        {
            "concept": concept,
            "value": Decimal(value),
            "period": {"instant": END.isoformat()},
            "dims": dims if dims is not None else RSU_MEMBER,
            "printed": printed,
        }
    )
    assert fact is not None
    return fact


def predicted(value: str, end: date = END, award: str | None = "rsu", concept: str = CONCEPT) -> Fact:
    return Fact(
        concept=concept,
        value=Decimal(value),
        unit="shares",
        period=Period(instant=end),
        dims={"award": award} if award else {},
    )


def test_loose_hit_wrong_period_and_wrong_award():
    gold = [tagged(1909000000, printed="1,909")]
    assert loose_score([predicted("1909000000")], gold, gold)[0].found == 1
    assert loose_score([predicted("1909000000", end=END + timedelta(days=1))], gold, gold)[0].found == 1  # ±1 day
    assert loose_score([predicted("1909000000", end=END - timedelta(days=2))], gold, gold)[0].found == 0
    assert loose_score([predicted("1909000000", award="option")], gold, gold)[0].found == 0
    assert (
        loose_score([predicted("-1909000000", award="option")], [tagged(1909000000, dims={})], [])[0].found == 1
    )  # no award named: any


def test_printed_precision_decides_agreement():
    gold = [tagged(1909000000, printed="1,909")]  # "1,909" in millions
    assert loose_score([predicted("1909300000")], gold, gold)[0].found == 1  # within half a million
    assert loose_score([predicted("1910000000")], gold, gold)[0].found == 0
    # a prediction read from "1,909" (millions) agrees with an exact 1,908,765,432 by its own printed precision
    assert agree(Decimal("1909000000"), Decimal("1908765432"), "1,909")
    assert not agree(Decimal("1909000000"), Decimal("1908765432"))


def test_concept_hit_ignores_case_arrangements_and_trailing_digits():
    gold = [
        tagged(
            5, concept="ShareBasedCompensationArrangementsByShareBasedPaymentAwardOptionsGrantsInPeriodGross1", dims={}
        )
    ]
    same = predicted(
        "5", concept="ShareBasedCompensationArrangementByShareBasedPaymentAwardOptionsGrantsInPeriodGross", award=None
    )
    other = predicted("5", concept="SomethingElse", award=None)
    assert loose_score([same], gold, gold)[0].concept_found == 1
    counts = loose_score([other], gold, gold)[0]
    assert (counts.found, counts.concept_found) == (1, 0)


def test_tag_backed_precision_counts_non_zero_predictions_backed_by_any_tag():
    tags = [tagged(100, dims={}), tagged(7, concept="ba:Extension", dims={})]
    counts = loose_score([predicted("100"), predicted("7"), predicted("8"), predicted("0")], [], tags)[0]
    assert (counts.predicted, counts.backed) == (3, 2) and abs(counts.tag_backed_precision - 2 / 3) < 1e-12


# -- agreement with score_real.py -------------------------------------------------------------------


def _perturbed_predictions(gold: list[dict]) -> list[Fact]:
    """Hits, near periods, wrong periods, coarse values and wrong awards, deterministically."""
    out: list[Fact] = []
    for i, g in enumerate(gold):
        end = date.fromisoformat(g["period"].get("instant") or g["period"]["end"])
        award = our_dims(g["concept"], g["dims"]).get("award")
        value = Decimal(str(g["value"]))
        kind = i % 5
        if kind == 1:
            end += timedelta(days=1)
        elif kind == 2:
            end += timedelta(days=3)
        elif kind == 3:
            value = Decimal(f"{value:.2g}")
        elif kind == 4:
            award = "other" if award else "option"
        concept = g["concept"] if i % 2 else g["concept"] + "2"
        out.append(
            Fact(
                concept=concept,
                value=value,
                unit="pure",
                period=Period(instant=end),
                dims={"award": award} if award else {},
            )
        )
    return out


@needs_corpus
def test_loose_scores_agree_with_score_real_on_every_corpus_filing(tmp_path):
    sr = score_real()
    suite = load_suite(ROOT / "evals" / "suites" / "real")
    for document in suite.documents:
        if document.robustness:
            continue
        raw = json.loads((CORPUS / document.id / "gold_facts.json").read_text())
        facts = _perturbed_predictions([g for g in raw if visible(g)])
        path = tmp_path / f"{document.id}.jsonl"
        path.write_text("".join(f.to_json() + "\n" for f in facts))
        ours = loose_score(facts, document.xbrl_gold_facts or (), document.tagged_facts)[0]
        extension = CORPUS / document.id / "extension_facts.json"
        theirs_tagged = raw + (json.loads(extension.read_text()) if extension.exists() else [])
        n, loose, concept, _ = sr.score_filing(sr.load_pred(str(path)), raw)
        m, hits = sr.precision_hits(sr.load_pred(str(path)), theirs_tagged)
        assert (ours.gold, ours.found, ours.concept_found, ours.predicted, ours.backed) == (
            n,
            loose,
            concept,
            m,
            hits,
        ), document.id
        assert 0 < ours.found < ours.gold


@needs_corpus
def test_the_harness_and_score_real_agree_on_a_real_rules_run(tmp_path):
    out = tmp_path / "real"
    build(small_corpus(tmp_path), out)
    suite = load_suite(out)
    run = run_suite(suite, rules.extract, "rules")
    predictions = tmp_path / "pred"
    predictions.mkdir()
    from extractor.loaders import load

    for document in suite.documents:
        facts = to_facts(rules.extract(load(document.path)).note)
        (predictions / f"{document.id}.jsonl").write_text("".join(f.to_json() + "\n" for f in facts))
    printed = subprocess.run(
        [sys.executable, str(TOOLS / "score_real.py"), str(tmp_path / "corpus"), str(predictions)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1]
    metrics = run.metrics()
    assert metrics.loose is not None and metrics.loose.totals() == json.loads(printed)
    robust = [d for d in run.documents if d.robustness]
    assert [d.id for d in robust] == ["loncor-20f-2015"] and robust[0].status == "extracted" and robust[0].loose is None
    assert all(d.id not in {o.document for o in run.outcomes} for d in robust)  # no gold: nothing extra


def test_read_tagged_keeps_decimals_exact(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        '[{"concept": "C", "value": 0.1234567890123456789, "period": {"instant": "2024-12-31"}, "dims": {}},'
        ' {"concept": "T", "value": null, "period": {"instant": "2024-12-31"}}]'
    )
    (fact,) = read_tagged(path)
    assert fact.value == Decimal("0.1234567890123456789")
