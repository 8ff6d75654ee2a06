"""The review app over HTTP (Starlette's test client, the real app): sign-in, CSRF, path
confinement, stale saves between two reviewers, refused edits, and what every page sends."""

from __future__ import annotations

import re

import lxml.html
import pytest
from fixture_paths import ROOT, SEED_000
from review_seed import RIGHT, WRONG, WRONG_FIELD, seed_rollforward_error
from starlette.testclient import TestClient

from extractor.backends import rules
from extractor.loaders import load
from extractor.queue.edits import value_fields
from extractor.queue.feed import absolute_ref
from extractor.queue.reviewers import add_reviewer
from extractor.queue.store import EntryReason, ItemStatus, Queue
from extractor.review.app import create_app
from extractor.validator import validate

CSRF_RE = re.compile(r'name="csrf" value="([^"]+)"')
SERVER = "http://127.0.0.1:8000"  # the address `extractor review` serves by default


@pytest.fixture
def setup(tmp_path):
    return seeded_app(tmp_path)


def seeded_app(tmp_path):
    """A queue with one item (a roll-forward error), reviewers alice and bob with their tokens, and the app."""
    queue = Queue(tmp_path / "queue.sqlite")
    item_id = seed_rollforward_error(queue)
    tokens = {name: add_reviewer(queue, name) for name in ("alice", "bob")}
    return queue, item_id, tokens, create_app(queue, ROOT)


