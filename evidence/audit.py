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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import click
from flask import Blueprint, current_app
from flask.cli import with_appcontext
from sqlalchemy import ForeignKey, String, Text, inspect, select, text
from sqlalchemy.orm import Mapped, defer, mapped_column

from core.db import Model, db
from evidence import rows as evidence
from evidence.rows import DELETED, AuditRow, Binding

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
    # The evidence rows this entry created, changed or deleted, as canonical JSON {"Payment:12": digest}
    # (evidence.rows); None for an entry that bound none, and for every entry written before digests were kept.
    rows: Mapped[str | None] = mapped_column(Text)

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
            action: str, object_type: str, object_id: str, data: str, rows: str | None = None) -> str:
    """HMAC-SHA256 over every column of an entry (its own MAC aside). An entry that binds no evidence row keeps
    the form entries had before rows were bound, so their MACs still hold."""
    fields = [seq, prev_hash, _instant(at), actor_id, actor_label, action, object_type, object_id, data]
    payload = json.dumps(["gambit-audit-2", *fields] if rows is None else ["gambit-audit-3", *fields, rows],
                         separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _entry_digest(entry: Any, key: bytes) -> str:
    """The MAC of an entry (an AuditEntry, or a row of its columns; without a `rows` column, as in a database not
    yet migrated to bound rows, it binds none)."""
    return _digest(key, seq=entry.id, prev_hash=entry.prev_hash, at=entry.at, actor_id=entry.actor_id,
                   actor_label=entry.actor_label, action=entry.action, object_type=entry.object_type,
                   object_id=entry.object_id, data=entry.data, rows=getattr(entry, "rows", None))


def data_text(data: Mapping[str, Any] | None) -> str:
    """An entry's data as its `data` column holds it (JSON, keys sorted), so that a reader can compare the column
    whole. Raises TypeError if `data` holds a value that cannot be written as JSON."""
    return json.dumps(dict(data or {}), sort_keys=True, default=_default, ensure_ascii=False)


def record(action: str, obj: Any = None, *, actor, now: datetime, data: dict | None = None,
           object_type: str | None = None, object_id: str | None = None) -> AuditEntry:
    """Append one entry for a state change; flushes, never commits.

    `actor` is a user (or None for the system); `obj` a model instance whose class name and id are recorded.
    The entry binds every evidence row the session wrote since its last entry (evidence.rows): their digests
    are in its `rows`, under its MAC. Raises TypeError if `data` holds a value that cannot be written as JSON,
    ValueError if `now` has no time zone, RuntimeError if AUDIT_KEY is not set.
    """
    session = db.session
    session.flush()
    bindings = evidence.take_bindings(session, obj)
    if session.get_bind().dialect.name == "postgresql":
        # Serialise appends across processes: one chain, no forks, no retries.
        session.execute(text("SELECT pg_advisory_xact_lock(727274)"))
    last = session.scalars(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1)).first()
    prev = last.hash if last else GENESIS
    if obj is not None:
        object_type = object_type or type(obj).__name__
        object_id = object_id or str(getattr(obj, "id", ""))
    body = data_text(data)
    label = actor.email if actor is not None else "system"
    if now.tzinfo is None:
        raise ValueError("audit entries need a timezone-aware time")
    # Stored in UTC, so the instant read back is the instant that was hashed, whatever zone `now` came in.
    now = now.astimezone(UTC)
    seq = (last.id if last else 0) + 1
    entry = AuditEntry(id=seq, at=now, actor_id=getattr(actor, "id", None), actor_label=label, action=action,
                       object_type=object_type or "-", object_id=object_id or "-", data=body, prev_hash=prev,
                       rows=_rows_json(bindings))
    entry.hash = _entry_digest(entry, _key())
    session.add(entry)
    session.flush()
    session.add_all([AuditRow(entry_id=seq, object_type=b.object_type, object_id=b.object_id, digest=b.digest,
                              form=b.form) for b in bindings])
    session.flush()
    return entry


def _rows_json(bindings: list[Binding]) -> str | None:
    if not bindings:
        return None
    return json.dumps({b.key: b.digest for b in bindings}, sort_keys=True, separators=(",", ":"))


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
    # Plain rows of the columns the table has (a database not yet migrated has no `rows`).
    present = {c["name"] for c in inspect(db.session.connection()).get_columns(AuditEntry.__tablename__)}
    columns = [c for c in AuditEntry.__table__.columns if c.name in present]
    return walk_chain(db.session.execute(select(*columns).order_by(AuditEntry.id)), expect, key=_key())


