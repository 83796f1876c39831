"""What evidence.audit promises of the chain itself, pinned one by one (its mutation run, docs/mutation.md, found them
unguarded): the data column's one text form, which the audit page's sign-in filter compares whole; the MAC's exact
input, so that a chain written on one machine verifies on another whatever its time zone; who and what an entry
names when it names nobody; the report of each way a chain is cut, rewritten or renumbered, whole; the head after
an object's entry (the receipt of a payment, the checkpoint in a decision's minutes); and, on PostgreSQL, that an
append holds the chain until its transaction ends, and that the walk follows the entries' numbers, not where the
rows lie on disk."""

import contextlib
import enum
import hashlib
import hmac
import os
import time
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from sqlalchemy import delete, select, update

from core.db import db
from evidence import audit
from evidence.audit import AuditEntry, ChainReport, Checkpoint, checkpoint, checkpoint_of, data_text, verify_chain
from tests.core.test_audit import _entries, _rechain, _set
from tests.faults import postgres_database

NOW = datetime(2015, 5, 1, 12, 0, tzinfo=UTC)
KEY_MISSING = "AUDIT_KEY is not set: the audit log cannot be written or checked without its key"


class Kind(enum.Enum):
    LATE = "late"


@contextlib.contextmanager
def local_zone(name: str):
    """The process's local time zone set to `name` (TZ), as on a server configured for it; restored after."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


def _rekeyed(app, start: int):
    """Rewrite the chain from entry `start` on with the real key, as someone holding it would."""
    key = app.config["AUDIT_KEY"].encode()
    _rechain(lambda e, prev: audit._digest(key, seq=e.id, prev_hash=prev, at=e.at, actor_id=e.actor_id,
                                           actor_label=e.actor_label, action=e.action, object_type=e.object_type,
                                           object_id=e.object_id, data=e.data), start=start)


# ------------------------------------------------------------------------------------------------ the data


def test_an_entrys_data_is_kept_as_json_text_with_its_keys_sorted_that_a_reader_compares_whole(ctx):
    data = {"on": date(2015, 3, 1), "name": "Žaneta – Оксана", "kind": Kind.LATE, "amount": Decimal("1.50"),
            "at": datetime(2015, 3, 1, 12, 0, tzinfo=UTC), "count": 2}
    entry = audit.record("thing.done", actor=None, now=NOW, object_type="Thing", object_id="1", data=data)
    assert entry.data == ('{"amount": "1.50", "at": "2015-03-01T12:00:00+00:00", "count": 2, "kind": "late", '
                          '"name": "Žaneta – Оксана", "on": "2015-03-01"}')
    assert entry.data_dict["kind"] == "late" and entry.data_dict["amount"] == "1.50"
    # The audit page finds sign-outs by their data as recorded: the same data in another order is the same text.
    same = dict(reversed(list(data.items())))
    assert db.session.scalars(select(AuditEntry.id).where(AuditEntry.data == data_text(same))).all() == [entry.id]
    assert data_text(None) == "{}"


def test_a_value_that_cannot_be_written_as_json_is_refused_by_its_type(ctx):
    with pytest.raises(TypeError, match=r"^cannot record set in the audit log$"):
        data_text({"ids": {1, 2}})
    with pytest.raises(TypeError, match=r"^cannot record object in the audit log$"):
        audit.record("thing.done", actor=None, now=NOW, object_type="Thing", object_id="1", data={"x": object()})


def test_an_entry_names_the_system_and_no_object_when_it_has_neither(ctx, make):
    from accounts.models import User

    entry = audit.record("thing.done", actor=None, now=NOW)
    assert (entry.actor_id, entry.actor_label, entry.object_type, entry.object_id, entry.data) == (
        None, "system", "-", "-", "{}")
    user = db.session.get(User, make.user(email="someone@example.org"))
    entry = audit.record("thing.done", user, actor=user, now=NOW)
    assert (entry.actor_id, entry.actor_label, entry.object_type, entry.object_id) == (
        user.id, "someone@example.org", "User", str(user.id))
    # An object without an id is named by its type alone.
    entry = audit.record("thing.done", SimpleNamespace(), actor=None, now=NOW)
    assert (entry.object_type, entry.object_id) == ("SimpleNamespace", "-")
    assert verify_chain().ok


def test_a_time_without_a_zone_is_refused_in_words(ctx):
    with pytest.raises(ValueError, match=r"^audit entries need a timezone-aware time$"):
        audit.record("thing.done", actor=None, now=datetime(2015, 5, 1), object_type="Thing", object_id="1")


def test_without_its_key_the_log_is_neither_written_nor_checked_and_says_why(app, ctx):
    saved = app.config["AUDIT_KEY"]
    app.config["AUDIT_KEY"] = ""
    try:
        with pytest.raises(RuntimeError, match=rf"^{KEY_MISSING}$"):
            audit.record("thing.done", actor=None, now=NOW)
        with pytest.raises(RuntimeError, match=rf"^{KEY_MISSING}$"):
            verify_chain()
    finally:
        app.config["AUDIT_KEY"] = saved


# ------------------------------------------------------------------------------------------------ the MAC


def test_an_entrys_mac_is_hmac_sha256_of_its_columns_in_one_text_form(app, ctx):
    head = checkpoint()
    at = datetime(2015, 5, 1, 18, 0, 0, 42, tzinfo=timezone(timedelta(hours=3)))  # hashed as the UTC instant
    entry = audit.record("thing.done", actor=None, now=at, object_type="Thing", object_id="Ž1",
                         data={"name": "Оксана"})
    seq = head.seq + 1
    payload = (f'["gambit-audit-2",{seq},"{head.digest}","2015-05-01T15:00:00.000042+00:00",null,"system",'
               '"thing.done","Thing","Ž1","{\\"name\\": \\"Оксана\\"}"]')
    key = app.config["AUDIT_KEY"].encode()
    assert entry.id == seq and entry.prev_hash == head.digest
    assert entry.hash == hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def test_a_chain_written_in_one_time_zone_verifies_on_a_server_in_another(ctx):
    with local_zone("Asia/Tokyo"):
        entry = audit.record("thing.done", actor=None, now=NOW, object_type="Thing", object_id="1")
        assert entry.at.utcoffset() == timedelta(0) and entry.at == NOW
        db.session.commit()
        kept = checkpoint()
    with local_zone("America/New_York"):
        report = verify_chain(kept)
    assert report.ok, report.reason


# ---------------------------------------------------------------------------------------- the chain's reports


def test_each_break_is_reported_whole_with_the_entries_read_and_the_head_reached(app, ctx):
    _entries(4)
    _, second, third, fourth = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    kept = checkpoint()
    _set(third.id, prev_hash="a" * 64)
    assert verify_chain() == ChainReport(3, third.id, f"entry {third.id} (thing.done) does not follow entry "
                                         f"{second.id}: an entry between them was deleted or inserted")
    _set(third.id, prev_hash=second.hash, data='{"n": 99}')
    assert verify_chain() == ChainReport(3, third.id, f"entry {third.id} (thing.done) does not match its MAC: it "
                                         "was changed after it was written, or the chain was rewritten without "
                                         "the audit key")
    _rekeyed(app, third.id)
    rewritten = db.session.get(AuditEntry, fourth.id)
    assert verify_chain(kept) == ChainReport(
        fourth.id, fourth.id, f"entry {fourth.id} (thing.done) does not match the checkpoint: the chain was "
        "rewritten up to it", Checkpoint(fourth.id, rewritten.hash))
    db.session.execute(delete(AuditEntry).where(AuditEntry.id > second.id))
    db.session.commit()
    assert verify_chain(kept) == ChainReport(
        second.id, second.id + 1, f"the audit log ends at entry {second.id}, but the checkpoint names entry "
        f"{fourth.id}: the entries after {second.id} were deleted", Checkpoint(second.id, second.hash))
    db.session.execute(delete(AuditEntry))
    db.session.commit()
    assert verify_chain(kept) == ChainReport(0, 1, f"the audit log is empty, but the checkpoint names entry "
                                             f"{fourth.id}: every entry was deleted", Checkpoint(0, audit.GENESIS))


def test_an_entry_named_by_the_checkpoint_but_gone_from_a_relinked_log_is_named(app, ctx):
    _entries(3)
    kept = Checkpoint(2, db.session.get(AuditEntry, 2).hash)
    db.session.execute(delete(AuditEntry).where(AuditEntry.id == 2))
    db.session.commit()
    _rekeyed(app, 3)  # entry 3 now links to entry 1 under the key: the chain alone looks whole
    assert verify_chain().ok
    head = Checkpoint(3, db.session.get(AuditEntry, 3).hash)
    assert verify_chain(kept) == ChainReport(2, 2, "entry 2, named by the checkpoint, is not in the audit log", head)


def test_a_checkpoint_of_the_empty_log_holds_before_and_after_the_log_grows(ctx):
    kept = checkpoint()
    assert kept == Checkpoint(0, audit.GENESIS)
    assert verify_chain(kept) == ChainReport(0, None, "", kept)
    _entries(2)
    assert verify_chain(kept).ok


def test_a_checkpoint_at_the_first_entry_catches_that_entry_rewritten_or_every_entry_deleted(app, ctx):
    _entries(1)
    kept = checkpoint()
    assert kept.seq == 1
    _set(1, data='{"n": 7}')
    _rekeyed(app, 1)
    report = verify_chain(kept)
    assert (report.broken_at, report.reason) == (1, "entry 1 (thing.done) does not match the checkpoint: the chain "
                                                    "was rewritten up to it")
    db.session.execute(delete(AuditEntry))
    db.session.commit()
    assert verify_chain(kept).broken_at == 1


def test_a_checkpoint_is_read_with_its_digest_in_either_case_and_spaces_around(ctx):
    digest = hashlib.sha256(b"x").hexdigest()
    assert Checkpoint.parse(f" 12:{digest.upper()}\n") == Checkpoint(12, digest)
    with pytest.raises(ValueError, match=r"^a checkpoint reads SEQ:DIGEST, a number, a colon and 64 hex digits "
                                         r"\(got None\)$"):
        Checkpoint.parse(None)


def test_audit_verify_takes_a_checkpoint_copied_in_capitals(app, runner):
    with app.app_context():
        _entries()
        kept = checkpoint()
        result = runner.invoke(args=["audit", "verify", "--expect", f"{kept.seq}:{kept.digest.upper()}"])
    assert result.exit_code == 0, result.output
    assert f"checkpoint {kept.seq} matches; head {kept}" in result.output


# ------------------------------------------------------------------------------ the head after an object's entry


def test_the_head_after_an_objects_entry_is_that_of_its_latest_entry_of_those_actions(ctx, make):
    from accounts.models import User

    one, other = (db.session.get(User, make.user()) for _ in range(2))
    made = audit.record("thing.made", one, actor=None, now=NOW)
    other_made = audit.record("thing.made", other, actor=None, now=NOW)
    changed = audit.record("thing.changed", one, actor=None, now=NOW)
    audit.record("thing.noted", one, actor=None, now=NOW)
    audit.record("thing.made", actor=None, now=NOW, object_type="Contract", object_id=str(one.id))
    audit.record("thing.made", actor=None, now=NOW, object_type="User", object_id=f"{one.id}0")
    assert checkpoint_of(one, "thing.made") == Checkpoint(made.id, made.hash)
    assert checkpoint_of(one, "thing.made", "thing.changed") == Checkpoint(changed.id, changed.hash)
    assert checkpoint_of(other, "thing.made") == Checkpoint(other_made.id, other_made.hash)
    assert checkpoint_of(other, "thing.changed") is None
    # The latest of them, not the first found: the same action again, an action that sorts after another.
    again = audit.record("thing.made", one, actor=None, now=NOW)
    assert checkpoint_of(one, "thing.made") == Checkpoint(again.id, again.hash)
    assert checkpoint_of(one, "thing.changed", "thing.made") == Checkpoint(again.id, again.hash)


# ------------------------------------------------------------------------------------------------ PostgreSQL


@pytest.fixture
def on_postgres(tmp_path, app):
    """An app of its own on a fresh PostgreSQL database (whatever database the suite runs on), the test app's key."""
    from app import create_app

    with postgres_database() as url:
        application = create_app({
            "TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url, "SERVER_NAME": "gambit.test",
            "UPLOAD_DIR": str(tmp_path / "uploads"), "AUDIT_KEY": app.config["AUDIT_KEY"],
            "OUTBOX_DISPATCH": "manual"})
        with application.app_context():
            db.create_all()
        try:
            yield application, url
        finally:
            with application.app_context():
                db.session.remove()
                db.engine.dispose()


