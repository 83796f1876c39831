"""What `flask backup create`, `verify` and `restore` promise, on a small instance (a few accounts, a call with a bid
holding money, a date and a document, a trusted certificate, one stored file): the archive holds every table and every
stored file with a manifest of their SHA-256s; an archive whose audit log was cut, with the manifest's hash written
anew to match, does not verify (the chain must link up to the checkpoint), nor one holding a part its manifest does not
list, missing one, or with a part altered; a restore brings back every row and file (into SQLite, and PostgreSQL when
the run has one), refuses a database or an upload folder that is not empty before anything is written, and says when
a stored file or the audit chain does not match."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

from accounts.services import create_user
from core.db import db, utcnow

pytestmark = pytest.mark.no_db


STORED = b"%PDF-1.7 a stored file"
NESTED = b"%PDF-1.7 a stored file in a folder"


def _app(tmp_path: Path, name: str, *, url: str | None = None, audit_key: str = "backup-test-audit-key"):
    from app import create_app

    return create_app({"TESTING": True, "SECRET_KEY": "x", "AUDIT_KEY": audit_key,
                       "SQLALCHEMY_DATABASE_URI": url or f"sqlite:///{tmp_path / f'{name}.sqlite3'}",
                       "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / f"{name}-uploads"),
                       "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False,
                       "MAIL_ENABLED": False, "OUTBOX_DISPATCH": "manual"})


def _dispose(app) -> None:
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def _fill(app) -> None:
    """Four accounts (the first four audit entries), then a call open for bids (its regulation version closes a cycle
    of foreign keys) with a bid holding money, a date, a room rate and a document stored as signed.pdf, and a trusted
    certificate (bytes), the bid's dossier stored as annex.pdf (its hash in `pdf_sha256`), a decision without minutes
    (no stored name); stored files signed.pdf, contracts/2031/annex.pdf, and .partial (a hidden file, not kept)."""
    from bids.models import BidDocument, BidRoomRate
    from bids.services import create_bid
    from board.models import METHODS, Decision, Dossier
    from demo.seed import practice_regulation
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from evidence.trust import TrustedCertificate
    from operations.scheduler import ScheduledRun

    with app.app_context():
        db.create_all()
        users = [create_user(email=f"u{i}@example.org", password="a long enough password", name=f"U{i}",
                             roles=["bidder"], actor=None, now=utcnow()) for i in range(4)]
        db.session.commit()
        event, _ = load_event(practice_regulation(load_regulation_file(default_event_file()), now=utcnow()),
                              actor=None, now=utcnow(), source="test")
        db.session.commit()
        bid = create_bid(event, owner=users[0], actor=users[0], now=utcnow())
        bid.prize_fund_eur, bid.opening_date = Decimal("12345.67"), date(2031, 5, 2)
        db.session.add(BidRoomRate(bid_id=bid.id, room_type="single", eur_per_night=Decimal("80.50")))
        db.session.add(BidDocument(bid_id=bid.id, kind="supporting", original_name="letter.pdf",
                                   stored_name="signed.pdf", sha256=hashlib.sha256(STORED).hexdigest(),
                                   size_bytes=len(STORED), uploaded_by_id=users[0].id))
        db.session.add(TrustedCertificate(sha256="ab" * 32, subject="CN=Test", der=b"\x00\x01\xfe\xff",
                                          not_after=datetime(2032, 1, 1, tzinfo=UTC)))
        db.session.add(Dossier(event_id=event.id, bid_id=bid.id, kind="bid", number=1, identifier="D-1",
                               inputs_sha256="cd" * 32, inputs="{}", stored_name="annex.pdf",
                               pdf_sha256=hashlib.sha256(NESTED).hexdigest(), pages=1, size_bytes=len(NESTED)))
        db.session.add(Decision(event_id=event.id, method=next(m for m in METHODS if m != "president"),
                                selected_bid_id=bid.id, decided_on=date(2031, 6, 1), tally="{}", consultations="[]",
                                ranking="{}", reviewed="{}", recorded_by_id=users[1].id))
        # more rows in a table than a restore inserts at once (500)
        db.session.execute(sa.insert(ScheduledRun), [
            {"job": "reminders", "slot": f"2031-01-01 #{i}", "claimed_at": datetime(2031, 1, 1, tzinfo=UTC),
             "claimed_by": "worker"} for i in range(501)])
        db.session.commit()
    uploads = Path(app.config["UPLOAD_DIR"])
    (uploads / "contracts" / "2031").mkdir(parents=True, exist_ok=True)
    (uploads / "signed.pdf").write_bytes(STORED)
    (uploads / "contracts" / "2031" / "annex.pdf").write_bytes(NESTED)
    (uploads / ".partial").write_bytes(b"an upload not finished")


@pytest.fixture(scope="module")
def small_backup(tmp_path_factory, database_url):
    """The small instance (_fill) on the run's database (SQLite, or a PostgreSQL database of its own when the run has
    one), backed up; yields (app, archive, checkpoint)."""
    tmp_path = tmp_path_factory.mktemp("small-backup")
    app, cleanup = _target(tmp_path, "postgresql" if database_url.startswith("postgresql") else "sqlite",
                           database_url, name="source")
    try:  # disposed of, and its database dropped, even when making it fails
        _fill(app)
        archive = tmp_path / "small.backup"
        made = app.test_cli_runner().invoke(args=["backup", "create", str(archive)])
        assert made.exit_code == 0, made.output
        with tarfile.open(archive) as tar:
            manifest = json.loads(tar.extractfile("manifest.json").read())
        yield app, archive, manifest["audit_checkpoint"]
    finally:
        _dispose(app)
        if cleanup:
            cleanup()


def _rewritten(archive: Path, out: Path, *, audit_lines=None, extra: dict[str, bytes] | None = None,
               edit=None) -> Path:
    """A copy of `archive` with the audit part's lines chosen by `audit_lines(lines)`, its SHA-256 and row count
    written anew into the manifest (as one who cut rows would), `edit(contents, manifest)` applied, and `extra` parts
    added (not in the manifest)."""
    with tarfile.open(archive) as tar:
        contents = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    manifest = json.loads(contents["manifest.json"])
    if audit_lines is not None:
        lines = audit_lines(contents["db/audit_entry.jsonl"].decode().splitlines())
        data = "".join(line + "\n" for line in lines).encode()
        contents["db/audit_entry.jsonl"] = data
        manifest["tables"]["audit_entry"].update(rows=len(lines), sha256=hashlib.sha256(data).hexdigest())
    if edit is not None:
        edit(contents, manifest)
    contents["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True).encode()
    contents.update(extra or {})
    with tarfile.open(out, "w") as tar:
        for name, data in contents.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


def _verify(app, archive: Path):
    return app.test_cli_runner().invoke(args=["backup", "verify", str(archive)])


def test_the_archive_as_made_verifies_holds_everything_and_restores_as_it_was(tmp_path, small_backup, database_url):
    """Everything the archive made by `small_backup` should be is checked here, in the first test that asks for it:
    mutation testing (docs/mutation.md) credits what a module's fixture runs (the whole of `backup create`) to the
    first test that asks for the fixture, and runs only that test against those mutants."""
    app, archive, checkpoint = small_backup
    verified = _verify(app, archive)
    assert verified.exit_code == 0, verified.output
    assert "every part matches its SHA-256" in verified.output
    assert checkpoint.startswith("6:")
    _holds_every_table_and_stored_file_with_their_sha256(small_backup)
    _restores_every_row_and_stored_file_and_continues_the_ids(tmp_path, small_backup, database_url)


@pytest.mark.parametrize(("cut", "broken"), [
    (lambda lines: lines[:1] + lines[2:], "entry 3 (user.create) does not follow entry 1"),
    (lambda lines: lines[1:], "entry 2 (user.create) does not follow the start of the log"),
], ids=["a middle entry", "the first entry"])
def test_an_archive_whose_audit_log_was_cut_does_not_verify(tmp_path, small_backup, cut, broken):
    app, archive, checkpoint = small_backup
    verified = _verify(app, _rewritten(archive, tmp_path / "cut.backup", audit_lines=cut))
    assert verified.exit_code == 1, verified.output
    assert "db/audit_entry.jsonl: its SHA-256" not in verified.output  # the manifest's hash was made to match
    assert (f"the audit log in the archive does not reach the manifest's checkpoint {checkpoint}: {broken}: an "
            "entry between them was deleted or inserted") in verified.output


def test_an_archive_whose_audit_log_lost_its_tail_does_not_verify(tmp_path, small_backup):
    app, archive, checkpoint = small_backup
    verified = _verify(app, _rewritten(archive, tmp_path / "tail.backup", audit_lines=lambda lines: lines[:-1]))
    assert verified.exit_code == 1, verified.output
    assert "the audit log in the archive ends at 5:" in verified.output
    assert f"the manifest's checkpoint is {checkpoint}" in verified.output


def test_an_archive_holding_a_part_its_manifest_does_not_list_does_not_verify(tmp_path, small_backup):
    app, archive, _ = small_backup
    added = _rewritten(archive, tmp_path / "added.backup", extra={"files/planted.pdf": b"%PDF-1.7 planted"})
    verified = _verify(app, added)
    assert verified.exit_code == 1, verified.output
    assert "files/planted.pdf: in the archive but not in the manifest" in verified.output
    restored = _app(tmp_path, "target").test_cli_runner().invoke(args=["backup", "restore", str(added)])
    assert restored.exit_code != 0 and "nothing was restored" in restored.output


@pytest.mark.parametrize("schema", [False, True], ids=["no tables", "empty tables"])
def test_a_restore_into_an_upload_folder_that_is_not_empty_is_refused_before_anything_is_written(
        tmp_path, small_backup, schema):
    _, archive, _ = small_backup
    target = _app(tmp_path, "target")
    if schema:
        with target.app_context():
            db.create_all()
    uploads = Path(target.config["UPLOAD_DIR"])
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "left-behind.pdf").write_bytes(b"%PDF-1.7 somebody else's")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
        assert restored.exit_code != 0
        assert (f"Nothing was restored: the upload folder {uploads} is not empty: a backup is restored only into an "
                "empty one.") in restored.output
        with target.app_context():
            tables = sa.inspect(db.engine).get_table_names()
            if not schema:
                assert tables == []
            else:
                assert all(db.session.scalar(sa.select(sa.func.count()).select_from(t)) == 0
                           for t in db.metadata.sorted_tables)
        assert sorted(p.name for p in uploads.iterdir()) == ["left-behind.pdf"]
    finally:
        _dispose(target)


# ------------------------------------------------------------------------------------------------ what is archived


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _rows(app) -> dict[str, list[dict]]:
    """Every row of every table, in the order of its key."""
    with app.app_context():
        return {t.name: [dict(r) for r in db.session.execute(
            sa.select(t).order_by(*(t.primary_key.columns or t.columns))).mappings()]
            for t in db.metadata.sorted_tables}


def _contents(archive: Path) -> tuple[dict, dict[str, tarfile.TarInfo], dict[str, bytes]]:
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        contents = {name: tar.extractfile(m).read() for name, m in members.items()}
    return json.loads(contents.pop("manifest.json")), members, contents


def _holds_every_table_and_stored_file_with_their_sha256(small_backup):
    app, archive, checkpoint = small_backup
    manifest, members, contents = _contents(archive)
    rows = _rows(app)
    with app.app_context():
        from evidence.audit import checkpoint as head

        assert checkpoint == str(head())
    with app.app_context():
        engine = db.engine.dialect.name
    assert (manifest["format"], manifest["engine"], manifest["schema_revision"]) == (1, engine, None)
    assert manifest["tables"] == {name: {"rows": len(rows[name]), "part": f"db/{name}.jsonl",
                                         "sha256": _sha(contents[f"db/{name}.jsonl"])} for name in rows}
    # the hidden .partial is not a stored file; a file in a folder keeps its path
    assert manifest["files"] == {"files/signed.pdf": {"size": len(STORED), "sha256": _sha(STORED)},
                                 "files/contracts/2031/annex.pdf": {"size": len(NESTED), "sha256": _sha(NESTED)}}
    assert set(contents) == {f"db/{name}.jsonl" for name in rows} | set(manifest["files"])
    assert contents["files/signed.pdf"] == STORED and contents["files/contracts/2031/annex.pdf"] == NESTED
    assert all(m.isfile() and m.mode == 0o600 for m in members.values())
    # each table's rows in the order of their key, one JSON object a line, values written by their column's type
    users = [json.loads(line) for line in contents["db/user.jsonl"].decode().splitlines()]
    assert [u["email"] for u in users] == [f"u{i}@example.org" for i in range(4)]
    assert [u["id"] for u in users] == [1, 2, 3, 4]
    (bid,) = [json.loads(line) for line in contents["db/bid.jsonl"].decode().splitlines()]
    assert (bid["prize_fund_eur"], bid["opening_date"]) == ("12345.67", "2031-05-02")
    assert bid["created_at"].endswith("+00:00")
    (certificate,) = [json.loads(line) for line in contents["db/trusted_certificate.jsonl"].decode().splitlines()]
    assert (certificate["der"], certificate["not_after"]) == ("AAH+/w==", "2032-01-01T00:00:00+00:00")
    assert contents["db/contract.jsonl"] == b""  # a table without rows is in the archive, empty
    total = sum(len(r) for r in rows.values())
    verified = _verify(app, archive)
    assert verified.output.splitlines() == [
        f"backup of {manifest['created_at']} ({engine}, schema None): {len(rows)} tables, {total} rows, 2 stored "
        f"files, audit checkpoint {checkpoint}", "every part matches its SHA-256"]


@pytest.fixture
def paris_time(monkeypatch):
    """The process's local time zone is Paris's (the server's clock is not always kept in UTC)."""
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_create_writes_its_time_in_utc_and_says_what_it_holds(tmp_path, small_backup, paris_time):
    from operations.backup import BackupError, create_backup

    app, archive, checkpoint = small_backup
    now = datetime.fromisoformat("2031-01-02T05:04:05+02:00")
    with app.app_context():
        manifest = create_backup(tmp_path / "timed.backup", now=now)
    _, _, contents = _contents(tmp_path / "timed.backup")
    (bid,) = [json.loads(line) for line in contents["db/bid.jsonl"].decode().splitlines()]
    assert bid["created_at"].endswith("+00:00")  # every instant in UTC, whatever the server's zone
    with app.app_context():
        with pytest.raises(BackupError) as exists:
            create_backup(tmp_path / "timed.backup", now=now)
        with pytest.raises(BackupError) as unwritable:
            create_backup(tmp_path / "no such folder" / "x.backup", now=now)
    assert manifest["created_at"] == "2031-01-02T03:04:05+00:00"
    assert str(exists.value) == (f"{tmp_path / 'timed.backup'} exists already: a backup never overwrites a file; "
                                 "choose another name.")
    assert str(unwritable.value) == (f"The archive could not be written to {tmp_path / 'no such folder' / 'x.backup'}"
                                     ": No such file or directory.")
    _, members, _ = _contents(tmp_path / "timed.backup")
    assert {m.mtime for m in members.values()} == {int(now.timestamp())}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["timed.backup"]  # no partial file left behind
    rows = sum(t["rows"] for t in manifest["tables"].values())
    made = app.test_cli_runner().invoke(args=["backup", "create", str(tmp_path / "cli.backup")])
    assert made.exit_code == 0, made.output
    assert made.output == (f"{tmp_path / 'cli.backup'}: {rows} rows in {len(manifest['tables'])} tables, 2 stored "
                           f"files, audit checkpoint {checkpoint}. Keep the AUDIT_KEY apart from it: it is not in "
                           "the archive.\n")


def test_an_instance_without_rows_nor_files_is_backed_up_and_restored(tmp_path):
    source, target = _app(tmp_path, "empty"), _app(tmp_path, "target")
    try:
        with source.app_context():
            db.create_all()
        made = source.test_cli_runner().invoke(args=["backup", "create", str(tmp_path / "empty.backup")])
        assert made.exit_code == 0, made.output
        manifest, _, _ = _contents(tmp_path / "empty.backup")
        assert manifest["audit_checkpoint"] == "0:" + "0" * 64 and manifest["files"] == {}
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(tmp_path / "empty.backup")])
        assert restored.exit_code == 0, restored.output
        assert restored.output.splitlines() == [
            f"restored 0 rows in {len(manifest['tables'])} tables and 0 stored files",
            f"audit chain intact up to the archive's checkpoint 0:{'0' * 64}",
            "every stored file matches the hash its row records"]
    finally:
        _dispose(source)
        _dispose(target)


