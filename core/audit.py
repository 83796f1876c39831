"""The audit log: every state change a service makes, chained by a keyed MAC so an edit, a deletion or a
rewrite shows.

Each entry's MAC (HMAC-SHA256 with AUDIT_KEY, a key kept outside the database) covers every column of the
entry, the previous entry's MAC included. Entries are numbered 1, 2, 3 ... (the id is the sequence number).
A chain cut short at its end, or emptied, still looks whole on its own: `flask audit checkpoint` prints the
head (sequence number and MAC) for keeping elsewhere, and `flask audit verify --expect SEQ:DIGEST` checks the
log still reaches that head.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import click
from flask import Blueprint, current_app
from flask.cli import with_appcontext
from sqlalchemy import ForeignKey, String, Text, select, text
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Model, db

GENESIS = "0" * 64


class AuditEntry(Model):
    __tablename__ = "audit_entry"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime]
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"), index=True)
    actor_label: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(80), index=True)
    object_type: Mapped[str] = mapped_column(String(40))
    object_id: Mapped[str] = mapped_column(String(64))
    data: Mapped[str] = mapped_column(Text)
    # Unique: two writers that read the same last entry cannot both append (the chain never forks).
    prev_hash: Mapped[str] = mapped_column(String(64), unique=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)

    @property
    def data_dict(self) -> dict:
        return json.loads(self.data)


def _default(value: Any):
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "value"):  # enums
        return value.value
    raise TypeError(f"cannot record {type(value).__name__} in the audit log")


def _key() -> bytes:
    key = current_app.config.get("AUDIT_KEY")
    if not key:
        raise RuntimeError("AUDIT_KEY is not set: the audit log cannot be written or checked without its key")
    return key.encode()


def _instant(at: datetime) -> str:
    """The one text form of an instant in a MAC: UTC, to the microsecond (what both databases keep)."""
    if at.tzinfo is None:
        raise ValueError("audit entries need a timezone-aware time")
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def _digest(key: bytes, *, seq: int, prev_hash: str, at: datetime, actor_id: int | None, actor_label: str,
            action: str, object_type: str, object_id: str, data: str) -> str:
    """HMAC-SHA256 over every column of an entry (its own MAC aside)."""
    payload = json.dumps(["gambit-audit-2", seq, prev_hash, _instant(at), actor_id, actor_label, action,
                          object_type, object_id, data], separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _entry_digest(entry: AuditEntry, key: bytes) -> str:
    return _digest(key, seq=entry.id, prev_hash=entry.prev_hash, at=entry.at, actor_id=entry.actor_id,
                   actor_label=entry.actor_label, action=entry.action, object_type=entry.object_type,
                   object_id=entry.object_id, data=entry.data)


def record(action: str, obj: Any = None, *, actor, now: datetime, data: dict | None = None,
           object_type: str | None = None, object_id: str | None = None) -> AuditEntry:
    """Append one entry for a state change; flushes, never commits.

    `actor` is a user (or None for the system); `obj` a model instance whose class name and id are recorded.
    Raises TypeError if `data` holds a value that cannot be written as JSON, ValueError if `now` has no time zone,
    RuntimeError if AUDIT_KEY is not set.
    """
    session = db.session
    if session.get_bind().dialect.name == "postgresql":
        # Serialise appends across processes: one chain, no forks, no retries.
        session.execute(text("SELECT pg_advisory_xact_lock(727274)"))
    last = session.scalars(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1)).first()
    prev = last.hash if last else GENESIS
    if obj is not None:
        object_type = object_type or type(obj).__name__
        object_id = object_id or str(getattr(obj, "id", ""))
    body = json.dumps(data or {}, sort_keys=True, default=_default, ensure_ascii=False)
    label = actor.email if actor is not None else "system"
    if now.tzinfo is None:
        raise ValueError("audit entries need a timezone-aware time")
    # Stored in UTC, so the instant read back is the instant that was hashed, whatever zone `now` came in.
    now = now.astimezone(UTC)
    seq = (last.id if last else 0) + 1
    entry = AuditEntry(id=seq, at=now, actor_id=getattr(actor, "id", None), actor_label=label, action=action,
                       object_type=object_type or "-", object_id=object_id or "-", data=body, prev_hash=prev)
    entry.hash = _entry_digest(entry, _key())
    session.add(entry)
    session.flush()
    return entry


@dataclass(frozen=True)
class Checkpoint:
    """The head of the chain: its last entry's sequence number and MAC ("0:000...0" for an empty log)."""

    seq: int
    digest: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.digest}"

    @classmethod
    def parse(cls, raw: str) -> Checkpoint:
        """Read "SEQ:DIGEST"; raises ValueError saying what is wrong."""
        match = re.fullmatch(r"\s*(\d{1,12}):([0-9a-fA-F]{64})\s*", raw or "")
        if not match:
            raise ValueError(f"a checkpoint reads SEQ:DIGEST, a number, a colon and 64 hex digits (got {raw!r})")
        return cls(int(match.group(1)), match.group(2).lower())


