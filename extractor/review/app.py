"""The review web app: server-rendered pages over the queue; the browser only adds shortcuts.

Every route but sign-in needs a session; every form carries the session's CSRF token; pages
forbid framing and any script or style not served from here.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import date
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote, urlencode

import anyio
from fastapi import FastAPI, Request
from fastapi import Path as PathNumber
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, Headers, MutableHeaders
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from extractor.queue.corrections import save_correction
from extractor.queue.documents import DocumentError, item_document
from extractor.queue.edits import AWARD_TYPES, UNITS, EditError
from extractor.queue.facts import schema_concepts
from extractor.queue.reviewers import Session, session, sign_in, sign_in_name, sign_out
from extractor.queue.store import Conflict, Item, ItemStatus, Queue, QueueError, clock_time
from extractor.regex_cache import regex
from extractor.review.page import LINKS_SHOWN, item_view
from extractor.validator import validate

HERE = Path(__file__).parent
COOKIE = "review_session"
LOGIN_COOKIE = "review_login_csrf"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")  # always answered: a rebound DNS name never arrives as one of these
PUBLIC_ASSETS = {"review.css"}  # the sign-in page's stylesheet: no data in it
ASSETS = {"review.css": "text/css", "review.js": "text/javascript"}
LIST_LIMIT = 500
FORM_TYPE = "application/x-www-form-urlencoded"  # what every form here sends: no route takes files or JSON
FORM_BYTES = 64 * 1024  # sign-in, claim, accept or reject with a reason: a few hundred bytes
SAVE_BYTES = 4 * 2**20  # the edit form's default cap; the longest note in the fixtures sends 65 KB
SAVE_PATH = regex(r"/items/\d+/save")
FIELD_NAME_CHARS = 200  # the longest field name of any form is under 80 characters
SAVE_SECONDS = 20.0  # the default bound on a save's re-validation, which takes tens of milliseconds for a long note
VALIDATORS = 2  # re-validations running at once, overrunning ones included
ERROR_CHARS = 2000  # an error names what it refuses: a form of 500 KB field names must not make a page of megabytes
MAX_FIELDS = 100_000  # the edit form sends five fields per value; a long note has hundreds of values
FAILURE_LIMIT, FAILURE_WINDOW = 10, 600  # failed sign-ins per name, and per client address, per 10 minutes
SCRYPT_SLOTS = 2  # secrets checked at once: each scrypt takes 16 MiB and a core for tens of milliseconds
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
ItemId = Annotated[
    int, PathNumber(ge=1, le=2**63 - 1)
]  # SQLite's integers: a larger number is no item, not an OverflowError
NOTICES = {
    "empty": "Nothing left to review: every item is resolved or claimed by someone else.",
    "claimed": "Claimed: you hold this item; edit, save, then accept or reject.",
    "released": "Released: the item is open for anyone.",
    "accepted": "Accepted.",
    "rejected": "Rejected.",
}


class FailedSignIns:
    """Failed sign-ins per key (a name, or a client address) in this process over the last
    FAILURE_WINDOW: guessing is refused after a few tries. An attempt counts before its secret is checked (concurrent guesses cannot
    all pass the check first) and is taken back when it signs in."""

    def __init__(self) -> None:
        self._times: dict[str, list[float]] = {}

    def too_many(self, key: str) -> bool:
        recent = [t for t in self._times.pop(key, []) if t > time.monotonic() - FAILURE_WINDOW]
        if recent:
            self._times[key] = recent
        return len(recent) >= FAILURE_LIMIT

    def add(self, key: str) -> float:
        """Count an attempt now; its time takes it back (`forget`)."""
        if len(self._times) > 10_000:  # keys nobody tried for a while go; what is left is this window's attackers
            for stale in [k for k, times in self._times.items() if times[-1] <= time.monotonic() - FAILURE_WINDOW]:
                del self._times[stale]
        stamp = time.monotonic()
        self._times.setdefault(key, []).append(stamp)
        return stamp

    def forget(self, key: str, stamp: float) -> None:
        times = self._times.get(key, [])
        if stamp in times:
            times.remove(stamp)
        if not times:
            self._times.pop(key, None)


class SecurityHeaders:
    """Adds the security headers to every response the app sends, refusals by outer layers included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_secured)


