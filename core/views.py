"""The site's own blueprint ("core"), whose endpoints keep the names they always had: the site's icon here; the home
page lists the calls, so it is events' own (events.views.home); the health checks (`/livez`, `/healthz`, `/readyz`) are
operations' (operations.health_views). Each registers its routes on this blueprint so that their endpoints stay
core.home, core.healthz, ...: core knows no domain and no operations."""

from __future__ import annotations

from flask import Blueprint, current_app, send_from_directory

bp = Blueprint("core", __name__)


@bp.route("/favicon.ico")
def favicon():
    """The site's icon where browsers look for it first (base.html links the same file)."""
    return send_from_directory(current_app.static_folder or "static", "favicon.ico",
                               mimetype="image/vnd.microsoft.icon", max_age=86400)
