"""Issue 35: the session cookie ends when the server ends the session (SESSION_ABSOLUTE_HOURS after the login),
not after Flask's 31 days; no "remember me" cookie outlives it either (none is set)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from core.db import utcnow
from tests.conftest import login


def _session_expiry(response) -> datetime:
    [header] = [h for h in response.headers.getlist("Set-Cookie") if h.startswith("session=")]
    [expires] = [p.split("=", 1)[1] for p in header.split("; ") if p.lower().startswith("expires=")]
    return parsedate_to_datetime(expires)


def test_the_session_cookie_expires_when_the_server_ends_the_session(app, client, make):
    make.user(email="kasparova@example.org")
    before = datetime.now(UTC).replace(microsecond=0)
    response = login(client, "kasparova@example.org")
    assert response.status_code == 302
    limit = timedelta(hours=app.config["SESSION_ABSOLUTE_HOURS"])
    assert before + limit <= _session_expiry(response) <= datetime.now(UTC) + limit
    assert not [h for h in response.headers.getlist("Set-Cookie") if h.startswith("remember_token=")]


def test_later_requests_do_not_carry_the_cookie_past_the_login_s_limit(app, client, make):
    make.user(email="kasparova@example.org")
    login(client, "kasparova@example.org")
    limit = timedelta(hours=app.config["SESSION_ABSOLUTE_HOURS"])
    started = utcnow() - limit + timedelta(hours=1)  # the login was 11 hours ago: one hour is left
    with client.session_transaction() as s:
        s["login_at"] = started.isoformat()
    response = client.get("/account")
    assert response.status_code == 200
    assert _session_expiry(response) == (started + limit).replace(microsecond=0)
