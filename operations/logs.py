"""Logs: one line per record on stderr, a JSON object (python-json-logger) when LOG_FORMAT is "json" (production's
default), plain text otherwise. Every record made while a request is served carries the request's id, method and
path, and the user's id once the user is known; one line per request ("request") adds its status and duration.

The request id is the caller's X-Request-ID when it is well formed (a reverse proxy's own id then ties its log to
ours), else a new one; it is kept on `flask.g.request_id` and sent back in the X-Request-ID header.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from typing import Any

from flask import Flask, g, has_request_context, request
from flask.logging import default_handler
from pythonjsonlogger.json import JsonFormatter
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import NoInspectionAvailable

REQUEST_ID_HEADER = "X-Request-ID"
# An incoming id is kept only if a log line and a response header can carry it as it is: bounded, and made of
# characters no log reader or header parser can misread (no newline, quote or space).
REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
FORMATS = ("json", "text")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Libraries that narrate their work at INFO (WeasyPrint's rendering steps, fontTools' subsetting, Alembic's plugins
# as they load): only their warnings are worth a line. gunicorn.conf.py quiets them too, from its start.
QUIET = ("weasyprint", "fontTools", "alembic.runtime.plugins")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"

request_log = logging.getLogger("gambit.request")


def request_id_from(header: str | None) -> str:
    """The caller's request id when it is well formed, else a new one (32 hex digits)."""
    if header and REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


def _printable(text: str) -> str:
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _user_id() -> Any:
    # Only a user Flask-Login has already loaded for this request: a log line must not query the database (it
    # may be written while the session is failing).
    # Its key is read from its identity, not from the attribute: after the request's commit the row is expired,
    # and reading `user.id` would load it again (two statements, in a transaction of their own, per request).
    user = g.get("_login_user")
    if user is None:
        return None
    try:
        identity = sa_inspect(user).identity
    except NoInspectionAvailable:  # the anonymous user
        return None
    return identity[0] if identity else None


class RequestContext(logging.Filter):
    """Puts the request's id, method and path (and the user's id when logged in) on every record made while a
    request is served; a record made outside a request is left as it is."""

    def filter(self, record: logging.LogRecord) -> bool:
        if has_request_context():
            record.request_id = g.get("request_id") or "-"
            record.method = request.method
            record.path = request.path
            user_id = _user_id()
            if user_id is not None:
                record.user_id = user_id
        return True


def formatter(log_format: str) -> logging.Formatter:
    """The formatter for LOG_FORMAT ("json": one JSON object per line; "text": one readable line)."""
    if log_format == "json":
        return JsonFormatter(["levelname", "name", "message"], rename_fields={"levelname": "level", "name": "logger"},
                             timestamp=True)
    return logging.Formatter(TEXT_FORMAT, defaults={"request_id": "-"})


class Handler(logging.StreamHandler):
    """Gambit's one log handler, on the root logger: stderr (the one in place when the record is written, so that
    whoever captures stderr, a test or a process manager, gets it), the LOG_FORMAT's formatter, the request's
    fields. gunicorn.conf.py installs it for gunicorn's own messages; create_app puts a fresh one in its place."""

    def __init__(self, log_format: str = "text") -> None:
        super().__init__()
        self.setFormatter(formatter(log_format))
        self.addFilter(RequestContext())

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass  # always the current stderr


def init_logging(app: Flask) -> None:
    """The root logger writes through one Handler at LOG_LEVEL; every request gets an id and a closing log line.
    LOG_FORMAT is checked by create_app."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, Handler)]:
        root.removeHandler(old)
    root.addHandler(Handler(app.config["LOG_FORMAT"]))
    root.setLevel(app.config["LOG_LEVEL"])
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    # Flask's own stderr handler would write every app.logger record a second time, in its own format.
    app.logger.removeHandler(default_handler)

    @app.before_request
    def _request_id():
        g.request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        g.request_started = time.perf_counter()

    @app.after_request
    def _log_request(response):
        if "request_id" not in g:  # a response made before the first before_request ran
            g.request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        response.headers[REQUEST_ID_HEADER] = g.request_id
        started = g.get("request_started")
        duration_ms = round((time.perf_counter() - started) * 1000, 1) if started is not None else None
        # The path is the client's: its control characters are escaped, so that a text line cannot be split in two.
        request_log.info("%s %s %s", request.method, _printable(request.path), response.status_code,
                         extra={"status": response.status_code, "duration_ms": duration_ms})
        return response
