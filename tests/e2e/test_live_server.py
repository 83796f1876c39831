"""The browser tests' live server itself: a response it serves is closed even when the client resets the connection
after reading it. werkzeug's development server closes a response only after draining what the client still sends
(serving.py, `execute`); a reset makes that read raise first, and the file a static response holds was left to the
garbage collector: a ResourceWarning, raised as an error in whichever test ran when it was collected (CI, stop 44:
Chromium's request for /favicon.ico, reported in a password reset test)."""

from __future__ import annotations

import gc
import os
import socket
import struct
import threading
import time
import warnings

import pytest

from tests.e2e.conftest import live_config, serving

pytestmark = [pytest.mark.no_db]


def _open_files_named(name: str) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed between the listing and the read
            continue
        if target.endswith(name):
            found.append(target)
    return found


def _request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "process_request_thread" in t.name]


def _get_then_reset(url_port: int, path: str) -> bytes:
    """GET `path` announcing a body of 1 MB and sending 64 KB of it (more than the server's 8 KB read buffer takes
    with the request, so that its drain finds data waiting and blocks reading the rest), read the whole response,
    then reset the connection (SO_LINGER 0) as a browser cancelling a request does: the drain's read raises."""
    with socket.create_connection(("127.0.0.1", url_port), timeout=10) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n".encode()
                       + b"x" * 65536)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = client.recv(65536)
            assert chunk, f"the server closed before its headers: {received!r}"
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        while len(body) < length:
            chunk = client.recv(65536)
            assert chunk, f"the server closed after {len(body)} of {length} bytes"
            body += chunk
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return head


def test_a_static_file_is_closed_when_the_client_resets_after_reading_it(tmp_path):
    with serving(live_config(tmp_path)) as live:
        port = int(live.url.rsplit(":", 1)[1])
        earlier = set(_request_threads())  # another server's, if any: not this request's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            head = _get_then_reset(port, "/favicon.ico")
            deadline = time.monotonic() + 10
            while set(_request_threads()) - earlier and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not set(_request_threads()) - earlier, "the server still handles the request 10 s after the reset"
            still_open = _open_files_named("static/favicon.ico")
            gc.collect()
        assert head.startswith(b"HTTP/1.1 200")
        assert still_open == []
        # Only this request's file: a file another test left to the collector is not this test's to report.
        assert [str(w.message) for w in caught
                if issubclass(w.category, ResourceWarning) and "favicon.ico" in str(w.message)] == []
