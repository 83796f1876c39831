"""gunicorn settings for `make serve` and the container image (gunicorn reads ./gunicorn.conf.py by itself)."""

import gc
import os

from config import log_format
from core.db import db
from operations.logs import QUIET

# The app is built once, in the master, and every worker is a fork of it: a worker is ready the moment it is
# forked (building the app imports WeasyPrint, pyHanko and numpy, seconds on a busy machine), and the pages of what
# the master built stay shared between the workers.
preload_app = True

# Which X-Forwarded-* headers to believe is decided in one place, the app's PROXY_FIX_HOPS (werkzeug's ProxyFix).
# gunicorn's own handling would otherwise take X-Forwarded-Proto from any client connecting from 127.0.0.1 (its
# default forwarded_allow_ips), https included, even with PROXY_FIX_HOPS=0.
secure_scheme_headers: dict[str, str] = {}

# gunicorn's access log is off (its default; said here so nobody turns it on by habit): the app writes one line per
# request itself (operations.logs, logger "gambit.request"), which carries what gunicorn's cannot: the request id also
# sent back in X-Request-ID, the user's id, and the same JSON shape as every other line.
accesslog = None

# gunicorn's own messages (start, workers booting, timeouts) go through the app's handler (operations.logs.Handler on
# the root logger), so they come out in the same LOG_FORMAT: JSON lines in production (an --error-logfile is
# superseded). gunicorn merges this into its defaults key by key, so the defaults' console handlers are replaced, not
# added to; gunicorn.access is left out, so that an access log asked for on the command line (--access-logfile, as
# tests/security/test_shared_limits.py does) still works as gunicorn writes it.
logconfig_dict = {
    "root": {"level": os.environ.get("LOG_LEVEL", "INFO").strip().upper(), "handlers": ["gambit"]},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
        **{name: {"level": "WARNING"} for name in QUIET},
    },
    "handlers": {
        "gambit": {"()": "operations.logs.Handler",
                   "log_format": log_format(os.environ.get("LOG_FORMAT"), os.environ.get("GAMBIT_ENV"))},
    },
}


def pre_fork(server, worker):
    """In the master, just before a worker is forked: move everything the master built (modules, templates, the app,
    SQLAlchemy's mappers) to the permanent generation, so that no collection, in the master or in a worker, walks
    it again: the collector walking them would write to every page the fork shares, and cost time per request."""
    gc.collect()
    gc.freeze()


def post_fork(server, worker):
    """A forked worker must not share the master's database connections: drop the pool it inherited (without
    closing the master's sockets, as SQLAlchemy advises after a fork), so the worker opens its own."""
    app = server.app.wsgi()
    with app.app_context():
        db.engine.dispose(close=False)


def post_worker_init(worker):
    """Once the worker is set up: freeze what it made itself since the fork (its pool, its signal handlers), as the
    master froze what it had built."""
    gc.freeze()
