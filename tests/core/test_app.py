from contextlib import contextmanager

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Engine

from app import create_app


@contextmanager
def statements_run():
    """The SQL statements run inside the block, on any engine."""
    seen: list[str] = []

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    sa_event.listen(Engine, "before_cursor_execute", on_execute)
    try:
        yield seen
    finally:
        sa_event.remove(Engine, "before_cursor_execute", on_execute)


def test_livez_answers_with_no_session_and_no_database(app, client, login_as):
    """The bare route (core.bare): a logged-in caller's session cookie is neither read nor refreshed, and a
    validly signed "remember me" cookie (which Flask-Login would look up in the database if anything asked for the
    user) is left alone: no SQL statement, no Set-Cookie."""
    from flask_login.utils import encode_cookie

    login_as("admin")
    with app.test_request_context():
        client.set_cookie("remember_token", encode_cookie("1"), domain="gambit.test")
    with statements_run() as seen:
        response = client.get("/livez")
    assert response.status_code == 200
    assert response.mimetype == "text/plain" and response.get_data(as_text=True) == "ok"
    assert seen == []
    assert "Set-Cookie" not in response.headers
    assert "Cookie" not in response.headers.get("Vary", "")  # the session was not even looked at


def test_healthz_as_a_logged_in_caller_reads_the_database_and_refreshes_the_session(client, login_as):
    """What /livez is spared: the same caller on /healthz loads its user and has its session's cookie rewritten."""
    login_as("admin")
    with statements_run() as seen:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert len(seen) >= 2  # the session's user, then SELECT 1
    assert "session=" in response.headers["Set-Cookie"]


def test_healthz_reports_the_database(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok"}


@pytest.mark.no_db
def test_healthz_is_503_with_the_reason_when_the_database_is_unreachable(tmp_path):
    broken = create_app({"TESTING": True, "SECRET_KEY": "x", "UPLOAD_DIR": str(tmp_path / "u"),
                         "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/missing-dir/nope/db.sqlite3"})
    response = broken.test_client().get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable" and body["database"].startswith("unreachable")


def test_security_headers_on_every_page(client):
    response = client.get("/")
    csp = response.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response.headers


def test_hsts_when_served_over_https(client):
    response = client.get("/", base_url="https://gambit.test")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


def test_pages_load_no_third_party_assets(client):
    html = client.get("/").get_data(as_text=True)
    assert "http://" not in html.replace("http://gambit.test", "")
    assert "https://" not in html
    assert "<script>" not in html  # no inline script (CSP)


def test_unknown_page_is_a_404_page_with_a_way_back(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert b"Back to the home page" in response.data


def test_api_errors_are_json(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.get_json()["status"] == 404


def test_forms_strip_surrounding_whitespace(app):
    from wtforms import StringField

    from core.forms import BaseForm

    class F(BaseForm):
        name = StringField()

    with app.test_request_context(method="POST", data={"name": "  Lviv  "}):
        form = F(meta={"csrf": False})
        assert form.name.data == "Lviv"


def test_an_id_beyond_the_database_range_is_a_404(client, login_as):
    login_as("admin")
    assert client.get("/bids/99999999999999999999").status_code == 404
    assert client.get("/api/v1/bids/9223372036854775808").status_code == 404


def test_a_nul_character_is_refused_with_a_message_not_stored(client, login_as, event):
    login_as("admin")
    assert client.get("/events/%00").status_code == 404
    assert client.get("/api/v1/events/%00").status_code == 404
    response = client.post("/login", data={"email": "a\x00@example.org", "password": "x"})
    assert response.status_code == 422
    assert "Remove the invisible control character (NUL) from this field" in response.get_data(as_text=True)
