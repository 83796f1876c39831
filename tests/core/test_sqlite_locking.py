"""SQLite: a reading request takes no lock, so a writer holding the write lock does not hold readers up; a writing
request (and a GET marked `writes_on_get`) takes the write lock at the start. Always on a SQLite file of its own,
whatever DATABASE_URL says: the behaviour is SQLite's."""

from __future__ import annotations

import sqlite3

import pytest

from core.db import _reads_only, db

pytestmark = pytest.mark.no_db


@pytest.fixture
def sqlite_app(tmp_path):
    from app import create_app

    path = tmp_path / "gambit.sqlite3"
    application = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
                              "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / "uploads"),
                              "RATELIMIT_ENABLED": False, "WTF_CSRF_ENABLED": False})
    with application.app_context():
        db.create_all()
    yield application, path
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


def test_which_requests_only_read(sqlite_app):
    app, _ = sqlite_app
    with app.test_request_context("/events/", method="GET"):
        from flask import request

        request.url_rule, request.view_args = app.url_map.bind("gambit.test").match("/events/", return_rule=True)
        assert _reads_only()
    with app.test_request_context("/login", method="POST"):
        assert not _reads_only()
    with app.test_request_context("/api/v1/events", method="GET"):
        assert not _reads_only()  # the API records each token's last use
    with app.app_context():
        assert not _reads_only()  # CLI, workers, tests: take the lock


def test_a_marked_view_writes_on_get(sqlite_app):
    app, _ = sqlite_app
    with app.test_request_context("/board/fwwcm-2015/pack.pdf", method="GET"):
        from flask import request

        request.url_rule, request.view_args = app.url_map.bind("gambit.test").match(
            "/board/fwwcm-2015/pack.pdf", return_rule=True)
        assert not _reads_only()


def test_a_reading_page_is_served_while_a_writer_holds_the_lock(sqlite_app):
    app, path = sqlite_app
    writer = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO user_role (user_id, role) SELECT id, 'admin' FROM user WHERE 0")
        client = app.test_client()
        response = client.get("/events/")
        assert response.status_code == 200
        assert "Calls for bids" in response.get_data(as_text=True)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_readers_and_logins_at_the_same_time_never_see_database_is_locked(tmp_path):
    """Six logged-in readers and two people logging in again and again, at once, on one SQLite file: every answer
    is a page or the login's redirect, never a 500 from `database is locked` (a login writes; readers take no lock
    and writers queue for it)."""
    import threading

    from accounts.services import create_user
    from app import create_app
    from core.db import utcnow

    path = tmp_path / "gambit.sqlite3"
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
                      "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / "uploads"),
                      "RATELIMIT_ENABLED": False, "WTF_CSRF_ENABLED": False, "ARGON2_TIME_COST": 1,
                      "ARGON2_MEMORY_COST": 1024})
    password = "a long enough password"
    with app.app_context():
        db.create_all()
        for i in range(8):
            create_user(email=f"u{i}@example.org", password=password, name=f"User {i}", roles=["admin"],
                        actor=None, now=utcnow())
        db.session.commit()
    statuses: list[int] = []
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def reader(i: int) -> None:
        client = app.test_client()
        try:
            statuses.append(client.post("/login", data={"email": f"u{i}@example.org", "password": password})
                            .status_code)
            start.wait()
            for _ in range(15):
                for url in ("/bids/", "/events/"):
                    statuses.append(client.get(url).status_code)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    def login_again(i: int) -> None:
        client = app.test_client()
        try:
            start.wait()
            for _ in range(8):
                statuses.append(client.post("/login", data={"email": f"u{i}@example.org", "password": password})
                                .status_code)
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=login_again, args=(i,)) for i in (6, 7)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    finally:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    assert not failures, failures
    assert len(statuses) == 6 + 6 * 30 + 2 * 8
    assert set(statuses) <= {200, 302}, sorted(set(statuses))
