"""The review server under abuse (issue 22, points 11-16 and the save's time bound): what a hostile
or broken client sends is refused early, with the security headers, and cannot exhaust the server.

Concurrency and body sizes are checked deterministically: requests go straight to the ASGI app on
one event loop, with a verifier that blocks until released and bodies that count what was read.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterable
from datetime import date

import pytest
import uvicorn
from fixture_paths import ROOT, SEED_002
from review_seed import RIGHT, WRONG_FIELD
from starlette.testclient import TestClient
from test_review_app import CSRF_RE, SERVER, seeded_app, signed_in
from typer.testing import CliRunner

from extractor.backends import rules
from extractor.cli import app as cli
from extractor.llm.config import ConfigError
from extractor.loaders import load
from extractor.queue import reviewers
from extractor.queue.edits import apply_edits, value_fields
from extractor.queue.reviewers import add_reviewer
from extractor.queue.settings import resolve_queue_settings
from extractor.review import app as review
from extractor.review.app import create_app
from extractor.validator import validate


@pytest.fixture
def setup(tmp_path):
    return seeded_app(tmp_path)


HEADERS = ("content-security-policy", "x-frame-options", "x-content-type-options", "cache-control")
WHOLE_CALENDAR = {"period.instant": "", "period.start": "0001-01-01", "period.end": "9999-12-31"}
UNRECOGNIZED = "unrecognized_cost[0].amount"  # a fact outside any roll-forward: checked by plausibility alone


def secured(answer) -> bool:
    return all(name in answer.headers for name in HEADERS)


def asgi_post(app, path: str, chunks: Iterable[bytes], headers: dict[str, str]) -> tuple[int, bytes, int]:
    """POST straight to the ASGI app as a server would, handing it the body one chunk per receive():
    the answer's status and body, and how many body bytes the app took."""
    return asyncio.run(posting(app, path, chunks, headers))