def test_a_backup_taken_while_an_account_is_created_holds_the_instance_as_it_was_when_it_began(tmp_path, database_url):
    """An account created by another connection while the backup reads (after it has read the accounts, before the
    audit log and the roles) is in none of the archive's tables, and was not kept waiting: the archive is one
    snapshot, not tables read at different moments (on PostgreSQL, one REPEATABLE READ transaction, which blocks no
    writer; on SQLite, the online backup's copy: a read of the live file would hold the write lock, and the account
    would fail with "database is locked")."""
    kind = "postgresql" if database_url.startswith("postgresql") else "sqlite"
    source, cleanup = _target(tmp_path, kind, database_url, name="busy")
    other = _app(tmp_path, "busy", url=source.config["SQLALCHEMY_DATABASE_URI"])  # another process on the same data
    written = []

    def create_an_account_once_the_accounts_are_read(conn, cursor, statement, parameters, context, executemany):
        if written or "FROM user ORDER BY" not in statement.replace('"', ""):  # the backup's read of the accounts
            return
        written.append(statement)
        with other.app_context():
            create_user(email="late@example.org", password="a long enough password", name="Late",
                        roles=["bidder"], actor=None, now=utcnow())
            db.session.commit()
            db.session.remove()

    try:
        with source.app_context():
            db.create_all()
            create_user(email="first@example.org", password="a long enough password", name="First",
                        roles=["bidder"], actor=None, now=utcnow())
            db.session.commit()
        before = _rows(source)
        sa.event.listen(sa.engine.Engine, "after_cursor_execute", create_an_account_once_the_accounts_are_read)
        try:
            made = source.test_cli_runner().invoke(args=["backup", "create", str(tmp_path / "busy.backup")])
        finally:
            sa.event.remove(sa.engine.Engine, "after_cursor_execute", create_an_account_once_the_accounts_are_read)
        assert made.exit_code == 0, made.output
        assert len(written) == 1  # the account was created while the backup read, and is in the database now
        assert [u["email"] for u in _rows(source)["user"]] == ["first@example.org", "late@example.org"]
        manifest, _, contents = _contents(tmp_path / "busy.backup")
        assert {name: t["rows"] for name, t in manifest["tables"].items()} == {
            name: len(rows) for name, rows in before.items()}
        assert (len(before["user"]), len(before["user_role"]), len(before["audit_entry"])) == (1, 1, 1)
        assert manifest["audit_checkpoint"].startswith("1:")
        assert b"late@example.org" not in b"".join(contents.values())
    finally:
        _dispose(other)
        _dispose(source)
        if cleanup:
            cleanup()


