"""Readiness (/readyz): can this process serve requests right now? Each check is a function in CHECKS, by name; the
answer names every check that applies and what is wrong with the failing ones.

A check takes the app and returns "ok" (or "ok" with a short note), None when it does not apply to this
deployment (Redis without REDIS_URL), or raises when the part is not ready: NotReady with a short public reason,
or any other exception (named by its type; the details go to the log, since /readyz answers anyone).
A later part adds its own check with one line: `CHECKS["outbox"] = outbox_check`.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import redis
from flask import Flask
from sqlalchemy import text

from core.db import db, utcnow
from core.outbox import oldest_unsent
from core.signing import SigningError, load_identity

log = logging.getLogger(__name__)


class NotReady(Exception):
    """A part is not ready; the message is short and safe to show to anyone (no path, no address)."""


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
    folder = Path(app.config["UPLOAD_DIR"])
    if not folder.is_dir():
        raise NotReady("the upload folder is missing or is not a folder")
    try:
        # Created and removed at once: what storing an upload needs (the shared volume is mounted and writable).
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".readyz-"):
            pass
    except OSError as exc:
        raise NotReady(f"a file cannot be created in the upload folder ({exc.strerror})") from exc
    return "ok"


def check_signing(app: Flask) -> str | None:
    try:
        identity = load_identity(app)
    except SigningError as exc:
        raise NotReady("the signing identity cannot be loaded (SIGNING_PKCS12, SIGNING_PASSPHRASE)") from exc
    return "ok (development identity)" if identity.development else "ok"


def check_outbox(app: Flask) -> str | None:
    """The age of the oldest message still waiting to be sent; not ready once it passes OUTBOX_READY_MINUTES (the
    worker or the scheduler is not running, or the mail server has refused for that long)."""
    age = oldest_unsent(utcnow())
    if age is None:
        return "ok (nothing waiting)"
    minutes = int(age / timedelta(minutes=1))
    limit = app.config["OUTBOX_READY_MINUTES"]
    if minutes >= limit:
        raise NotReady(f"the oldest unsent message has waited {minutes} min (OUTBOX_READY_MINUTES is {limit})")
    return f"ok (oldest unsent: {minutes} min)"


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
