"""Redis goes down while REDIS_URL is set: a redis-server of the test's own, killed with SIGKILL and started again.
Pages keep serving; the rate limits are counted in memory meanwhile (one warning), then shared through Redis again;
a board pack asked for while Redis is down is made by a background thread of the web process instead."""

from __future__ import annotations

import logging
import time

import pytest
import redis
from sqlalchemy import select

from board.models import Dossier
from core.db import db
from tests.conftest import Factory, login
from tests.faults import RedisServer, wait_for

pytestmark = pytest.mark.no_db

FALLBACK_WARNING = "Rate limit storage unreachable - falling back to in-memory storage"
WRONG = {"email": "nobody@example.org", "password": "wrong wrong wrong"}


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def fallback_warnings(caplog) -> int:
    return sum(FALLBACK_WARNING in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_rate_limits_fall_back_to_memory_while_redis_is_down_and_are_shared_again_when_it_is_back(
        another_app, redis_server, caplog):
    # A moving window: the counts of this test do not start again at a minute's boundary.
    config = {"WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": True, "REDIS_URL": redis_server.url,
              "LOGIN_RATE_LIMIT": "3 per minute", "RATELIMIT_STRATEGY": "moving-window"}
    worker_a, worker_b = another_app(**config).test_client(), another_app(**config).test_client()
    assert [worker_a.post("/login", data=WRONG).status_code, worker_b.post("/login", data=WRONG).status_code,
            worker_a.post("/login", data=WRONG).status_code, worker_b.post("/login", data=WRONG).status_code] \
        == [422, 422, 422, 429]  # shared through Redis

    redis_server.kill()
    caplog.set_level(logging.INFO)
    assert worker_a.get("/").status_code == 200 and worker_a.get("/login").status_code == 200
    # Counted in this worker's memory from now on: three tries, then refused, and never a 500.
    codes = [worker_a.post("/login", data=WRONG).status_code for _ in range(5)]
    assert codes == [422, 422, 422, 429, 429]
    assert fallback_warnings(caplog) == 1

    redis_server.start()  # empty: the counts made in memory are not in it
    keys = redis.Redis(port=redis_server.port)

    def shared_again() -> bool:
        worker_a.post("/login", data=WRONG)  # refused by the memory count until Redis is checked again
        return bool(keys.keys("LIMITS*"))

    wait_for(shared_again, what="the rate limits to use Redis again", timeout=40, every=0.5)
    # One try of worker A is in Redis: worker B, which never lost Redis, has two left, as the shared limit says.
    assert [worker_b.post("/login", data=WRONG).status_code for _ in range(3)] == [422, 422, 429]
    assert fallback_warnings(caplog) == 1
    keys.close()


def test_a_pack_asked_for_while_redis_is_down_is_made_by_a_thread_of_the_web_process(live, redis_server, caplog):
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.board.conftest import scored_call
    from tests.conftest import utcnow
    from tests.scoring.factories_scoring import ScoringFactory

    app = live
    app.config.update(REDIS_URL=redis_server.url, WTF_CSRF_ENABLED=False)
    with app.app_context():
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        db.session.commit()
        event_id = event.id
    make = Factory(app)
    scored_call(app, event_id, ScoringFactory(app, make))
    make.user(roles=("board",), federation="FRA", email="redis-down@example.org")
    client = app.test_client()
    login(client, "redis-down@example.org")
    redis_server.kill()

    first = client.get("/board/fwwcm-2015/pack.pdf")
    assert first.status_code == 202 and "Preparing the board pack" in first.get_data(as_text=True)
    assert any("Redis (REDIS_URL) cannot be reached" in r.getMessage() for r in caplog.records)
    deadline = time.monotonic() + 120
    while True:
        response = client.get("/board/fwwcm-2015/pack.pdf")
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        assert response.status_code == 202 and "Try again" not in response.get_data(as_text=True)
        time.sleep(0.3)
    assert response.status_code == 200 and response.data.startswith(b"%PDF-")
    response.close()
    with app.app_context():
        assert sorted(db.session.scalars(select(Dossier.kind))) == ["bid", "bid", "bid", "pack"]
