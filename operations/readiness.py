"""Readiness (/readyz): can this process serve requests right now? Each check is a function in CHECKS, by name; the
answer names every check that applies and what is wrong with the failing ones.

A check takes the app and returns "ok" (or "ok" with a short note), None when it does not apply to this
deployment (Redis without REDIS_URL), or raises when the part is not ready: NotReady with a short reason, or any
other exception (named by its type; the details go to the log). The checks' answers are details (the mail backlog,
the kind of signing identity, the free space): operations.health_views gives them only to the secretariat and to callers
on this machine, anyone else is told "ok" or "unavailable". A later part adds its own check with one line:
`CHECKS["outbox"] = outbox_check`."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import redis
from flask import Flask
from sqlalchemy import text

from core.db import db, utcnow
from evidence.signing import SigningError, load_identity
from operations.outbox import backlog

log = logging.getLogger(__name__)


MB = 1024 * 1024  # the settings' megabyte, as MAX_UPLOAD_MB counts it


class NotReady(Exception):
    """A part is not ready; the message is short and names no path and no address."""


def check_database(app: Flask) -> str | None:
    try:
        db.session.execute(text("SELECT 1"))
    except Exception:
        db.session.rollback()
        raise
    return "ok"


def check_redis(app: Flask) -> str | None:
    url = app.config.get("REDIS_URL") or ""
    if not url:
        return None  # not used: rate limits are counted per process and PDFs rendered in threads
    # Short timeouts: a probe must answer before the orchestrator's own timeout, whatever Redis does.
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise NotReady(f"unreachable ({type(exc).__name__})") from exc
    finally:
        client.close()
    return "ok"


def check_upload_folder(app: Flask) -> str | None:
    """The upload folder is a folder, takes a new file, and has at least READY_MIN_FREE_MB free (a document of up to
    MAX_UPLOAD_MB, and the PDFs Gambit makes, must fit). Raises NotReady saying which, with the figures."""
    folder = Path(app.config["UPLOAD_DIR"])
    if not folder.is_dir():
        raise NotReady("the upload folder is missing or is not a folder")
    try:
        # Created and removed at once: what storing an upload needs (the shared volume is mounted and writable).
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".readyz-"):
            pass
    except OSError as exc:
        raise NotReady(f"a file cannot be created in the upload folder ({exc.strerror})") from exc
    required = int(app.config["READY_MIN_FREE_MB"])
    free = shutil.disk_usage(folder).free
    if free < required * MB:
        raise NotReady(f"the upload folder has {free // MB} MB free; READY_MIN_FREE_MB requires {required} MB")
    return f"ok ({free // MB} MB free; {required} MB required)"


def check_signing(app: Flask) -> str | None:
    try:
        identity = load_identity(app)
    except SigningError as exc:
        raise NotReady("the signing identity cannot be loaded (SIGNING_PKCS12, SIGNING_PASSPHRASE)") from exc
    return "ok (development identity)" if identity.development else "ok"


def check_outbox(app: Flask) -> str | None:
    """The messages still to be delivered, judged by how long ago the earliest fell due (its next attempt's time,
    not the day it was written): not ready once that passes OUTBOX_READY_MINUTES (the worker or the scheduler is not
    running, or a deliverer is stuck). With mail delivery off (MAIL_ENABLED unset) messages wait by design: said,
    never a failure. Failed and unconfirmed messages are reported as the secretariat's backlog, never a failure:
    no deliverer will take them again, and this process serves requests as well with them as without.
    Raises NotReady when a message is overdue."""
    found = backlog(utcnow())
    kept = f"not deliverable, for the secretariat: {found.failed} failed, {found.unconfirmed} unconfirmed" \
        if found.failed or found.unconfirmed else ""
    if not app.config.get("MAIL_ENABLED"):
        return f"ok (mail delivery is off: {found.waiting} waiting{'; ' + kept if kept else ''})"
    if not found.waiting:
        return f"ok (nothing waiting{'; ' + kept if kept else ''})"
    minutes = int(found.overdue / timedelta(minutes=1)) if found.overdue is not None else 0
    limit = app.config["OUTBOX_READY_MINUTES"]
    if minutes >= limit:
        raise NotReady(f"a message has been due for {minutes} min and is not delivered "
                       f"(OUTBOX_READY_MINUTES is {limit}; {found.waiting} waiting)")
    due = f"the earliest due {minutes} min ago" if found.overdue is not None else "none due yet"
    return (f"ok ({found.waiting} waiting, {found.retrying} of them to be retried; {due}"
            f"{'; ' + kept if kept else ''})")


# name -> check, in the order the answer lists them.
CHECKS: dict[str, Callable[[Flask], str | None]] = {
    "database": check_database,
    "redis": check_redis,
    "upload_folder": check_upload_folder,
    "signing": check_signing,
    "outbox": check_outbox,
}


def run_checks(app: Flask) -> tuple[bool, dict[str, str]]:
    """(ready, {name: "ok..." or "error: why"}) over CHECKS; a check that raises is a failed check, never an
    exception out of here. Each failure is logged with its details."""
    results: dict[str, str] = {}
    ready = True
    for name, check in CHECKS.items():
        try:
            outcome = check(app)
        except NotReady as exc:
            ready = False
            results[name] = f"error: {exc}"
            log.error("readiness check %s failed: %s (%r)", name, exc, exc.__cause__)
        except Exception as exc:  # any failure is the check's answer, not a 500
            ready = False
            results[name] = f"error: {type(exc).__name__}"
            log.error("readiness check %s failed: %r", name, exc)
        else:
            if outcome is not None:
                results[name] = outcome
    return ready, results
