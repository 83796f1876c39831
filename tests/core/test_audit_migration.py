"""The migration to the keyed MAC re-chains an intact log and refuses to launder a broken one."""

import hashlib
import json
import os
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from flask_migrate import upgrade

from core.db import db
from evidence.audit import verify_chain

OLD_HEAD = "b0a4d1c2e7f9"  # the revision before the keyed MAC


def _old_entries(conn, n, *, tamper_at=None):
    prev = "0" * 64
    for i in range(1, n + 1):
        at = datetime(2015, 5, 1, 12, 0, i, tzinfo=UTC)
        row = [prev, at.isoformat(), "system", "thing.done", "Thing", str(i), "{}"]
        digest = hashlib.sha256(json.dumps(row, separators=(",", ":")).encode()).hexdigest()
        conn.execute(sa.text("INSERT INTO audit_entry (id, at, actor_id, actor_label, action, object_type, "
                             "object_id, data, prev_hash, hash) VALUES (:id, :at, NULL, 'system', 'thing.done', "
                             "'Thing', :oid, :data, :prev, :hash)"),
                     {"id": i, "at": at.replace(tzinfo=None), "oid": str(i),
                      "data": '{"n": 9}' if i == tamper_at else "{}", "prev": prev, "hash": digest})
        prev = digest


@pytest.fixture
def migrated_app(tmp_path):
    from app import create_app

    original = db.session
    application = create_app({"TESTING": True, "SECRET_KEY": "x", "AUDIT_KEY": "k" * 64,
                              "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'm.sqlite3'}",
                              "UPLOAD_DIR": str(tmp_path / "u")})
    yield application
    with application.app_context():
        db.engine.dispose()
    db.session = original


@pytest.mark.no_db
def test_upgrade_rechains_an_intact_log_under_the_key(migrated_app):
    directory = os.path.join(migrated_app.root_path, "migrations")
    with migrated_app.app_context():
        upgrade(directory=directory, revision=OLD_HEAD)
        with db.engine.begin() as conn:
            _old_entries(conn, 4)
        upgrade(directory=directory)
        report = verify_chain()
        assert report.ok and report.checked == 4


@pytest.mark.no_db
def test_upgrade_refuses_to_rekey_a_log_already_broken(migrated_app, capfd):
    directory = os.path.join(migrated_app.root_path, "migrations")
    with migrated_app.app_context():
        upgrade(directory=directory, revision=OLD_HEAD)
        with db.engine.begin() as conn:
            _old_entries(conn, 4, tamper_at=3)
        with pytest.raises(SystemExit):  # Flask-Migrate logs the error and exits 1
            upgrade(directory=directory)
        assert "the audit log is already broken at entry 3 (thing.done)" in capfd.readouterr().err
        with db.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == OLD_HEAD
        assert verify_chain().broken_at == 1  # left under the old digest: the break stays visible


@pytest.mark.no_db
def test_upgrade_marks_evidence_already_written_as_not_bound_rather_than_tampered(migrated_app, tmp_path):
    import sqlite3

    from evidence.audit import verify_evidence

    directory = os.path.join(migrated_app.root_path, "migrations")
    with migrated_app.app_context():
        upgrade(directory=directory, revision="e23d0a1b2c3d")  # the revision before digests
        db.engine.dispose()
    raw = sqlite3.connect(tmp_path / "m.sqlite3")  # foreign keys off: a vote alone stands for the old data
    raw.execute("INSERT INTO vote (id, event_id, member_id, bid_id, cast_at) VALUES (7, 1, 1, NULL, "
                "'2015-05-20 10:00:00.000000')")
    raw.commit()
    raw.close()
    with migrated_app.app_context():
        upgrade(directory=directory)
        report = verify_evidence()
        db.session.remove()
        db.engine.dispose()
    assert report.ok and report.unbound == ("vote 7: not bound (written before digests)",)