def walk_chain(entries: Iterable[Any], expect: Checkpoint | None = None, *, key: bytes | None = None) -> ChainReport:
    """verify_chain's walk over `entries` (rows with the audit entry's columns, in order), wherever they were read:
    the database, or the audit part of a backup (operations.backup). `key` None checks the links and the checkpoint
    only, not the MACs (for an archive checked where the audit key is not). Raises nothing of its own."""
    prev, prev_seq, count = GENESIS, 0, 0
    at_expected: Any = None
    for entry in entries:
        count += 1
        if entry.prev_hash != prev:
            before = f"entry {prev_seq}" if prev_seq else "the start of the log"
            return ChainReport(count, entry.id, f"entry {entry.id} ({entry.action}) does not follow {before}: "
                                                "an entry between them was deleted or inserted")
        if key is not None and not hmac.compare_digest(_entry_digest(entry, key), entry.hash):
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


# ------------------------------------------------------------------------------------------ evidence rows


def _label(object_type: str, object_id: str) -> str:
    """"payment 12", "prize deduction 3": a row as the reports name it."""
    return f"{re.sub(r'(?<!^)(?=[A-Z])', ' ', object_type).lower()} {object_id}"


def _differences(recorded: str, current: str) -> str:
    """"amount is 5000.00 in the table, 4000.00 in the audit log; ...": the columns whose values differ."""
    before, now = evidence.form_values(recorded), evidence.form_values(current)
    parts = [f"{c} is {_shown(now.get(c))} in the table, {_shown(before.get(c))} in the audit log"
             for c in now if now.get(c) != before.get(c)]
    return "; ".join(parts) or "its canonical form differs from the one the audit log recorded"


def _shown(value: Any) -> str:
    text_ = "empty" if value is None else str(value)
    return text_ if len(text_) <= 80 else f"{text_[:77]}…"


def _recorded_form(binding: Any) -> str | None:
    """The canonical form a binding recorded (read only when needed: it can be long), or None when it does not
    hash to the binding's digest (the index was edited)."""
    form = binding.form if isinstance(binding, AuditRow) else db.session.scalar(
        select(AuditRow.form).where(AuditRow.id == binding.id))
    return form if form is not None and evidence.row_digest(form) == binding.digest else None


def _row_problem(label: str, binding: Any, current: str | None) -> str | None:
    """What is wrong with a row (its current canonical form, None when it is not in its table) against its latest
    binding (an AuditRow, or a row of its columns without the form), or None."""
    where = f"the audit log (entry {binding.entry_id})"
    if binding.digest == DELETED:
        if current is None:
            return None
        return f"{label}: {where} recorded its deletion, yet it is in the table — put back beneath the chain"
    if current is None:
        return (f"{label}: {where} recorded it (digest {binding.digest[:16]}…), but it is not in the table — "
                "deleted beneath the chain")
    if evidence.row_digest(current) == binding.digest:
        return None
    recorded = _recorded_form(binding)
    differences = (_differences(recorded, current) if recorded is not None else
                   "its recorded form in the bindings index (audit_row) was edited too")
    return (f"{label}: {differences}; {where} recorded a row with digest {binding.digest[:16]}… — changed beneath "
            "the chain")


def latest_binding(object_type: str, object_id: str) -> tuple[AuditRow | None, AuditEntry | None, bool]:
    """The latest audit entry's binding of a row and that entry (one indexed lookup), and whether the row is
    marked as written before digests were recorded (looked up only when no entry binds it)."""
    found = db.session.execute(
        select(AuditRow, AuditEntry).join(AuditEntry, AuditRow.entry_id == AuditEntry.id)
        .where(AuditRow.object_type == object_type, AuditRow.object_id == object_id, AuditRow.entry_id.is_not(None))
        .order_by(AuditRow.entry_id.desc()).limit(1).options(defer(AuditRow.form))).first()
    if found is not None:
        return found[0], found[1], False
    legacy = db.session.scalar(select(AuditRow.id).where(
        AuditRow.object_type == object_type, AuditRow.object_id == object_id, AuditRow.entry_id.is_(None)).limit(1))
    return None, None, legacy is not None


