"""Versioned pages: an expensive page is kept, and its `ETag` given, under a key that changes whenever anything the
page may show can have changed; a revisit while nothing changed is answered 304 Not Modified, and a visit by the same
person from another tab is answered from the copy kept, both without computing the page again.

What the key holds (`page_key`), and why it is enough:
- **The audit chain's head as the page sees it** (evidence.audit: sequence number and MAC of the newest entry whose
  action is not of a family the page says it does not show, `not_shown`: the ranking shows no payment, so a payment
  leaves it as it was). Every state change goes through a service that writes an audit entry in the same
  transaction as the change (the stateful flow's invariant, and tests/core/test_page_cache.py walks every kind of
  change), so the head is a version of the whole database, and the page's head a version of what it shows, in every
  process at once (tests/test_page_versions.py asks every versioned page after every kind of step, payments
  included). It is read first, so what the page then reads is at least as new as the key it is kept under.
- **The person**: the session's user id (with its session nonce: a log-out everywhere or a new password changes it),
  roles, President flag and federation; and a digest of the session's CSRF secret, because the page's forms carry a
  token signed for it.
- **Time**: the day (UTC), and how many of the instants at which a page changes within a day have passed (every
  call's bid deadline: `instants`, a hook app.py provides, read once per head: a call's own changes are never
  among what a page may leave out).
- **The request** (path and query string, host) and **this app** (a token made when the app is made: new code or
  settings after a restart give new keys).
- **In this process only**, a count of the writes it made that were not committed (`_local_writes`): a write outside
  a service, or a transaction rolled back after writing (the tests' rolled-back transactions, which can bring an audit
  head back), starts new keys for the copies kept here. It is not part of the `ETag`, which the head alone decides.

Access before version: a 304, or a kept copy, is given only once the page's own load-and-authorize step (the
`access` hook each versioned page names) has let the caller in: the route's decorators check roles, but only the
page knows that this bid exists and is the caller's to see, and a version that matches proves neither (a row changed
outside the services leaves the head, hence the ETag, as it was). `If-None-Match: *` is never answered 304.

Not kept, computed as usual: anything but GET/HEAD, a page shown with a message of the last action (a flash), a page
for a visitor who is not logged in, and any answer but 200 text/html. The copies are held in memory per process (a
least-recently-used list of PAGE_CACHE_ENTRIES pages); PAGE_CACHE = False turns the whole thing off.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps
from typing import Any

from flask import Flask, Response, current_app, g, request, session
from flask.globals import request_ctx
from flask_login import current_user
from flask_wtf.csrf import generate_csrf
from sqlalchemy import Select, event, select
from sqlalchemy.engine import Engine

from core.db import db, utcnow
from core.hooks import Hook
from evidence.audit import AuditEntry

# The instants at which a page may change within a day (every call's bid deadline), read from the database once per
# audit head (a deadline changes only through an audited change of the call's regulation).
instants: Hook[[], Iterable[datetime]] = Hook("page_cache.instants")

CACHE_CONTROL = "private, no-cache"  # kept by the browser, asked again (If-None-Match) before each use
_FIRST_WORDS = ("SELECT", "PRAGMA", "SAVEPOINT", "RELEASE", "BEGIN", "SHOW", "SET", "COMMIT", "ROLLBACK", "EXPLAIN")


# ----------------------------------------------------------------------------------- writes seen in this process

class _LocalWrites:
    """How many writes this process made, and rolled back after writing: bumped by every statement that is not a
    read, and by the rollback of a transaction that wrote. Raises nothing."""

    def __init__(self) -> None:
        self.count = 0

    def bump(self) -> None:
        self.count += 1


_local_writes = _LocalWrites()


# The connections that wrote since their transaction began. Held weakly, and never read through the connection itself:
# a connection the database dropped refuses every use (its rollback event still comes, and counts).
_wrote: weakref.WeakSet = weakref.WeakSet()


@event.listens_for(Engine, "before_cursor_execute")
def _note_write(conn, cursor, statement, parameters, context, executemany):
    if not statement.lstrip()[:9].upper().startswith(_FIRST_WORDS):
        _wrote.add(conn)
        _local_writes.bump()


def _after_rollback(conn, *args) -> None:
    if conn in _wrote:
        _wrote.discard(conn)
        _local_writes.bump()


def _after_commit(conn) -> None:
    _wrote.discard(conn)


event.listen(Engine, "rollback", _after_rollback)
event.listen(Engine, "rollback_savepoint", _after_rollback)
event.listen(Engine, "commit", _after_commit)


# ----------------------------------------------------------------------------------------------- the copies

@dataclass
class _Store:
    """One app's copies: {key: (body, mimetype)}, least recently used first; the app's token; the instants read for
    the last head of each set of families left out."""

    token: str
    entries: int
    pages: OrderedDict[str, tuple[bytes, str]] = field(default_factory=OrderedDict)
    instants_for: dict[frozenset[str], tuple[tuple[int, str], tuple[datetime, ...]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: str) -> tuple[bytes, str] | None:
        with self.lock:
            found = self.pages.get(key)
            if found is not None:
                self.pages.move_to_end(key)
            return found

    def put(self, key: str, body: bytes, mimetype: str) -> None:
        with self.lock:
            self.pages[key] = (body, mimetype)
            self.pages.move_to_end(key)
            while len(self.pages) > self.entries:
                self.pages.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.pages.clear()
            self.instants_for.clear()


def init_page_cache(app: Flask) -> None:
    """Give the app its store of copies (a new token: copies and ETags of another app, or of this code before a
    restart, never match)."""
    app.extensions["page_cache"] = _Store(token=secrets.token_hex(8),
                                          entries=max(1, int(app.config["PAGE_CACHE_ENTRIES"])))


def store(app: Flask | None = None) -> _Store:
    return (app or current_app).extensions["page_cache"]


# ----------------------------------------------------------------------------------------------- the key

# A family is the first word of an audit action ("payment" of "payment.record"). A call's own changes (its
# regulation, deadlines, amendments) are never left out: every page and the instants it changes at depend on them.
NEVER_LEFT_OUT = frozenset({"event"})


def audit_head(not_shown: frozenset[str] = frozenset()) -> tuple[int, str]:
    """(sequence number, MAC) of the newest audit entry whose action is of no family in `not_shown` (the chain's
    head when it is empty), (0, "") when there is none: one statement walking the index back from the head, read
    once per request and set of families."""
    heads = g.setdefault("audit_heads", {})
    if not_shown not in heads:
        row = db.session.execute(_head_statement(not_shown)).first()
        heads[not_shown] = (row[0], row[1]) if row else (0, "")
    return heads[not_shown]


@functools.cache
def _head_statement(not_shown: frozenset[str]) -> Select:
    """The statement of `audit_head` for a set of families, built once (a page names one set): building it again
    on every request, a condition per family, cost more than running it (SQLAlchemy caches the compiled SQL, not
    the statement)."""
    query = select(AuditEntry.id, AuditEntry.hash)
    for family in sorted(not_shown):
        query = query.where(~AuditEntry.action.startswith(f"{family}.", autoescape=True))
    return query.order_by(AuditEntry.id.desc()).limit(1)


def _instants(head: tuple[int, str], not_shown: frozenset[str]) -> tuple[datetime, ...]:
    kept = store()
    found = kept.instants_for.get(not_shown)
    if found is not None and found[0] == head:
        return found[1]
    times = tuple(sorted(instants()))  # the hook: create_app provides it; unprovided, it says so (LookupError)
    kept.instants_for[not_shown] = (head, times)
    return times


@dataclass(frozen=True)
class PageKey:
    """A page's version (`etag`, from the head, the person, the time and the request) and the key of the copy kept
    in this process (`local`: the version and this process's writes)."""

    etag: str
    local: str


def page_key(now: datetime | None = None, not_shown: frozenset[str] = frozenset()) -> PageKey:
    """The key of the page this request asks for, at `now` (the clock by default), for a page that shows nothing of
    the audit families `not_shown`. Reads the page's audit head (one statement) and, once per head, the instants.
    Raises nothing of its own."""
    now = now or utcnow()
    head = audit_head(not_shown)
    passed = sum(1 for t in _instants(head, not_shown) if t < now)
    user = current_user
    csrf = session.get(current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"), "")
    parts = (
        store().token, request.host, request.full_path,
        head, sorted(not_shown),
        user.get_id(), tuple(sorted(r.value for r in user.role_set)), bool(getattr(user, "is_president", False)),
        getattr(user, "federation", None),
        hashlib.sha256(str(csrf).encode()).hexdigest(),
        now.date().isoformat(), passed,
    )
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:40]
    local = digest if not current_app.config.get("PAGE_CACHE_WATCH_WRITES", True) else (
        f"{digest}:{_local_writes.count}")
    return PageKey(etag=f'W/"{digest}"', local=local)


def _matches(etag: str) -> bool:
    """The request's If-None-Match names `etag`: weak comparison, as RFC 9110 has it for GET. "*" matches nothing
    here: on a GET it asks whether the resource exists at all (RFC 9110 13.1.2), which says nothing of the version
    the browser holds, and a 304 to it would tell anyone that a bid they may not see is there."""
    header = request.headers.get("If-None-Match", "")
    if not header or header.strip() == "*":
        return False
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in header.split(","))