# ------------------------------------------------------------------------------------------------ verify


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda c, m: c.pop("db/user.jsonl"), "db/user.jsonl: missing from the archive"),
    (lambda c, m: c.update({"files/signed.pdf": b"%PDF-1.7 changed"}),
     f"files/signed.pdf: its SHA-256 is {_sha(b'%PDF-1.7 changed')}, the manifest says {_sha(STORED)}"),
    (lambda c, m: m["files"].pop("files/signed.pdf"), "files/signed.pdf: in the archive but not in the manifest"),
], ids=["a part missing", "a stored file altered", "a stored file not listed"])
def test_an_archive_with_a_part_missing_or_altered_does_not_verify_and_restores_nothing(tmp_path, small_backup, edit,
                                                                                       problem):
    app, archive, _ = small_backup
    changed = _rewritten(archive, tmp_path / "changed.backup", edit=edit)
    verified = _verify(app, changed)
    assert verified.exit_code == 1
    assert verified.output.splitlines()[1:] == [problem]
    target = _app(tmp_path, "target")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(changed)])
        assert restored.exit_code == 1
        assert restored.output == f"Error: The archive does not verify, so nothing was restored: {problem}\n"
        with target.app_context():
            assert sa.inspect(db.engine).get_table_names() == []
        assert list(Path(target.config["UPLOAD_DIR"]).rglob("*")) == []
    finally:
        _dispose(target)


