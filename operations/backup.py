"""Backups: one archive holding a consistent snapshot of every table, every stored file, the audit chain's
checkpoint and a manifest with each part's SHA-256; checked without restoring; restored only into an empty instance.

The snapshot is logical (each table's rows as JSON lines, values written by their column's type), so an archive
taken on SQLite restores into PostgreSQL and back. It is consistent: on SQLite the rows are read from a copy made
with SQLite's online backup API, on PostgreSQL inside one read-only REPEATABLE READ transaction (as pg_dump reads).
The audit key is never in the archive: without the same AUDIT_KEY the restored chain does not verify.

`flask backup create ARCHIVE`, `flask backup verify ARCHIVE`, `flask backup restore ARCHIVE`."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sqlite3
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import sqlalchemy as sa
from flask import Blueprint, current_app
from sqlalchemy.engine import Connection
from sqlalchemy.schema import sort_tables_and_constraints

from core.db import db
from evidence.audit import Checkpoint, verify_chain, walk_chain

FORMAT = 1
MANIFEST = "manifest.json"
# Alembic's own table: the archive records the schema's revision in the manifest, and a restore needs the same.
SKIPPED = ("alembic_version",)

cli = Blueprint("backup_cli", __name__, cli_group="backup")


class BackupError(Exception):
    """A backup that cannot be made, checked or restored as asked; the message says what and why."""


@dataclass(frozen=True)
class Report:
    ok: bool
    lines: tuple[str, ...]


# ------------------------------------------------------------------------------------------------ values


def _encode(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode()
    return value


def _decoder(column: sa.Column) -> Any:
    kind_of = column.type.impl_instance if isinstance(column.type, sa.types.TypeDecorator) else column.type
    try:
        kind = kind_of.python_type
    except NotImplementedError:
        return lambda v: v
    if kind is Decimal:
        return lambda v: None if v is None else Decimal(v)
    if kind is datetime:
        return lambda v: None if v is None else datetime.fromisoformat(v)
    if kind is date:
        return lambda v: None if v is None else date.fromisoformat(v)
    if kind is bytes:
        return lambda v: None if v is None else base64.b64decode(v)
    return lambda v: v


def _ordered() -> tuple[list[sa.Table], list[sa.ForeignKeyConstraint]]:
    """The tables in an order every foreign key can be inserted in, and the constraints that close a cycle (their
    columns are written after every row is in)."""
    tables: list[sa.Table] = []
    cyclic: list[sa.ForeignKeyConstraint] = []
    for table, constraints in sort_tables_and_constraints(db.metadata.tables.values()):
        if table is None:
            cyclic.extend(constraints)
        elif table.name not in SKIPPED:
            tables.append(table)
    return tables, cyclic


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------------ create


def _revision(conn: Connection) -> str | None:
    try:
        return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    except sa.exc.DBAPIError:
        conn.rollback()
        return None


def _dump(conn: Connection) -> tuple[dict[str, bytes], dict[str, int], str | None]:
    parts: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    for table in _ordered()[0]:
        order = list(table.primary_key.columns) or list(table.columns)
        out = io.StringIO()
        n = 0
        for row in conn.execute(sa.select(table).order_by(*order)).mappings():
            out.write(json.dumps({k: _encode(v) for k, v in row.items()}, ensure_ascii=False, sort_keys=True))
            out.write("\n")
            n += 1
        parts[f"db/{table.name}.jsonl"] = out.getvalue().encode()
        counts[table.name] = n
    return parts, counts, _revision(conn)


def _snapshot() -> tuple[dict[str, bytes], dict[str, int], str | None, str]:
    """Every table's rows, read consistently, with the schema's revision and the engine's name."""
    engine = db.engine
    if engine.dialect.name == "sqlite":
        source = engine.raw_connection()
        with tempfile.TemporaryDirectory() as folder:
            copy_path = Path(folder) / "snapshot.sqlite3"
            copy = sqlite3.connect(copy_path)
            try:
                raw = source.driver_connection
                assert isinstance(raw, sqlite3.Connection)
                raw.backup(copy)  # SQLite's online backup API: one consistent copy
            finally:
                copy.close()
                source.close()
            snapshot_engine = sa.create_engine(f"sqlite:///{copy_path}")
            try:
                with snapshot_engine.connect() as conn:
                    parts, counts, revision = _dump(conn)
            finally:
                snapshot_engine.dispose()
        return parts, counts, revision, "sqlite"
    with engine.connect() as conn:  # closed whatever fails next (the options are set on it, in place)
        conn.execution_options(isolation_level="REPEATABLE READ")
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        parts, counts, revision = _dump(conn)
        conn.rollback()
    return parts, counts, revision, engine.dialect.name


