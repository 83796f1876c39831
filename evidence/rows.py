"""Evidence rows bound to the audit chain: the audit entry that creates or changes a row of evidence (a vote, a
decision, a scorecard and its scores, a payment, a deduction, a contract, a stored document and its SHA-256 ...)
records a digest of the row as written, so a row edited, inserted or deleted beneath the chain shows.

A model is evidence when it declares `__evidence__`, the columns that are its evidence, in a fixed order (new
columns go at the end), and `__evidence_excluded__`, every other column with the reason it may change without an
audit entry. `row_form` is the one canonical serialisation of such a row (its type, its id and each evidence
column's value: Decimal as text, dates and instants in ISO form, instants in UTC to the microsecond), and
`row_digest` its SHA-256. Digests are computed from the row as read back from the database after the flush, so
the digest recorded and the digest `flask audit verify` recomputes from the table go through the same types.

The evidence models: BidDocument, BidVersion (bids); Vote, Decision, Dossier (board); Scorecard, ScorecardScore,
ScorecardVersion, ConflictDeclaration, WeightsVersion (scoring); Contract, Milestone, Payment (payments, reversals
and carried-over payments), PrizeDeduction, MatchResult, Reminder (contracts); Amendment (events). Not evidence,
though audit entries name them: User, UserRole and ApiToken (identities: their last-login and last-used instants
and counters change on every request without an entry of their own); Bid (a working draft saved field by field;
what was submitted is frozen in BidVersion, which is evidence); Event (the call's state, moved by one guarded
transition and cited by every bound row through its id); RegulationVersion (its snapshot is fingerprinted by its
own SHA-256, which the bound decisions, contracts and bid versions cite); TrustedCertificate (the trust list,
whose removal deletes the row after its entry); DossierView (reading receipts).

Which rows an entry binds: every evidence row the session inserted, changed (in an evidence column) or deleted
since the last entry it wrote, and the entry's own object when its table was changed by an UPDATE statement in
the same transaction (a compare-and-swap). A row merely read is never bound again, so an entry about it (a
refused file, an opening) does not launder a row edited beneath the chain.

Each binding is kept twice: in the entry's `rows` column (covered by the entry's MAC) and as an `AuditRow`, the
index a read uses to find a row's latest binding in one lookup; `flask audit verify` checks that both agree. An
`AuditRow` with no entry marks a row that existed before digests were recorded (written by the migration): it is
reported as not bound, never as tampering.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Index, String, Text, event, inspect, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from core.db import Model, db

DELETED = "deleted"  # the digest recorded for a row the entry deleted


class AuditRow(Model):
    """One row bound by one audit entry: the row's type and id, its digest as written (DELETED for a row the entry
    deleted) and its canonical form (to say which column changed). entry_id NULL: the row existed before digests
    were recorded."""

    __tablename__ = "audit_row"
    __table_args__ = (Index("ix_audit_row_object", "object_type", "object_id", "entry_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # No foreign key: this is an index checked against the entries' MACs (`flask audit verify` names a binding
    # whose entry is gone), and deleting entries must stay possible for the chain to show it, not be refused here.
    entry_id: Mapped[int | None] = mapped_column(index=True)
    object_type: Mapped[str] = mapped_column(String(40))
    object_id: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    form: Mapped[str] = mapped_column(Text, default="")


def evidence_models() -> dict[str, Any]:
    """Every evidence model by its class name (the object type its audit entries record)."""
    return {m.class_.__name__: m.class_ for m in Model.registry.mappers if "__evidence__" in vars(m.class_)}


def is_evidence(obj: Any) -> bool:
    return obj is not None and "__evidence__" in vars(type(obj))


def _value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return "sha256:" + hashlib.sha256(bytes(value)).hexdigest()
    raise TypeError(f"cannot put {type(value).__name__} in an evidence digest")


def row_form(model: Any, values: dict[str, Any]) -> str:
    """The canonical form of one evidence row: JSON [type, [[column, value], ...]] in the model's `__evidence__`
    order (the id first). Raises KeyError for a missing column, TypeError for a value of an unknown type."""
    columns = ("id", *model.__evidence__)
    return json.dumps([model.__name__, [[c, _value(values[c])] for c in columns]],
                      separators=(",", ":"), ensure_ascii=False)


def row_digest(form: str) -> str:
    return hashlib.sha256(form.encode()).hexdigest()


def form_values(form: str) -> dict[str, Any]:
    """The column values a canonical form holds (as written in it)."""
    return dict(json.loads(form)[1]) if form else {}


def current_forms(model: Any, ids: Iterable[int] | None = None) -> dict[int, str]:
    """The canonical form of each of `model`'s rows now in its table (those of `ids`, or all)."""
    table = model.__table__
    columns = [table.c.id, *(table.c[c] for c in model.__evidence__)]
    query = select(*columns)
    if ids is not None:
        ids = list(ids)
        if not ids:
            return {}
        query = query.where(table.c.id.in_(ids))
    return {row.id: row_form(model, row._asdict()) for row in db.session.execute(query.order_by(table.c.id))}