def test_a_restore_of_an_archive_that_does_not_verify_names_every_problem(tmp_path, small_backup):
    _, archive, _ = small_backup
    changed = _rewritten(archive, tmp_path / "changed.backup", edit=lambda c, m: c.pop("db/user.jsonl"),
                         extra={"files/planted.pdf": b"%PDF-1.7 planted"})
    target = _app(tmp_path, "target")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(changed)])
        assert restored.exit_code == 1
        assert restored.output == ("Error: The archive does not verify, so nothing was restored: db/user.jsonl: "
                                   "missing from the archive; files/planted.pdf: in the archive but not in the "
                                   "manifest\n")
    finally:
        _dispose(target)


def test_an_archive_whose_checkpoint_was_changed_does_not_verify(tmp_path, small_backup):
    app, archive, checkpoint = small_backup
    other = checkpoint.split(":")[0] + ":" + "0" * 64
    verified = _verify(app, _rewritten(archive, tmp_path / "other.backup",
                                       edit=lambda c, m: m.update(audit_checkpoint=other)))
    assert verified.exit_code == 1
    assert verified.output.splitlines()[1:] == [
        f"the audit log in the archive ends at {checkpoint}, the manifest's checkpoint is {other}"]


def _tar(path: Path, parts: dict[str, bytes | None]) -> Path:
    """A tar file of `parts` (None: a folder)."""
    with tarfile.open(path, "w") as tar:
        for name, data in parts.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(("parts", "why"), [
    ({"db/user.jsonl": b""}, "{archive} has no manifest.json: this is not a Gambit backup."),
    ({"manifest.json": b"{not json"}, "{archive}: its manifest.json is not JSON."),
    ({"manifest.json": b'{"format": 2}'}, "{archive} is a backup of format 2; this Gambit reads format 1."),
    ({"manifest.json": b"{}"}, "{archive} is a backup of format None; this Gambit reads format 1."),
    ({"db": None, "manifest.json": b'{"format": 1}'},
     "{archive}: db is not a plain file; this is not a Gambit backup."),
], ids=["no manifest", "a manifest not JSON", "another format", "no format", "a folder"])
def test_what_is_not_a_gambit_backup_is_refused_saying_why(tmp_path, small_backup, parts, why):
    app, _, _ = small_backup
    archive = _tar(tmp_path / "other.tar", parts)
    verified = _verify(app, archive)
    assert verified.exit_code == 1
    assert verified.output == "Error: " + why.format(archive=archive) + "\n"


