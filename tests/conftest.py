"""Fixtures as in flask's tutorial: app, client, runner, a login helper, a database rolled back per test,
and factories with keyword overrides.

The database is SQLite in a temporary folder, or the one DATABASE_URL names (PostgreSQL in CI). The schema is
made once per run with create_all; tests/test_migrations.py checks that the migrations make the same schema.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from flask.testing import FlaskClient

# Every app a test makes leaves its messages in the outbox unless the test asks for a deliverer: a delivery thread
# of this process would write through the test's `db.session` (tests that try a deliverer set OUTBOX_DISPATCH).
os.environ.setdefault("OUTBOX_DISPATCH", "manual")

# Nothing of the app is imported at the top of this file: a run of pure tests (tests/finance, the rules tests) does
# not pay for Flask, SQLAlchemy, WeasyPrint and pyHanko, and makes no app. The fixtures import what they use.

# Names other test modules import from here (`from tests.conftest import utcnow`), imported when first asked for.
_LAZY = {"db": "core.db", "utcnow": "core.db"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEMO_PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory) -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite3'}"


@pytest.fixture(scope="session")
def signing_ca(tmp_path_factory):
    """One throwaway CA and Gambit signing identity (PKCS#12 with a passphrase) for the whole run, plus a second
    CA that nobody trusts: every PDF Gambit issues in the tests is signed with it."""
    from types import SimpleNamespace

    from evidence import signing

    folder = tmp_path_factory.mktemp("signing")
    ca_key, ca = signing.make_ca("Gambit Test CA", organisation="FIDE test", unit=None)
    key, cert = signing.make_signer_cert(ca_key, ca, "Gambit test signer", organisation="FIDE test", unit=None)
    path = folder / "gambit.p12"
    path.write_bytes(signing.pkcs12_bytes(key, cert, [ca], passphrase="test-passphrase"))
    other_key, other = signing.make_ca("Untrusted CA", organisation="Elsewhere", unit=None)
    return SimpleNamespace(ca_key=ca_key, ca=ca, key=key, cert=cert, path=path, passphrase="test-passphrase",
                           other_ca_key=other_key, other_ca=other)


@pytest.fixture(scope="session")
def app(database_url, tmp_path_factory, signing_ca):
    from app import create_app
    from core.db import db

    instance = tmp_path_factory.mktemp("instance")
    application = create_app({
        "TESTING": True,
        "SECRET_KEY": "test-secret",
        "SQLALCHEMY_DATABASE_URI": database_url.replace("postgresql://", "postgresql+psycopg://", 1)
        if database_url.startswith("postgresql://") else database_url,
        "UPLOAD_DIR": str(instance / "uploads"),
        "SIGNING_PKCS12": str(signing_ca.path),
        "SIGNING_PASSPHRASE": signing_ca.passphrase,
        "WTF_CSRF_ENABLED": False,
        "RATELIMIT_ENABLED": False,
        "MAIL_ENABLED": False,
        # Messages wait in the outbox until a test delivers them (smtp.deliver(), `flask mail send`): no thread
        # of the test process writes through a test's connection.
        "OUTBOX_DISPATCH": "manual",
        "SERVER_NAME": "gambit.test",
        # Fast hashing in tests only; production keeps argon2id's defaults.
        "ARGON2_TIME_COST": 1,
        "ARGON2_MEMORY_COST": 1024,
    })
    with application.app_context():
        db.drop_all()
        db.create_all()
    yield application
    with application.app_context():
        db.session.remove()
        db.drop_all()
        db.engine.dispose()


def no_delivery_thread_left() -> None:
    """A test that started a delivery thread of the outbox (OUTBOX_DISPATCH auto) stops it: left running, it would
    write through a later test's `db.session` (its savepoints, another database)."""
    import threading

    left = [t.name for t in threading.enumerate() if t.name == "gambit-mail-dispatcher"]
    assert not left, "a delivery thread of the outbox is still running: stop it (operations.outbox.stop_dispatcher)"


def join_render_threads(timeout: float = 120) -> None:
    """Wait for the background PDF threads (board.jobs.start_thread) a test started: a daemon thread left running
    would write through the next test's `db.session` (its savepoints, another database) or a disposed engine."""
    import threading

    for thread in threading.enumerate():
        if thread.name.startswith("gambit-pdf-") and thread is not threading.current_thread():
            thread.join(timeout)
            assert not thread.is_alive(), f"background rendering {thread.name} still running after {timeout} s"


def pytest_collect_file(file_path, parent):
    """schemathesis' pytest plugin is kept from loading at every start (`-p no:schemathesis` in pyproject's addopts:
    it imports schemathesis whole) and registered when the first test module that uses it is collected."""
    if file_path.suffix != ".py" or not file_path.name.startswith("test_"):
        return None
    manager = parent.config.pluginmanager
    if not manager.has_plugin("schemathesis-when-used") and "import schemathesis" in file_path.read_text():
        import schemathesis.pytest.plugin

        manager.register(schemathesis.pytest.plugin, "schemathesis-when-used")
    return None


# A test that asks for one of these (itself or through another fixture) uses the test database: the session's app
# is made for it (its schema), and, unless it is marked no_db, it runs in a rolled-back transaction.
DATABASE_FIXTURES = ("app", "database_url")


@pytest.fixture(autouse=True)
def _rollback(request):
    """Each test that uses the database runs inside one outer transaction that is rolled back; commits become
    savepoints. A test that uses no fixture of the database (a pure rule, a template macro) makes no app."""
    uses_db = any(name in request.fixturenames for name in DATABASE_FIXTURES)
    app = request.getfixturevalue("app") if uses_db else None
    if app is None or "no_db" in request.keywords:
        yield
        join_render_threads()
        no_delivery_thread_left()
        _forget_what_processes_keep()  # a test with an app and a database of its own fills them too
        return
    from sqlalchemy.orm import scoped_session, sessionmaker

    from core.db import db

    # No app context is held across the test: requests must each get their own (and their own `g`).
    with app.app_context():
        connection = db.engine.connect()
    outer = connection.begin()
    original = db.session
    factory = sessionmaker(bind=connection, join_transaction_mode="create_savepoint")
    db.session = scoped_session(factory, scopefunc=original.registry.scopefunc)
    try:
        yield
    finally:
        join_render_threads()
        no_delivery_thread_left()
        with app.app_context():
            db.session.remove()
        db.session = original
        outer.rollback()
        connection.close()
        _forget_what_processes_keep()


def _forget_what_processes_keep() -> None:
    """Empty what the process keeps between requests: the ranking's slots and the scores kept are keyed by row ids
    and versions, and the rolled-back rows' ids are handed out again; the page parts kept are keyed on values, and
    forgotten so that no test sees what another rendered. Only the modules already imported are asked."""
    queries, templating = sys.modules.get("scoring.queries"), sys.modules.get("core.templating")
    if queries is not None:
        queries.arithmetic_slot.cache_clear()
        queries.kept_scores.clear()
    if templating is not None:
        templating.forget_fragments()


@pytest.fixture(scope="session")
def _laid_out_once() -> dict:
    """{(template, its switches): the PDF WeasyPrint made of it}, kept for the whole run (see `_pdf_layout_once`)."""
    return {}


@pytest.fixture(autouse=True)
def _pdf_layout_once(request):
    """A test marked `pdf_layout_once` needs the dossiers, board pack, minutes or contract to exist, and does not read
    what those PDFs say (the marker names the templates, such as "dossier.html"; none named: every PDF template).
    WeasyPrint lays out each of those templates once per run, the first time a marked test asks for it, on that
    test's data, and its PDF is given again for that template afterwards: seconds saved per document. Everything else
    is done as usual, on the test's own data: the template still runs on the context the service built (a template
    or context error still fails the test), and each document is still signed by Gambit (its own signature and time,
    so each stored file differs from the others, verifies, and is hashed into the records). A test that reads a PDF
    back is not marked for that template: its PDF is laid out from its own data."""
    marker = request.node.get_closest_marker("pdf_layout_once")
    if marker is None:
        yield
        return
    import sys

    from flask import render_template

    import evidence.pdf

    request.getfixturevalue("app")  # the app's modules are imported: the ones that render PDFs are among them
    monkeypatch = request.getfixturevalue("monkeypatch")
    kept, templates = request.getfixturevalue("_laid_out_once"), set(marker.args)
    real_render, html_to_pdf = evidence.pdf.render_pdf, evidence.pdf.html_to_pdf

    def render_pdf(template: str, **context) -> bytes:
        if templates and template not in templates:
            return real_render(template, **context)
        html = render_template(f"pdf/{template}", **context)
        # One layout per template and per setting of its switches (a contract's `draft`: a draft is not served as
        # the issued contract).
        key = (template, *sorted((name, value) for name, value in context.items() if isinstance(value, bool)))
        if key not in kept:
            kept[key] = html_to_pdf(html)
        return kept[key]

    # Every module that imported the one PDF function (board.services, contracts.services, ...) is given this one.
    users = [m for m in list(sys.modules.values()) if getattr(m, "__dict__", {}).get("render_pdf") is real_render]
    for module in users:
        monkeypatch.setattr(module, "render_pdf", render_pdf)
    yield


@pytest.fixture
def ctx(app):
    """An application context for tests that call services directly."""
    with app.app_context(), app.test_request_context():
        yield


@pytest.fixture
def client(app) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def reg():
    from events.regulation import default_event_file, load_regulation_file

    return load_regulation_file(default_event_file())


@pytest.fixture
def event(app, reg):
    """The 2015 call, loaded from its file."""
    from core.db import db
    from events.services import load_event

    with app.app_context():
        ev, _ = load_event(reg, actor=None, now=datetime(2015, 3, 1, tzinfo=UTC), source="test")
        db.session.commit()
        return ev.id


@pytest.fixture
def practice(app, reg):
    """A call open for bids: the 2015 rules moved into the future (as `flask seed --demo` makes it)."""
    from core.db import db, utcnow
    from demo.seed import practice_regulation
    from events.services import load_event

    with app.app_context():
        ev, _ = load_event(practice_regulation(reg, now=utcnow()), actor=None, now=utcnow(), source="test")
        db.session.commit()
        return ev.id


class Factory:
    """Makes rows with sensible defaults; keyword arguments override any of them."""

    def __init__(self, app):
        self.app = app
        self.count = 0

    def user(self, *, roles=("bidder",), email=None, password=DEMO_PASSWORD, **overrides):
        from accounts.services import create_user
        from core.db import db, utcnow

        self.count += 1
        with self.app.app_context():
            user = create_user(email=email or f"user{self.count}@example.org", password=password,
                               name=overrides.pop("name", f"User {self.count}"), roles=list(roles), actor=None,
                               now=utcnow(), **overrides)
            db.session.commit()
            return user.id


@pytest.fixture
def make(app) -> Factory:
    return Factory(app)


@contextmanager
def computed(app):
    """Inside the block, versioned pages (operations.page_cache) are computed on every request, as on their first visit
    after a change: what a page's computation costs is measured so, not a revisit answered from a kept copy."""
    before = app.config.get("PAGE_CACHE", True)
    app.config["PAGE_CACHE"] = False
    try:
        yield
    finally:
        app.config["PAGE_CACHE"] = before


def login(client: FlaskClient, email: str, password: str = DEMO_PASSWORD):
    """Log in through the real form; returns the response."""
    return client.post("/login", data={"email": email, "password": password})


@pytest.fixture
def login_as(client, make, app):
    """login_as("admin") makes a user with that role (or roles) and logs the client in; returns the user id."""

    def _login(*roles: str, **overrides) -> int:
        user_id = make.user(roles=roles or ("bidder",), **overrides)
        with app.app_context():
            from accounts.models import User
            from core.db import db

            email = db.session.get(User, user_id).email
        response = login(client, email)
        assert response.status_code == 302, response.data[:500]
        return user_id

    return _login


def csrf_token_from(html: bytes | str) -> str:
    text = html.decode() if isinstance(html, bytes) else html
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', text)
    assert match, "no CSRF token on the page"
    return match.group(1)


@pytest.fixture
def smtp(app):
    """A real SMTP server in-process (aiosmtpd); the app sends mail to it for the test."""
    import email
    import email.policy
    import socket

    from aiosmtpd.controller import Controller

    class Inbox:
        def __init__(self):
            self.messages = []

        def deliver(self) -> list:
            """Deliver what the outbox holds (what the worker would do), and return every message received."""
            from operations.delivery import deliver_due

            with app.app_context():
                deliver_due()
            return self.messages

        async def handle_DATA(self, server, session, envelope):
            self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
            return "250 OK"

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    saved = {k: app.config.get(k) for k in ("MAIL_ENABLED", "MAIL_SERVER", "MAIL_PORT")}
    app.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port)
    try:
        yield inbox
    finally:
        app.config.update(saved)
        controller.stop()