# BodyTooLarge, TooSlow, NotSignedIn, BadCsrf steer this app's own responses and never leave it: not ExtractorErrors.
class BodyTooLarge(Exception):
    pass


class BodyCap:
    """Refuses a POST body that is not a urlencoded form (415) or is over its route's cap (413) before
    anything parses it: the declared length first, then the bytes as they arrive, so a body that
    never ends costs the cap and no more."""

    def __init__(self, app: ASGIApp, save_bytes: int) -> None:
        self.app = app
        self.save_bytes = save_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        cap = self.save_bytes if SAVE_PATH.fullmatch(scope["path"]) else FORM_BYTES
        headers = Headers(scope=scope)
        if headers.get("content-type", "").partition(";")[0].strip().lower() != FORM_TYPE:
            refusal = PlainTextResponse(f"refused: forms here are sent as {FORM_TYPE}", status_code=415)
            return await refusal(scope, receive, send)
        declared = headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > cap:
            return await _too_large(cap)(scope, receive, send)
        taken = 0

        async def capped() -> Message:
            nonlocal taken
            message = await receive()
            taken += len(message.get("body", b""))
            if taken > cap:
                raise BodyTooLarge()
            return message

        try:
            await self.app(scope, capped, send)
        except BodyTooLarge:
            await _too_large(cap)(scope, receive, send)


class TooSlow(Exception):
    pass


T = TypeVar("T")