def test_a_file_that_is_not_an_archive_is_refused_saying_why(tmp_path, small_backup):
    app, _, _ = small_backup
    archive = tmp_path / "notes.txt"
    archive.write_bytes(b"not an archive at all")
    verified = _verify(app, archive)
    assert verified.exit_code == 1
    assert verified.output.startswith(f"Error: {archive} cannot be read as a backup archive: ")


# ------------------------------------------------------------------------------------------------ restore


def _target(tmp_path: Path, kind: str, database_url: str, *, name: str = "target", **kwargs):
    """A fresh app on an empty SQLite file, or on a new PostgreSQL database (dropped by the cleanup it returns)."""
    if kind == "sqlite":
        return _app(tmp_path, name, **kwargs), None
    database = f"gambit_restore_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1),
                             isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {database}")

    def cleanup():
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        admin.dispose()

    url = admin.url.set(database=database).render_as_string(hide_password=False)
    return _app(tmp_path, name, url=url, **kwargs), cleanup


def _targets(database_url: str) -> list[str]:
    return ["sqlite"] + (["postgresql"] if database_url.startswith("postgresql") else [])


def _restores_every_row_and_stored_file_and_continues_the_ids(tmp_path, small_backup, database_url):
    app, archive, checkpoint = small_backup
    rows = _rows(app)
    total = sum(len(r) for r in rows.values())
    for kind in _targets(database_url):
        target, cleanup = _target(tmp_path / kind, kind, database_url)
        uploads = Path(target.config["UPLOAD_DIR"])
        try:
            restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
            assert restored.exit_code == 0, restored.output
            assert restored.output.splitlines() == [
                f"restored {total} rows in {len(rows)} tables and 2 stored files",
                f"audit chain intact up to the archive's checkpoint {checkpoint}",
                "every stored file matches the hash its row records"], kind
            assert _rows(target) == rows, kind
            assert (uploads / "signed.pdf").read_bytes() == STORED
            assert (uploads / "contracts" / "2031" / "annex.pdf").read_bytes() == NESTED
            assert not (uploads / ".partial").exists()
            with target.app_context():  # the ids continue after the restored ones
                user = create_user(email="new@example.org", password="a long enough password", name="New",
                                   roles=["bidder"], actor=None, now=utcnow())
                db.session.commit()
                assert user.id == 5
            again = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
            assert again.exit_code == 1
            assert again.output == (
                "Error: Nothing was restored: the database is not empty (table user has rows): a backup is restored "
                f"only into an empty database; the upload folder {uploads} is not empty: a backup is restored only "
                "into an empty one.\n")
        finally:
            _dispose(target)
            if cleanup:
                cleanup()