@pytest.mark.no_db
def test_on_postgresql_an_append_holds_the_chain_until_its_transaction_ends_and_the_next_follows_it(on_postgres):
    """Two writers that both read the last entry before either commits would fork the chain (or one would fail on
    the unique links): the first append takes a lock that only the end of its transaction releases."""
    application, url = on_postgres
    watcher = sa.create_engine(url)
    held = sa.text("SELECT count(*) FROM pg_locks WHERE pid = :pid AND locktype = 'advisory' AND granted")
    try:
        with application.app_context():
            first = audit.record("thing.first", actor=None, now=NOW)
            first_id, first_hash = first.id, first.hash
            pid = db.session.execute(sa.text("SELECT pg_backend_pid()")).scalar()
            with watcher.connect() as conn:
                assert conn.execute(held, {"pid": pid}).scalar() == 1
            db.session.commit()
            with watcher.connect() as conn:
                assert conn.execute(held, {"pid": pid}).scalar() == 0
        with application.app_context():
            second = audit.record("thing.second", actor=None, now=NOW)
            db.session.commit()
            assert (first_id, second.id, second.prev_hash) == (1, 2, first_hash)
            assert verify_chain().ok
    finally:
        watcher.dispose()


@pytest.mark.no_db
def test_on_postgresql_the_walk_follows_the_entries_numbers_not_where_an_edited_row_lies(on_postgres):
    application, _ = on_postgres
    with application.app_context():
        for i in range(3):
            audit.record("thing.done", actor=None, now=NOW + timedelta(seconds=i), data={"n": i})
        db.session.commit()
        # An UPDATE writes the row anew at the end of the table: a scan in storage order reads 1, 3, 2.
        db.session.execute(update(AuditEntry).where(AuditEntry.id == 2).values(data='{"n": 9}'))
        db.session.commit()
        report = verify_chain()
    assert (report.broken_at, report.checked) == (2, 2)
    assert report.reason.startswith("entry 2 (thing.done) does not match its MAC")
