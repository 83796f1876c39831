import hashlib
import json
import os
import stat
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, select, update

import config
from core.db import db
from evidence import audit
from evidence.audit import AuditEntry, Checkpoint, checkpoint, verify_chain

NOW = datetime(2015, 5, 1, 12, 0, tzinfo=UTC)


def _entries(n=3, actor=None):
    for i in range(n):
        audit.record("thing.done", actor=actor, now=NOW + timedelta(seconds=i), object_type="Thing",
                     object_id=str(i), data={"n": i})
    db.session.commit()


def _ids():
    return db.session.scalars(select(AuditEntry.id).order_by(AuditEntry.id)).all()


def _set(entry_id, **values):
    db.session.execute(update(AuditEntry).where(AuditEntry.id == entry_id).values(**values))
    db.session.commit()


def _rechain(digest, start=1):
    """Recompute the prev_hash/hash links from entry `start` on with `digest(entry, prev)`, as an attacker
    with write access to the database would."""
    entries = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    prev = audit.GENESIS
    rows = []
    for entry in entries:
        if entry.id >= start:
            rows.append((entry.id, prev, digest(entry, prev)))
            prev = rows[-1][2]
        else:
            prev = entry.hash
    for entry_id, prev_hash, new in rows:
        _set(entry_id, prev_hash=prev_hash, hash=new)


def test_chain_of_entries_verifies(ctx):
    _entries()
    report = verify_chain()
    assert report.ok and report.checked == 3
    assert report.head == checkpoint()


def test_entries_are_numbered_from_one_and_link_to_the_one_before(ctx):
    _entries()
    entries = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    assert [e.id for e in entries] == [1, 2, 3]
    assert entries[0].prev_hash == audit.GENESIS
    assert [e.prev_hash for e in entries[1:]] == [e.hash for e in entries[:-1]]


def test_checkpoint_is_the_head_of_the_chain(ctx):
    assert checkpoint() == Checkpoint(0, audit.GENESIS)
    _entries()
    last = db.session.get(AuditEntry, 3)
    assert checkpoint() == Checkpoint(3, last.hash)
    assert str(checkpoint()) == f"3:{last.hash}"


@pytest.mark.parametrize(("column", "value"), [
    ("at", NOW + timedelta(days=1)),
    ("actor_id", None),
    ("actor_label", "someone-else@example.org"),
    ("action", "thing.undone"),
    ("object_type", "Other"),
    ("object_id", "99"),
    ("data", '{"n": 99}'),
    ("hash", "f" * 64),
])
def test_editing_any_column_of_an_entry_is_reported_at_that_entry(ctx, make, column, value):
    from accounts.models import User

    actor = db.session.get(User, make.user())
    _entries(actor=actor)
    _set(2, **{column: value})
    report = verify_chain()
    assert report.broken_at == 2, column
    assert report.reason == ("entry 2 (thing.undone) " if column == "action" else "entry 2 (thing.done) ") + \
        "does not match its MAC: it was changed after it was written, or the chain was rewritten without the audit key"


def test_giving_an_entry_an_actor_it_did_not_have_is_reported(ctx, make):
    _entries()
    _set(2, actor_id=make.user())
    assert verify_chain().broken_at == 2


def test_renumbering_an_entry_is_reported(ctx):
    _entries()
    _set(3, id=7)
    report = verify_chain()
    assert report.broken_at == 7 and "does not match its MAC" in report.reason


def test_relinking_an_entry_is_reported(ctx):
    _entries()
    _set(2, prev_hash="a" * 64)
    report = verify_chain()
    assert report.broken_at == 2
    assert "does not follow entry 1" in report.reason


def test_deleted_entry_is_reported_at_the_entry_after_it(ctx):
    _entries()
    db.session.execute(delete(AuditEntry).where(AuditEntry.id == 2))
    db.session.commit()
    report = verify_chain()
    assert report.broken_at == 3
    assert report.reason == ("entry 3 (thing.done) does not follow entry 1: an entry between them was deleted "
                             "or inserted")


def test_deleted_first_entry_is_reported(ctx):
    _entries()
    db.session.execute(delete(AuditEntry).where(AuditEntry.id == 1))
    db.session.commit()
    report = verify_chain()
    assert report.broken_at == 2 and "does not follow the start of the log" in report.reason


def test_deleted_tail_is_reported_against_a_checkpoint(ctx):
    _entries(10)
    kept = checkpoint()
    db.session.execute(delete(AuditEntry).where(AuditEntry.id > 5))
    db.session.commit()
    assert verify_chain().ok  # on its own, a shorter chain is still a chain: this is what checkpoints are for
    report = verify_chain(kept)
    assert report.broken_at == 6
    assert report.reason == ("the audit log ends at entry 5, but the checkpoint names entry 10: the entries after "
                             "5 were deleted")


def test_emptied_table_is_reported_against_a_checkpoint(ctx):
    _entries()
    kept = checkpoint()
    db.session.execute(delete(AuditEntry))
    db.session.commit()
    report = verify_chain(kept)
    assert report.broken_at == 1
    assert report.reason == "the audit log is empty, but the checkpoint names entry 3: every entry was deleted"


def test_an_older_checkpoint_still_holds_as_the_chain_grows(ctx):
    _entries()
    kept = checkpoint()
    _entries(2)
    assert verify_chain(kept).ok


