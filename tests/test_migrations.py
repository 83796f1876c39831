"""The Alembic migrations build the same schema as the models (the tests themselves use create_all)."""

import os
import uuid

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import upgrade

from core.db import db


@pytest.mark.no_db
def test_migrations_match_the_models(tmp_path, database_url):
    from app import create_app

    url = f"sqlite:///{tmp_path / 'migrated.sqlite3'}"
    cleanup = None
    if database_url.startswith("postgresql"):
        name = f"gambit_mig_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1),
                                 isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        url = admin.url.set(database=name).render_as_string(hide_password=False)

        def cleanup():
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.dispose()

    migrated = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url,
                           "UPLOAD_DIR": str(tmp_path / "u")})
    original = db.session
    try:
        with migrated.app_context():
            upgrade(directory=os.path.join(migrated.root_path, "migrations"))
            with db.engine.connect() as conn:
                diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}),
                                        db.metadata)
            db.engine.dispose()
        assert diff == [], f"the models and the migrations differ; run `flask db migrate`: {diff}"
    finally:
        db.session = original
        if cleanup:
            cleanup()
