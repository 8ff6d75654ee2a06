"""Reviewer accounts and sign-in sessions, kept in the queue's database; secrets only as hashes.

A reviewer signs in with a name and a secret: a token this module generates, or a password they
chose. Secrets are stored as salted scrypt hashes, a token's marked as one (a name locked out by
failed guesses still takes its token: 192 random bits cannot be guessed); sessions as SHA-256
hashes of their cookie value, each with its own CSRF token, so a copied database lets no one in.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from extractor.queue.store import Queue, QueueError
from extractor.regex_cache import regex

SCRYPT = {"n": 2**14, "r": 8, "p": 1}
SESSION_SECONDS = 12 * 3600
NAME_RE = regex(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
TOKEN_HASH = "scrypt-token"  # a generated token's hash; "scrypt" a password's (and any secret stored before the mark)


@dataclass(frozen=True)
class Session:
    reviewer: str
    csrf: str


def hash_secret(secret: str, token: bool = False) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, **SCRYPT)
    return f"{TOKEN_HASH if token else 'scrypt'}${SCRYPT['n']}${SCRYPT['r']}${SCRYPT['p']}${salt.hex()}${digest.hex()}"


def secret_matches(secret: str, stored: str) -> bool:
    try:
        _, n, r, p, salt, digest = stored.split("$")
        found = hashlib.scrypt(secret.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p))
    except ValueError:
        return False
    return hmac.compare_digest(found.hex(), digest)


def add_reviewer(queue: Queue, name: str, password: str | None = None, replace: bool = False) -> str:
    """Create (or, with `replace`, reset) a reviewer; returns the secret to hand them: their password
    or a new token. Only its hash is stored."""
    if not NAME_RE.fullmatch(name):
        raise QueueError(f"reviewer name {name!r}: use letters, digits and . _ @ - (at most 64 characters)")
    if password is not None and len(password) < 12:
        raise QueueError("a password needs at least 12 characters (or leave it out to get a generated token)")
    secret = password if password is not None else secrets.token_urlsafe(24)
    with queue.transaction() as db:
        exists = db.execute("select 1 from reviewers where name = ?", (name,)).fetchone()
        if exists and not replace:
            raise QueueError(f"reviewer {name} exists already; --replace gives them a new secret")
        db.execute(
            "insert or replace into reviewers (name, secret_hash, created) values (?, ?, ?)",
            (name, hash_secret(secret, token=password is None), queue.clock()),
        )
        db.execute("delete from sessions where reviewer = ?", (name,))  # a reset signs them out everywhere
    return secret


def reviewer_names(queue: Queue) -> list[str]:
    with queue.connect() as db:
        return [row[0] for row in db.execute("select name from reviewers order by name")]


def sign_in_name(typed: str) -> str | None:
    """The name a sign-in form gives, spaces around it dropped; None when no reviewer can have it.
    The one spelling both the lookup and the failure counts use."""
    name = typed.strip()
    return name if NAME_RE.fullmatch(name) else None


def sign_in(queue: Queue, name: str, secret: str, token_only: bool = False) -> str | None:
    """A new session's cookie value when the secret is right, else None (the same for an unknown name).
    With `token_only` (the name is locked out by failed guesses) only a generated token signs in."""
    with queue.connect() as db:
        row = db.execute("select secret_hash from reviewers where name = ?", (name,)).fetchone()
    stored = row[0] if row else _UNKNOWN  # one scrypt run either way: timing does not tell names apart
    if not secret_matches(secret, stored) or row is None or token_only and not stored.startswith(f"{TOKEN_HASH}$"):
        return None
    token = secrets.token_urlsafe(32)
    now = queue.clock()
    with queue.transaction() as db:
        db.execute("delete from sessions where expires <= ?", (now,))
        db.execute(
            "insert into sessions (token_hash, reviewer, csrf, expires) values (?, ?, ?, ?)",
            (_digest(token), name, secrets.token_urlsafe(32), now + SESSION_SECONDS),
        )
    return token


def session(queue: Queue, token: str | None) -> Session | None:
    """The live session a cookie value opens, or None."""
    if not token:
        return None
    with queue.connect() as db:
        row = db.execute(
            "select reviewer, csrf from sessions where token_hash = ? and expires > ?", (_digest(token), queue.clock())
        ).fetchone()
    return Session(row[0], row[1]) if row else None


def sign_out(queue: Queue, token: str) -> None:
    with queue.transaction() as db:
        db.execute("delete from sessions where token_hash = ?", (_digest(token),))


_UNKNOWN = hash_secret(secrets.token_urlsafe(24))


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