def checkpoint() -> Checkpoint:
    """The chain's head now, to be kept somewhere the database's writers cannot reach."""
    last = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1)).first()
    return Checkpoint(last.id, last.hash) if last else Checkpoint(0, GENESIS)


def checkpoint_of(obj: Any, *actions: str) -> Checkpoint | None:
    """The chain's head right after the latest entry that recorded one of `actions` on `obj` (that entry's
    sequence number and MAC), or None when no such entry exists. Printed in the decision record and shown with
    a payment: keep it elsewhere, and `flask audit verify --expect` shows whether the log still reaches it."""
    entry = db.session.scalars(select(AuditEntry).where(
        AuditEntry.action.in_(actions), AuditEntry.object_type == type(obj).__name__,
        AuditEntry.object_id == str(obj.id)).order_by(AuditEntry.id.desc()).limit(1)).first()
    return Checkpoint(entry.id, entry.hash) if entry else None


@dataclass(frozen=True)
class ChainReport:
    checked: int
    broken_at: int | None
    reason: str
    head: Checkpoint | None = None

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify_chain(expect: Checkpoint | None = None) -> ChainReport:
    """Walk the chain in order and report the first entry that does not hold.

    An entry fails when it does not link to the one before it (an entry was deleted or inserted), or when its
    MAC does not match its columns (it was edited, or the chain was rewritten without the key). With `expect`
    (a checkpoint kept elsewhere), the log must still reach that entry with that MAC: this is what shows a
    deleted tail, an emptied table, or a chain rewritten by someone holding the key.
    """
    key = _key()
    prev, prev_seq, count = GENESIS, 0, 0
    at_expected: AuditEntry | None = None
    for entry in db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)):
        count += 1
        if entry.prev_hash != prev:
            before = f"entry {prev_seq}" if prev_seq else "the start of the log"
            return ChainReport(count, entry.id, f"entry {entry.id} ({entry.action}) does not follow {before}: "
                                                "an entry between them was deleted or inserted")
        if not hmac.compare_digest(_entry_digest(entry, key), entry.hash):
            return ChainReport(count, entry.id, f"entry {entry.id} ({entry.action}) does not match its MAC: it "
                                                "was changed after it was written, or the chain was rewritten "
                                                "without the audit key")
        if expect is not None and entry.id == expect.seq:
            at_expected = entry
        prev, prev_seq = entry.hash, entry.id
    head = Checkpoint(prev_seq, prev)
    if expect is not None and expect.seq > 0:
        if count == 0:
            return ChainReport(0, 1, f"the audit log is empty, but the checkpoint names entry {expect.seq}: "
                                     "every entry was deleted", head)
        if prev_seq < expect.seq:
            return ChainReport(count, prev_seq + 1, f"the audit log ends at entry {prev_seq}, but the checkpoint "
                                                    f"names entry {expect.seq}: the entries after {prev_seq} "
                                                    "were deleted", head)
        if at_expected is None:
            return ChainReport(count, expect.seq, f"entry {expect.seq}, named by the checkpoint, is not in the "
                                                  "audit log", head)
        if not hmac.compare_digest(at_expected.hash, expect.digest):
            return ChainReport(count, expect.seq, f"entry {expect.seq} ({at_expected.action}) does not match the "
                                                  "checkpoint: the chain was rewritten up to it", head)
    return ChainReport(count, None, "", head)


cli = Blueprint("audit_cli", __name__, cli_group="audit")


def _parse_expect(ctx, param, value):
    if value is None:
        return None
    try:
        return Checkpoint.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@cli.cli.command("verify")
@click.option("--expect", callback=_parse_expect, metavar="SEQ:DIGEST",
              help="A checkpoint kept elsewhere (from `flask audit checkpoint`); the log must still reach it.")
@with_appcontext
def verify_command(expect):
    """Check the audit chain; exit 1 and name the first bad entry if any."""
    report = verify_chain(expect)
    if report.ok:
        anchored = f", checkpoint {expect.seq} matches" if expect is not None and expect.seq else ""
        click.echo(f"audit log intact: {report.checked} entries checked{anchored}; head {report.head}")
        return
    click.echo(f"audit log BROKEN at entry {report.broken_at}: {report.reason}", err=True)
    raise SystemExit(1)


@cli.cli.command("checkpoint")
@with_appcontext
def checkpoint_command():
    """Print the chain's head as SEQ:DIGEST, to keep outside the database (pass it to verify --expect)."""
    click.echo(str(checkpoint()))
