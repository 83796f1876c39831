"""The database goes away: PostgreSQL behind a TCP proxy the test refuses or cuts (at COMMIT, or between two
statements of a service), and SQLite locked by another process past its busy timeout. Each gives a 503 saying
nothing was saved, never a 500; nothing is half-written; and once the database is back the same app serves again
without a restart (config.py's pool_pre_ping)."""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa

from core.db import DATABASE_BUSY, DATABASE_UNREACHABLE, db, utcnow
from tests.bids.web import start_bid, upload
from tests.conftest import Factory, login
from tests.faults import Proxy, postgres_database
from tests.pdfs import valid_pdf

pytestmark = pytest.mark.no_db

BIDDER = "faults-bidder@example.org"


def make_app(url: str, tmp_path):
    """An app as production makes it (config.py's engine options, pool_pre_ping among them) on `url`, with the
    schema, the practice call and a bidder."""
    from app import create_app
    from demo.seed import practice_regulation
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event

    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url,
                      "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / "uploads"),
                      "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False, "ARGON2_TIME_COST": 1,
                      "ARGON2_MEMORY_COST": 1024})
    assert app.config["SQLALCHEMY_ENGINE_OPTIONS"]["pool_pre_ping"] is True
    with app.app_context():
        db.create_all()
        load_event(practice_regulation(load_regulation_file(default_event_file()), now=utcnow()), actor=None,
                   now=utcnow(), source="test")
        db.session.commit()
    Factory(app).user(email=BIDDER)
    return app


@pytest.fixture
def proxied(tmp_path):
    """(app, proxy, direct engine): the app reaches a fresh PostgreSQL database only through the proxy; the engine
    reads it directly, to see what was really committed."""
    with postgres_database() as url:
        server = sa.make_url(url)
        proxy = Proxy(server.host or "127.0.0.1", server.port or 5432)
        direct = sa.create_engine(url)
        through = server.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        app = make_app(through, tmp_path)
        try:
            yield app, proxy, direct
        finally:
            with app.app_context():
                db.session.remove()
                db.engine.dispose()
            proxy.close()
            direct.dispose()


def assert_unavailable(response, message: str = DATABASE_UNREACHABLE) -> None:
    html = response.get_data(as_text=True)
    assert response.status_code == 503, html[:1000]
    assert message in html and "Traceback" not in html


def test_a_database_that_cannot_be_reached_gives_a_503_page_and_a_json_503(proxied):
    app, proxy, _ = proxied
    client = app.test_client()
    assert login(client, BIDDER).status_code == 302
    proxy.refuse()
    assert_unavailable(client.get("/bids/"))  # logged in: the page is shown as to someone logged out
    assert_unavailable(app.test_client().get("/"))
    from accounts.services import TOKEN_PREFIX

    api = app.test_client().get("/api/v1/events", headers={"Authorization": f"Bearer {TOKEN_PREFIX}unknown"})
    assert api.status_code == 503
    assert api.get_json() == {"error": DATABASE_UNREACHABLE, "status": 503}
    proxy.restore()
    assert client.get("/bids/").status_code == 200  # the same app, no restart


def test_a_cut_between_requests_is_noticed_before_use_and_the_next_request_is_served(proxied):
    """Every pooled connection is cut while nobody asks; the next request must not be the one that finds out."""
    app, proxy, _ = proxied
    client = app.test_client()
    assert login(client, BIDDER).status_code == 302
    assert client.get("/bids/").status_code == 200
    proxy.refuse()
    proxy.restore()
    assert client.get("/bids/").status_code == 200


def documents_and_entries(direct, bid_id: int) -> tuple[int, int]:
    with direct.connect() as conn:
        documents = conn.execute(sa.text("SELECT count(*) FROM bid_document WHERE bid_id = :b"), {"b": bid_id})
        entries = conn.execute(sa.text("SELECT count(*) FROM audit_entry WHERE action = 'bid.document'"))
        return documents.scalar_one(), entries.scalar_one()


@pytest.mark.parametrize("marker", [b"COMMIT\x00", b"INSERT INTO audit_entry"], ids=["at-commit", "mid-service"])
def test_a_connection_cut_in_the_middle_of_an_upload_records_nothing_and_keeps_no_file(proxied, tmp_path, marker):
    app, proxy, direct = proxied
    client = app.test_client()
    assert login(client, BIDDER).status_code == 302
    bid_id = start_bid(client)
    proxy.cut_when(marker)
    assert_unavailable(upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf"))
    assert proxy.cuts == 1
    assert documents_and_entries(direct, bid_id) == (0, 0)
    folder = tmp_path / "uploads" / "bids" / str(bid_id)
    assert not folder.exists() or list(folder.iterdir()) == []  # the file written before the cut is removed
    # The connection is back (the cut was one-shot): the same upload is recorded, with its file.
    assert upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf").status_code == 302
    assert documents_and_entries(direct, bid_id) == (1, 1)
    assert len(list(folder.iterdir())) == 1


def test_sqlite_locked_past_its_busy_timeout_gives_a_503_and_then_serves(tmp_path):
    path = tmp_path / "locked.sqlite3"
    app = make_app(f"sqlite:///{path}", tmp_path)
    client = app.test_client()
    assert login(client, BIDDER).status_code == 302
    bid_id = start_bid(client)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the 5 s busy timeout
        assert_unavailable(upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf"), DATABASE_BUSY)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    folder = tmp_path / "uploads" / "bids" / str(bid_id)
    assert not folder.exists() or list(folder.iterdir()) == []
    assert upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf").status_code == 302
    with app.app_context():
        assert db.session.execute(sa.text("SELECT count(*) FROM bid_document")).scalar_one() == 1
        db.session.remove()
        db.engine.dispose()


def test_sqlite_on_a_disk_turned_read_only_gives_a_503(tmp_path):
    """The file system under the database remounted read-only (a real tmpfs): every request that writes gets the
    503, whether SQLite says "readonly database", "unable to open database file" or "disk I/O error"."""
    from tests.faults import remount_read_only, tmpfs

    with tmpfs(tmp_path / "disk", size="16m") as disk:
        app = make_app(f"sqlite:///{disk / 'gambit.sqlite3'}", tmp_path)
        try:
            client = app.test_client()
            assert login(client, BIDDER).status_code == 302
            bid_id = start_bid(client)
            with app.app_context():
                db.engine.dispose()  # no connection opened before the fault: each request opens its own
            remount_read_only(disk)
            assert_unavailable(upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf"))
            folder = tmp_path / "uploads" / "bids" / str(bid_id)
            assert not folder.exists() or list(folder.iterdir()) == []
        finally:
            with app.app_context():
                db.session.remove()
                db.engine.dispose()