def file_columns(model: Any) -> list[tuple[str, str]]:
    """(name column, SHA-256 column) of each stored file an evidence row names: `<x>stored_name` beside
    `<x>sha256` or `<x>pdf_sha256` (the convention operations.backup reads too), both evidence columns."""
    columns = ("id", *model.__evidence__)
    out = []
    for column in columns:
        if column.endswith("stored_name"):
            prefix = column[: -len("stored_name")]
            sha = next((s for s in (f"{prefix}sha256", f"{prefix}pdf_sha256") if s in columns), None)
            if sha is not None:
                out.append((column, sha))
    return out


@dataclass(frozen=True)
class Binding:
    object_type: str
    object_id: str
    digest: str
    form: str

    @property
    def key(self) -> str:
        return f"{self.object_type}:{self.object_id}"


# ------------------------------------------------------------------------------ what the session wrote

_WRITTEN = "gambit_evidence_written"    # [instance], inserted or changed since the last entry
_DELETED = "gambit_evidence_deleted"    # {(type, id)}
_UPDATED = "gambit_evidence_updated"    # {model}: tables an UPDATE statement changed in this transaction


def _evidence_changed(obj: Any) -> bool:
    state = inspect(obj)
    return any(state.attrs[c].history.has_changes() for c in ("id", *type(obj).__evidence__))


@event.listens_for(Session, "before_flush")
def _note_written(session: Session, flush_context, instances) -> None:
    written = session.info.setdefault(_WRITTEN, [])
    for obj in session.new:
        if is_evidence(obj):
            written.append(obj)
    for obj in session.dirty:
        if is_evidence(obj) and _evidence_changed(obj):
            written.append(obj)
    for obj in session.deleted:
        if is_evidence(obj):
            session.info.setdefault(_DELETED, set()).add((type(obj).__name__, str(obj.id)))


@event.listens_for(Session, "do_orm_execute")
def _note_updated(state) -> None:
    if (state.is_update or state.is_delete) and state.bind_mapper is not None:
        model = state.bind_mapper.class_
        if "__evidence__" in vars(model):
            state.session.info.setdefault(_UPDATED, set()).add(model)


@event.listens_for(Session, "after_transaction_end")
def _forget(session: Session, transaction) -> None:
    if transaction.parent is None:
        for key in (_WRITTEN, _DELETED, _UPDATED):
            session.info.pop(key, None)


def written_here(session: Any, obj: Any) -> bool:
    """Whether the current transaction wrote `obj` and no audit entry has bound it yet."""
    return (any(row is obj for row in session.info.get(_WRITTEN, ())) or type(obj) in session.info.get(_UPDATED, ())
            or (type(obj).__name__, str(obj.id)) in session.info.get(_DELETED, ()))


def take_bindings(session: Any, obj: Any) -> list[Binding]:
    """The bindings the next audit entry records (see the module's docstring), read back from the database; the
    session forgets them. Call after a flush."""
    written = session.info.pop(_WRITTEN, [])
    deleted = session.info.pop(_DELETED, set())
    if is_evidence(obj) and type(obj) in session.info.get(_UPDATED, ()):
        written.append(obj)
    wanted: dict[Any, set[int]] = {}
    for row in written:
        state = inspect(row)
        if state.persistent and row.id is not None:
            wanted.setdefault(type(row), set()).add(row.id)
    out = [Binding(t, i, DELETED, "") for t, i in sorted(deleted)]
    gone = set(deleted)
    for model, ids in sorted(wanted.items(), key=lambda kv: kv[0].__name__):
        for row_id, form in current_forms(model, sorted(ids)).items():
            if (model.__name__, str(row_id)) not in gone:
                out.append(Binding(model.__name__, str(row_id), row_digest(form), form))
    return out
