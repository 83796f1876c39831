"""The site's own blueprint ("core"): the health checks (`/livez`, `/healthz`, `/readyz`). The home page lists the
calls, so it is events' own (events.views.home, on this blueprint so that its endpoint stays core.home): core knows
no domain."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, send_from_directory
from sqlalchemy import text

from core.bare import LIVEZ
from core.db import db
from core.readiness import run_checks

bp = Blueprint("core", __name__)


@bp.route("/favicon.ico")
def favicon():
    """The site's icon where browsers look for it first (base.html links the same file)."""
    return send_from_directory(current_app.static_folder or "static", "favicon.ico",
                               mimetype="image/vnd.microsoft.icon", max_age=86400)


@bp.route(LIVEZ)
def livez():
    """Liveness of the process alone: it answers `ok` (text/plain) with no session and no database (core.bare),
    so it costs only what every request costs; the benchmark's floor. /healthz also reaches the database."""
    return Response("ok", mimetype="text/plain")


@bp.route("/healthz")
def healthz():
    """Liveness: the process answers and reaches its database. A failure here means restart the process."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database is the answer, not a 500
        db.session.rollback()
        return jsonify({"status": "error", "database": f"unreachable: {type(exc).__name__}"}), 503
    return jsonify({"status": "ok", "database": "ok"})


@bp.route("/readyz")
def readyz():
    """Readiness: every part a request may need (core.readiness.CHECKS) is there. A failure here means send no
    traffic to this process until it passes; 503 names each failing part."""
    # Flask types current_app as the app it proxies, without the proxy's own methods.
    ready, checks = run_checks(current_app._get_current_object())  # type: ignore[attr-defined]
    return jsonify({"status": "ok" if ready else "error", "checks": checks}), 200 if ready else 503