@pytest.fixture
def another_app(database_url, tmp_path):
    """Make more apps on the test database (another worker, another setting); their engines are disposed after
    the test, so no connection is left open."""
    from app import create_app
    from core.db import db

    made = []

    def _make(**config):
        url = database_url.replace("postgresql://", "postgresql+psycopg://", 1) \
            if database_url.startswith("postgresql://") else database_url
        base = {"TESTING": True, "SECRET_KEY": "s", "SQLALCHEMY_DATABASE_URI": url,
                "UPLOAD_DIR": str(tmp_path / "uploads"), "SERVER_NAME": "gambit.test", "ARGON2_TIME_COST": 1,
                "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False, "OUTBOX_DISPATCH": "manual"}
        application = create_app({**base, **config})
        made.append(application)
        return application

    yield _make
    for application in made:
        with application.app_context():
            for engine in db.engines.values():
                engine.dispose()


@pytest.fixture
def live(tmp_path, database_url):
    """A separate app on a separate database, committed for real (SQLite file, or a fresh PostgreSQL database
    when DATABASE_URL names one): for tests of what happens at the same moment in two threads."""
    import uuid

    import sqlalchemy as sa

    from app import create_app
    from core.db import db

    url, admin, name = f"sqlite:///{tmp_path / 'live.sqlite3'}", None, None
    if database_url.startswith("postgresql"):
        name = f"gambit_live_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1),
                                 isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        url = admin.url.set(database=name).render_as_string(hide_password=False)
    application = create_app({
        "TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url, "SERVER_NAME": "gambit.test",
        "UPLOAD_DIR": str(tmp_path / "uploads"), "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024,
        "SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 5} if name else {}})
    with application.app_context():
        db.create_all()
    yield application
    join_render_threads()
    from operations.delivery import stop_dispatcher

    stop_dispatcher(application)
    with application.app_context():
        db.session.remove()
        db.engine.dispose()
    if admin is not None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


def run_twice(app, work):
    """Run work(i) for i in 0, 1 in two threads that start together, each committing its own transaction;
    returns (results, errors)."""
    import threading

    from core.db import db

    barrier = threading.Barrier(2)
    results, errors = [None, None], [None, None]

    def run(i):
        # A state-changing request (POST), as the forms and API calls these tests stand for.
        with app.app_context(), app.test_request_context(method="POST"):
            try:
                barrier.wait()
                results[i] = work(i)
                db.session.commit()
            except Exception as exc:  # the losing thread's error is what the test looks at
                db.session.rollback()
                errors[i] = exc
            finally:
                db.session.remove()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results, errors


# The figures of the security and access tests (tests/security/figures.py), counted on every run that includes them.
from tests.security.figures import (  # noqa: E402, F401
    _count_requests,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)