def _checkpoint_of(audit_part: bytes) -> str:
    last = None
    for line in audit_part.decode().splitlines():
        last = json.loads(line)
    return f"{last['id']}:{last['hash']}" if last else f"0:{'0' * 64}"


def _stored_files(upload_dir: Path) -> Iterator[Path]:
    if upload_dir.is_dir():
        for path in sorted(upload_dir.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                yield path


def create_backup(archive: Path, *, now: datetime) -> dict:
    """Write the archive (a tar file) and return its manifest. Raises BackupError when the archive exists or
    cannot be written."""
    archive = Path(archive)
    if archive.exists():
        raise BackupError(f"{archive} exists already: a backup never overwrites a file; choose another name.")
    parts, counts, revision, engine = _snapshot()
    upload_dir = Path(current_app.config["UPLOAD_DIR"])
    files = {f"files/{p.relative_to(upload_dir).as_posix()}": p.read_bytes() for p in _stored_files(upload_dir)}
    manifest = {
        "format": FORMAT, "created_at": now.astimezone(UTC).isoformat(), "engine": engine,
        "schema_revision": revision,
        "audit_checkpoint": _checkpoint_of(parts.get("db/audit_entry.jsonl", b"")),
        "tables": {name: {"rows": counts[name], "part": f"db/{name}.jsonl",
                          "sha256": _sha(parts[f"db/{name}.jsonl"])} for name in counts},
        "files": {name: {"size": len(data), "sha256": _sha(data)} for name, data in files.items()},
    }
    partial = archive.with_name(f".{archive.name}.partial")
    try:
        with tarfile.open(partial, "w") as tar:
            for name, data in [(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode()),
                               *parts.items(), *files.items()]:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), int(now.timestamp()), 0o600
                tar.addfile(info, io.BytesIO(data))
        partial.replace(archive)  # the archive appears whole or not at all
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"The archive could not be written to {archive}: {exc.strerror or exc}.") from None
    return manifest


# ------------------------------------------------------------------------------------------------ verify


def _read(archive: Path) -> tuple[dict, dict[str, bytes]]:
    try:
        with tarfile.open(archive, "r") as tar:
            contents = {}
            for member in tar.getmembers():
                if not member.isfile():
                    raise BackupError(f"{archive}: {member.name} is not a plain file; this is not a Gambit backup.")
                handle = tar.extractfile(member)
                contents[member.name] = handle.read() if handle else b""
    except (OSError, tarfile.TarError) as exc:
        raise BackupError(f"{archive} cannot be read as a backup archive: {exc}.") from None
    if MANIFEST not in contents:
        raise BackupError(f"{archive} has no {MANIFEST}: this is not a Gambit backup.")
    try:
        manifest = json.loads(contents.pop(MANIFEST))
    except ValueError:
        raise BackupError(f"{archive}: its {MANIFEST} is not JSON.") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{archive} is a backup of format {manifest.get('format')!r}; this Gambit reads "
                          f"format {FORMAT}.")
    return manifest, contents


def _chain_problems(audit_part: bytes, checkpoint: str) -> list[str]:
    """The audit part's entries must link, each to the one before it, from the start of the log up to the manifest's
    checkpoint: rows cut from the part (with the manifest's hash written anew to match) break a link. The links are
    checked without the audit key, which the archive does not hold; the MACs are checked by a restore, with it."""
    try:
        expect = Checkpoint.parse(checkpoint)
        entries = [SimpleNamespace(**json.loads(line)) for line in audit_part.decode().splitlines()]
    except ValueError as exc:
        return [f"db/audit_entry.jsonl cannot be read as the audit log: {exc}"]
    chain = walk_chain(entries, expect)
    if chain.ok:
        return []
    return [f"the audit log in the archive does not reach the manifest's checkpoint {checkpoint}: {chain.reason}"]


def verify_backup(archive: Path) -> Report:
    """Check every part of the archive against the manifest's SHA-256, that it holds no part the manifest does not
    list, and that its audit log links up to the manifest's checkpoint, without restoring. Raises BackupError when
    the archive cannot be read at all."""
    manifest, contents = _read(Path(archive))
    problems = []
    expected = {t["part"]: t["sha256"] for t in manifest["tables"].values()}
    expected.update({name: f["sha256"] for name, f in manifest["files"].items()})
    for name, digest in sorted(expected.items()):
        if name not in contents:
            problems.append(f"{name}: missing from the archive")
        elif _sha(contents[name]) != digest:
            problems.append(f"{name}: its SHA-256 is {_sha(contents[name])}, the manifest says {digest}")
    problems += [f"{name}: in the archive but not in the manifest" for name in sorted(set(contents) - set(expected))]
    audit_part = contents.get("db/audit_entry.jsonl")
    if audit_part is not None and _checkpoint_of(audit_part) != manifest["audit_checkpoint"]:
        problems.append(f"the audit log in the archive ends at {_checkpoint_of(audit_part)}, the manifest's "
                        f"checkpoint is {manifest['audit_checkpoint']}")
    elif audit_part is not None:
        problems += _chain_problems(audit_part, manifest["audit_checkpoint"])
    rows = sum(t["rows"] for t in manifest["tables"].values())
    lines = [f"backup of {manifest['created_at']} ({manifest['engine']}, schema {manifest['schema_revision']}): "
             f"{len(manifest['tables'])} tables, {rows} rows, {len(manifest['files'])} stored files, audit "
             f"checkpoint {manifest['audit_checkpoint']}"]
    lines += problems or ["every part matches its SHA-256"]
    return Report(not problems, tuple(lines))


