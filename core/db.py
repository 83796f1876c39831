"""The database object and the declarative base every model uses (SQLAlchemy 2.x typed models)."""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from flask import current_app, has_request_context, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import DateTime, MetaData, TypeDecorator, event, select, update
from sqlalchemy.engine import CursorResult, Engine, Result
from sqlalchemy.orm import DeclarativeBase, registry

# Named constraints, so Alembic migrations are the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator):
    """An instant: stored in UTC, returned timezone-aware on every database (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("instants must be timezone-aware")
        return value.astimezone(UTC)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    registry = registry(metadata=MetaData(naming_convention=NAMING), type_annotation_map={datetime: UTCDateTime()})


db = SQLAlchemy(model_class=Base)

if TYPE_CHECKING:
    # mypy takes no instance attribute as a base class (python/mypy#8603): it checks the models against Base,
    # from which db.Model derives.
    Model = Base
else:
    Model = db.Model


def rowcount(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE matched. SQLAlchemy types session.execute() as a Result; for those
    statements it is a CursorResult, which counts them. Raises nothing."""
    return cast("CursorResult[Any]", result).rowcount


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, connection_record):
    """SQLite: enforce foreign keys, and let SQLAlchemy (not pysqlite) manage transactions and savepoints."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=5000")
        # WAL: readers read the last committed state while a writer writes, instead of waiting for its lock.
        cur.execute("PRAGMA journal_mode=WAL")
        cur.close()


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def writes_on_get(view):
    """Mark a view that changes rows even when answering GET (a dossier rendered and stored on first opening, the
    first showing of scores recorded): on SQLite its transaction takes the write lock at the start."""
    view.writes_on_get = True
    return view


def reads_first(view):
    """Mark a view that writes only after a long read-only step (the login: the password is verified first, an
    argon2 hash that takes ~0.5 s of CPU, several seconds on a loaded machine): on SQLite its transactions begin
    without the write lock, and the view writes inside `writing()` after ending its reading transaction. Holding the
    lock through the hash would make every other writer wait that long, and fail with `database is locked` once
    the wait passes the busy timeout."""
    view.reads_first = True
    return view


# "read": the transaction begun now only reads (deferred BEGIN); "write": it takes the write lock (IMMEDIATE).
_MODE: ContextVar[str | None] = ContextVar("gambit_transaction_mode", default=None)


@contextmanager
def _mode(mode: str):
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


def reading():
    """The transaction begun inside the block only reads (SQLite: a deferred BEGIN, no write lock), however long
    it runs: a background job renders a PDF in one, ends it, then writes the row in a short transaction of its own,
    so that it never holds the write lock while WeasyPrint runs."""
    return _mode("read")


def writing():
    """The transaction begun inside the block writes (SQLite: BEGIN IMMEDIATE, it waits for the write lock up to
    the busy timeout), whatever the request: a `reads_first` view's short writing step."""
    return _mode("write")


def _reads_only() -> bool:
    """Whether the current transaction only reads: inside `reading()`; or in a request, a GET (or HEAD, OPTIONS) to
    a view not marked `writes_on_get`, outside the paths listed in SQLITE_WRITING_PATH_PREFIXES, or any request to
    a view marked `reads_first` (outside `writing()`). Outside a request (CLI, tests, workers): no."""
    mode = _MODE.get()
    if mode is not None:
        return mode == "read"
    if not has_request_context():
        return False
    view = current_app.view_functions.get(request.endpoint or "")
    if view is not None and getattr(view, "reads_first", False):
        return True
    if request.method not in SAFE_METHODS:
        return False
    if request.path.startswith(tuple(current_app.config.get("SQLITE_WRITING_PATH_PREFIXES", ()))):
        return False
    return view is not None and not getattr(view, "writes_on_get", False)


