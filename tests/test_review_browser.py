"""The review UI in a real browser (Debian's Chromium, headless, driven by Playwright) against the
real server (`extractor review` in a subprocess on 127.0.0.1): sign in, open an item seeded with
a roll-forward error, see the finding, correct the value, save, see the finding gone, accept,
and find the change in the item's audit log. The screenshot is kept in out/test-artifacts/."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from extractor.local_model import free_port
from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import ItemStatus, Queue
from fixture_paths import ROOT
from review_seed import RIGHT, WRONG, WRONG_FIELD, seed_rollforward_error
from test_eval_report_browser import ARTIFACTS, CHROMIUM, FLAGS, browser_or_skip


@pytest.fixture
def review_server(tmp_path):
    """`extractor review` over a fresh queue holding the seeded item; yields (url, queue, item id, token)."""
    queue = Queue(tmp_path / "queue.sqlite")
    item_id = seed_rollforward_error(queue)
    token = add_reviewer(queue, "alice")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "extractor.cli", "review", "--port", str(port), "--root", str(ROOT)],
        env={**os.environ, "EXTRACTOR_QUEUE": str(queue.path)}, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"the review server did not start: {server.communicate()[0]}")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}", queue, item_id, token
    server.terminate()
    server.wait(timeout=10)


def test_reviewer_corrects_a_rollforward_error_and_accepts(review_server):
    sync_api = browser_or_skip()
    url, queue, item_id, token = review_server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        failed_requests: list[str] = []
        page.on("requestfailed", lambda request: failed_requests.append(request.url))
        page.on("console", lambda message: failed_requests.append(message.text) if message.type == "error" else None)

        page.goto(url)
        assert page.url.startswith(f"{url}/login")  # every page needs a session
        page.fill("input[name=name]", "alice")
        page.fill("input[name=secret]", token)
        page.click("button[type=submit]")
        assert page.locator("#by-status").is_visible()
        assert page.locator("#by-rule >> text=rollforward.count").is_visible()  # the overview counts by rule

        page.click("#next-item")  # claims the next item: the seeded one
        assert page.url.endswith(f"/items/{item_id}")
        findings = page.locator("#findings")
        assert findings.locator("text=rollforward.count").is_visible()
        row = page.locator(f"tr.value-row[data-path='{WRONG_FIELD}']")
        assert "flagged" in row.get_attribute("class")
        assert row.locator(".row-finding >> text=rollforward.count").is_visible()  # the finding beside its value

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
        ("enqueued", "system"), ("claimed", "alice"), ("corrected", "alice"), ("accepted", "alice")]