def evidence_problem(obj: Any) -> str | None:
    """Why the evidence row `obj` cannot be trusted as the audit log recorded it, or None: changed, inserted or
    put back beneath the chain, or its latest binding does not hold under the entry's MAC. A row the current
    transaction wrote itself (not yet recorded), a row written before digests, and a model that is not evidence
    pass. Raises RuntimeError if AUDIT_KEY is not set."""
    if not evidence.is_evidence(obj) or evidence.written_here(db.session, obj):
        return None
    model, object_type, object_id = type(obj), type(obj).__name__, str(obj.id)
    label = _label(object_type, object_id)
    binding, entry, legacy = latest_binding(object_type, object_id)
    if binding is None or entry is None:
        return None if legacy else f"{label}: no audit entry records it — inserted beneath the chain"
    bound = json.loads(entry.rows or "{}")
    if (bound.get(f"{object_type}:{object_id}") != binding.digest
            or not hmac.compare_digest(_entry_digest(entry, _key()), entry.hash)):
        return f"{label}: its record in the audit log (entry {entry.id}) does not hold under the entry's MAC"
    return _row_problem(label, binding, evidence.current_forms(model, [obj.id]).get(obj.id))


@dataclass(frozen=True)
class EvidenceReport:
    rows: int
    files: int
    problems: tuple[str, ...]
    unbound: tuple[str, ...]   # rows written before digests were recorded: not tampering

    @property
    def ok(self) -> bool:
        return not self.problems


def _stored(upload_dir: Path | None) -> dict[str, Path]:
    if upload_dir is None or not upload_dir.is_dir():
        return {}
    return {p.name: p for p in upload_dir.rglob("*") if p.is_file()}


def _bytes_sha(stored: dict[str, Path], name: str) -> str | None:
    try:
        return hashlib.sha256(stored[name].read_bytes()).hexdigest() if name in stored else None
    except OSError:
        return None


def _bindings() -> tuple[dict[int, dict[str, str]], set[tuple[str, str]], dict[tuple[str, str], Any]]:
    """The bindings index (audit_row) read once: (each entry's bindings {"type:id": digest}, the rows bound before
    digests were kept, each row's latest binding)."""
    indexed: dict[int, dict[str, str]] = {}
    legacy: set[tuple[str, str]] = set()
    latest: dict[tuple[str, str], Any] = {}
    for row in db.session.execute(select(AuditRow.id, AuditRow.entry_id, AuditRow.object_type, AuditRow.object_id,
                                         AuditRow.digest).order_by(AuditRow.entry_id, AuditRow.id)):
        key = (row.object_type, row.object_id)
        if row.entry_id is None:
            legacy.add(key)
            continue
        indexed.setdefault(row.entry_id, {})[f"{row.object_type}:{row.object_id}"] = row.digest
        latest[key] = row
    return indexed, legacy, latest


def _index_problems(indexed: dict[int, dict[str, str]]) -> list[str]:
    """Where the bindings index differs from what each entry binds under its MAC (`indexed` is consumed)."""
    problems = []
    for entry_id, rows in db.session.execute(select(AuditEntry.id, AuditEntry.rows).where(
            AuditEntry.rows.is_not(None))):
        if json.loads(rows or "{}") != indexed.pop(entry_id, {}):
            problems.append(f"audit entry {entry_id}: the rows it binds under its MAC differ from its bindings "
                            "index (audit_row) — the index was edited")
    problems += [f"audit_row binds rows to entry {e}, which binds none in the audit log — the index was edited"
                 for e in sorted(indexed)]
    return problems


@dataclass
class _Tally:
    """What verify_evidence found so far."""

    stored: Any
    folder: Path | None
    count: int = 0
    files: int = 0
    problems: list[str] = field(default_factory=list)
    unbound: list[str] = field(default_factory=list)


