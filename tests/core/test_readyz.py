"""/readyz: every part a request may need, each named in the answer; 503 naming what is wrong, with real faults
(a Redis port nobody listens on, an upload folder that is a file or a small file system nearly full, a signing
identity that is not there). The test client asks from 127.0.0.1, a caller on this machine: it is told the details
(tests/core/test_health_details.py has who else is)."""

import re
import socket
from datetime import UTC, datetime, timedelta

import pytest

from app import create_app
from operations import readiness
from tests.faults import fill, tmpfs

FREE = re.compile(r"ok \(\d+ MB free; 100 MB required\)")

REDIS = "redis://127.0.0.1:6379/15"


def _dead_redis_url() -> str:
    with socket.socket() as s:  # bound and closed: nobody listens there now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


def test_ready_names_every_check(another_app, signing_ca):
    app = another_app(REDIS_URL=REDIS, SIGNING_PKCS12=str(signing_ca.path), SIGNING_PASSPHRASE=signing_ca.passphrase)
    response = app.test_client().get("/readyz")
    assert response.status_code == 200
    body = response.get_json()
    assert FREE.fullmatch(body["checks"].pop("upload_folder"))
    assert body == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "signing": "ok",
                                               "outbox": "ok (mail delivery is off: 0 waiting)"}}


def test_without_redis_url_redis_is_not_checked_and_a_development_identity_is_said(another_app):
    app = another_app(REDIS_URL="", SIGNING_PKCS12="")
    response = app.test_client().get("/readyz")
    assert response.status_code == 200
    checks = response.get_json()["checks"]
    assert FREE.fullmatch(checks.pop("upload_folder"))
    assert checks == {"database": "ok", "signing": "ok (development identity)",
                      "outbox": "ok (mail delivery is off: 0 waiting)"}


def test_a_redis_nobody_listens_on_is_503_naming_redis(another_app):
    response = another_app(REDIS_URL=_dead_redis_url()).test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"] == "error: unreachable (ConnectionError)"
    assert body["checks"]["database"] == "ok" and FREE.fullmatch(body["checks"]["upload_folder"])


def test_an_upload_folder_that_is_a_file_is_503_naming_it(another_app, tmp_path):
    folder = tmp_path / "shared-uploads"
    app = another_app(UPLOAD_DIR=str(folder))
    folder.rmdir()
    folder.write_text("the volume was not mounted; something wrote a file here")
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["upload_folder"] == "error: the upload folder is missing or is not a folder"
    assert response.get_json()["checks"]["database"] == "ok"


def test_an_upload_folder_where_no_file_can_be_made_is_503(another_app):
    app = another_app()
    # A folder of a file system that takes no new file, even from root (as a read-only mount would).
    app.config["UPLOAD_DIR"] = "/proc/self"
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["upload_folder"] == \
        "error: a file cannot be created in the upload folder (No such file or directory)"


def test_the_probe_leaves_nothing_in_the_upload_folder(another_app, tmp_path):
    folder = tmp_path / "uploads"
    assert another_app(UPLOAD_DIR=str(folder)).test_client().get("/readyz").status_code == 200
    assert list(folder.iterdir()) == []


def test_a_signing_identity_that_does_not_exist_is_503_without_telling_the_path(another_app, tmp_path):
    missing = tmp_path / "secrets" / "gambit.p12"
    response = another_app(SIGNING_PKCS12=str(missing), SIGNING_PASSPHRASE="x").test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["checks"]["signing"] == \
        "error: the signing identity cannot be loaded (SIGNING_PKCS12, SIGNING_PASSPHRASE)"
    assert str(tmp_path) not in response.get_data(as_text=True)


