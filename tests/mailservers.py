"""Real mail servers for the outbox's tests: one that answers (aiosmtpd) and can be told to refuse a recipient or
to take its time over the message, one that accepts connections and never says a word, and a port where nothing
listens."""

from __future__ import annotations

import asyncio
import email
import email.policy
import socket
import threading
from contextlib import contextmanager


def free_port() -> int:
    """A port nothing listens on (a server refusing connections, until one is started there)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout: float = 30) -> bool:
    """Whether `condition()` became true within `timeout` seconds (polled): for what a background thread does."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class Inbox:
    """An aiosmtpd handler keeping what it receives. `refuse` answers every RCPT with a 550; `delay` waits that many
    seconds after taking the message before answering it (the message is kept: the server has it)."""

    def __init__(self, refuse: bool = False, delay: float = 0):
        self.messages: list = []
        self.refuse, self.delay = refuse, delay

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        if self.delay:
            await asyncio.sleep(self.delay)
        return "250 2.0.0 Queued as 42"


@contextmanager
def smtp_server(port: int, handler: Inbox):
    from aiosmtpd.controller import Controller

    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler
    finally:
        controller.stop()


class Staller:
    """A server that accepts every connection and never answers (no greeting): a mail server that hangs."""

    def __init__(self, port: int):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.connections: list[socket.socket] = []
        self.accepted = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            self.accepted.set()

    def still_held(self) -> bool:
        """Whether every accepted connection is still open at the client's end (nothing was closed by it)."""
        for conn in self.connections:
            conn.setblocking(False)
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    return False
            except BlockingIOError:
                continue
        return True

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept() (a close alone does not)
        except OSError:
            pass
        self.sock.close()
        for conn in self.connections:
            conn.close()
        self.thread.join(5)


class Scripted:
    """A mail server that answers from a script, over a real socket: each reply given by the command it answers
    ("greeting", "EHLO", "MAIL", "RCPT", "DATA", "message" for the answer to the message's body, "AUTH"), as raw
    bytes (a reply of several lines has its CRLFs in it; a byte that is not UTF-8 is sent as it is). It keeps every
    command line it received (`commands`) and each message as the bytes that came over the wire (`messages`)."""

    REPLIES = {
        "greeting": b"220 mx.example.org ESMTP", "EHLO": b"250-mx.example.org\r\n250 AUTH PLAIN",
        "HELO": b"250 mx.example.org", "MAIL": b"250 2.1.0 Ok", "RCPT": b"250 2.1.5 Ok",
        "DATA": b"354 End data with <CR><LF>.<CR><LF>", "message": b"250 2.0.0 Ok: queued as 7",
        "AUTH": b"235 2.7.0 Authentication successful", "RSET": b"250 2.0.0 Ok", "NOOP": b"250 2.0.0 Ok",
        "QUIT": b"221 2.0.0 Bye", "unknown": b"502 5.5.2 Command not recognized",
    }

    def __init__(self, port: int, host: str = "127.0.0.1", **replies: bytes):
        self.replies = {**self.REPLIES, **replies}
        self.commands: list[str] = []
        self.messages: list[bytes] = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def __enter__(self) -> Scripted:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self._converse(conn)
                except OSError:
                    pass

    def _say(self, conn: socket.socket, what: str) -> None:
        conn.sendall(self.replies[what] + b"\r\n")

    def _converse(self, conn: socket.socket) -> None:
        lines = conn.makefile("rb")
        self._say(conn, "greeting")
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.commands.append(line)
            verb = line.split(" ", 1)[0].split(":", 1)[0].upper()
            if verb == "DATA":
                self._say(conn, "DATA")
                if not self.replies["DATA"].startswith(b"354"):
                    continue
                body = b""
                for data in lines:
                    if data == b".\r\n":
                        break
                    body += data
                self.messages.append(body)
                self._say(conn, "message")
                continue
            self._say(conn, verb if verb in self.replies else "unknown")
            if verb == "QUIT":
                return

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(5)
