"""The HTML eval report in a real browser: Debian's Chromium, headless, driven by Playwright.

The screenshot is kept as a test artifact in out/test-artifacts/. Without Chromium the test is
skipped with the reason, except in CI (CI=true), where `.ci/run` installs it and a skip would
hide a failure.
"""

from __future__ import annotations

import os
import shutil

import pytest
from fixture_paths import ROOT

from extractor.backends import rules
from extractor.backends.rules import lexicon
from extractor.evals.harness.compare import compare
from extractor.evals.harness.html_report import render_report, write_report
from extractor.evals.harness.runner import run_suite
from extractor.evals.harness.store import RunStore
from extractor.suites import load_suite

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "out" / "test-artifacts"
# Flags that keep Chromium off the network, which this machine closes (it would retry at every start).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_or_skip():
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is in the project's test extra")
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing in CI: .ci/run installs Debian's chromium package")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; make test tries when run as root)")
    return playwright


def test_report_drills_down_from_the_index_to_a_document_and_to_a_missed_fact(tmp_path, monkeypatch):
    sync_api = browser_or_skip()
    suite = load_suite(ROOT / "evals" / "suites" / "seeds")
    store = RunStore(tmp_path / "runs.sqlite")
    baseline = run_suite(suite, rules.extract, "rules")
    store.save(baseline)
    monkeypatch.setattr(lexicon, "ROW_KINDS", [(k, p) for k, p in lexicon.ROW_KINDS if k != "forfeited"])
    worse = run_suite(suite, rules.extract, "rules", label="no forfeited rows")
    store.save(worse)
    report = write_report(
        tmp_path / "report.html",
        render_report(worse, worse.metrics(), suite, store.runs(suite.name), compare(baseline, worse)),
    )
    html = report.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html and "<script" not in html  # one file, no network

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(report.as_uri())
        assert page.is_visible("#index") and page.locator("svg circle").count() == 2  # F1 of both stored runs
        assert not page.is_visible("#doc-000_a279831d03f6579a")

        page.click("#index table >> text=000_a279831d03f6579a")
        section = page.locator("#doc-000_a279831d03f6579a")
        assert section.is_visible() and not page.is_visible("#index")
        assert section.locator("text=rollforward.count").first.is_visible()  # the validator's finding
        missed = section.locator("td.missed").first
        assert missed.is_visible()

        # The missed fact's gold value links to its printing in the gold pane, marked as missed.
        link = missed.locator("xpath=..").locator("a").first
        target = link.get_attribute("href").lstrip("#")
        link.click()
        mark = page.locator(f"[id='{target}']")
        assert mark.get_attribute("class") == "missed" and mark.is_visible()
        pane = mark.locator("xpath=ancestor::div[@class='pane']")
        top, bottom = pane.bounding_box()["y"], pane.bounding_box()["y"] + pane.bounding_box()["height"]
        assert top <= mark.bounding_box()["y"] <= bottom  # scrolled into view inside its pane
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "eval-report-drilldown.png"
        page.screenshot(path=str(shot))
        browser.close()
    assert shot.stat().st_size > 20_000
