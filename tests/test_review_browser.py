"""The review UI in a real browser (Debian's Chromium, headless, driven by Playwright) against the
real server (`extractor review` in a subprocess on 127.0.0.1): sign in, open an item seeded with
a roll-forward error, see the finding, correct the value, save, see the finding gone, accept,
and find the change in the item's audit log. The screenshot is kept in out/test-artifacts/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from queue import Empty, SimpleQueue

import pytest
from fixture_paths import ROOT
from review_seed import (
    GOOGL_GOLD,
    JUNK_PATH,
    MISSED_CONCEPT,
    MOVED_PATH,
    RIGHT,
    WRONG,
    WRONG_FIELD,
    seed_missed_number,
    seed_rollforward_error,
)
from test_eval_report_browser import ARTIFACTS, CHROMIUM, FLAGS, browser_or_skip

from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import ItemStatus, Queue
from extractor.schemas.facts import read_facts
from extractor.scoring import score
from extractor.suites import load_suite


def _serve(tmp_path, queue):
    """`extractor review` over `queue` on a port the system picks (--port 0: the command prints it once it
    listens there, so no other test can take it in between): (url, server process). A thread reads the
    server's output all along, so a full pipe never stops it."""
    server = subprocess.Popen(
        [sys.executable, "-m", "extractor.cli", "review", "--port", "0", "--root", str(ROOT)],
        env={**os.environ, "EXTRACTOR_QUEUE": str(queue.path), "EXTRACTOR_LOG_LEVEL": "warning", "COLUMNS": "200"},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: SimpleQueue[str] = SimpleQueue()

    def read() -> None:
        for line in server.stdout:
            lines.put(line)
        lines.put("")  # the output ended: the server did

    threading.Thread(target=read, daemon=True).start()
    said: list[str] = []
    deadline = time.monotonic() + 60
    while not (found := re.search(r"open http://127\.0\.0\.1:(\d+)/", said[-1] if said else "")):
        try:
            said.append(lines.get(timeout=max(0.0, deadline - time.monotonic())))
        except Empty:
            said.append("")
        if not said[-1]:
            server.kill()
            pytest.fail(f"the review server printed no address (exit {server.wait()}): {''.join(said)}")
    return f"http://127.0.0.1:{found[1]}", server


@pytest.fixture
def review_server(tmp_path):
    """`extractor review` over a fresh queue holding the seeded item; yields (url, queue, item id, token)."""
    queue = Queue(tmp_path / "queue.sqlite")
    item_id = seed_rollforward_error(queue)
    token = add_reviewer(queue, "alice")
    url, server = _serve(tmp_path, queue)
    yield url, queue, item_id, token
    server.terminate()
    server.wait(timeout=10)


def _sign_in(page, url: str, token: str) -> None:
    page.goto(url)
    assert page.url.startswith(f"{url}/login")  # every page needs a session
    page.fill("input[name=name]", "alice")
    page.fill("input[name=secret]", token)
    page.click("button[type=submit]")


def test_reviewer_corrects_a_rollforward_error_and_accepts(review_server):
    sync_api = browser_or_skip()
    url, queue, item_id, token = review_server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        failed_requests: list[str] = []
        page.on("requestfailed", lambda request: failed_requests.append(request.url))
        page.on("console", lambda message: failed_requests.append(message.text) if message.type == "error" else None)

        _sign_in(page, url, token)
        assert page.locator("#by-status").is_visible()
        assert page.locator("#by-rule >> text=rollforward.count").is_visible()  # the overview counts by rule

        page.click("#next-item")  # claims the next item: the seeded one
        assert page.url.endswith(f"/items/{item_id}")
        findings = page.locator("#findings")
        assert findings.locator("text=rollforward.count").is_visible()
        row = page.locator(f"tr.value-row[data-path='{WRONG_FIELD}']")
        assert "flagged" in row.get_attribute("class")  # grounding.readback blames it
        seeded = queue.get(item_id).extraction.validation.findings
        involving = sum(any(ref.path == WRONG_FIELD for ref in f.facts) for f in seeded)
        assert (
            row.locator("a.badge").count() == involving >= 3
        )  # a link to each finding it is in, none repeated in full
        assert (
            findings.locator("li").count() == len(seeded)
            and page.content().count("(flows:") == sum("(flows:" in f.message for f in seeded) >= 1
        )

        # Clicking the value's label scrolls its printed number into view in the source pane, marked.
        row.locator("a.goto").click()
        mark = page.locator(f"#{row.get_attribute('data-mark')}")
        assert mark.inner_text() == "101" and "active" in mark.get_attribute("class")
        pane = page.locator(".source-pane").bounding_box()
        box = mark.bounding_box()
        assert pane["y"] <= box["y"] <= pane["y"] + pane["height"]
        # ... and clicking a span in the source selects its value.
        page.locator("#source mark").first.click()
        assert "active" in page.locator("tr.value-row").first.get_attribute("class")

        # Keyboard: ? opens the help; j moves to the next value.
        page.keyboard.press("?")
        assert page.locator("#help").is_visible()
        page.keyboard.press("Escape")
        assert not page.locator("#help").is_visible()
        page.keyboard.press("j")
        assert "active" in page.locator("tr.value-row").nth(1).get_attribute("class")
        page.keyboard.press("k")
        assert "active" in page.locator("tr.value-row").first.get_attribute("class")

        value = row.locator("input.number")
        assert value.input_value() == str(WRONG)
        value.fill(str(RIGHT))
        page.click("#save")
        assert "1 fields changed" in page.locator(".notice").inner_text()
        assert not page.locator("#findings >> text=rollforward.count").is_visible()
        assert not page.locator("#findings >> text=grounding.readback").is_visible()
        assert page.locator("#item-version").inner_text() == "2"
        assert "flagged" not in page.locator(f"tr.value-row[data-path='{WRONG_FIELD}']").get_attribute("class")

        page.keyboard.press("a")  # focuses the accept reason; the item passes now, so none is needed
        page.click("#accept")
        assert page.locator("#item-status").inner_text() == "accepted"
        audit = page.locator("#audit")
        change = audit.locator("tr.corrected")
        assert change.locator("td.path").inner_text() == f"{WRONG_FIELD}.value"
        assert [change.locator("td").nth(i).inner_text() for i in (5, 6)] == [str(WRONG), str(RIGHT)]
        assert audit.locator("tr.accepted").is_visible()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "review-item-accepted.png"
        page.locator(f"tr.value-row[data-path='{WRONG_FIELD}']").scroll_into_view_if_needed()
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    assert shot.stat().st_size > 20_000
    assert not failed_requests, failed_requests  # every asset served locally, no script errors
    item = queue.get(item_id)
    assert item.status is ItemStatus.accepted and item.version == 3
    assert [(e.action, e.reviewer) for e in queue.audit(item_id)] == [
        ("enqueued", "system"),
        ("claimed", "alice"),
        ("corrected", "alice"),
        ("revalidated", "alice"),
        ("accepted", "alice"),
    ]


@pytest.fixture
def missed_number_server(tmp_path):
    """`extractor review` over a queue holding a real note with a missed number; yields (url, queue, item id, spans, token)."""
    queue = Queue(tmp_path / "queue.sqlite")
    item_id, spans = seed_missed_number(queue)
    token = add_reviewer(queue, "alice")
    url, server = _serve(tmp_path, queue)
    yield url, queue, item_id, spans, token
    server.terminate()
    server.wait(timeout=10)


SELECT_OFFSETS = """([start, end]) => {
  // select the document text from start to end in the source pane, as a reviewer's mouse would
  const holders = Array.from(document.querySelectorAll('#source [data-at]')).filter((e) => e.firstChild && e.firstChild.nodeType === 3);
  const holder = holders.find((e) => Number(e.dataset.at) <= start && end <= Number(e.dataset.at) + e.firstChild.length);
  const range = document.createRange();
  range.setStart(holder.firstChild, start - Number(holder.dataset.at));
  range.setEnd(holder.firstChild, end - Number(holder.dataset.at));
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return selection.toString();
}"""


def test_reviewer_adds_a_missed_number_deletes_and_repoints_then_exports_gold(missed_number_server, tmp_path):
    """Issue 19's review loop on a real note: the missed number is marked in the source pane and added
    from there, a wrong value deleted, a misplaced span re-pointed by selecting text; the findings
    update; the accepted item exports gold that holds the added fact as the filer's own XBRL does."""
    sync_api = browser_or_skip()
    url, queue, item_id, spans, token = missed_number_server
    missed, right = spans["missed"], spans["right"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        failed_requests: list[str] = []
        page.on("requestfailed", lambda request: failed_requests.append(request.url))
        page.on("console", lambda message: failed_requests.append(message.text) if message.type == "error" else None)
        _sign_in(page, url, token)
        page.click("#next-item")
        assert page.url.endswith(f"/items/{item_id}")

        # The source pane shows the RSU table as rows and columns; the missed number is marked apart from values.
        table = page.locator("#source table.src").first
        assert table.locator("tr").count() == 6 and table.locator("tr").nth(1).locator("td").count() == 3
        assert table.locator("tr").nth(1).locator("td").nth(1).inner_text() == "338"
        number = page.locator(f"#source mark.missed#x{missed[0]}")
        assert number.inner_text() == "633" and "value" not in number.get_attribute("class")
        # Only the values a finding blames are red: the misread year and the misplaced span, not their neighbours.
        assert "flagged" in page.locator(f"tr.value-row[data-path='{JUNK_PATH}']").get_attribute("class")
        assert "flagged" in page.locator(f"tr.value-row[data-path='{MOVED_PATH}']").get_attribute("class")
        assert "flagged" not in page.locator("tr.value-row[data-path='award_activity[0].rows[1].count']").get_attribute(
            "class"
        )
        assert page.locator("#findings li").count() == len(
            queue.get(item_id).extraction.validation.findings
        )  # each once
        # No pane header covers what it scrolls: a row scrolled to stays below its pane's header.
        page.locator(f"tr.value-row[data-path='{JUNK_PATH}'] a.goto").click()
        header = page.locator(".work-pane > h2").bounding_box()
        junk_row = page.locator(f"tr.value-row[data-path='{JUNK_PATH}']").bounding_box()
        assert junk_row["y"] >= header["y"] + header["height"] - 1

        # Add the missed number from the source pane.
        number.click()
        dialog = page.locator("#add-fact")
        assert dialog.is_visible() and page.locator("#add-printed").inner_text() == "633"
        assert page.locator("#add-instant").input_value() == "2024-12-31"  # the hint of the sentence
        page.fill("#add-concept", MISSED_CONCEPT)  # one of the schema's concepts (the datalist searches them)
        assert page.locator("#add-unit").input_value() == "shares"
        page.select_option("#add-scale", "6")  # "633 million"
        assert page.locator("#add-value").input_value() == "633000000"
        page.select_option("#add-award", "rsu")
        page.click("#add-confirm")
        assert not dialog.is_visible() and page.locator("#added tr.added-row").count() == 1

        # Delete the wrong value; re-point the misplaced one by selecting its number in the source.
        page.check(f"tr.value-row[data-path='{JUNK_PATH}'] td.del input")
        assert page.evaluate(SELECT_OFFSETS, list(right)) == "338"
        page.locator(f"tr.value-row[data-path='{MOVED_PATH}'] button.repoint").click()
        assert (
            page.locator(f"tr.value-row[data-path='{MOVED_PATH}'] input.span").input_value() == f"{right[0]}:{right[1]}"
        )

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-missed-number-before-save.png"), full_page=False)
        page.click("#save")
        notice = page.locator(".notice").inner_text()
        assert "3 fields changed" in notice and "grounding.readback" in notice and "consistency.conflict" in notice, (
            notice
        )
        findings = page.locator("#findings")
        assert not findings.locator("text=grounding.readback").is_visible()
        assert not findings.locator("text=consistency.conflict").is_visible()
        assert page.locator(f"#source mark.missed#x{missed[0]}").count() == 0  # no longer unexplained
        assert page.locator(f"#source mark.value#m{missed[0]}").count() == 1  # now a value's span
        assert page.locator(f"tr.value-row[data-path='{JUNK_PATH}']").count() == 0

        # Accept: any coverage finding left needs its own reason, which keeps the gold marked partial.
        for reason in page.locator("#accept-form input.finding-reason").all():
            reason.fill("numbers out of this test's scope")
        if page.locator("#findings li.error").count():
            page.fill("#accept-reason", "remaining errors reviewed")
        page.click("#accept")
        assert page.locator("#item-status").inner_text() == "accepted"
        audit = page.locator("#audit")
        assert audit.locator("tr.corrected").count() == 3 and audit.locator("tr.revalidated").count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "review-missed-number-added.png"
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    assert shot.stat().st_size > 20_000
    assert not failed_requests, failed_requests

    changes = {e.field: (e.before, e.after) for e in queue.audit(item_id) if e.action == "corrected"}
    added = next(field for field in changes if field.startswith("line_items["))
    assert MISSED_CONCEPT in changes[added][1] and "633000000 shares at 2024-12-31" in changes[added][1]
    assert changes[f"{JUNK_PATH}.delete"][0].startswith("2022 USD") and changes[f"{JUNK_PATH}.delete"][1] == ""
    assert changes[f"{MOVED_PATH}.span"] == (
        f"{spans['wrong'][0]}:{spans['wrong'][1]} '299'",
        f"{right[0]}:{right[1]} '338'",
    )

    suite = tmp_path / "reviewed"
    exported = subprocess.run(
        [sys.executable, "-m", "extractor.cli", "queue", "export-gold", str(suite), "--root", str(ROOT)],
        env={**os.environ, "EXTRACTOR_QUEUE": str(queue.path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    (document,) = load_suite(suite).documents
    gold = read_facts(document.gold)
    assert not any(f.value == 2022 for f in gold)  # the deleted junk is no gold
    filer = read_facts(GOOGL_GOLD)  # Alphabet's own XBRL for the note
    scored = score(gold, [f for f in filer if f.concept == MISSED_CONCEPT])
    assert scored.correct == 1 and scored.right[0][0].source.text == "633"  # the added fact is the filer's fact