class Bounded:
    """Runs a call in a thread of its own and waits at most `seconds` for it, a wait for a free
    thread included. Python cannot stop a thread: a call that overruns runs on, but holds one of
    VALIDATORS slots until it ends, so overruns cannot pile up; its thread is a daemon, so it does
    not keep a stopped server from exiting."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._slots = threading.BoundedSemaphore(VALIDATORS)

    def __call__(self, function: Callable[..., T], *args: Any) -> T:
        until = time.monotonic() + self.seconds
        if not self._slots.acquire(timeout=self.seconds):
            raise TooSlow()
        result: Future[T] = Future()

        def run() -> None:
            try:
                result.set_result(function(*args))
            except BaseException as error:
                result.set_exception(error)
            finally:
                self._slots.release()

        threading.Thread(target=run, name="review-validate", daemon=True).start()
        try:
            return result.result(timeout=max(0.0, until - time.monotonic()))
        except TimeoutError:
            raise TooSlow() from None


class NotSignedIn(Exception):
    pass


class BadCsrf(Exception):
    pass


def create_app(
    queue: Queue,
    root: Path,
    hosts: Sequence[str] = (),
    save_bytes: int = SAVE_BYTES,
    save_seconds: float = SAVE_SECONDS,
) -> FastAPI:
    """The app over `queue`, reading documents from below `root` only, answering requests whose
    Host header is a loopback name or one of `hosts` (any other gets 400: no page, no redirect),
    reading at most `save_bytes` of an edit form (FORM_BYTES of any other), and refusing a save
    whose re-validation takes over `save_seconds`."""
    app = FastAPI(title="Review queue", docs_url=None, redoc_url=None, openapi_url=None)
    by_name, by_address = FailedSignIns(), FailedSignIns()
    scrypts = anyio.CapacityLimiter(SCRYPT_SLOTS)
    validating = Bounded(save_seconds)
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.globals.update(
        when=clock_time,
        fmt=_number,
        grouped=_grouped,
        day=_day,
        units=UNITS,
        awards=AWARD_TYPES,
        concepts=schema_concepts(),
        links=LINKS_SHOWN,
    )

    app.add_middleware(BodyCap, save_bytes=save_bytes)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=[*LOCAL_HOSTS, *hosts], www_redirect=False)
    app.add_middleware(SecurityHeaders)  # added last: the outermost layer, so the refusals above carry the headers too

    @app.exception_handler(Exception)  # Starlette answers these outside every middleware: the headers go on here
    async def server_error(request: Request, _: Exception) -> Response:
        return PlainTextResponse(
            "server error: the server log has the details", status_code=500, headers=SECURITY_HEADERS
        )

    @app.exception_handler(NotSignedIn)
    async def to_sign_in(request: Request, _: NotSignedIn) -> Response:
        if request.method in ("GET", "HEAD"):
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(target)}", status_code=303)
        return PlainTextResponse("sign in first", status_code=401)

    @app.exception_handler(RequestValidationError)
    async def not_found(request: Request, _: RequestValidationError) -> Response:
        return PlainTextResponse("not found: item numbers are whole numbers from 1", status_code=404)

    @app.exception_handler(BadCsrf)
    async def csrf_refused(request: Request, _: BadCsrf) -> Response:
        return PlainTextResponse(
            "refused: the form's CSRF token is missing or wrong; reload the page and try again", status_code=403
        )

    def current(request: Request) -> Session:
        found = session(queue, request.cookies.get(COOKIE))
        if found is None:
            raise NotSignedIn()
        return found

    async def posted(request: Request) -> tuple[Session, FormData]:
        """The signed-in reviewer and the form, once its CSRF token matched."""
        who = current(request)
        form = await request.form(max_fields=MAX_FIELDS)
        token = form.get("csrf")
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), who.csrf.encode()):
            raise BadCsrf()
        return who, form

    def page(
        request: Request,
        name: str,
        who: Session | None,
        status_code: int = 200,
        error: str | None = None,
        **context: Any,
    ) -> HTMLResponse:
        notice = NOTICES.get(request.query_params.get("notice", ""))
        if request.query_params.get("notice") == "saved":
            notice = _saved_notice(request.query_params)
            account = next((e.note for e in reversed(context.get("audit", [])) if e.action == "revalidated"), None)
            notice += f" {account[:1].upper()}{account[1:]}." if account else ""
        base = {
            "reviewer": who.reviewer if who else None,
            "csrf": who.csrf if who else "",
            "notice": notice,
            "error": _clipped(error) if error else None,
        }
        return templates.TemplateResponse(request, name, base | context, status_code=status_code)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str = "/") -> Response:
        token = secrets.token_urlsafe(32)
        response = page(request, "login.html", None, login_csrf=token, next=_local(next))
        response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", max_age=3600)
        return response

    @app.post("/login")
    async def login(request: Request) -> Response:
        expected = request.cookies.get(LOGIN_COOKIE, "")
        if not expected:  # a form posted from elsewhere: refused before its body is read
            raise BadCsrf()
        form = await request.form()
        token = str(form.get("csrf", ""))
        if not secrets.compare_digest(token.encode(), expected.encode()):
            raise BadCsrf()
        name = sign_in_name(str(form.get("name", "")))
        address = request.client.host if request.client else ""
        if by_address.too_many(address):  # refused before any scrypt: what one client can make the server do
            return PlainTextResponse(
                f"too many failed sign-ins from your address; try again in {FAILURE_WINDOW // 60} minutes",
                status_code=429,
            )
        locked = name is not None and by_name.too_many(name)  # still checked: its generated token lets the reviewer in
        attempts = [
            (by_address, address, by_address.add(address))
        ]  # counted now, with nothing awaited since the checks
        cookie = None
        if name is not None:  # a name no reviewer can have costs no scrypt and is no key to count
            attempts.append((by_name, name, by_name.add(name)))
            # scrypt takes tens of milliseconds on purpose: in a thread, so other reviewers' pages do not wait
            cookie = await anyio.to_thread.run_sync(
                sign_in, queue, name, str(form.get("secret", "")), locked, limiter=scrypts
            )
        if cookie is None:
            if locked:
                return PlainTextResponse(
                    f"too many failed sign-ins for this name: for {FAILURE_WINDOW // 60} minutes only its "
                    "generated token signs in ('extractor queue add-reviewer NAME --replace' makes one)",
                    status_code=429,
                )
            fresh = secrets.token_urlsafe(32)
            refused = page(
                request,
                "login.html",
                None,
                401,
                login_csrf=fresh,
                next=_local(str(form.get("next", "/"))),
                error="Unknown reviewer or wrong token/password.",
            )
            refused.set_cookie(LOGIN_COOKIE, fresh, httponly=True, samesite="strict", max_age=3600)
            return refused
        for counts, key, stamp in attempts:
            counts.forget(key, stamp)
        response = RedirectResponse(_local(str(form.get("next", "/"))), status_code=303)
        response.set_cookie(COOKIE, cookie, httponly=True, samesite="strict", max_age=12 * 3600)
        response.delete_cookie(LOGIN_COOKIE)
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await posted(request)
        sign_out(queue, request.cookies.get(COOKIE, ""))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    @app.get("/static/{name}")
    def asset(request: Request, name: str) -> Response:
        if name not in ASSETS:  # a fixed list: no path from the URL ever reaches the file system
            return PlainTextResponse("not found", status_code=404)
        if name not in PUBLIC_ASSETS:
            current(request)
        return FileResponse(HERE / "static" / name, media_type=ASSETS[name])

    @app.get("/favicon.ico")
    def favicon() -> Response:  # browsers ask for it on every page: answer without a 404 in their log
        return Response(status_code=204)

    @app.get("/", response_class=HTMLResponse)
    def overview(request: Request, status: str | None = None, rule: str | None = None) -> Response:
        who = current(request)
        statuses = [ItemStatus(status)] if status in ItemStatus.__members__ else []
        items = queue.items(statuses, rule or None, limit=LIST_LIMIT + 1, brief=True)
        return page(
            request,
            "overview.html",
            who,
            counts=queue.counts(),
            rules=queue.rule_counts(),
            items=items[:LIST_LIMIT],
            more=len(items) > LIST_LIMIT,
            status=statuses[0].value if statuses else None,
            rule=rule,
            now=queue.clock(),
            queue_path=str(queue.path),
        )

    @app.post("/next")
    async def next_item(request: Request) -> Response:
        who, _ = await posted(request)
        item = await run_in_threadpool(queue.next_for, who.reviewer)
        if item is None:
            return RedirectResponse("/?notice=empty", status_code=303)
        return RedirectResponse(f"/items/{item.id}", status_code=303)

    def item_page(
        request: Request, who: Session, item_id: int, status_code: int = 200, error: str | None = None
    ) -> Response:
        try:
            item = queue.get(item_id)
        except QueueError as missing:
            return page(request, "base.html", who, 404, error=str(missing))
        document_error, text, document_format = None, None, ""
        try:
            document = item_document(item, root)
            text, document_format = document.text, document.format
        except DocumentError as problem:
            document_error = str(problem)
        holder = item.holder(queue.clock())
        validation = item.extraction.validation
        return page(
            request,
            "item.html",
            who,
            status_code,
            error=error,
            item=item,
            view=item_view(item.extraction, text),
            document_error=document_error,
            document_format=document_format,
            holder=holder,
            mine=holder == who.reviewer,
            editable=holder == who.reviewer and not item.status.resolved and text is not None,
            errors=len(validation.errors) if validation else 0,
            warnings=len(validation.warnings) if validation else 0,
            audit=queue.audit(item.id),
        )

    @app.get("/items/{item_id}", response_class=HTMLResponse)
    def show_item(request: Request, item_id: ItemId) -> Response:
        return item_page(request, current(request), item_id)

    @app.post("/items/{item_id}/claim")
    async def claim(request: Request, item_id: ItemId) -> Response:
        who, _ = await posted(request)
        return await run_in_threadpool(
            _acted, lambda: queue.claim(item_id, who.reviewer), item_id, "claimed", request, who, item_page
        )

    @app.post("/items/{item_id}/release")
    async def release(request: Request, item_id: ItemId) -> Response:
        who, _ = await posted(request)
        return await run_in_threadpool(
            _acted, lambda: queue.release(item_id, who.reviewer), item_id, "released", request, who, item_page
        )

    @app.post("/items/{item_id}/save")
    async def save(request: Request, item_id: ItemId) -> Response:
        who, form = await posted(request)
        return await run_in_threadpool(save_form, request, who, form, item_id)

    def save_form(request: Request, who: Session, form: FormData, item_id: int) -> Response:
        """Apply the form's changes, re-validate against the document, store the next version
        (in a worker thread: loading and validating a long note takes tens of milliseconds)."""
        try:
            check = partial(validating, validate)  # bounded in time
            _, done = save_correction(queue, item_id, who.reviewer, _version(form), _edit_fields(form), root, check)
        except DocumentError as problem:
            return item_page(
                request, who, item_id, 409, f"not saved: {problem}; corrections cannot be checked without it"
            )
        except Conflict as conflict:
            return item_page(request, who, item_id, 409, str(conflict))
        except (EditError, QueueError) as problem:
            return item_page(request, who, item_id, 422, f"not saved: {problem}")
        except TooSlow:
            return item_page(
                request,
                who,
                item_id,
                503,
                f"not saved: checking these corrections took over {save_seconds:g} seconds; "
                "try again, and report the item if it happens again",
            )
        query = urlencode(
            {"notice": "saved", "changed": len(done.changes), "resolved": len(done.resolved), "new": len(done.new)}
        )
        return RedirectResponse(f"/items/{item_id}?{query}", status_code=303)

    async def resolve(request: Request, item_id: int, accept: bool) -> Response:
        who, form = await posted(request)
        reason = str(form.get("reason", ""))
        if accept:  # gold must come from a document someone could see
            try:
                await run_in_threadpool(item_document, queue.get(item_id), root)
            except QueueError as problem:
                return item_page(request, who, item_id, 409, f"not accepted: {problem}")
        action = "accepted" if accept else "rejected"
        reasons = {
            name.removeprefix("finding."): str(value)
            for name, value in form.multi_items()
            if name.startswith("finding.")
        }
        return await run_in_threadpool(
            _acted,
            lambda: queue.resolve(item_id, who.reviewer, _version(form), accept, reason, reasons),
            item_id,
            action,
            request,
            who,
            item_page,
        )

    @app.post("/items/{item_id}/accept")
    async def accept(request: Request, item_id: ItemId) -> Response:
        return await resolve(request, item_id, True)

    @app.post("/items/{item_id}/reject")
    async def reject(request: Request, item_id: ItemId) -> Response:
        return await resolve(request, item_id, False)

    return app


def _acted(
    action: Callable[[], Item],
    item_id: int,
    notice: str,
    request: Request,
    who: Session,
    item_page: Callable[..., Response],
) -> Response:
    """Do it and show the item (POST-redirect-GET), or show why it was refused."""
    try:
        action()
    except Conflict as conflict:
        return item_page(request, who, item_id, 409, str(conflict))
    except QueueError as problem:
        return item_page(request, who, item_id, 422, str(problem))
    return RedirectResponse(f"/items/{item_id}?notice={notice}", status_code=303)


def _edit_fields(form: FormData) -> dict[str, str]:
    """The form's edits by field name; EditError, naming none of them, when some name is too long to be a field."""
    fields = {name: str(value) for name, value in form.multi_items() if "." in name}
    if too_long := sum(len(name) > FIELD_NAME_CHARS for name in fields):
        raise EditError(
            f"{too_long} field names of over {FIELD_NAME_CHARS} characters: no field of this form has such a name"
        )
    return fields


