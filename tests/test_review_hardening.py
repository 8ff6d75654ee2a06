"""The review server under abuse (issue 22, points 11-16 and the save's time bound): what a hostile
or broken client sends is refused early, with the security headers, and cannot exhaust the server.

Concurrency and body sizes are checked deterministically: requests go straight to the ASGI app on
one event loop, with a verifier that blocks until released and bodies that count what was read.
"""

from __future__ import annotations

from datetime import date

import pytest
import uvicorn
from starlette.testclient import TestClient
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.cli import app as cli
from extractor.llm.config import ConfigError
from extractor.loaders import load
from extractor.queue.edits import apply_edits
from extractor.queue.settings import resolve_queue_settings
from extractor.review.app import create_app
from extractor.validator import validate
from fixture_paths import ROOT, SEED_002
from test_review_app import SERVER, setup, signed_in  # noqa: F401 - setup is a fixture

HEADERS = ("content-security-policy", "x-frame-options", "x-content-type-options", "cache-control")
WHOLE_CALENDAR = {"period.instant": "", "period.start": "0001-01-01", "period.end": "9999-12-31"}
UNRECOGNIZED = "unrecognized_cost[0].amount"  # a fact outside any roll-forward: checked by plausibility alone


def secured(answer) -> bool:
    return all(name in answer.headers for name in HEADERS)


# 16: no 500s from odd input, and every error page carries the security headers ----------------


def test_item_numbers_beyond_sqlite_integers_are_not_found(setup):
    _, _, tokens, app = setup
    client, _ = signed_in(app, "alice", tokens["alice"])
    for number in ("99999999999999999999999", str(2**63), "0", "-1"):
        answer = client.get(f"/items/{number}")
        assert answer.status_code == 404 and "not found" in answer.text and secured(answer)
    assert client.post("/items/99999999999999999999999/claim", data={"csrf": "x"}).status_code == 404


def test_a_period_over_the_whole_calendar_is_a_finding_not_a_crash(setup):
    queue, item_id, tokens, app = setup
    document = load(SEED_002)
    extraction = rules.extract(document)
    corrected, _ = apply_edits(extraction, {f"{UNRECOGNIZED}.{part}": value for part, value in WHOLE_CALENDAR.items()})
    dates = [f for f in validate(corrected, document).findings if f.rule == "plausibility.dates"]
    assert any("9999-12-31" in f.message for f in dates)
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    form = {"csrf": csrf, "version": "1", **{f"{UNRECOGNIZED}.{part}": value for part, value in WHOLE_CALENDAR.items()}}
    saved = client.post(f"/items/{item_id}/save", data=form)
    assert saved.status_code == 303 and queue.get(item_id).version == 2
    assert queue.get(item_id).extraction.note.unrecognized_cost[0].amount.period.end == date(9999, 12, 31)


def test_server_errors_carry_the_security_headers_and_no_details(setup, monkeypatch):
    queue, _, tokens, app = setup
    client, _ = signed_in(app, "alice", tokens["alice"])

    def broken() -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(queue, "counts", broken)
    answer = TestClient(app, base_url=SERVER, raise_server_exceptions=False, cookies=client.cookies).get("/")
    assert answer.status_code == 500 and secured(answer)
    assert "secret internals" not in answer.text and "server error" in answer.text


# 13: only the configured host names are answered ---------------------------------------------


def test_requests_naming_another_host_are_refused(setup):
    queue, item_id, tokens, app = setup
    client, _ = signed_in(app, "alice", tokens["alice"])
    for host in ("evil.example", "127.0.0.1.evil.example", "evil.example:8000"):
        answer = client.get(f"/items/{item_id}/", headers={"host": host})  # was a redirect to http://evil.example/items/1
        assert answer.status_code == 400 and "location" not in answer.headers and secured(answer)
        assert client.get("/login", headers={"host": host}).status_code == 400  # DNS rebinding: the page is not served
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST"):
        assert client.get("/", headers={"host": host}).status_code == 200
    named = TestClient(create_app(queue, ROOT, hosts=["review.example.org"]), base_url="http://review.example.org")
    assert named.get("/login").status_code == 200 and named.get("/login", headers={"host": "evil.example"}).status_code == 400


def test_review_on_every_address_needs_the_host_names_it_serves(tmp_path, monkeypatch):
    served: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    env = {"EXTRACTOR_QUEUE": str(tmp_path / "queue.sqlite")}
    refused = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0"], env=env)
    assert refused.exit_code == 2 and "--allowed-host" in refused.output and not served
    started = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", "--allowed-host", "review.example.org"], env=env)
    assert started.exit_code == 0, started.output
    client = TestClient(served["app"], base_url="http://review.example.org")
    assert client.get("/login").status_code == 200 and client.get("/login", headers={"host": "evil.example"}).status_code == 400
    assert TestClient(served["app"], base_url="http://localhost:8000").get("/login").status_code == 200
    with pytest.raises(ConfigError, match="name only"):
        resolve_queue_settings({"hosts": ["https://review.example.org:8443"]}, None, {})
