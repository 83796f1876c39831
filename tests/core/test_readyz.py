"""/readyz: every part a request may need, each named in the answer; 503 naming what is wrong, with real faults
(a Redis port nobody listens on, an upload folder that is a file, a signing identity that is not there)."""

import socket
from datetime import timedelta

import pytest

from app import create_app
from core import readiness

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
    assert response.get_json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "upload_folder": "ok",
                                                              "signing": "ok", "outbox": "ok (nothing waiting)"}}


def test_without_redis_url_redis_is_not_checked_and_a_development_identity_is_said(another_app):
    app = another_app(REDIS_URL="", SIGNING_PKCS12="")
    response = app.test_client().get("/readyz")
    assert response.status_code == 200
    assert response.get_json()["checks"] == {"database": "ok", "upload_folder": "ok",
                                             "signing": "ok (development identity)", "outbox": "ok (nothing waiting)"}


def test_a_redis_nobody_listens_on_is_503_naming_redis(another_app):
    response = another_app(REDIS_URL=_dead_redis_url()).test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "error"
    assert body["checks"]["redis"] == "error: unreachable (ConnectionError)"
    assert body["checks"]["database"] == "ok" and body["checks"]["upload_folder"] == "ok"


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


def _queue(app, waited: timedelta):
    from core import outbox
    from core.db import db, utcnow

    with app.app_context():
        outbox.queue("federation@example.org", "Notice", "Body", kind="test", now=utcnow() - waited)
        db.session.commit()


def test_the_outbox_reports_the_age_of_its_oldest_unsent_message(app, client):
    assert client.get("/readyz").get_json()["checks"]["outbox"] == "ok (nothing waiting)"
    _queue(app, timedelta(minutes=5))
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.get_json()["checks"]["outbox"] == "ok (oldest unsent: 5 min)"


def test_a_message_waiting_longer_than_outbox_ready_minutes_is_503(app, client):
    _queue(app, timedelta(minutes=app.config["OUTBOX_READY_MINUTES"] + 1))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["outbox"] == \
        f"error: the oldest unsent message has waited {app.config['OUTBOX_READY_MINUTES'] + 1} min " \
        f"(OUTBOX_READY_MINUTES is {app.config['OUTBOX_READY_MINUTES']})"