def test_chain_rewritten_without_the_key_is_reported_at_its_first_entry(ctx):
    _entries()

    def sha256(entry, prev):  # the old unkeyed digest, recomputed by someone with only database access
        payload = json.dumps([prev, entry.at.isoformat(), entry.actor_label, "thing.redone", entry.object_type,
                              entry.object_id, entry.data], separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()

    db.session.execute(update(AuditEntry).values(action="thing.redone"))
    _rechain(sha256)
    report = verify_chain()
    assert report.broken_at == 1
    assert "rewritten without the audit key" in report.reason


def test_chain_rewritten_with_another_key_is_reported(ctx):
    _entries()
    _set(2, data='{"n": 99}')
    _rechain(lambda e, prev: audit._digest(b"guessed", seq=e.id, prev_hash=prev, at=e.at, actor_id=e.actor_id,
                                           actor_label=e.actor_label, action=e.action,
                                           object_type=e.object_type, object_id=e.object_id, data=e.data),
             start=2)
    report = verify_chain()
    assert report.broken_at == 2 and "rewritten without the audit key" in report.reason


def test_chain_rewritten_with_the_key_is_reported_against_a_checkpoint(app, ctx):
    _entries()
    kept = checkpoint()
    _set(2, data='{"n": 99}')
    key = app.config["AUDIT_KEY"].encode()
    _rechain(lambda e, prev: audit._digest(key, seq=e.id, prev_hash=prev, at=e.at, actor_id=e.actor_id,
                                           actor_label=e.actor_label, action=e.action,
                                           object_type=e.object_type, object_id=e.object_id, data=e.data),
             start=2)
    assert verify_chain().ok
    report = verify_chain(kept)
    assert report.broken_at == 3
    assert report.reason == "entry 3 (thing.done) does not match the checkpoint: the chain was rewritten up to it"


def test_the_same_chain_under_another_key_does_not_verify(app, ctx):
    _entries()
    saved = app.config["AUDIT_KEY"]
    app.config["AUDIT_KEY"] = "another-key"
    try:
        assert verify_chain().broken_at == 1
    finally:
        app.config["AUDIT_KEY"] = saved


def test_time_in_another_zone_is_stored_in_utc_and_verifies(ctx):
    kyiv = datetime(2015, 5, 1, 15, 0, 0, 123456, tzinfo=timezone(timedelta(hours=3)))
    entry = audit.record("thing.done", actor=None, now=kyiv, object_type="Thing", object_id="1")
    db.session.commit()
    db.session.expire_all()
    assert db.session.get(AuditEntry, entry.id).at == kyiv
    assert verify_chain().ok


def test_time_without_a_zone_is_refused(ctx):
    with pytest.raises(ValueError, match="timezone-aware"):
        audit.record("thing.done", actor=None, now=datetime(2015, 5, 1), object_type="Thing", object_id="1")


def test_audit_key_is_generated_once_into_the_instance_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("AUDIT_KEY", raising=False)
    monkeypatch.setattr(config, "INSTANCE_DIR", tmp_path)
    first = config._audit_key()
    assert len(first) == 64
    assert (tmp_path / "audit_key").read_text() == first
    assert stat.S_IMODE(os.stat(tmp_path / "audit_key").st_mode) == 0o600
    assert config._audit_key() == first
    assert [p.name for p in tmp_path.iterdir()] == ["audit_key"]
    monkeypatch.setenv("AUDIT_KEY", "from-the-environment")
    assert config._audit_key() == "from-the-environment"
    assert config.Config().AUDIT_KEY == "from-the-environment"


def test_audit_checkpoint_and_verify_commands(app, runner):
    with app.app_context():
        _entries()
        printed = runner.invoke(args=["audit", "checkpoint"])
        assert printed.exit_code == 0, printed.output
        kept = printed.output.strip()
        assert kept == str(checkpoint())
        result = runner.invoke(args=["audit", "verify", "--expect", kept])
        assert result.exit_code == 0, result.output
        assert f"audit log intact: 3 entries checked, checkpoint 3 matches; head {kept}" in result.output
        db.session.execute(delete(AuditEntry).where(AuditEntry.id == 3))
        db.session.commit()
        result = runner.invoke(args=["audit", "verify", "--expect", kept])
    assert result.exit_code == 1
    assert ("audit log BROKEN at entry 3: the audit log ends at entry 2, but the checkpoint names entry 3: the "
            "entries after 2 were deleted") in result.output


def test_audit_verify_command_exits_1_on_an_edited_entry(app, runner):
    with app.app_context():
        _entries()
        result = runner.invoke(args=["audit", "verify"])
        assert result.exit_code == 0, result.output
        assert "3 entries checked" in result.output
        db.session.execute(update(AuditEntry).where(AuditEntry.object_id == "0").values(action="thing.undone"))
        db.session.commit()
        result = runner.invoke(args=["audit", "verify"])
    assert result.exit_code == 1
    assert "audit log BROKEN at entry 1: entry 1 (thing.undone) does not match its MAC" in result.output


def test_audit_verify_refuses_a_malformed_checkpoint(app, runner):
    result = runner.invoke(args=["audit", "verify", "--expect", "12:nothex"])
    assert result.exit_code == 2
    assert "a checkpoint reads SEQ:DIGEST, a number, a colon and 64 hex digits (got '12:nothex')" in result.output
