"""Bare routes: answered by the process alone, with no session and no database (the liveness probe `/livez`), so
that what they cost is what Flask, gunicorn and the app's own request hooks cost: the floor every page stands on.

A bare route's path is listed here, because the session is opened before the URL is matched: the cookie is then
neither read (no signature checked, no user loaded) nor written (no Set-Cookie), and the hooks that read the
logged-in user (accounts' session timeouts) leave it alone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flask.sessions import SecureCookieSessionInterface

LIVEZ = "/livez"
BARE_PATHS = frozenset({LIVEZ})


def is_bare(request) -> bool:
    """Whether `request` is for a bare route (no session, no database)."""
    return request.path in BARE_PATHS


def session_limit(config) -> timedelta:
    """How long a session lasts at most after its login: SESSION_ABSOLUTE_HOURS. The one place it is derived: the
    server's check (accounts.views), the cookie's expiry (below) and Flask's PERMANENT_SESSION_LIFETIME (app.py) all
    read it, so the browser never keeps a cookie the server would refuse. Raises KeyError without the setting."""
    return timedelta(hours=config["SESSION_ABSOLUTE_HOURS"])


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, except on a bare route, which gets Flask's null session: nothing read from
    the cookie, nothing saved (Flask saves no null session), so no Set-Cookie.

    A permanent session's cookie expires when the server ends the session: SESSION_ABSOLUTE_HOURS after its login
    (not Flask's 31 days, and not renewed by each request past that instant)."""

    def get_expiration_time(self, app, session):
        if not session.permanent:
            return None
        now = datetime.now(UTC)
        end = now + session_limit(app.config)
        started = session.get("login_at")
        if isinstance(started, str):
            try:
                end = min(end, datetime.fromisoformat(started) + session_limit(app.config))
            except ValueError:  # not written by _start_session: the server's check ends such a session anyway
                pass
        return end

    def open_session(self, app, request):
        if is_bare(request):
            return None  # Flask makes its null session from None
        return super().open_session(app, request)
