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