def test_a_restore_with_another_audit_key_says_the_chain_does_not_verify(tmp_path, small_backup):
    app, archive, _ = small_backup
    target = _app(tmp_path, "target", audit_key="another audit key")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
        assert restored.exit_code == 1
        assert restored.output.splitlines()[1:] == [
            "audit chain: entry 1 (user.create) does not match its MAC: it was changed after it was written, or the "
            "chain was rewritten without the audit key", "every stored file matches the hash its row records"]
    finally:
        _dispose(target)


def _set_document_sha(contents: dict, manifest: dict) -> None:
    (line,) = contents["db/bid_document.jsonl"].decode().splitlines()
    data = (json.dumps({**json.loads(line), "sha256": "0" * 64}) + "\n").encode()
    contents["db/bid_document.jsonl"] = data
    manifest["tables"]["bid_document"]["sha256"] = _sha(data)


def _drop_stored_file(contents: dict, manifest: dict) -> None:
    del contents["files/signed.pdf"], manifest["files"]["files/signed.pdf"]


def _set_dossier_sha(contents: dict, manifest: dict) -> None:
    (line,) = contents["db/dossier.jsonl"].decode().splitlines()
    data = (json.dumps({**json.loads(line), "pdf_sha256": _sha(STORED)}) + "\n").encode()
    contents["db/dossier.jsonl"] = data
    manifest["tables"]["dossier"]["sha256"] = _sha(data)


