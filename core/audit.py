"""The audit log: every state change a service makes, chained by SHA-256 so an edit or a deletion shows.

Each entry's hash covers its own content and the previous entry's hash. `flask audit verify` walks the chain
and reports the first broken link.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import click
from flask import Blueprint
from flask.cli import with_appcontext
from sqlalchemy import ForeignKey, String, Text, select, text
from sqlalchemy.orm import Mapped, mapped_column

from core.db import db

GENESIS = "0" * 64


class AuditEntry(db.Model):
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


def _digest(prev_hash: str, at: datetime, actor_label: str, action: str, object_type: str, object_id: str,
            data: str) -> str:
    payload = json.dumps([prev_hash, at.isoformat(), actor_label, action, object_type, object_id, data],
                         separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def record(action: str, obj: Any = None, *, actor, now: datetime, data: dict | None = None,
           object_type: str | None = None, object_id: str | None = None) -> AuditEntry:
    """Append one entry for a state change; flushes, never commits.

    `actor` is a user (or None for the system); `obj` a model instance whose class name and id are recorded.
    Raises TypeError if `data` holds a value that cannot be written as JSON.
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
    now = now.replace(microsecond=now.microsecond)  # stored exactly as hashed
    entry = AuditEntry(at=now, actor_id=getattr(actor, "id", None), actor_label=label, action=action,
                       object_type=object_type or "-", object_id=object_id or "-", data=body, prev_hash=prev,
                       hash=_digest(prev, now, label, action, object_type or "-", object_id or "-", body))
    session.add(entry)
    session.flush()
    return entry


@dataclass(frozen=True)
class ChainReport:
    checked: int
    broken_at: int | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify_chain() -> ChainReport:
    """Walk the chain in order; the first entry whose link or hash does not hold is reported."""
    prev = GENESIS
    count = 0
    for entry in db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)):
        count += 1
        if entry.prev_hash != prev:
            return ChainReport(count, entry.id, f"entry {entry.id} does not follow the entry before it "
                                                "(an entry was deleted or inserted)")
        expected = _digest(entry.prev_hash, entry.at, entry.actor_label, entry.action, entry.object_type,
                           entry.object_id, entry.data)
        if expected != entry.hash:
            return ChainReport(count, entry.id, f"entry {entry.id} ({entry.action}) was changed after it was "
                                                "written: its content no longer matches its hash")
        prev = entry.hash
    return ChainReport(count, None, "")


cli = Blueprint("audit_cli", __name__, cli_group="audit")


@cli.cli.command("verify")
@with_appcontext
def verify_command():
    """Check the audit chain; exit 1 and name the first broken link if any."""
    report = verify_chain()
    if report.ok:
        click.echo(f"audit log intact: {report.checked} entries checked")
        return
    click.echo(f"audit log BROKEN: {report.reason}", err=True)
    raise SystemExit(1)
