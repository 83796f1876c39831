"""The health checks (`/livez`, `/healthz`, `/readyz`), on the site's blueprint (core.views.bp) so that their endpoints
stay core.livez, core.healthz and core.readyz: what a load balancer, an orchestrator or the container asks."""

from __future__ import annotations

import ipaddress

from flask import Response, current_app, g, jsonify, request
from flask_login import AnonymousUserMixin, current_user
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from core.auth import Role
from core.bare import LIVEZ
from core.db import db
from core.views import bp
from operations.readiness import run_checks

# The health checks that read the database: each answers JSON whatever fails, also before it runs (app.py's error
# handlers give them back their own answer when the logged-in caller's user cannot be loaded).
HEALTHZ, READYZ = "/healthz", "/readyz"
HEALTH_PATHS = frozenset({HEALTHZ, READYZ})


@bp.route(LIVEZ)
def livez():
    """Liveness of the process alone: it answers `ok` (text/plain) with no session and no database (core.bare),
    so it costs only what every request costs; the benchmark's floor. /healthz also reaches the database."""
    return Response("ok", mimetype="text/plain")


def _on_this_machine(address: str | None) -> bool:
    """Whether the request came from a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6). Behind
    PROXY_FIX_HOPS proxies this is the client the proxies name, not the proxy's own connection."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def details_shown() -> bool:
    """Whether the caller is told what each health check found (the mail backlog, the kind of signing identity, the
    free space, the errors): the secretariat (a logged-in admin) and callers on this machine (the container's own
    health check, an operator's curl on the host). Anyone else is told "ok" or "unavailable" only. A caller whose
    user cannot be loaded (the database is down) is treated as logged out. Raises nothing."""
    if _on_this_machine(request.remote_addr):
        return True
    try:
        return bool(current_user.is_authenticated and current_user.has_role(Role.ADMIN))
    except SQLAlchemyError:
        db.session.rollback()
        g._login_user = AnonymousUserMixin()  # Flask-Login's request user: not asked of the database again
        return False


def _answer(ok: bool, details: dict) -> tuple[Response, int]:
    body = {"status": "ok" if ok else "unavailable"}
    if details_shown():
        body.update(details)
    return jsonify(body), 200 if ok else 503


@bp.route(HEALTHZ)
def healthz():
    """Liveness: the process answers and reaches its database. A failure here means restart the process. JSON, 200
    or 503; what failed is told to the secretariat and to callers on this machine only (details_shown)."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database is the answer, not a 500
        db.session.rollback()
        return _answer(False, {"database": f"unreachable: {type(exc).__name__}"})
    return _answer(True, {"database": "ok"})


@bp.route(READYZ)
def readyz():
    """Readiness: every part a request may need (operations.readiness.CHECKS) is there. A failure here means send no
    traffic to this process until it passes. JSON, 200 or 503; each check's answer is told to the secretariat and
    to callers on this machine only (details_shown)."""
    # Flask types current_app as the app it proxies, without the proxy's own methods.
    ready, checks = run_checks(current_app._get_current_object())  # type: ignore[attr-defined]
    return _answer(ready, {"checks": checks})


def health_answer_after_failure() -> tuple[Response, int] | None:
    """For the app's error handlers: when a hook before a health check failed (loading the logged-in caller's user
    from a database that is down), the check's own JSON answer, computed as for a caller who is not logged in;
    None for any other route. Raises nothing the health checks do not catch themselves."""
    if request.endpoint not in ("core.healthz", "core.readyz"):
        return None
    try:
        db.session.rollback()
    except SQLAlchemyError:
        db.session.remove()
    g._login_user = AnonymousUserMixin()
    return healthz() if request.endpoint == "core.healthz" else readyz()