@pytest.mark.parametrize(("edit", "files", "problem"), [
    (_set_document_sha, 2, "bid_document.stored_name signed.pdf: its SHA-256 differs from bid_document.sha256"),
    (_drop_stored_file, 1, "bid_document.stored_name signed.pdf: the file is missing"),
    (_set_dossier_sha, 2, "dossier.stored_name annex.pdf: its SHA-256 differs from dossier.pdf_sha256"),
], ids=["a row's hash not the file's", "a file missing", "a dossier's hash not its file's"])
def test_a_restore_says_which_stored_file_does_not_match_its_row(tmp_path, small_backup, edit, files, problem):
    app, archive, checkpoint = small_backup
    changed = _rewritten(archive, tmp_path / "changed.backup", edit=edit)
    assert _verify(app, changed).exit_code == 0  # the manifest was written anew to match
    target = _app(tmp_path, "target")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(changed)])
        assert restored.exit_code == 1
        assert restored.output.splitlines()[1:] == [
            f"audit chain intact up to the archive's checkpoint {checkpoint}", problem]
        assert restored.output.splitlines()[0].endswith(f"tables and {files} stored files")
    finally:
        _dispose(target)


def test_a_restore_into_a_database_at_another_schema_revision_is_refused(tmp_path, small_backup):
    _, archive, _ = small_backup
    target = _app(tmp_path, "target")
    try:
        with target.app_context():
            db.create_all()
            db.session.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            db.session.execute(sa.text("INSERT INTO alembic_version VALUES ('abc123')"))
            db.session.commit()
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
        assert restored.exit_code == 1
        assert restored.output == (
            "Error: Nothing was restored: the archive was made with the schema at revision None, this database is at "
            "abc123: run `flask db upgrade` to the same revision first.\n")
        assert all(not rows for rows in _rows(target).values())
    finally:
        _dispose(target)