def _version(form: FormData) -> int:
    raw = str(form.get("version", ""))
    if not (raw.isascii() and raw.isdigit()):
        raise QueueError("the form has no version; reload the page")
    return int(raw)


def _too_large(cap: int) -> Response:
    hint = "" if cap == FORM_BYTES else " (max_save_mb in the queue settings raises it)"
    return PlainTextResponse(f"refused: the form is too large: over {cap // 1024:,} KiB{hint}", status_code=413)


def _clipped(text: str) -> str:
    """At most ERROR_CHARS of a message: it may quote whatever a client sent."""
    if len(text) <= ERROR_CHARS:
        return text
    return f"{text[:ERROR_CHARS]}… ({len(text) - ERROR_CHARS:,} more characters left out)"


def _saved_notice(query: Any) -> str:
    numbers = {
        key: int(raw) if (raw := query.get(key, "0")).isascii() and raw.isdigit() else 0
        for key in ("changed", "resolved", "new")
    }
    return (
        f"Saved and re-validated: {numbers['changed']} fields changed, {numbers['resolved']} findings resolved, "
        f"{numbers['new']} new."
    )


def _local(target: str) -> str:
    """Only paths on this server: a sign-in link cannot send the reviewer elsewhere."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def _number(value: Decimal | None) -> str:
    return "" if value is None else format(value, "f")


def _grouped(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,f}"


def _day(value: date | None) -> str:
    return value.isoformat() if value else ""
