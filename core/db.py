"""The database object and the declarative base every model uses (SQLAlchemy 2.x typed models)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import DateTime, MetaData, TypeDecorator, event
from sqlalchemy.engine import Engine
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


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, connection_record):
    """SQLite: enforce foreign keys, and let SQLAlchemy (not pysqlite) manage transactions and savepoints."""
    import sqlite3

    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=5000")
        cur.close()


@event.listens_for(Engine, "begin")
def _sqlite_begin(conn):
    if conn.dialect.name == "sqlite":
        # IMMEDIATE: a writer takes the lock at the start, so two writers wait for each other (busy_timeout)
        # instead of failing with "database is locked" when both try to upgrade a read lock.
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def utcnow() -> datetime:
    return datetime.now(UTC)