def test_a_restore_whose_rows_the_database_refuses_restores_nothing(tmp_path, small_backup):
    _, archive, _ = small_backup

    def bogus_status(contents: dict, manifest: dict) -> None:
        (line,) = contents["db/bid.jsonl"].decode().splitlines()
        data = (json.dumps({**json.loads(line), "status": "bogus"}) + "\n").encode()
        contents["db/bid.jsonl"] = data
        manifest["tables"]["bid"]["sha256"] = _sha(data)

    target = _app(tmp_path, "target")
    try:
        restored = target.test_cli_runner().invoke(
            args=["backup", "restore", str(_rewritten(archive, tmp_path / "bogus.backup", edit=bogus_status))])
        assert restored.exit_code == 1
        assert restored.output == ("Error: Nothing was restored: the rows of bid were refused by the database (CHECK "
                                   "constraint failed: ck_bid_status).\n")
        assert all(not rows for rows in _rows(target).values())  # the rows before bid's were taken back too
        assert list(Path(target.config["UPLOAD_DIR"]).rglob("*")) == []
    finally:
        _dispose(target)


def test_a_restore_that_cannot_write_the_stored_files_says_so(tmp_path, small_backup):
    _, archive, _ = small_backup
    target = _app(tmp_path, "target")
    uploads = Path(target.config["UPLOAD_DIR"])
    uploads.rmdir()
    uploads.write_bytes(b"a file where the upload folder should be")
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
        assert restored.exit_code == 1
        assert restored.output == (f"Error: The rows are restored but the stored files could not be written to "
                                   f"{uploads}: Not a directory. Empty the database and the folder, free space, and "
                                   "restore again.\n")
    finally:
        _dispose(target)


def test_a_backup_of_a_migrated_database_restores_into_one_without_tables_at_its_revision(tmp_path):
    source, target = _app(tmp_path, "migrated"), _app(tmp_path, "target")
    try:
        with source.app_context():  # the schema of the last migration, marked so (as `flask db upgrade` leaves it)
            db.create_all()
        stamped = source.test_cli_runner().invoke(args=["db", "stamp", "head"])
        assert stamped.exit_code == 0, stamped.output
        with source.app_context():
            revision = db.session.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
            create_user(email="u@example.org", password="a long enough password", name="U", roles=["bidder"],
                        actor=None, now=utcnow())
            db.session.commit()
        made = source.test_cli_runner().invoke(args=["backup", "create", str(tmp_path / "migrated.backup")])
        assert made.exit_code == 0, made.output
        manifest, _, contents = _contents(tmp_path / "migrated.backup")
        assert manifest["schema_revision"] == revision and "db/alembic_version.jsonl" not in contents
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(tmp_path / "migrated.backup")])
        assert restored.exit_code == 0, restored.output
        with target.app_context():
            assert db.session.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == revision
        assert _rows(target) == _rows(source)
    finally:
        _dispose(source)
        _dispose(target)
