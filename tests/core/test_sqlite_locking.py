"""SQLite: a reading request takes no lock, so a writer holding the write lock does not hold readers up; a writing
request (and a GET marked `writes_on_get`) takes the write lock at the start. Always on a SQLite file of its own,
whatever DATABASE_URL says: the behaviour is SQLite's."""

from __future__ import annotations

import sqlite3

import pytest

from core.db import _reads_only, db, writing

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
        from flask import request

        request.url_rule, request.view_args = app.url_map.bind("gambit.test").match(
            "/login", method="POST", return_rule=True)
        assert _reads_only()  # the login verifies the password first, without the lock...
        with writing():
            assert not _reads_only()  # ...then takes it to record the login
    with app.test_request_context("/logout", method="POST"):
        from flask import request

        request.url_rule, request.view_args = app.url_map.bind("gambit.test").match(
            "/logout", method="POST", return_rule=True)
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


def _login_app(tmp_path, **config):
    from app import create_app

    path = tmp_path / "gambit.sqlite3"
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
                      "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / "uploads"),
                      "RATELIMIT_ENABLED": False, "WTF_CSRF_ENABLED": False, "ARGON2_TIME_COST": 1,
                      "ARGON2_MEMORY_COST": 1024, **config})
    with app.app_context():
        db.create_all()
    return app, path


def _make_user(app, email: str, password: str, password_hash: str | None = None) -> None:
    from accounts.models import User
    from accounts.services import create_user
    from core.db import utcnow

    with app.app_context():
        user = create_user(email=email, password=password, name="Secretariat", roles=["admin"], actor=None,
                           now=utcnow())
        db.session.flush()
        if password_hash:
            db.session.get(User, user.id).password_hash = password_hash
        db.session.commit()


def _logins_recorded(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM audit_entry WHERE action = 'user.login'").fetchone()[0]


def test_a_login_checks_the_password_without_the_write_lock(tmp_path):
    """A writer holds the write lock (another worker's long write, another login): a wrong password is answered at
    once, from a reading transaction. Before, the login took the lock before verifying (argon2, ~0.5 s of CPU,
    several seconds on a loaded machine), so every other writer waited for the hash, and past the busy timeout
    failed with `database is locked`: here the answer was that 500 after 5 s."""
    app, path = _login_app(tmp_path)
    _make_user(app, "sec@example.org", "a long enough password")
    writer = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO user_role (user_id, role) SELECT id, 'admin' FROM user WHERE 0")
        response = app.test_client().post("/login", data={"email": "sec@example.org", "password": "wrong one"})
        assert response.status_code == 422
        assert "That email and password do not match an active account." in response.get_data(as_text=True)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert _logins_recorded(path) == 0
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_a_login_waits_for_the_write_lock_to_record_itself(tmp_path):
    """Writes stay serialized, the login's included: a right password while a writer holds the lock is verified,
    then the login waits for the lock (busy timeout) and is recorded once the writer commits."""
    import threading

    app, path = _login_app(tmp_path)
    _make_user(app, "sec@example.org", "a long enough password")
    writer = sqlite3.connect(path, isolation_level=None, timeout=0)
    answers: list = []
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO user_role (user_id, role) SELECT id, 'admin' FROM user WHERE 0")
    login = threading.Thread(target=lambda: answers.append(app.test_client().post(
        "/login", data={"email": "sec@example.org", "password": "a long enough password"})))
    try:
        login.start()
        login.join(timeout=1.0)
        assert login.is_alive() and not answers  # waiting for the lock, not failing
        assert _logins_recorded(path) == 0
    finally:
        writer.execute("COMMIT")
        writer.close()
    login.join(timeout=30)
    assert [a.status_code for a in answers] == [302]
    assert _logins_recorded(path) == 1
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_a_login_stores_the_new_hash_when_the_settings_changed(tmp_path):
    """The hash made with other argon2 settings is replaced at the login, in the login's writing step."""
    from argon2 import PasswordHasher

    app, path = _login_app(tmp_path)
    old = PasswordHasher(time_cost=2, memory_cost=2048).hash("a long enough password")
    _make_user(app, "sec@example.org", "a long enough password", password_hash=old)
    response = app.test_client().post("/login", data={"email": "sec@example.org",
                                                      "password": "a long enough password"})
    assert response.status_code == 302
    with sqlite3.connect(path) as conn:
        new = conn.execute("SELECT password_hash FROM user WHERE email = 'sec@example.org'").fetchone()[0]
    assert new != old and "m=1024,t=1" in new
    PasswordHasher().verify(new, "a long enough password")
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_the_ranking_reads_without_the_write_lock(sqlite_app):
    """The ranking (and its CSV) write only the first showing of scores to a WCOC member, in a short `writing()`
    step: the rest (loading every score, the sensitivity, the page) reads. Before, the whole page held the write
    lock (seconds under load) and the logins queued behind it failed with `database is locked`."""
    from flask import request

    app, _ = sqlite_app
    for path in ("/events/fwwcm-2015/scoring/ranking", "/events/fwwcm-2015/scoring/scores.csv"):
        with app.test_request_context(path, method="GET"):
            request.url_rule, request.view_args = app.url_map.bind("gambit.test").match(path, return_rule=True)
            assert _reads_only()
            with writing():
                assert not _reads_only()
