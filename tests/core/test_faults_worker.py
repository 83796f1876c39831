"""A real `flask worker` (RQ, on a redis-server of the test's own) killed with SIGKILL, with its work-horse,
while it renders the documents of the board pack: nothing is half-written, the Board's page says the worker
stopped and where things stand, and the next worker finishes the pack from the documents already made."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from board.models import Dossier
from core.db import db
from tests.conftest import Factory, login
from tests.faults import RedisServer, wait_for

pytestmark = pytest.mark.no_db

ROOT = Path(__file__).resolve().parents[2]
PACK = "/board/fwwcm-2015/pack.pdf"


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def rows(app) -> list[tuple[int, str, str, str, int]]:
    with app.app_context():
        found = [(d.id, d.kind, d.stored_name, d.pdf_sha256, d.size_bytes)
                 for d in db.session.scalars(select(Dossier).order_by(Dossier.id))]
        db.session.remove()
        return found


def assert_nothing_half_written(app, folder: Path) -> None:
    """Every stored row has its file, with the SHA-256 and size recorded; no file is without its row."""
    found = rows(app)
    for _id, _kind, name, sha, size in found:
        data = (folder / name).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (sha, size)
    on_disk = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    assert on_disk == sorted(r[2] for r in found)


def test_a_worker_killed_while_making_the_pack_loses_nothing_and_the_next_worker_finishes_it(
        tmp_path, signing_ca, redis_server):
    from app import create_app
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.board.conftest import scored_call
    from tests.conftest import utcnow
    from tests.scoring.factories_scoring import ScoringFactory

    uploads = tmp_path / "uploads"
    shared = {"DATABASE_URL": f"sqlite:///{tmp_path / 'worker.sqlite3'}", "UPLOAD_DIR": str(uploads),
              "REDIS_URL": redis_server.url, "SECRET_KEY": "worker-test", "AUDIT_KEY": "worker-test-audit",
              "SIGNING_PKCS12": str(signing_ca.path), "SIGNING_PASSPHRASE": signing_ca.passphrase,
              "BASE_URL": "http://gambit.test"}
    app = create_app({"TESTING": True, "SERVER_NAME": "gambit.test", "WTF_CSRF_ENABLED": False,
                      "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False,
                      **{k: v for k, v in shared.items() if k != "DATABASE_URL"},
                      "SQLALCHEMY_DATABASE_URI": shared["DATABASE_URL"]})
    with app.app_context():
        db.create_all()
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        db.session.commit()
        event_id = event.id
    make = Factory(app)
    scored_call(app, event_id, ScoringFactory(app, make))  # three bids: three dossiers, then the pack
    make.user(roles=("board",), federation="FRA", email="worker-killed@example.org")
    client = app.test_client()
    login(client, "worker-killed@example.org")
    env = {**os.environ, **shared, "FLASK_APP": "app", "GAMBIT_INSTANCE": str(tmp_path / "instance")}
    workers: list[subprocess.Popen] = []

    def start_worker() -> subprocess.Popen:
        log = open(tmp_path / f"worker{len(workers)}.log", "wb")  # noqa: SIM115 (the process writes it)
        process = subprocess.Popen([sys.executable, "-m", "flask", "worker"], cwd=ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        workers.append(process)
        return process

    def page() -> str:
        response = client.get(PACK)
        assert response.status_code == 202, response.status_code
        return response.get_data(as_text=True)

    try:
        from redis import Redis
        from rq import Queue
        from rq.registry import StartedJobRegistry

        connection = Redis.from_url(redis_server.url)
        assert "0 of 4 documents ready" in page()  # the first dossier is queued
        first_job, = Queue("gambit-pdf", connection=connection).get_job_ids()
        first_worker = start_worker()
        wait_for(lambda: [r[1] for r in rows(app)] == ["bid"], what="the first dossier", timeout=120)
        made_first = rows(app)[0]
        assert "1 of 4 documents ready" in page()  # the second dossier is queued
        second_job, = {k.decode().removeprefix("rq:job:") for k in connection.keys("rq:job:dossier-*")
                       if ":" not in k.decode().removeprefix("rq:job:")} - {first_job}
        wait_for(lambda: second_job in StartedJobRegistry("gambit-pdf", connection=connection).get_job_ids(),
                 what="the worker to start on the second dossier", timeout=60, every=0.01)
        os.killpg(first_worker.pid, signal.SIGKILL)  # the worker and its work-horse, mid-rendering
        first_worker.wait(10)
        if len(rows(app)) != 1:
            pytest.fail("the second dossier was stored before the kill: the fault came too late to test anything")
        assert_nothing_half_written(app, uploads / "dossiers")

        html = page()
        assert "1 of 4 documents ready" in html
        assert ("The worker that was making the next document stopped before it finished; what was made before it "
                "stopped is kept. The rest is queued again and will be made by the next worker") in html
        assert "being rendered" not in html

        start_worker()

        def more_than(count: int):
            return lambda: len(rows(app)) > count

        response = client.get(PACK)
        while response.status_code == 202:  # each reload queues the next document; at most three more to make
            assert "Try again" not in response.get_data(as_text=True) and len(rows(app)) < 4
            wait_for(more_than(len(rows(app))), what="the next document", timeout=120)
            response = client.get(PACK)
        assert response.status_code == 200 and response.data.startswith(b"%PDF-")
        response.close()
        made = rows(app)
        assert [r[1] for r in made] == ["bid", "bid", "bid", "pack"]
        assert made[0] == made_first  # the dossier made before the kill is the one the pack uses, not made again
        assert_nothing_half_written(app, uploads / "dossiers")
        connection.close()
    finally:
        for process in workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
