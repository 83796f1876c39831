"""The home page (a dashboard by role) and the health check."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template
from sqlalchemy import select, text

from core.db import db
from events.models import Event

bp = Blueprint("core", __name__)


@bp.route("/")
def home():
    events = db.session.scalars(select(Event).order_by(Event.created_at.desc(), Event.id.desc())).all()
    return render_template("home.html", events=events)


@bp.route("/healthz")
def healthz():
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database is the answer, not a 500
        db.session.rollback()
        return jsonify({"status": "error", "database": f"unreachable: {type(exc).__name__}"}), 503
    return jsonify({"status": "ok", "database": "ok"})
