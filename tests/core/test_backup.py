"""`flask backup create|verify|restore`: the demo, backed up, restores into a fresh SQLite file (and a fresh
PostgreSQL database when the run has one) with the audit chain reaching the archive's checkpoint, every stored
file matching its row's hash, and the same pages showing the same content; a changed archive is caught; a
database or upload folder that is not empty is refused."""

from __future__ import annotations

import io
import re
import tarfile
import uuid

import pytest
import sqlalchemy as sa

from core.db import db
from demo.users import DEMO_PASSWORD
from tests.conftest import join_render_threads

pytestmark = pytest.mark.no_db


def _fresh_app(tmp_path, name: str, database_url: str):
    from app import create_app

    url, cleanup = f"sqlite:///{tmp_path / f'{name}.sqlite3'}", None
    if name == "postgresql":
        db_name = f"gambit_restore_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1),
                                 isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {db_name}")
        url = admin.url.set(database=db_name).render_as_string(hide_password=False)

        def cleanup():
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
            admin.dispose()
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url,
                      "SERVER_NAME": "gambit.test", "UPLOAD_DIR": str(tmp_path / f"{name}-uploads"),
                      "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False,
                      "WTF_CSRF_ENABLED": False, "MAIL_ENABLED": False})
    return app, cleanup


def _dispose(app, cleanup):
    join_render_threads()
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
    if cleanup:
        cleanup()


_VOLATILE = re.compile(r'(nonce|value)="[A-Za-z0-9_\-.=+/]{20,}"')


def _pages(app) -> dict[str, str]:
    """What a visitor and the secretariat read, with the per-request tokens taken out."""
    out = {}
    client = app.test_client()
    out["/events/fwwcm-2015"] = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert client.post("/login", data={"email": "admin@example.org", "password": DEMO_PASSWORD}).status_code == 302
    for url in ("/events/fwwcm-2015", "/contracts/", "/admin/users", "/contracts/1", "/board/fwwcm-2015"):
        response = client.get(url)
        out[f"admin {url}"] = f"{response.status_code} " + response.get_data(as_text=True)
    return {k: _VOLATILE.sub(r'\1="-"', v) for k, v in out.items()}


def _counts(app) -> dict[str, int]:
    with app.app_context():
        return {t.name: db.session.scalar(sa.select(sa.func.count()).select_from(t))
                for t in db.metadata.sorted_tables}


@pytest.fixture(scope="module")
def demo_backup(tmp_path_factory, database_url):
    """The demo, seeded into an app of its own, and its backup (made once for the module's tests)."""
    tmp_path = tmp_path_factory.mktemp("backup")
    app, cleanup = _fresh_app(tmp_path, "source", database_url)
    with app.app_context():
        db.create_all()
    result = app.test_cli_runner().invoke(args=["seed", "--demo"])
    assert result.exit_code == 0, result.output
    archive = tmp_path / "gambit.backup"
    made = app.test_cli_runner().invoke(args=["backup", "create", str(archive)])
    assert made.exit_code == 0, made.output
    yield app, archive
    _dispose(app, cleanup)


def test_a_backup_of_the_demo_verifies_and_restores_into_fresh_databases_showing_the_same(tmp_path, database_url,
                                                                                          demo_backup):
    source, archive = demo_backup
    verified = source.test_cli_runner().invoke(args=["backup", "verify", str(archive)])
    assert verified.exit_code == 0 and "every part matches its SHA-256" in verified.output, verified.output
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "manifest.json" in names and "db/audit_entry.jsonl" in names
    assert any(n.startswith("files/") for n in names)
    assert not any("audit_key" in n or "secret_key" in n for n in names)  # the keys stay out of the archive
    with source.app_context():
        from evidence.audit import checkpoint

        head = str(checkpoint())  # the archive's checkpoint: nothing has happened since the backup
    counts, pages = _counts(source), _pages(source)
    targets = ["sqlite"] + (["postgresql"] if database_url.startswith("postgresql") else [])
    for name in targets:
        target, cleanup = _fresh_app(tmp_path, name, database_url)
        try:
            restored = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
            assert restored.exit_code == 0, restored.output
            assert f"audit chain intact up to the archive's checkpoint {head}" in restored.output
            assert "every stored file matches the hash its row records" in restored.output
            audit = target.test_cli_runner().invoke(args=["audit", "verify", "--expect", head])
            assert audit.exit_code == 0, audit.output
            assert "evidence intact:" in audit.output and "not bound" not in audit.output  # bound as before
            assert _counts(target) == counts
            assert _pages(target) == pages, name
            again = target.test_cli_runner().invoke(args=["backup", "restore", str(archive)])
            assert again.exit_code != 0
            assert "a backup is restored only into an empty database" in again.output
        finally:
            _dispose(target, cleanup)


def test_a_changed_archive_is_caught_and_restores_nothing(tmp_path, database_url, demo_backup):
    source, archive = demo_backup
    changed = tmp_path / "changed.backup"
    with tarfile.open(archive) as tar, tarfile.open(changed, "w") as out:
        for member in tar.getmembers():
            data = tar.extractfile(member).read()
            if member.name == "db/contract_payment.jsonl":
                data = data.replace(b'"amount": "', b'"amount": "9', 1)
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    verified = source.test_cli_runner().invoke(args=["backup", "verify", str(changed)])
    assert verified.exit_code == 1
    assert "db/contract_payment.jsonl: its SHA-256 is" in verified.output
    target, cleanup = _fresh_app(tmp_path, "sqlite", database_url)
    try:
        restored = target.test_cli_runner().invoke(args=["backup", "restore", str(changed)])
        assert restored.exit_code != 0 and "nothing was restored" in restored.output
        with target.app_context():
            assert not sa.inspect(db.engine).get_table_names()
    finally:
        _dispose(target, cleanup)


def test_a_backup_never_overwrites_a_file(tmp_path, demo_backup):
    source, archive = demo_backup
    before = archive.read_bytes()
    again = source.test_cli_runner().invoke(args=["backup", "create", str(archive)])
    assert again.exit_code != 0 and "exists already: a backup never overwrites a file" in again.output
    assert archive.read_bytes() == before
