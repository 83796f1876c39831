"""A real `flask worker` killed with SIGKILL (with its work-horse) while it renders the board pack, on the shared Redis
under a queue prefix of the test's own: nothing of the pack is stored, and after a new worker starts the job is done
once, one stored pack and one `dossier.pack` entry in the audit log, its file matching its row."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from board.models import Dossier
from core.db import db
from evidence.audit import AuditEntry
from tests.conftest import Factory, login
from tests.faults import wait_for
from tests.scheduling import REDIS, unique_prefix

# The three dossiers are made in this process before the worker starts (their layout is not what is tested); the
# pack is rendered for real, by the worker.
pytestmark = [pytest.mark.no_db, pytest.mark.pdf_layout_once("dossier.html")]

ROOT = Path(__file__).resolve().parents[2]
PACK = "/board/fwwcm-2015/pack.pdf"


def _stored(app) -> list[tuple[str, str, str, int]]:
    with app.app_context():
        found = [(d.kind, d.stored_name, d.pdf_sha256, d.size_bytes)
                 for d in db.session.scalars(select(Dossier).order_by(Dossier.id))]
        db.session.remove()
        return found


def _pack_entries(app) -> int:
    with app.app_context():
        n = db.session.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "dossier.pack"))
        db.session.remove()
        return n


def test_a_worker_killed_while_rendering_the_pack_leaves_it_to_the_next_which_makes_it_once(tmp_path, signing_ca):
    import redis
    from rq.registry import StartedJobRegistry

    from accounts.models import User
    from app import create_app
    from bids.models import Bid
    from board.services import ensure_dossier
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from operations import jobs
    from tests.board.conftest import scored_call
    from tests.conftest import utcnow
    from tests.scoring.factories_scoring import ScoringFactory

    prefix = unique_prefix()
    connection = redis.Redis.from_url(REDIS)
    try:
        connection.ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not running on 127.0.0.1:6379 (make test and .ci/run start it)")
    uploads = tmp_path / "uploads"
    shared = {"DATABASE_URL": f"sqlite:///{tmp_path / 'pack.sqlite3'}", "UPLOAD_DIR": str(uploads),
              "REDIS_URL": REDIS, "RQ_QUEUE_PREFIX": prefix, "SECRET_KEY": "pack-test", "AUDIT_KEY": "pack-audit",
              "SIGNING_PKCS12": str(signing_ca.path), "SIGNING_PASSPHRASE": signing_ca.passphrase,
              "BASE_URL": "http://gambit.test", "MAIL_ENABLED": "0"}
    app = create_app({"TESTING": True, "SERVER_NAME": "gambit.test", "WTF_CSRF_ENABLED": False,
                      "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False,
                      "OUTBOX_DISPATCH": "manual", "SQLALCHEMY_DATABASE_URI": shared["DATABASE_URL"],
                      **{k: v for k, v in shared.items() if k not in ("DATABASE_URL", "MAIL_ENABLED")}})
    with app.app_context():
        db.create_all()
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        db.session.commit()
        event_id = event.id
    make = Factory(app)
    scored = scored_call(app, event_id, ScoringFactory(app, make))
    board_id = make.user(roles=("board",), federation="FRA", email="pack-killed@example.org")
    with app.app_context():
        board = db.session.get(User, board_id)
        for key in ("lviv", "tbilisi", "madrid"):
            ensure_dossier(db.session.get(Bid, scored[key]), actor=board, now=utcnow(), upload_dir=str(uploads))
        db.session.commit()
        started = StartedJobRegistry(jobs.queue_name(jobs.PDF), connection=connection)
    assert [s[0] for s in _stored(app)] == ["bid", "bid", "bid"]
    client = app.test_client()
    login(client, "pack-killed@example.org")
    env = {**os.environ, **shared, "FLASK_APP": "app", "GAMBIT_INSTANCE": str(tmp_path / "instance")}
    workers: list[subprocess.Popen] = []

    def start_worker() -> subprocess.Popen:
        log = open(tmp_path / f"worker{len(workers)}.log", "wb")  # noqa: SIM115 (the process writes it)
        process = subprocess.Popen([sys.executable, "-m", "flask", "worker"], cwd=ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        workers.append(process)
        return process

    try:
        waiting = client.get(PACK)
        assert waiting.status_code == 202 and "3 of 4 documents ready" in waiting.get_data(as_text=True)
        first = start_worker()
        pack_job = wait_for(lambda: [j for j in started.get_job_ids() if "-pack-" in j], timeout=60, every=0.01,
                            what="the worker to start rendering the pack")
        os.killpg(first.pid, signal.SIGKILL)  # the worker and its work-horse, while the pack renders
        first.wait(10)
        if len(_stored(app)) != 3:
            pytest.fail("the pack was stored before the kill: the fault came too late to test anything")
        assert _pack_entries(app) == 0
        html = client.get(PACK).get_data(as_text=True)
        assert "The worker that was making the next document stopped before it finished" in html, html[:2000]

        start_worker()
        wait_for(lambda: len(_stored(app)) == 4, what="the pack, by the next worker", timeout=120)
        done = client.get(PACK)
        assert done.status_code == 200 and done.data.startswith(b"%PDF-")
        done.close()
        made = _stored(app)
        assert [m[0] for m in made] == ["bid", "bid", "bid", "pack"]
        assert _pack_entries(app) == 1
        for _kind, name, sha, size in made:
            data = (uploads / "dossiers" / name).read_bytes()
            assert (hashlib.sha256(data).hexdigest(), len(data)) == (sha, size)
        assert sorted(p.name for p in (uploads / "dossiers").iterdir()) == sorted(m[1] for m in made)
        assert pack_job
    finally:
        for process in workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        for key in connection.scan_iter(f"*{prefix}*"):
            connection.delete(key)
        connection.close()
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
