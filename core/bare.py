"""Bare routes: answered by the process alone, with no session and no database (the liveness probe `/livez`), so
that what they cost is what Flask, gunicorn and the app's own request hooks cost: the floor every page stands on.

A bare route's path is listed here, because the session is opened before the URL is matched: the cookie is then
neither read (no signature checked, no user loaded) nor written (no Set-Cookie), and the hooks that read the
logged-in user (accounts' session timeouts) leave it alone.
"""

from __future__ import annotations

from flask.sessions import SecureCookieSessionInterface

LIVEZ = "/livez"
BARE_PATHS = frozenset({LIVEZ})


def is_bare(request) -> bool:
    """Whether `request` is for a bare route (no session, no database)."""
    return request.path in BARE_PATHS


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, except on a bare route, which gets Flask's null session: nothing read from
    the cookie, nothing saved (Flask saves no null session), so no Set-Cookie."""

    def open_session(self, app, request):
        if is_bare(request):
            return None  # Flask makes its null session from None
        return super().open_session(app, request)
