"""/healthz and /readyz: who is told what, and JSON whatever fails.

What each check found (the mail backlog, the kind of signing identity, the free space, the errors) is told to the
secretariat and to callers on this machine (loopback: the container's own health check, an operator's curl); anyone
else is told {"status": "ok"} (200) or {"status": "unavailable"} (503) and nothing more. Both answer JSON also when
the database is down, for a caller logged in or not (real faults: a PostgreSQL behind a TCP proxy that is cut, and a
port nobody listens on)."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import DEMO_PASSWORD, login
from tests.faults import Proxy, postgres_database, spare_port

REMOTE = {"REMOTE_ADDR": "203.0.113.5"}


def _dead_redis_url() -> str:
    with socket.socket() as s:  # bound and closed: nobody listens there now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_a_caller_elsewhere_is_told_ok_and_nothing_more(client, path):
    response = client.get(path, environ_base=REMOTE)
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_a_caller_elsewhere_is_told_unavailable_and_nothing_more(another_app):
    app = another_app(REDIS_URL=_dead_redis_url())
    response = app.test_client().get("/readyz", environ_base=REMOTE)
    assert response.status_code == 503 and response.get_json() == {"status": "unavailable"}
    assert "redis" not in response.get_data(as_text=True)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.1.1", "::1"])
def test_a_caller_on_this_machine_is_told_every_check(another_app, address):
    client = another_app(REDIS_URL=_dead_redis_url()).test_client()
    response = client.get("/readyz", environ_base={"REMOTE_ADDR": address})
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"] == "error: unreachable (ConnectionError)"
    assert body["checks"]["signing"] == "ok (development identity)" and "outbox" in body["checks"]
    assert client.get("/healthz", environ_base={"REMOTE_ADDR": address}).get_json() == {
        "status": "ok", "database": "ok"}


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_secretariat_logged_in_elsewhere_is_told_every_check_and_a_bidder_is_not(client, make, path):
    make.user(email="health-admin@example.org", roles=("admin",))
    make.user(email="health-bidder@example.org", roles=("bidder",))
    bidder = client.application.test_client()
    for who, email in ((bidder, "health-bidder@example.org"), (client, "health-admin@example.org")):
        login_from = who.post("/login", data={"email": email, "password": DEMO_PASSWORD}, environ_base=REMOTE)
        assert login_from.status_code == 302
    assert bidder.get(path, environ_base=REMOTE).get_json() == {"status": "ok"}
    body = client.get(path, environ_base=REMOTE).get_json()
    assert body["status"] == "ok" and ("checks" in body if path == "/readyz" else body["database"] == "ok")


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_a_session_that_ended_gets_the_checks_json_not_a_redirect_to_the_login(client, make, path):
    """The secretariat's session presented from another address ends (accounts' session checks): a health check
    answers it as a caller logged out, in JSON, rather than sending a probe to the login page."""
    make.user(email="health-admin2@example.org", roles=("admin",))
    assert login(client, "health-admin2@example.org").status_code == 302  # from 127.0.0.1
    response = client.get(path, environ_base=REMOTE)
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_behind_a_proxy_the_client_it_names_decides_not_the_proxy(another_app):
    """PROXY_FIX_HOPS=1: the proxy's own connection comes from 127.0.0.1, the client it names from elsewhere; an
    address the client wrote itself before the proxy's is not believed."""
    client = another_app(PROXY_FIX_HOPS=1).test_client()
    forwarded = {"X-Forwarded-For": "127.0.0.1, 203.0.113.5"}
    assert client.get("/readyz", headers=forwarded).get_json() == {"status": "ok"}
    assert "checks" in client.get("/readyz", headers={"X-Forwarded-For": "127.0.0.1"}).get_json()


@pytest.mark.no_db
def test_an_app_whose_database_port_nobody_listens_on_answers_json(tmp_path):
    from app import create_app

    app = create_app({"TESTING": True, "SECRET_KEY": "x", "UPLOAD_DIR": str(tmp_path / "u"),
                      "SQLALCHEMY_DATABASE_URI": f"postgresql+psycopg://postgres@127.0.0.1:{spare_port()}/gambit"})
    client = app.test_client()
    for path in ("/healthz", "/readyz"):
        remote = client.get(path, environ_base=REMOTE)
        assert remote.status_code == 503 and remote.get_json() == {"status": "unavailable"}
        here = client.get(path)
        assert here.status_code == 503 and here.mimetype == "application/json"
    assert client.get("/healthz").get_json() == {"status": "unavailable", "database": "unreachable: OperationalError"}
    assert client.get("/readyz").get_json()["checks"]["database"] == "error: OperationalError"


@pytest.mark.no_db
def test_a_logged_in_caller_gets_json_when_the_database_is_cut(tmp_path):
    """The session's user is loaded before the check runs (the session timeouts): with PostgreSQL cut off, that load
    fails first, and the answer is still the check's own JSON, as to a caller who is not logged in."""
    import sqlalchemy as sa

    from core.db import db
    from tests.core.test_faults_database import BIDDER, make_app

    with postgres_database() as url:
        server = sa.make_url(url)
        proxy = Proxy(server.host or "127.0.0.1", server.port or 5432)
        app = make_app(server.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False),
                       tmp_path)
        try:
            here, elsewhere = app.test_client(), app.test_client()
            for client in (here, elsewhere):
                assert login(client, BIDDER).status_code == 302
            proxy.refuse()
            for path in ("/healthz", "/readyz"):
                remote = elsewhere.get(path, environ_base=REMOTE)
                assert remote.status_code == 503, remote.get_data(as_text=True)[:300]
                assert remote.get_json() == {"status": "unavailable"}
                local = here.get(path)
                assert local.status_code == 503 and local.mimetype == "application/json", local.data[:300]
            assert here.get("/healthz").get_json()["database"].startswith("unreachable")
            assert here.get("/readyz").get_json()["checks"]["database"].startswith("error")
            proxy.restore()
            assert here.get("/healthz").get_json() == {"status": "ok", "database": "ok"}
        finally:
            with app.app_context():
                db.session.remove()
                db.engine.dispose()
            proxy.close()