@event.listens_for(Engine, "begin")
def _sqlite_begin(conn):
    if conn.dialect.name == "sqlite":
        # A reading request takes no lock (WAL: it reads the last committed state), so the workers read in
        # parallel. A writer takes the lock at the start (IMMEDIATE), so two writers wait for each other
        # (busy_timeout) instead of failing with "database is locked" when both try to upgrade a read lock.
        conn.exec_driver_sql("BEGIN" if _reads_only() else "BEGIN IMMEDIATE")


def utcnow() -> datetime:
    return datetime.now(UTC)


def swap_state(row: Any, *, expected: Any, values: Mapping[str, Any], column: str = "status") -> bool:
    """Compare-and-swap: UPDATE the row's table SET `values` WHERE id = row.id AND `column` = `expected`.

    Returns True when this call made the change (the row is refreshed), False when the row was no longer in
    `expected` (changed at the same moment by someone else). Raises nothing of its own.
    """
    model = type(row)
    expected = expected.value if isinstance(expected, enum.Enum) else expected
    result = db.session.execute(
        update(model).where(model.id == row.id, getattr(model, column) == expected)
        .values(**{k: (v.value if isinstance(v, enum.Enum) else v) for k, v in values.items()})
        .execution_options(synchronize_session=False))
    db.session.refresh(row)
    return rowcount(result) == 1


DATABASE_UNREACHABLE = ("The database cannot be reached just now; nothing was saved. Try again in a minute; if it "
                        "lasts, tell the secretariat.")
DATABASE_BUSY = ("The database is too busy just now to take this; nothing was saved. Try again in a minute; if it "
                 "lasts, tell the secretariat.")

# PostgreSQL's SQLSTATEs of a transaction that may succeed if tried again: serialization failure, deadlock, lock
# not available, statement cancelled (timeout), and an administrator's shutdown.
_PG_BUSY = {"40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03"}


def unavailable_message(exc: BaseException) -> str | None:
    """What to tell the person when a database error means "not now" rather than a fault of Gambit's: the
    connection refused, cut or invalidated (DATABASE_UNREACHABLE), or the database locked or busy past its timeout
    (DATABASE_BUSY); None for any other error (a bug, shown as a 500). Takes SQLAlchemy's DBAPIError family."""
    from sqlalchemy.exc import DBAPIError, InterfaceError

    if not isinstance(exc, DBAPIError):
        return None
    if exc.connection_invalidated or isinstance(exc, InterfaceError):
        return DATABASE_UNREACHABLE
    orig = exc.orig
    if isinstance(orig, sqlite3.OperationalError):
        text = str(orig).lower()
        if "locked" in text or "busy" in text:
            return DATABASE_BUSY
        if "unable to open" in text or "disk i/o" in text or "readonly" in text:
            return DATABASE_UNREACHABLE
        return None
    sqlstate = getattr(orig, "sqlstate", "") or ""
    module = type(orig).__module__ or ""
    if sqlstate.startswith("08") or (module.startswith("psycopg") and not sqlstate
                                     and type(orig).__name__ in ("OperationalError", "InterfaceError")):
        return DATABASE_UNREACHABLE  # psycopg's own connection errors carry no SQLSTATE, or class 08
    if sqlstate in _PG_BUSY:
        return DATABASE_BUSY
    return None


def lock_row(row: Any) -> None:
    """Serialise every writer whose change depends on `row`, to the end of the transaction, then read the row again
    so that what the caller checks next is what was committed before it got the lock.

    PostgreSQL: SELECT ... FOR UPDATE on the row (a second writer waits there until the first commits or rolls
    back). SQLite: a writing transaction already holds the database's one write lock from its start (BEGIN
    IMMEDIATE); a no-op UPDATE of the row makes sure of it in a transaction begun as reading. Raises what the
    database raises (a lock wait that times out)."""
    model = type(row)
    db.session.flush()  # the caller's pending changes are written before the row is read again
    if db.session.get_bind().dialect.name == "sqlite":
        db.session.execute(update(model).where(model.id == row.id).values(id=model.id)
                           .execution_options(synchronize_session=False))
    else:
        db.session.execute(select(model.id).where(model.id == row.id).with_for_update())
    db.session.refresh(row)
