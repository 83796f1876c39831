from datetime import UTC, datetime

from sqlalchemy import delete, select, update

from core import audit
from core.audit import AuditEntry, verify_chain
from core.db import db

NOW = datetime(2015, 5, 1, 12, 0, tzinfo=UTC)


def _three_entries():
    for i in range(3):
        audit.record("thing.done", actor=None, now=NOW, object_type="Thing", object_id=str(i), data={"n": i})
    db.session.commit()


def test_chain_of_entries_verifies(ctx):
    _three_entries()
    report = verify_chain()
    assert report.ok and report.checked == 3


def test_each_entry_links_to_the_one_before(ctx):
    _three_entries()
    entries = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    assert entries[0].prev_hash == audit.GENESIS
    assert [e.prev_hash for e in entries[1:]] == [e.hash for e in entries[:-1]]


def test_edited_entry_is_reported_by_verify(ctx):
    _three_entries()
    second = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()[1]
    db.session.execute(update(AuditEntry).where(AuditEntry.id == second.id).values(data='{"n": 99}'))
    db.session.commit()
    report = verify_chain()
    assert report.broken_at == second.id
    assert "was changed after it was written" in report.reason


def test_deleted_entry_is_reported_by_verify(ctx):
    _three_entries()
    ids = db.session.scalars(select(AuditEntry.id).order_by(AuditEntry.id)).all()
    db.session.execute(delete(AuditEntry).where(AuditEntry.id == ids[1]))
    db.session.commit()
    report = verify_chain()
    assert report.broken_at == ids[2]
    assert "deleted or inserted" in report.reason


def test_audit_verify_command_exits_1_on_a_broken_chain(app, runner):
    with app.app_context():
        _three_entries()
        result = runner.invoke(args=["audit", "verify"])
        assert result.exit_code == 0, result.output
        assert "3 entries checked" in result.output
        db.session.execute(update(AuditEntry).where(AuditEntry.object_id == "0").values(action="thing.undone"))
        db.session.commit()
        result = runner.invoke(args=["audit", "verify"])
    assert result.exit_code == 1
    assert "audit log BROKEN" in result.output
