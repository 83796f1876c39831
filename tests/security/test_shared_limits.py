"""Rate limits hold across worker processes: a real two-worker gunicorn sharing its counts through Redis, and a
warning at start when the counts stay in one process's memory."""

import http.client
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from core.db import db
from core.limiter import MEMORY_STORE_WARNING

REDIS_DB = "redis://127.0.0.1:6379/14"
ROOT = Path(__file__).resolve().parents[2]


def test_a_memory_store_is_warned_about_at_start(another_app, caplog):
    with caplog.at_level(logging.WARNING):
        another_app(TESTING=False, RATELIMIT_ENABLED=True, RATELIMIT_STORAGE_URI="memory://")
    assert MEMORY_STORE_WARNING in caplog.text
    assert "each worker counts alone and every limit allows N times its tries" in MEMORY_STORE_WARNING
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        another_app(TESTING=False, RATELIMIT_ENABLED=True, RATELIMIT_STORAGE_URI=REDIS_DB)
    assert MEMORY_STORE_WARNING not in caplog.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port: int, method: str, path: str, body: str = "", cookie: str = "") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Host": "127.0.0.1"}
    if cookie:
        headers["Cookie"] = cookie
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.text = response.read().decode()
    conn.close()
    return response


def _hold_a_worker(port: int) -> socket.socket:
    """A connection that sends half a request: a sync worker that accepts it waits on it, serving nothing else."""
    held = socket.create_connection(("127.0.0.1", port))
    held.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return held


def _pids(log: Path) -> list[tuple[str, str]]:
    """(pid, status) of each POST /login in gunicorn's access log, in order."""
    return re.findall(r"^<?(\d+)>? POST /login (\d+)$", log.read_text(), flags=re.M)


@pytest.mark.no_db
def test_the_login_limit_holds_across_two_gunicorn_workers(tmp_path, another_app):
    store = redis.Redis.from_url(REDIS_DB)
    try:
        store.ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not running on 127.0.0.1:6379 (make services starts it)")
    store.flushdb()
    url = f"sqlite:///{tmp_path / 'gunicorn.sqlite3'}"
    with another_app(SQLALCHEMY_DATABASE_URI=url).app_context():
        db.create_all()
    port, access = _free_port(), tmp_path / "access.log"
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": REDIS_DB, "LOGIN_RATE_LIMIT": "3 per minute",
           "SECRET_KEY": "gunicorn-test", "AUDIT_KEY": "gunicorn-test-audit", "GAMBIT_INSTANCE": str(tmp_path),
           "UPLOAD_DIR": str(tmp_path / "uploads"), "MAIL_ENABLED": "0"}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "--workers", "2", "--bind", f"127.0.0.1:{port}",
         "--access-logfile", str(access), "--access-logformat", "%(p)s %(m)s %(U)s %(s)s", "app:create_app()"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    held = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                page = _request(port, "GET", "/login")
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "gunicorn did not start"
                time.sleep(0.2)
        # the form's CSRF token comes with the page, tied to its session cookie (both workers share the key)
        cookie = page.getheader("Set-Cookie").split(";")[0]
        token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text).group(1)
        wrong = f"csrf_token={token}&email=nobody%40example.org&password=wrong+wrong+wrong"

        held.append(_hold_a_worker(port))  # worker X waits on it: worker Y serves the next three
        first = [_request(port, "POST", "/login", wrong, cookie).status for _ in range(3)]
        held.append(_hold_a_worker(port))  # Y now waits too
        time.sleep(1)  # Y takes it before X is let go (else X, freed first, could take it from the queue)
        held.pop(0).close()  # X is free again, and the only one free: it serves the fourth
        fourth = _request(port, "POST", "/login", wrong, cookie).status
        assert first == [422, 422, 422] and fourth == 429
        deadline = time.monotonic() + 5
        while len(logged := _pids(access)) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)  # a worker writes its access line just after it answers
        assert [s for _, s in logged] == ["422", "422", "422", "429"]
        (y, _), (x, _) = logged[0], logged[3]
        assert {p for p, _ in logged[:3]} == {y} and x != y  # refused by a worker that had counted nothing itself
    finally:
        for s in held:
            s.close()
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
        store.flushdb()