def signed_in(app, name: str, token: str, address: str = "testclient") -> tuple[TestClient, str]:
    """A client (at `address`) with a session, and the session's CSRF token."""
    client = TestClient(app, base_url=SERVER, follow_redirects=False, client=(address, 50000))
    login = client.get("/login")
    answer = client.post(
        "/login", data={"csrf": CSRF_RE.search(login.text).group(1), "name": name, "secret": token, "next": "/"}
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    return client, CSRF_RE.search(client.get("/").text).group(1)


def test_every_route_but_sign_in_needs_a_session(setup):
    queue, item_id, _, app = setup
    client = TestClient(app, base_url=SERVER, follow_redirects=False)
    for path in ("/", f"/items/{item_id}", "/?status=open"):
        answer = client.get(path)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login?next=")
        assert "002_59f0e0194afd947c" not in answer.text
    for path in (
        "/next",
        f"/items/{item_id}/claim",
        f"/items/{item_id}/save",
        f"/items/{item_id}/accept",
        f"/items/{item_id}/reject",
        f"/items/{item_id}/release",
        "/logout",
    ):
        assert client.post(path, data={"csrf": "x", "version": "1"}).status_code == 401
    assert client.get("/static/review.js").status_code == 303  # to sign-in, like every page
    assert client.get("/static/review.css").status_code == 200  # the sign-in page's stylesheet
    assert client.get("/login").status_code == 200
    assert client.cookies.get("review_session") is None
    forged = TestClient(app, base_url=SERVER, follow_redirects=False, cookies={"review_session": "forged"})
    assert forged.get("/").status_code == 303
    assert queue.get(item_id).version == 1 and queue.get(item_id).claimed_by is None


def test_sign_in_refuses_wrong_secrets_and_forged_forms(setup):
    _, _, tokens, app = setup
    client = TestClient(app, base_url=SERVER, follow_redirects=False)
    csrf = CSRF_RE.search(client.get("/login").text).group(1)
    for name, secret in (("alice", tokens["bob"]), ("alice", ""), ("mallory", tokens["alice"])):
        answer = client.post("/login", data={"csrf": csrf, "name": name, "secret": secret})
        assert answer.status_code == 401 and "Unknown reviewer or wrong token/password" in answer.text
        csrf = CSRF_RE.search(answer.text).group(1)
    assert client.cookies.get("review_session") is None
    fresh = TestClient(
        app, base_url=SERVER, follow_redirects=False
    )  # no sign-in cookie: a form posted from another site
    assert fresh.post("/login", data={"csrf": csrf, "name": "alice", "secret": tokens["alice"]}).status_code == 403
    client.get("/login")
    outside = client.post(
        "/login",
        data={
            "csrf": CSRF_RE.search(client.get("/login").text).group(1),
            "name": "alice",
            "secret": tokens["alice"],
            "next": "//evil.example/",
        },
    )
    assert outside.headers["location"] == "/"  # no redirect off the server


def test_forms_without_the_right_csrf_token_are_refused(setup):
    queue, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    assert client.post(f"/items/{item_id}/claim", data={"csrf": csrf}).status_code == 303
    change = {"version": "1", f"{WRONG_FIELD}.value": str(RIGHT)}
    for form in (change, {**change, "csrf": ""}, {**change, "csrf": csrf[:-1] + "x"}):
        answer = client.post(f"/items/{item_id}/save", data=form)
        assert answer.status_code == 403 and "CSRF" in answer.text
    bob, bob_csrf = signed_in(app, "bob", tokens["bob"])
    assert (
        client.post(f"/items/{item_id}/save", data={**change, "csrf": bob_csrf}).status_code == 403
    )  # another session's
    assert queue.get(item_id).version == 1
    assert client.post(f"/items/{item_id}/save", data={**change, "csrf": csrf}).status_code == 303
    assert queue.get(item_id).version == 2


def test_document_paths_cannot_escape_the_root(setup, tmp_path):
    queue, item_id, tokens, app = setup
    secret = tmp_path / "secret.txt"
    secret.write_text("SALARY TABLE 123,456")
    extraction = queue.get(item_id).extraction
    client, csrf = signed_in(app, "alice", tokens["alice"])
    for number, ref in enumerate(("../../../../../../etc/passwd", str(secret), "/etc/passwd")):
        moved = extraction.model_copy(update={"document_sha256": f"{number}" * 64})
        escaped = queue.add(moved, ref, EntryReason.validation, "test")
        assert client.post(f"/items/{escaped}/claim", data={"csrf": csrf}).status_code == 303
        page = client.get(f"/items/{escaped}")
        assert page.status_code == 200 and "You hold this item" in page.text
        assert "outside the review root" in page.text and "root:" not in page.text and "SALARY" not in page.text
        assert "<fieldset disabled>" in page.text  # held, yet not editable: nothing to check corrections against
        save = client.post(f"/items/{escaped}/save", data={"csrf": csrf, "version": "1", f"{WRONG_FIELD}.value": "1"})
        assert save.status_code == 409 and "outside the review root" in save.text and queue.get(escaped).version == 1
        accept = client.post(f"/items/{escaped}/accept", data={"csrf": csrf, "version": "1", "reason": "looks fine"})
        assert (
            accept.status_code == 409
            and "not accepted" in accept.text
            and queue.get(escaped).status is ItemStatus.claimed
        )
    for probe in (
        "/static/..%2F..%2F..%2Fetc%2Fpasswd",
        "/static/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/static/app.py",
        "/static/",
    ):
        answer = client.get(probe)
        assert answer.status_code == 404 and "root:" not in answer.text


def test_a_stale_save_between_two_reviewers_is_refused_with_a_clear_message(setup, tmp_path):
    queue, item_id, tokens, app = setup
    alice, alice_csrf = signed_in(app, "alice", tokens["alice"])
    bob, bob_csrf = signed_in(app, "bob", tokens["bob"])
    assert 'name="version" value="1"' in bob.get(f"/items/{item_id}").text  # bob opens version 1, read only
    assert alice.post("/next", data={"csrf": alice_csrf}).headers["location"] == f"/items/{item_id}"
    held = bob.get(f"/items/{item_id}")
    assert "Claimed by <strong>alice</strong>" in held.text
    refused = bob.post(f"/items/{item_id}/save", data={"csrf": bob_csrf, "version": "1", f"{WRONG_FIELD}.value": "1"})
    assert refused.status_code == 409 and "claimed by alice" in refused.text
    saved = alice.post(
        f"/items/{item_id}/save", data={"csrf": alice_csrf, "version": "1", f"{WRONG_FIELD}.value": str(RIGHT)}
    )
    assert saved.status_code == 303
    assert "1 fields changed, 4 findings resolved, 0 new" in alice.get(saved.headers["location"]).text
    assert alice.post(f"/items/{item_id}/release", data={"csrf": alice_csrf}).status_code == 303
    assert bob.post(f"/items/{item_id}/claim", data={"csrf": bob_csrf}).status_code == 303
    stale = bob.post(
        f"/items/{item_id}/save", data={"csrf": bob_csrf, "version": "1", f"{WRONG_FIELD}.value": str(WRONG)}
    )
    assert stale.status_code == 409
    assert "changed by alice" in stale.text and "(version 2) after you opened version 1" in stale.text
    assert queue.get(item_id).extraction.note.award_activity[2].rows[2].count.value == RIGHT
    stale_accept = bob.post(f"/items/{item_id}/accept", data={"csrf": bob_csrf, "version": "1", "reason": ""})
    assert stale_accept.status_code == 409 and queue.get(item_id).status is ItemStatus.corrected


def test_bad_corrections_and_reasonless_rejections_are_refused(setup):
    queue, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    bad = client.post(
        f"/items/{item_id}/save",
        data={
            "csrf": csrf,
            "version": "1",
            f"{WRONG_FIELD}.value": "1O1000",
            f"{WRONG_FIELD}.unit": "<script>alert(1)</script>",
        },
    )
    assert bad.status_code == 422 and "&#39;1O1000&#39; is not a number" in bad.text
    assert "<script>alert(1)" not in bad.text  # echoed input is escaped
    nothing = client.post(
        f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", f"{WRONG_FIELD}.value": str(WRONG)}
    )
    assert nothing.status_code == 422 and "nothing changed" in nothing.text
    reject = client.post(f"/items/{item_id}/reject", data={"csrf": csrf, "version": "1", "reason": ""})
    assert reject.status_code == 422 and "a reason is needed when rejecting" in reject.text
    accept = client.post(f"/items/{item_id}/accept", data={"csrf": csrf, "version": "1", "reason": ""})
    assert accept.status_code == 422 and "accepting with 3 error findings left" in accept.text
    assert queue.get(item_id).status is ItemStatus.claimed and queue.get(item_id).version == 1
    done = client.post(f"/items/{item_id}/reject", data={"csrf": csrf, "version": "1", "reason": "not the note"})
    assert done.status_code == 303 and queue.get(item_id).status is ItemStatus.rejected
    assert client.post("/next", data={"csrf": csrf}).headers["location"] == "/?notice=empty"


def test_pages_forbid_outside_scripts_and_framing_and_show_counts(setup):
    _, item_id, tokens, app = setup
    client, _ = signed_in(app, "alice", tokens["alice"])
    overview = client.get("/")
    assert "default-src 'none'" in overview.headers["content-security-policy"]
    assert overview.headers["x-frame-options"] == "DENY" and overview.headers["cache-control"] == "no-store"
    assert re.search(r"rollforward\.count</a></th><td class=\"num\">1<", overview.text)  # open items by rule
    page = client.get(f"/items/{item_id}").text
    assert "http://" not in page and "https://" not in page and "<script>" not in page  # one local script file only
    assert (
        page.count('<mark id="m') >= 60 and 'class="value flagged"' in page
    )  # every value's span, the wrong one flagged
    assert client.get("/items/999").status_code == 404
    assert client.get("/items/abc").status_code == 404 and "not found" in client.get("/items/abc").text
    assert client.get("/static/review.js").headers["content-type"].startswith("text/javascript")


def _queued(tmp_path, path):
    """A queue holding the validated rules extraction of one file: (queue, item id, document, extraction)."""
    queue = Queue(tmp_path / "queue.sqlite")
    document = load(path)
    extraction = rules.extract(document)
    extraction.validation = validate(extraction, document)
    return queue, queue.add(extraction, absolute_ref(str(path)), EntryReason.qa_sample, "test"), document, extraction


def test_a_long_note_saves_with_its_whole_form(tmp_path):
    """Seed 000 has over 200 values: its edit form sends over 1,000 fields, all of them posted back."""
    queue, item_id, _, extraction = _queued(tmp_path, SEED_000)
    client, csrf = signed_in(create_app(queue, ROOT), "alice", add_reviewer(queue, "alice"))
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    page = lxml.html.fromstring(client.get(f"/items/{item_id}").text)
    form = dict(page.get_element_by_id("edit").form_values())  # every field the browser would post
    first = value_fields(extraction.note)[0].path
    form[f"{first}.value"] = "1"
    assert len(form) > 1000
    saved = client.post(f"/items/{item_id}/save", data=form)
    assert saved.status_code == 303, saved.text[:300]
    assert [e.field for e in queue.audit(item_id) if e.action == "corrected"] == [f"{first}.value"]


def test_a_value_placed_by_a_fuzzy_quote_is_listed_first_and_marked(tmp_path):
    """An LLM value whose quote matched only loosely is the first row, with a badge saying how it was placed."""
    queue = Queue(tmp_path / "queue.sqlite")
    document = load(SEED_000)
    extraction = rules.extract(document)
    last = value_fields(extraction.note)[-1]
    last.amount.source.alignment = "fuzzy"
    extraction.validation = validate(extraction, document)
    item_id = queue.add(extraction, absolute_ref(str(SEED_000)), EntryReason.qa_sample, "test")
    client, _ = signed_in(create_app(queue, ROOT), "alice", add_reviewer(queue, "alice"))
    page = lxml.html.fromstring(client.get(f"/items/{item_id}").text)
    rows = [row for row in page.iter("tr") if "value-row" in row.classes]
    assert rows[0].get("data-path") == last.path and rows[0].get("id") == "row-1" and "shaky" in rows[0].classes
    assert [badge.text_content() for badge in rows[0].iter("span") if badge.classes >= {"badge", "shaky"}] == ["fuzzy"]
    assert not any("shaky" in row.classes for row in rows[1:])
    assert page.get_element_by_id(rows[0].get("data-mark")).classes >= {"value", "shaky"}


def test_guessing_a_token_is_refused_after_ten_failures(setup):
    _, _, tokens, app = setup
    client = TestClient(app, base_url=SERVER, follow_redirects=False)
    for _ in range(10):
        csrf = CSRF_RE.search(client.get("/login").text).group(1)
        assert client.post("/login", data={"csrf": csrf, "name": "alice", "secret": "guess"}).status_code == 401
    csrf = CSRF_RE.search(client.get("/login").text).group(1)
    refused = client.post("/login", data={"csrf": csrf, "name": "alice", "secret": tokens["alice"]})
    assert refused.status_code == 429 and "too many failed sign-ins" in refused.text
    signed_in(app, "bob", tokens["bob"], "198.51.100.5")  # other names at other addresses are not held up


def test_malformed_forms_get_clear_refusals_not_server_errors(setup):
    queue, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    assert client.post(f"/items/{item_id}/save", data={"csrf": "é", "version": "1"}).status_code == 403
    odd = client.post(f"/items/{item_id}/accept", data={"csrf": csrf, "version": "²", "reason": "x"})
    assert odd.status_code == 422 and "the form has no version" in odd.text
    huge = client.post(
        f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", f"{WRONG_FIELD}.value": "1e1000000"}
    )
    assert huge.status_code == 422 and "out of range" in huge.text
    assert client.get(f"/items/{item_id}?notice=saved&changed=²").status_code == 200
    assert queue.get(item_id).version == 1


def test_an_item_from_a_whole_filing_names_the_note_read(tmp_path):
    """A whole 10-K's item says which note was read and where: a reviewer must know what was not read."""
    queue, item_id, document, _ = _queued(tmp_path, ROOT / "tests" / "fixtures" / "whole" / "meta-10k-2024.txt")
    client, _ = signed_in(create_app(queue, ROOT), "alice", add_reviewer(queue, "alice"))
    line = lxml.html.fromstring(client.get(f"/items/{item_id}").text).get_element_by_id("section-read").text_content()
    assert "Note\xa013. Stockholders' Equity" in line
    assert f"characters {document.note.start:,}–{document.note.end:,} of the document" in line