# ------------------------------------------------------------------------------------------------ restore


def _refusals(conn: Connection, manifest: dict) -> list[str]:
    out = []
    revision = _revision(conn)
    if revision != manifest["schema_revision"]:
        out.append(f"the archive was made with the schema at revision {manifest['schema_revision']}, this database "
                   f"is at {revision}: run `flask db upgrade` to the same revision first")
    for table in _ordered()[0]:
        if conn.execute(sa.select(sa.func.count()).select_from(table)).scalar():
            out.append(f"the database is not empty (table {table.name} has rows): a backup is restored only into "
                       "an empty database")
            break
    return out


def _folder_refusals(upload_dir: Path) -> list[str]:
    if any(_stored_files(upload_dir)):
        return [f"the upload folder {upload_dir} is not empty: a backup is restored only into an empty one"]
    return []


def _stored_file_columns() -> list[tuple[str, str, str]]:
    """(table, name column, SHA-256 column) of every stored file a row records: `<x>stored_name` beside
    `<x>sha256` or `<x>pdf_sha256`."""
    out = []
    for table in db.metadata.tables.values():
        for column in table.columns:
            if column.name.endswith("stored_name"):
                prefix = column.name[: -len("stored_name")]
                for sha in (f"{prefix}sha256", f"{prefix}pdf_sha256"):
                    if sha in table.columns:
                        out.append((table.name, column.name, sha))
                        break
    return out


def file_problems(upload_dir: Path) -> list[str]:
    """Every stored file a row names that is missing or whose SHA-256 is not the one the row records."""
    by_name = {p.name: p for p in _stored_files(upload_dir)}
    problems = []
    for table, name_col, sha_col in _stored_file_columns():
        t = db.metadata.tables[table]
        for name, digest in db.session.execute(sa.select(t.c[name_col], t.c[sha_col]).where(
                t.c[name_col].is_not(None))):
            path = by_name.get(name)
            if path is None:
                problems.append(f"{table}.{name_col} {name}: the file is missing")
            elif _sha(path.read_bytes()) != digest:
                problems.append(f"{table}.{name_col} {name}: its SHA-256 differs from {table}.{sha_col}")
    return problems


def _prepare(manifest: dict, upload_dir: Path) -> list[str]:
    """Judge the upload folder before anything is written, and give a database with no tables the archive's schema
    (a refused folder leaves it without them). Returns the folder's refusals (raises BackupError when a database
    with no tables would be given its schema for nothing)."""
    with db.engine.connect() as conn:
        no_tables = not sa.inspect(conn).get_table_names()
    folder = _folder_refusals(upload_dir)
    if no_tables and folder:
        raise BackupError("Nothing was restored: " + "; ".join(folder) + ".")
    if no_tables:
        if manifest["schema_revision"]:
            from flask_migrate import upgrade

            upgrade(revision=manifest["schema_revision"])
        else:
            db.create_all()
    return folder


def _insert_rows(conn: sa.Connection, tables: list[sa.Table], later: set[tuple[str, str]],
                 contents: dict[str, bytes]) -> None:
    """Every table's rows in the order of their foreign keys; the columns that close a cycle (`later`) are set once
    every row is in. Raises BackupError when the database refuses a table's rows."""
    pending: list[tuple[sa.Table, list[sa.Column], list[dict]]] = []
    for table in tables:
        decode = {c.name: _decoder(c) for c in table.columns}
        rows = [{k: decode[k](v) for k, v in json.loads(line).items()}
                for line in contents[f"db/{table.name}.jsonl"].decode().splitlines()]
        if not rows:
            continue
        deferred = [c for c in table.columns if (table.name, c.name) in later]
        first = [{k: (None if (table.name, k) in later else v) for k, v in r.items()} for r in rows]
        try:
            for chunk in range(0, len(first), 500):
                conn.execute(table.insert(), first[chunk:chunk + 500])
        except sa.exc.DBAPIError as exc:
            raise BackupError(f"Nothing was restored: the rows of {table.name} were refused by the "
                              f"database ({exc.orig}).") from None
        if deferred:
            pending.append((table, deferred, rows))
    for table, deferred, rows in pending:  # the columns that close a cycle, once every row is in
        key = list(table.primary_key.columns)
        for r in rows:
            if any(r.get(c.name) is not None for c in deferred):
                conn.execute(table.update().where(*[k == r[k.name] for k in key])
                             .values({c.name: r[c.name] for c in deferred}))