async def posting(
    app, path: str, chunks: Iterable[bytes], headers: dict[str, str], client: tuple[str, int] = ("203.0.113.7", 40000)
) -> tuple[int, bytes, int]:
    """asgi_post on the running event loop: many at once share one app, as under a real server."""
    body, taken, answer = iter(chunks), 0, {"status": 0, "body": b""}

    async def receive() -> dict:
        nonlocal taken
        chunk = next(body, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        taken += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "client": client,
        "server": ("127.0.0.1", 8000),
        "headers": [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1:8000", **headers}.items()],
    }
    await app(scope, receive, send)
    return answer["status"], answer["body"], taken


FORM = {"content-type": "application/x-www-form-urlencoded"}
LOGIN = {**FORM, "cookie": "review_login_csrf=x"}  # the sign-in form's double-submit cookie, as the page sets it
CHUNK = 16 * 1024


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
        answer = client.get(
            f"/items/{item_id}/", headers={"host": host}
        )  # was a redirect to http://evil.example/items/1
        assert answer.status_code == 400 and "location" not in answer.headers and secured(answer)
        assert client.get("/login", headers={"host": host}).status_code == 400  # DNS rebinding: the page is not served
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST"):
        assert client.get("/", headers={"host": host}).status_code == 200
    named = TestClient(create_app(queue, ROOT, hosts=["review.example.org"]), base_url="http://review.example.org")
    assert (
        named.get("/login").status_code == 200
        and named.get("/login", headers={"host": "evil.example"}).status_code == 400
    )


def queue_env(tmp_path) -> dict[str, str]:
    return {"EXTRACTOR_QUEUE": str(tmp_path / "queue.sqlite")}


@pytest.fixture
def served(monkeypatch) -> dict:
    """What `extractor review` would serve: uvicorn's server is not started; its app and socket are kept."""
    seen: dict = {}

    def run(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        seen.update(app=server.config.app, address=sockets[0].getsockname(), family=sockets[0].family)
        with socket.create_connection(sockets[0].getsockname()[:2], timeout=5):  # listening before it is served
            pass
        for opened in sockets:
            opened.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return seen


def test_review_on_every_address_needs_the_host_names_it_serves(tmp_path, served):
    env = queue_env(tmp_path)
    refused = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", "--port", "0"], env=env)
    assert refused.exit_code == 2 and "--allowed-host" in refused.output and not served
    options = ["--allowed-host", "review.example.org", "--max-save-mb", "0.5", "--save-seconds", "5", "--port", "0"]
    started = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", *options], env=env)
    assert started.exit_code == 0, started.output
    host, port = served["address"]
    assert host == "0.0.0.0" and port > 0 and f"open http://127.0.0.1:{port}/" in started.output
    for length, status in ((2**19 + 1, 413), (2**19, 401)):  # 401: within the cap, and no session
        assert asgi_post(served["app"], "/items/1/save", [b"x"], {**FORM, "content-length": str(length)})[0] == status
    client = TestClient(served["app"], base_url="http://review.example.org")
    assert (
        client.get("/login").status_code == 200
        and client.get("/login", headers={"host": "evil.example"}).status_code == 400
    )
    assert TestClient(served["app"], base_url="http://localhost:8000").get("/login").status_code == 200
    with pytest.raises(ConfigError, match="name only"):
        resolve_queue_settings({"hosts": ["https://review.example.org:8443"]}, None, {})


def test_a_port_in_use_is_said_before_anything_is_served(tmp_path, served):
    """The port is bound before the address is printed: one another server holds is refused, exit 2."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        refused = CliRunner().invoke(cli, ["review", "--port", str(port)], env=queue_env(tmp_path))
    assert refused.exit_code == 2 and not served
    assert f"127.0.0.1 port {port} is in use (another server?)" in " ".join(refused.output.split())
    assert "--port 0" in refused.output and "open http" not in refused.output


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_an_ipv6_address_is_served_and_printed_in_brackets(tmp_path, served):
    started = CliRunner().invoke(cli, ["review", "--host", "::1", "--port", "0"], env=queue_env(tmp_path))
    assert started.exit_code == 0, started.output
    host, port = served["address"][:2]
    assert served["family"] == socket.AF_INET6 and host == "::1"
    assert f"open http://[::1]:{port}/" in started.output


@pytest.mark.parametrize(
    "host, says",
    [
        ("192.0.2.1", "cannot listen on 192.0.2.1 port 0"),  # TEST-NET-1: no machine's own address
        ("no-such-host.invalid", "--host no-such-host.invalid does not resolve"),
    ],
)
def test_a_host_that_is_not_this_machines_is_said_to_be_so(tmp_path, served, host, says):
    refused = CliRunner().invoke(cli, ["review", "--host", host, "--port", "0"], env=queue_env(tmp_path))
    said = " ".join(refused.output.split())
    assert refused.exit_code == 2 and not served and says in said, said
    assert "choose another with --port" not in said  # a host's fault, not the port's


# 14: bodies are capped per route before anything parses them ----------------------------------


def endless(field: bytes = b"name=") -> Iterable[bytes]:
    """A form field that never ends (far longer than any cap, were it read to the end)."""
    yield field
    for _ in range(10_000):
        yield b"a" * CHUNK


def test_a_body_over_its_routes_cap_is_refused_without_being_read(setup):
    queue, item_id, tokens, _ = setup
    app = create_app(queue, ROOT, save_bytes=200_000)
    status, text, taken = asgi_post(app, "/login", endless(), LOGIN)
    assert status == 413 and review.FORM_BYTES < taken <= review.FORM_BYTES + CHUNK and b"too large" in text
    declared = {**LOGIN, "content-length": str(review.FORM_BYTES + 1)}
    assert asgi_post(app, "/login", endless(), declared)[::2] == (413, 0)  # said up front: not one byte read
    client, csrf = signed_in(app, "alice", tokens["alice"])
    session = {**FORM, "cookie": f"review_session={client.cookies['review_session']}"}
    status, _, taken = asgi_post(
        app, f"/items/{item_id}/save", endless(f"csrf={csrf}&version=1&x.value=".encode()), session
    )
    assert status == 413 and 200_000 < taken <= 200_000 + CHUNK
    status, _, taken = asgi_post(app, f"/items/{item_id}/reject", endless(f"csrf={csrf}&reason=".encode()), session)
    assert status == 413 and review.FORM_BYTES < taken <= review.FORM_BYTES + CHUNK
    under = f"csrf={csrf}&version=1&{UNRECOGNIZED}.value=1".encode().ljust(
        199_000, b"&"
    )  # a save under the cap is read and saved
    assert asgi_post(app, f"/items/{item_id}/save", [under], session)[0] == 303 and queue.get(item_id).version == 2
    assert asgi_post(app, "/login", [b"name=alice&secret=x&csrf=x"], FORM)[::2] == (
        403,
        0,
    )  # no sign-in cookie: refused unread


def test_bodies_that_are_no_urlencoded_form_are_refused_unread(setup):
    _, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    session = f"review_session={client.cookies['review_session']}"
    for kind in ("multipart/form-data; boundary=x", "application/json", "text/plain", ""):
        for path, cookie in (("/login", "review_login_csrf=x"), (f"/items/{item_id}/save", session)):
            assert asgi_post(app, path, endless(), {"content-type": kind, "cookie": cookie})[::2] == (415, 0)
    answer = client.post(f"/items/{item_id}/save", files={"csrf": (None, csrf)})
    assert answer.status_code == 415 and secured(answer) and "application/x-www-form-urlencoded" in answer.text


def test_refused_field_names_are_not_echoed_unbounded(setup):
    queue, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    one = client.post(f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", "nowhere.value": "1"})
    assert one.status_code == 422 and "nowhere.value: no such field" in one.text
    names = {f"{letter * 20_000}.value": "1" for letter in "abcdefghijklmnopqrst"}  # 400 KB of names that are no field
    many = client.post(f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", **names})
    assert many.status_code == 422 and "20 field names of over" in many.text and len(many.text) < len(one.text) + 200
    value = client.post(
        f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", f"{UNRECOGNIZED}.value": "x" * 400_000}
    )
    assert value.status_code == 422 and "is not a number" not in value.text and "characters left out" in value.text
    assert len(value.text) < len(one.text) + review.ERROR_CHARS + 200
    assert queue.get(item_id).version == 1


# 11: a sign-in attempt is counted before its secret is checked; few secrets are checked at once --


def test_concurrent_wrong_sign_ins_check_no_more_secrets_than_the_limit(setup, monkeypatch):
    _, _, _, app = setup
    release, lock = threading.Event(), threading.Lock()
    seen = {"checked": 0, "running": 0, "most": 0}

    def held_scrypt(secret: str, stored: str) -> bool:
        """A wrong secret whose check lasts until the test releases it: every attempt overlaps."""
        with lock:
            seen["checked"] += 1
            seen["running"] += 1
            seen["most"] = max(seen["most"], seen["running"])
        release.wait(timeout=60)
        with lock:
            seen["running"] -= 1
        return False

    monkeypatch.setattr(reviewers, "secret_matches", held_scrypt)

    async def forty_guesses() -> list[int]:
        guesses = [
            asyncio.create_task(posting(app, "/login", [b"csrf=x&name=alice&secret=guess"], LOGIN)) for _ in range(40)
        ]

        def settled() -> bool:
            return (
                sum(g.done() for g in guesses) == 40 - review.FAILURE_LIMIT and seen["running"] == review.SCRYPT_SLOTS
            )

        deadline = time.monotonic() + 10  # reached only when the limits do not hold: the asserts below then fail
        while not settled() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        release.set()
        return [status for status, _, _ in await asyncio.gather(*guesses)]

    statuses = asyncio.run(forty_guesses())
    assert seen["checked"] == review.FAILURE_LIMIT  # the other 30 were refused before any scrypt ran
    assert seen["most"] == review.SCRYPT_SLOTS  # and the checked ones waited their turn
    assert sorted(statuses) == [401] * review.FAILURE_LIMIT + [429] * (40 - review.FAILURE_LIMIT)


# 12: limits per name and per address; a locked-out name still takes its generated token ---------


def sign_in_from(app, address: str, name: str, secret: str):
    """One sign-in from a client at `address`, as its browser posts it."""
    client = TestClient(app, base_url=SERVER, follow_redirects=False, client=(address, 50000))
    csrf = CSRF_RE.search(client.get("/login").text).group(1)
    return client.post("/login", data={"csrf": csrf, "name": name, "secret": secret})


def lock_out(app, name: str) -> None:
    """FAILURE_LIMIT wrong guesses at `name`, each from another address, as a botnet would."""
    for n in range(review.FAILURE_LIMIT):
        assert sign_in_from(app, f"203.0.113.{n}", name, "guess").status_code == 401


def test_a_locked_out_reviewer_still_signs_in_with_their_generated_token(setup):
    queue, _, _, app = setup
    carol = add_reviewer(queue, "carol")  # a generated token: 192 random bits, no guess will find it
    add_reviewer(queue, "dave", "correct horse battery staple")  # a password could be guessed
    lock_out(app, "carol ")  # the same name as 'carol': spaces around a name are dropped at the door
    refused = sign_in_from(app, "198.51.100.1", "carol", "another guess")
    assert refused.status_code == 429 and "for this name" in refused.text and "generated token" in refused.text
    assert sign_in_from(app, "198.51.100.1", "carol", carol).status_code == 303
    lock_out(app, "dave")
    right = sign_in_from(app, "198.51.100.2", "dave", "correct horse battery staple")
    assert (
        right.status_code == 429 and "for this name" in right.text
    )  # no password is taken from a locked name, right or wrong
    assert sign_in_from(app, "198.51.100.2", "dave", "wrong horse battery staple").status_code == 429


def test_failed_sign_ins_are_limited_per_address_as_well_as_per_name(setup, monkeypatch):
    _, _, tokens, app = setup
    for n in range(review.FAILURE_LIMIT):  # one wrong guess each at ten names: no name is locked
        assert sign_in_from(app, "203.0.113.99", f"nobody{n}", "guess").status_code == 401
    checked = []
    monkeypatch.setattr(reviewers, "secret_matches", lambda secret, stored: checked.append(stored) or False)
    refused = sign_in_from(app, "203.0.113.99", "bob", tokens["bob"])
    assert refused.status_code == 429 and "from your address" in refused.text and not checked  # refused before scrypt
    monkeypatch.undo()
    assert sign_in_from(app, "198.51.100.3", "bob", tokens["bob"]).status_code == 303


def test_names_are_normalised_once_and_impossible_ones_cost_no_scrypt(setup, monkeypatch):
    _, _, tokens, app = setup
    checked = []
    real = reviewers.secret_matches
    monkeypatch.setattr(
        reviewers, "secret_matches", lambda secret, stored: checked.append(stored) or real(secret, stored)
    )
    client = TestClient(app, base_url=SERVER, follow_redirects=False)
    csrf = CSRF_RE.search(client.get("/login").text).group(1)
    assert client.post("/login", data={"csrf": csrf, "name": " alice ", "secret": tokens["alice"]}).status_code == 303
    assert "signed in as <strong>alice</strong>" in client.get("/").text
    for name in ("a" * 1000, "alice\x00", "al ice", "", "../alice", "alice\u200b"):
        assert sign_in_from(app, "198.51.100.4", name, tokens["alice"]).status_code == 401
    assert len(checked) == 1  # only the real name's secret was checked


# 15: a save's edits apply to the version it writes over ------------------------------------------


def test_a_save_naming_a_version_it_never_saw_cannot_overwrite_a_newer_one(setup, monkeypatch):
    queue, item_id, tokens, app = setup
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    read = queue.get

    def then_another_tab_saves(wanted: int):
        """The save reads its snapshot (version 1); alice's other tab saves version 2 right after."""
        snapshot = read(wanted)
        monkeypatch.setattr(queue, "get", read)
        fixed, changes = apply_edits(snapshot.extraction, {f"{WRONG_FIELD}.value": str(RIGHT)})
        fixed.validation = validate(fixed, load(SEED_002))
        queue.save(item_id, "alice", 1, fixed, changes)
        return snapshot

    monkeypatch.setattr(queue, "get", then_another_tab_saves)
    form = {"csrf": csrf, "version": "2", f"{UNRECOGNIZED}.value": "1"}  # version 2: one this page never showed
    answer = client.post(f"/items/{item_id}/save", data=form)
    assert answer.status_code == 409 and "not the version 2 the form names; nothing was saved" in answer.text
    stored = queue.get(item_id)
    assert (
        stored.version == 2 and stored.extraction.note.award_activity[2].rows[2].count.value == RIGHT
    )  # the other tab's fix kept


# 4: a save's re-validation is bounded in time -----------------------------------------------------


def test_a_save_whose_validation_never_ends_is_refused_in_bounded_time(setup, monkeypatch):
    queue, item_id, tokens, _ = setup
    app = create_app(queue, ROOT, save_seconds=1.0)  # the last save's real validation: 1 s, loaded machine or not
    client, csrf = signed_in(app, "alice", tokens["alice"])
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    release, started, lock = threading.Event(), [], threading.Lock()

    def endless(extraction, document):
        """A validation that runs until the test ends it (a pathological note, a validator bug)."""
        with lock:
            started.append(extraction)
        release.wait(timeout=60)
        return validate(extraction, document)

    monkeypatch.setattr(review, "validate", endless)
    for n in range(review.VALIDATORS + 1):  # each save waits 1 s, then is refused; the server answers meanwhile
        answer = client.post(
            f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", f"{UNRECOGNIZED}.value": str(n + 5)}
        )
        assert (
            answer.status_code == 503 and "not saved" in answer.text and "1 seconds" in answer.text and secured(answer)
        )
        assert client.get("/").status_code == 200
    assert len(started) == review.VALIDATORS  # overruns hold their threads: the last save never started one
    release.set()
    monkeypatch.undo()
    for thread in threading.enumerate():
        if thread.name == "review-validate":
            thread.join(timeout=60)
    assert queue.get(item_id).version == 1  # and none of them saved once it did end
    saved = client.post(f"/items/{item_id}/save", data={"csrf": csrf, "version": "1", f"{UNRECOGNIZED}.value": "7"})
    assert saved.status_code == 303 and queue.get(item_id).version == 2  # the slots came back


@pytest.mark.parametrize(
    "period",
    [
        WHOLE_CALENDAR,
        {"period.start": "", "period.end": "", "period.instant": "0001-01-01"},
        {"period.start": "", "period.end": "", "period.instant": "9999-12-31"},
    ],
)
def test_every_value_of_a_note_takes_a_period_at_the_ends_of_the_calendar_without_a_crash(period):
    document = load(SEED_002)
    extraction = rules.extract(document)
    for value in value_fields(extraction.note):  # roll-forward rows, balances and facts outside any relation
        corrected, _ = apply_edits(extraction, {f"{value.path}.{part}": given for part, given in period.items()})
        findings = validate(corrected, document).findings
        assert any(f.rule == "plausibility.dates" for f in findings), value.path