def _flashes_pending() -> bool:
    return bool(session.get("_flashes")) or bool(getattr(request_ctx, "flashes", None))


def _versioned(response: Response, etag: str) -> Response:
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = CACHE_CONTROL
    response.headers["Vary"] = "Cookie"
    return response


# What a versioned page's access hook returns: None when the page would be shown (200), else the answer to give
# instead (a redirect to a gate); a refusal is raised (abort: 403, 404).
Access = Callable[..., Any]


def versioned_page(*, access: Access | None, not_shown: Iterable[str] = ()) -> Callable[[Callable[..., Any]],
                                                                                      Callable[..., Any]]:
    """Decorator (innermost: under the route's role checks) of an expensive page: answered 304 when the browser
    holds this version, from the copy kept when this process made it, else computed and kept. See the module.

    `access`: the page's own load-and-authorize step, called with the view's arguments before any 304 or kept copy
    is given: it raises (abort) or returns an answer where the view would not answer 200 (an object that does not
    exist or is not the caller's to see, a gate to pass first), else None. The route's decorators check roles; what
    only the view knows (this bid is the caller's) is checked here, so that a 304 is given only where the same
    request without If-None-Match would answer 200, however the version came to match. None states that the
    route's decorators are the whole check (a page every caller they let in may see). Raises what `access` raises.

    `not_shown`: the audit families (the first word of an action: "payment", "contract") of which the page shows
    nothing, so that their changes keep its version; tests/test_page_versions.py proves each page's list against
    every kind of step. Raises ValueError for a family that is never left out (NEVER_LEFT_OUT)."""
    left_out = frozenset(not_shown)
    if left_out & NEVER_LEFT_OUT:
        raise ValueError(f"a page cannot leave out {', '.join(sorted(left_out & NEVER_LEFT_OUT))}: every page "
                         "depends on its call")

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        def wrapped(*args, **kwargs):
            if (request.method not in ("GET", "HEAD") or not current_app.config.get("PAGE_CACHE", True)
                    or not current_user.is_authenticated or _flashes_pending()):
                return view(*args, **kwargs)
            generate_csrf()  # the session's CSRF secret exists before the key is made of it (forms are signed for it)
            # The head first: what the access step then reads is at least as new as the key.
            key = page_key(not_shown=left_out)
            if access is not None:
                refused = access(*args, **kwargs)
                if refused is not None:
                    return refused
            if _matches(key.etag):
                return _versioned(Response(status=304), key.etag)
            kept = store().get(key.local)
            if kept is not None:
                return _versioned(Response(kept[0], mimetype=kept[1]), key.etag)
            response = current_app.make_response(view(*args, **kwargs))
            if response.status_code != 200 or response.mimetype != "text/html" or response.direct_passthrough:
                return response
            if _flashes_pending():  # the page showed a message of its own: not the page of this version for the next
                return response
            store().put(key.local, response.get_data(), response.mimetype)
            return _versioned(response, key.etag)

        wrapped.versioned_page = True  # type: ignore[attr-defined]  # a mark read by the tests (every versioned page)
        return wrapped

    return decorate
