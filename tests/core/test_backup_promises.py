"""What `flask backup verify` and `flask backup restore` promise, on a small instance (a few accounts, one stored file):
an archive whose audit log was cut, with the manifest's hash written anew to match, does not verify (the chain must
link up to the checkpoint), nor one holding a part its manifest does not list; a restore into an upload folder that is
not empty is refused before anything is written."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
import sqlalchemy as sa

from accounts.services import create_user
from core.db import db, utcnow

pytestmark = pytest.mark.no_db


def _app(tmp_path: Path, name: str):
    from app import create_app

    return create_app({"TESTING": True, "SECRET_KEY": "x", "AUDIT_KEY": "backup-test-audit-key",
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / f'{name}.sqlite3'}",
                       "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / f"{name}-uploads"),
                       "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False,
                       "MAIL_ENABLED": False, "OUTBOX_DISPATCH": "manual"})


def _dispose(app) -> None:
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(scope="module")
def small_backup(tmp_path_factory):
    """Four accounts (four audit entries) and one stored file, backed up; yields (app, archive, checkpoint)."""
    tmp_path = tmp_path_factory.mktemp("small-backup")
    app = _app(tmp_path, "source")
    with app.app_context():
        db.create_all()
        for i in range(4):
            create_user(email=f"u{i}@example.org", password="a long enough password", name=f"U{i}",
                        roles=["bidder"], actor=None, now=utcnow())
        db.session.commit()
    uploads = Path(app.config["UPLOAD_DIR"])
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "signed.pdf").write_bytes(b"%PDF-1.7 a stored file")
    archive = tmp_path / "small.backup"
    made = app.test_cli_runner().invoke(args=["backup", "create", str(archive)])
    assert made.exit_code == 0, made.output
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    yield app, archive, manifest["audit_checkpoint"]
    _dispose(app)


def _rewritten(archive: Path, out: Path, *, audit_lines=None, extra: dict[str, bytes] | None = None) -> Path:
    """A copy of `archive` with the audit part's lines chosen by `audit_lines(lines)`, its SHA-256 and row count
    written anew into the manifest (as one who cut rows would), and `extra` parts added (not in the manifest)."""
    with tarfile.open(archive) as tar:
        contents = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    manifest = json.loads(contents["manifest.json"])
    if audit_lines is not None:
        lines = audit_lines(contents["db/audit_entry.jsonl"].decode().splitlines())
        data = "".join(line + "\n" for line in lines).encode()
        contents["db/audit_entry.jsonl"] = data
        manifest["tables"]["audit_entry"].update(rows=len(lines), sha256=hashlib.sha256(data).hexdigest())
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


def test_the_archive_as_made_verifies(small_backup):
    app, archive, checkpoint = small_backup
    verified = _verify(app, archive)
    assert verified.exit_code == 0, verified.output
    assert "every part matches its SHA-256" in verified.output
    assert checkpoint.startswith("4:")


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
    assert "the audit log in the archive ends at 3:" in verified.output
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