def _continue_sequences(conn: sa.Connection, tables: list[sa.Table]) -> None:
    """On PostgreSQL, every serial key's sequence continues after the restored ids (SQLite needs nothing)."""
    if conn.dialect.name != "postgresql":
        return
    for table in tables:
        for column in table.primary_key.columns:
            if column.autoincrement is True or (column.autoincrement == "auto" and
                                                isinstance(column.type, sa.Integer)):
                conn.execute(sa.text(
                    f"SELECT setval(pg_get_serial_sequence('\"{table.name}\"', '{column.name}'), "
                    f"COALESCE((SELECT MAX(\"{column.name}\") FROM \"{table.name}\"), 0) + 1, false)"))


def _write_files(manifest: dict, contents: dict[str, bytes], upload_dir: Path) -> list[Path]:
    """The archive's stored files into the upload folder. Raises BackupError (the rows are in) when one cannot be
    written."""
    written = []
    try:
        for name in manifest["files"]:
            target = upload_dir / name.removeprefix("files/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(contents[name])
            written.append(target)
    except OSError as exc:
        raise BackupError(f"The rows are restored but the stored files could not be written to {upload_dir}: "
                          f"{exc.strerror or exc}. Empty the database and the folder, free space, and restore "
                          "again.") from None
    return written


def restore_backup(archive: Path) -> Report:
    """Restore the archive into this instance's empty database and empty upload folder: every row, then every
    file, then the audit chain checked against the archive's checkpoint and every stored file against its row's
    hash. Raises BackupError, changing nothing, when the archive does not verify or the instance is not empty."""
    archive = Path(archive)
    checked = verify_backup(archive)
    if not checked.ok:
        raise BackupError("The archive does not verify, so nothing was restored: " + "; ".join(checked.lines[1:]))
    manifest, contents = _read(archive)
    upload_dir = Path(current_app.config["UPLOAD_DIR"])
    tables, cyclic = _ordered()
    later = {(c.table.name, col.name) for c in cyclic for col in c.columns}
    folder = _prepare(manifest, upload_dir)
    with db.engine.connect() as conn:
        refusals = _refusals(conn, manifest) + folder
        if refusals:
            raise BackupError("Nothing was restored: " + "; ".join(refusals) + ".")
        conn.rollback()
        with conn.begin():
            _insert_rows(conn, tables, later, contents)
            _continue_sequences(conn, tables)
    written = _write_files(manifest, contents, upload_dir)
    db.session.remove()
    chain = verify_chain(Checkpoint.parse(manifest["audit_checkpoint"]))
    problems = file_problems(upload_dir)
    lines = [f"restored {sum(t['rows'] for t in manifest['tables'].values())} rows in "
             f"{len(manifest['tables'])} tables and {len(written)} stored files",
             f"audit chain: {chain.reason}" if not chain.ok else
             f"audit chain intact up to the archive's checkpoint {manifest['audit_checkpoint']}"]
    lines += problems or ["every stored file matches the hash its row records"]
    return Report(chain.ok and not problems, tuple(lines))


# ------------------------------------------------------------------------------------------------ CLI


@cli.cli.command("create")
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
def create_command(archive: Path) -> None:
    """Write ARCHIVE: every table, every stored file, the audit checkpoint and a manifest of SHA-256s."""
    try:
        manifest = create_backup(archive, now=datetime.now(UTC))
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    rows = sum(t["rows"] for t in manifest["tables"].values())
    click.echo(f"{archive}: {rows} rows in {len(manifest['tables'])} tables, {len(manifest['files'])} stored files, "
               f"audit checkpoint {manifest['audit_checkpoint']}. Keep the AUDIT_KEY apart from it: it is not in "
               "the archive.")


def _report(run, archive: Path) -> None:
    """Print the report of `run(archive)`; exit 1 when it is not ok, and say why when it could not run."""
    try:
        report = run(archive)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    for line in report.lines:
        click.echo(line)
    if not report.ok:
        raise click.exceptions.Exit(1)


@cli.cli.command("verify")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify_command(archive: Path) -> None:
    """Check every part of ARCHIVE against its manifest, without restoring."""
    _report(verify_backup, archive)


@cli.cli.command("restore")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def restore_command(archive: Path) -> None:
    """Restore ARCHIVE into an empty database (migrated, no rows) and an empty upload folder."""
    _report(restore_backup, archive)
