"""For the tests that run `flask scheduler` and `flask worker` as real processes: an app (FLASK_APP=
tests.scheduling:create) that is Gambit's own app, with two more periodic jobs registered the way create_app registers
its own, one that always fails and one that always works; and a trivial job for the worker's queues; and
helpers that start those processes on a test's database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

from flask import current_app

from app import create_app
from operations.scheduler import Every, registry

FAILURE = "the job broke on purpose"


def broken(now: datetime) -> str:
    raise RuntimeError(FAILURE)


def working(now: datetime) -> str:
    return f"worked at {now.isoformat()}"


def create():
    app = create_app()
    jobs = registry(app)
    jobs.add("test.broken", Every(seconds=1), broken)
    jobs.add("test.working", Every(seconds=1), working)
    return app


def leave_mark(path: str, text: str) -> str:
    """The worker's trivial job: writes `text` and the queue prefix of the app it runs in (so the test sees it ran
    inside the app) into the file `path`."""
    Path(path).write_text(f"{text} {current_app.config['RQ_QUEUE_PREFIX']}")
    return text


# ---- running `flask ...` as a process of its own, on a test's database

ROOT = Path(__file__).resolve().parents[1]
FLASK = str(Path(sys.executable).parent / "flask")
REDIS = "redis://127.0.0.1:6379/13"  # no test flushes this one: each test names its queues and jobs apart


def flask_env(app, tmp_path: Path, *, flask_app: str = "app", **extra: str) -> dict[str, str]:
    """The environment of a `flask` process on `app`'s database (the `live` fixture's: committed for real), with its
    own instance folder; no Redis and no mail unless `extra` says so."""
    env = {**os.environ, "FLASK_APP": flask_app, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
           "GAMBIT_INSTANCE": str(tmp_path / "instance"), "SECRET_KEY": "scheduler-test",
           "AUDIT_KEY": app.config["AUDIT_KEY"], "UPLOAD_DIR": str(tmp_path / "uploads"), "MAIL_ENABLED": "0",
           "BASE_URL": "http://gambit.test", "REDIS_URL": "", "RQ_QUEUE_PREFIX": ""}
    env.update(extra)
    return env


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """`flask *args` started in the repository, its output (stdout and stderr together) kept as text."""
    return subprocess.Popen([FLASK, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def finish(process: subprocess.Popen, timeout: float = 60) -> tuple[int, str]:
    """Wait for a process started by `start`; returns (exit code, output). Kills it if it outlives `timeout`."""
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        raise AssertionError(f"flask did not finish within {timeout} s:\n{out}") from None
    return process.returncode, out


def unique_prefix() -> str:
    """A queue prefix of its own, so parallel test runs on one Redis never take each other's jobs."""
    return f"test-{uuid.uuid4().hex[:12]}-"