def test_a_wrong_signing_passphrase_is_503(another_app, signing_ca):
    response = another_app(SIGNING_PKCS12=str(signing_ca.path), SIGNING_PASSPHRASE="wrong").test_client().get(
        "/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["signing"].startswith("error: the signing identity cannot be loaded")


@pytest.mark.no_db
def test_an_unreachable_database_is_503_naming_the_database(tmp_path):
    broken = create_app({"TESTING": True, "SECRET_KEY": "x", "UPLOAD_DIR": str(tmp_path / "u"),
                         "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/missing-dir/nope/db.sqlite3"})
    response = broken.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["database"] == "error: OperationalError"


def test_a_check_that_breaks_unexpectedly_is_a_503_not_a_500(another_app, monkeypatch):
    def broken(app):
        raise KeyError("a setting the check expected")

    monkeypatch.setitem(readiness.CHECKS, "broken", broken)
    response = another_app().test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["broken"] == "error: KeyError"
    assert response.get_json()["checks"]["database"] == "ok"


def test_healthz_stays_a_liveness_check_when_a_part_is_not_ready(another_app):
    client = another_app(REDIS_URL=_dead_redis_url()).test_client()
    assert client.get("/readyz").status_code == 503
    assert client.get("/healthz").status_code == 200


def _queue(app, *, written: datetime, due: datetime | None = None, status: str = "queued", attempts: int = 0):
    """A message written at `written` (the change it reports), due at `due` (its next attempt; `written` unless
    said), in `status` after `attempts` attempts."""
    from core.db import db
    from operations import outbox

    with app.app_context():
        message = outbox.queue("federation@example.org", "Notice", "Body", kind="test", now=written)
        message.next_attempt_at, message.status, message.attempts = due or written, status, attempts
        db.session.commit()


def _outbox(client) -> tuple[int, str]:
    response = client.get("/readyz")
    return response.status_code, response.get_json()["checks"]["outbox"]


@pytest.fixture
def mail_on(app, monkeypatch):
    """Mail delivery on (OUTBOX_DISPATCH stays manual: no thread delivers what the test writes)."""
    monkeypatch.setitem(app.config, "MAIL_ENABLED", True)


def now() -> datetime:
    from core.db import utcnow

    return utcnow()


def test_the_outbox_reports_how_long_ago_its_earliest_waiting_message_fell_due(app, client, mail_on):
    assert _outbox(client) == (200, "ok (nothing waiting)")
    _queue(app, written=now() - timedelta(minutes=5))
    assert _outbox(client) == (200, "ok (1 waiting, 0 of them to be retried; the earliest due 5 min ago)")


def test_a_message_due_longer_ago_than_outbox_ready_minutes_is_503(app, client, mail_on):
    limit = app.config["OUTBOX_READY_MINUTES"]
    _queue(app, written=now() - timedelta(minutes=limit + 1))
    assert _outbox(client) == (503, f"error: a message has been due for {limit + 1} min and is not delivered "
                                    f"(OUTBOX_READY_MINUTES is {limit}; 1 waiting)")


def test_a_message_written_long_ago_whose_retry_is_due_now_is_not_late(app, client, mail_on):
    """The wait is counted from when the message fell due (its next attempt), not from the day it was written: a
    notice written in 2015, tried, and due again now has kept nobody waiting; a retry due later is not due yet."""
    _queue(app, written=datetime(2015, 6, 17, 23, 59, tzinfo=UTC), due=now(), attempts=1)
    assert _outbox(client) == (200, "ok (1 waiting, 1 of them to be retried; the earliest due 0 min ago)")
    _queue(app, written=datetime(2015, 6, 18, tzinfo=UTC), due=now() + timedelta(minutes=240), attempts=4)
    assert _outbox(client) == (200, "ok (2 waiting, 2 of them to be retried; the earliest due 0 min ago)")


def test_delivered_messages_are_history_and_failed_ones_the_secretariats_backlog(app, client, mail_on):
    """The demo's messages of 2015, delivered, count for nothing; failed and unconfirmed ones (no deliverer takes
    them again) are reported, for the secretariat, and are no reason to send this process no traffic."""
    old = datetime(2015, 6, 17, 23, 59, tzinfo=UTC)
    for status in ("sent", "sent", "failed", "failed", "unconfirmed"):
        _queue(app, written=old, status=status, attempts=1)
    assert _outbox(client) == (
        200, "ok (nothing waiting; not deliverable, for the secretariat: 2 failed, 1 unconfirmed)")


def test_with_mail_off_the_messages_wait_by_design_and_the_demo_is_ready(app, client):
    """`make run` (MAIL_ENABLED unset) on the demo: its messages, due in 2015, wait in the outbox by design (they go
    out once delivery is turned on). Said, and not a failure: the demo is ready."""
    assert not app.config["MAIL_ENABLED"]
    old = datetime(2015, 6, 17, 23, 59, tzinfo=UTC)
    for _ in range(3):
        _queue(app, written=old)
    _queue(app, written=old, status="failed", attempts=6)
    assert _outbox(client) == (
        200, "ok (mail delivery is off: 3 waiting; not deliverable, for the secretariat: 1 failed, 0 unconfirmed)")


def test_an_upload_folder_with_less_free_space_than_required_is_503_saying_both_figures(another_app, tmp_path):
    """A real file system of 16 MB: below READY_MIN_FREE_MB (100 by default), 503 naming what it requires and what
    it found; with a requirement it meets, ok naming both; filled up, 503 again."""
    with tmpfs(tmp_path / "small", size="16m") as folder:
        app = another_app(UPLOAD_DIR=str(folder))
        assert app.config["READY_MIN_FREE_MB"] == 100
        response = app.test_client().get("/readyz")
        assert response.status_code == 503
        assert response.get_json()["checks"]["upload_folder"] == \
            "error: the upload folder has 16 MB free; READY_MIN_FREE_MB requires 100 MB"
        app.config["READY_MIN_FREE_MB"] = 8
        response = app.test_client().get("/readyz")
        assert response.status_code == 200
        assert response.get_json()["checks"]["upload_folder"] == "ok (16 MB free; 8 MB required)"
        fill(folder)
        response = app.test_client().get("/readyz")
        assert response.status_code == 503
        assert response.get_json()["checks"]["upload_folder"] in (
            "error: the upload folder has 0 MB free; READY_MIN_FREE_MB requires 8 MB",
            "error: a file cannot be created in the upload folder (No space left on device)")
