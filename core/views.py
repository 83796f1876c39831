"""The site's own blueprint ("core"): the health check. The home page lists the calls, so it is events' own
(events.views.home, on this blueprint so that its endpoint stays core.home): core knows no domain."""

from __future__ import annotations

from flask import Blueprint, jsonify
from sqlalchemy import text

from core.db import db

bp = Blueprint("core", __name__)


@bp.route("/healthz")
def healthz():
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database is the answer, not a 500
        db.session.rollback()
        return jsonify({"status": "error", "database": f"unreachable: {type(exc).__name__}"}), 503
    return jsonify({"status": "ok", "database": "ok"})
