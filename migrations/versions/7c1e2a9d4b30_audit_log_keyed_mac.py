"""audit log: every entry's MAC is an HMAC-SHA256 under AUDIT_KEY over all its columns (was an unkeyed SHA-256
that left out actor_id)

The schema does not change; the existing chain is checked under the old digest and, if it holds, re-chained
under the keyed one, so `flask audit verify` keeps passing on untouched data. A chain that is already broken is
not re-keyed: re-keying would launder the tampering, so the upgrade stops and names the entry.

Revision ID: 7c1e2a9d4b30
Revises: b0a4d1c2e7f9
Create Date: 2025-01-01 00:00:00
"""
import hashlib
import hmac
import json
from datetime import UTC

import sqlalchemy as sa
from alembic import op
from flask import current_app

import core.db

# revision identifiers, used by Alembic.
revision = '7c1e2a9d4b30'
down_revision = 'b0a4d1c2e7f9'
branch_labels = None
depends_on = None

GENESIS = "0" * 64

# The table as this revision knows it (the model may change later; this migration must not).
audit_entry = sa.table(
    "audit_entry",
    sa.column("id", sa.Integer), sa.column("at", core.db.UTCDateTime(timezone=True)),
    sa.column("actor_id", sa.Integer), sa.column("actor_label", sa.String), sa.column("action", sa.String),
    sa.column("object_type", sa.String), sa.column("object_id", sa.String), sa.column("data", sa.Text),
    sa.column("prev_hash", sa.String), sa.column("hash", sa.String),
)


def _old(row, prev):
    payload = json.dumps([prev, row.at.isoformat(), row.actor_label, row.action, row.object_type, row.object_id,
                          row.data], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _new(key, row, prev):
    payload = json.dumps(["gambit-audit-2", row.id, prev, row.at.astimezone(UTC).isoformat(timespec="microseconds"),
                          row.actor_id, row.actor_label, row.action, row.object_type, row.object_id, row.data],
                         separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _rows(conn):
    return conn.execute(sa.select(audit_entry).order_by(audit_entry.c.id)).all()


def _rechain(conn, digest):
    prev = GENESIS
    for row in _rows(conn):
        new = digest(row, prev)
        conn.execute(sa.update(audit_entry).where(audit_entry.c.id == row.id).values(prev_hash=prev, hash=new))
        prev = new


def upgrade():
    conn = op.get_bind()
    rows = _rows(conn)
    if not rows:
        return
    key = (current_app.config.get("AUDIT_KEY") or "").encode()
    if not key:
        raise RuntimeError("AUDIT_KEY is not set: the audit log cannot be re-keyed without it")
    prev = GENESIS
    for row in rows:
        if row.prev_hash != prev or _old(row, prev) != row.hash:
            raise RuntimeError(f"the audit log is already broken at entry {row.id} ({row.action}); it is left "
                               "as it is, not re-keyed, so the break stays visible. Investigate it (and restore "
                               "the log from a backup) before upgrading.")
        prev = row.hash
    _rechain(conn, lambda row, prev: _new(key, row, prev))


def downgrade():
    _rechain(op.get_bind(), _old)
