"""Fixtures for the browser tests: a live Gambit on its own SQLite file, a real SMTP server, Debian's Chromium.

The live app is separate from the session's `app` fixture: it serves real requests from another thread, so it
needs real commits (tests here are marked `no_db`), CSRF on, and mail sent to the SMTP server below. Nothing
is downloaded: Chromium is the system's (/usr/bin/chromium).
"""

from __future__ import annotations

import email
import email.policy
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Mailbox:
    """What the SMTP server received: one email.message.EmailMessage per message, with its envelope."""

    port: int = 0
    messages: list = field(default_factory=list)
    recipients: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append(message)
            self.recipients.append(list(envelope.rcpt_tos))
        return "250 OK"

    def wait_for(self, count: int = 1, to: str | None = None, timeout: float = 30) -> list:
        """The messages (to `to`, if given) once at least `count` of them have arrived: the app delivers from its
        outbox after the page answered, in a thread of its own."""
        import time

        def found() -> list:
            return [m for m in self.messages if to is None or m["To"] == to]

        deadline = time.monotonic() + timeout
        while len(found()) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(found()) >= count, f"{len(found())} message(s) arrived{' to ' + to if to else ''}, {count} expected"
        return found()


@pytest.fixture
def mailbox():
    """A real SMTP server (aiosmtpd) on a free localhost port, stopped after the test."""
    from aiosmtpd.controller import Controller

    box = Mailbox(port=_free_port())
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


@dataclass
class LiveServer:
    app: object
    url: str

    def __call__(self, path: str = "/") -> str:
        return self.url + path


def _quiet_handler():
    """werkzeug's request handler, logging every request but those for static files (they bury the rest)."""
    from werkzeug.serving import WSGIRequestHandler

    class Handler(WSGIRequestHandler):
        def log_request(self, code="-", size="-"):
            if not self.path.startswith("/static/"):
                super().log_request(code, size)

    return Handler


def live_config(folder: Path, **overrides) -> dict:
    """The settings of a live Gambit whose database and uploads live in `folder`: CSRF on (a real browser posts
    real forms), rate limits off (one client address logs in many people), fast password hashing."""
    return {
        "SECRET_KEY": "e2e-secret-key",
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder / 'e2e.sqlite3'}",
        "UPLOAD_DIR": str(folder / "uploads"),
        "RATELIMIT_ENABLED": False,
        "MAIL_ENABLED": False,
        # A served Gambit delivers its outbox as in production: a thread of the server's process.
        "OUTBOX_DISPATCH": "auto",
        # Fast hashing in tests only; production keeps argon2id's defaults.
        "ARGON2_TIME_COST": 1,
        "ARGON2_MEMORY_COST": 1024,
        **overrides,
    }


def _closed_before_served(app):
    """`app` whose every response is read whole and closed before the server writes it. werkzeug's development
    server closes a response only after draining what the client still sends (serving.py, `execute`); a client that
    resets the connection (Chromium cancelling a request) makes that read raise first, and the file a static response
    holds is left to the garbage collector: a ResourceWarning, an error in whichever test runs when it is collected.
    Gambit streams nothing, so reading a body whole changes no page."""

    def wsgi(environ, start_response):
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()

    return wsgi


@contextmanager
def serving(config: dict):
    """Gambit made with `config` (schema by create_all, as in tests/conftest.py), served by werkzeug on a free
    localhost port from a thread until the block ends; yields a LiveServer."""
    from werkzeug.serving import make_server

    from app import create_app
    from core.db import db

    app = create_app(config)
    with app.app_context():
        db.create_all()
    server = make_server("127.0.0.1", _free_port(), _closed_before_served(app), threaded=True,
                         request_handler=_quiet_handler())
    thread = threading.Thread(target=server.serve_forever, name="gambit-e2e", daemon=True)
    thread.start()
    try:
        yield LiveServer(app, f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        from operations.delivery import stop_dispatcher

        stop_dispatcher(app)  # its delivery thread would go on using `db.session` in the tests after this one
        with app.app_context():
            db.session.remove()
            for engine in db.engines.values():
                engine.dispose()


@pytest.fixture
def live_server(tmp_path, mailbox):
    """Gambit served on a free localhost port, on a fresh SQLite file in tmp_path, its mail sent to `mailbox`."""
    with serving(live_config(tmp_path, MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=mailbox.port,
                             MAIL_USE_TLS=False, MAIL_USERNAME="")) as live:
        yield live


@pytest.fixture
def browser():
    """Debian's Chromium, headless, through Playwright; closed after the test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def artifacts() -> Path:
    """test-artifacts/e2e/ at the top of the repository (ignored by git), where screenshots are kept; the
    failure screenshots of an earlier run are removed first."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("failure-*.png"):
        old.unlink()
    return ARTIFACTS