def _check_files(tally: _Tally, label: str, binding: Any, model: Any, form: str, changed: bool) -> None:
    """The stored files a row names, against the SHA-256 the audit log recorded for each: its hash column, then its
    bytes in the upload folder (when one is given)."""
    columns = evidence.file_columns(model)
    if not columns:
        return
    now = evidence.form_values(form)
    # The row as the log recorded it: the same as now unless it was changed (then read from the index).
    logged = evidence.form_values(_recorded_form(binding) or "") if changed else now
    for name_col, sha_col in columns:
        if not now.get(name_col):
            continue
        tally.files += 1
        if now.get(sha_col) != logged.get(sha_col):
            tally.problems.append(f"{label}: its stored file {now[name_col]} has {sha_col} "
                                  f"{_shown(now.get(sha_col))} in the table, but the audit log (entry "
                                  f"{binding.entry_id}) recorded {_shown(logged.get(sha_col))} — the file's "
                                  "hash was changed beneath the chain")
        found = _bytes_sha(tally.stored, now[name_col])
        if tally.folder is not None and found != logged.get(sha_col):
            tally.problems.append(f"{label}: its stored file {now[name_col]} is missing" if found is None else
                                  f"{label}: its stored file {now[name_col]} has SHA-256 {found[:16]}…, the "
                                  f"audit log (entry {binding.entry_id}) recorded "
                                  f"{_shown(logged.get(sha_col))[:16]}… — its bytes were changed")


def _check_model(tally: _Tally, object_type: str, model: Any, legacy: set[tuple[str, str]],
                 latest: dict[tuple[str, str], Any]) -> None:
    """Every row of one evidence model against its latest binding (and its files), then every bound row of that
    type that is gone from its table."""
    forms = evidence.current_forms(model)
    tally.count += len(forms)
    for row_id, form in forms.items():
        key, label = (object_type, str(row_id)), _label(object_type, str(row_id))
        binding = latest.get(key)
        if binding is None:
            if key in legacy:
                tally.unbound.append(f"{label}: not bound (written before digests)")
            else:
                tally.problems.append(f"{label}: no audit entry records it — inserted beneath the chain")
            continue
        problem = _row_problem(label, binding, form)
        if problem:
            tally.problems.append(problem)
        _check_files(tally, label, binding, model, form, changed=problem is not None)
    present = {str(i) for i in forms}
    for (t, i), binding in latest.items():
        if t == object_type and i not in present:
            problem = _row_problem(_label(t, i), binding, None)
            if problem:
                tally.problems.append(problem)


def verify_evidence(upload_dir: Path | str | None = None) -> EvidenceReport:
    """Recompute the digest of every evidence row from its table and compare it with the row's latest binding in
    the audit log; check that each entry's bindings index (audit_row) is the one its MAC covers; and check every
    stored file a row names against the SHA-256 the audit log recorded for it (its hash column, then its bytes in
    `upload_dir`). Run verify_chain first: the entries' own MACs are checked there."""
    folder = Path(upload_dir) if upload_dir is not None else None
    indexed, legacy, latest = _bindings()
    tally = _Tally(_stored(folder), folder, problems=_index_problems(indexed))
    for object_type, model in sorted(evidence.evidence_models().items()):
        _check_model(tally, object_type, model, legacy, latest)
    return EvidenceReport(tally.count, tally.files, tuple(tally.problems), tuple(tally.unbound))


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
    """Check the audit chain, then every evidence row and stored file against it; exit 1 and name the first bad
    entry and every row or file that differs from what the log recorded, if any."""
    report = verify_chain(expect)
    if not report.ok:
        click.echo(f"audit log BROKEN at entry {report.broken_at}: {report.reason}", err=True)
        raise SystemExit(1)
    anchored = f", checkpoint {expect.seq} matches" if expect is not None and expect.seq else ""
    click.echo(f"audit log intact: {report.checked} entries checked{anchored}; head {report.head}")
    rows = verify_evidence(current_app.config.get("UPLOAD_DIR"))
    for line in rows.unbound:
        click.echo(line)
    if rows.ok:
        click.echo(f"evidence intact: {rows.rows} rows and {rows.files} stored files match the audit log"
                   + (f" ({len(rows.unbound)} rows written before digests are not bound)" if rows.unbound else ""))
        return
    for line in rows.problems:
        click.echo(line, err=True)
    click.echo(f"evidence BROKEN: {len(rows.problems)} finding(s) in {rows.rows} rows and {rows.files} stored "
               "files", err=True)
    raise SystemExit(1)


@cli.cli.command("checkpoint")
@with_appcontext
def checkpoint_command():
    """Print the chain's head as SEQ:DIGEST, to keep outside the database (pass it to verify --expect)."""
    click.echo(str(checkpoint()))
