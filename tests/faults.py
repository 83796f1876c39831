"""Real faults for the tests of tests/core/test_faults_*.py: a TCP proxy in front of PostgreSQL that a test can
refuse or cut, a redis-server of the test's own on a spare port that it can kill and start again, a small tmpfs
that a test fills up or remounts read-only, and a fresh PostgreSQL database. Nothing here imitates a fault: each
one is the operating system's or the server's own."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def spare_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, *, what: str, timeout: float = 30.0, every: float = 0.05):
    """Poll `condition()` until it returns something true (returned), failing the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(every)


class Proxy:
    """A TCP proxy on 127.0.0.1:<port> to (host, port), one pair of threads per connection.

    - `refuse()`: every connection open now is cut and every new one is closed as soon as it is accepted (the
      client sees the server close on it, as when the database host is gone); `restore()` passes them again.
    - `cut_when(marker)`: the next time a client sends bytes containing `marker` (b"COMMIT\\x00", the simple-query
      message of psycopg's commit; or part of a statement's text), that connection is cut before the bytes reach
      the server. `cuts` counts the connections cut so.
    """

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.refusing = False
        self.marker: bytes | None = None
        self.cuts = 0
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="fault-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                _close(client)
                continue
            pair = (client, upstream)
            with self._lock:
                self._pairs.add(pair)
            threading.Thread(target=self._pump, args=(client, upstream, pair, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, pair, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, pair, from_client: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_client and self.marker is not None and self.marker in data:
                    with self._lock:
                        self.marker = None
                        self.cuts += 1
                    break
                sink.sendall(data)
        except OSError:
            pass
        self._drop(pair)

    def _drop(self, pair) -> None:
        with self._lock:
            self._pairs.discard(pair)
        for s in pair:
            _close(s)

    def cut_when(self, marker: bytes) -> None:
        self.marker = marker

    def refuse(self) -> None:
        self.refusing = True
        with self._lock:
            pairs = list(self._pairs)
        for pair in pairs:
            self._drop(pair)

    def restore(self) -> None:
        self.refusing = False

    def close(self) -> None:
        self._closed = True
        self.refuse()
        _close(self.listener)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database on the server DATABASE_URL names when it names one, else on 127.0.0.1:5432 (the
    one the house runs), dropped afterwards; yields its URL. Fails the test when PostgreSQL is not running, as the
    Redis tests do when Redis is not."""
    import sqlalchemy as sa

    server = os.environ.get("DATABASE_URL", "")
    server = server.replace("postgresql://", "postgresql+psycopg://", 1) if server.startswith("postgresql") \
        else POSTGRES
    name = f"gambit_faults_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
    except sa.exc.OperationalError as exc:
        admin.dispose()
        pytest.fail(f"PostgreSQL is not running on 127.0.0.1:5432: {exc}")
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


class RedisServer:
    """A redis-server of the test's own on a spare port (nothing saved to disk); `kill()` ends it with SIGKILL and
    `start()` starts it again on the same port."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = spare_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed (make system-deps installs it)"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)

        def up() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_for(up, what=f"redis-server on port {self.port}")
        client.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None


@contextlib.contextmanager
def tmpfs(folder: Path, *, size: str = "256k") -> Iterator[Path]:
    """A real tmpfs of `size` mounted on `folder` (made if missing), unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"cannot mount a tmpfs on {folder} (the tests run as root in the sandbox): {done.stderr}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> None:
    """Write into `folder` until its file system says it is full (ENOSPC)."""
    import errno

    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)


def remount_read_only(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
