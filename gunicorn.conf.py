"""gunicorn settings for `make serve` (gunicorn reads ./gunicorn.conf.py by itself)."""

import gc

from core.db import db

# The app is built once, in the master, and every worker is a fork of it: a worker is ready the moment it is
# forked (building the app imports WeasyPrint, pyHanko and numpy, seconds on a busy machine), and the pages of what
# the master built stay shared between the workers.
preload_app = True


def post_fork(server, worker):
    """A forked worker must not share the master's database connections: drop the pool it inherited (without
    closing the master's sockets, as SQLAlchemy advises after a fork), so the worker opens its own."""
    app = server.app.wsgi()
    with app.app_context():
        db.engine.dispose(close=False)


def post_worker_init(worker):
    """Once the worker has built the app, move every object alive now (modules, templates, the app, SQLAlchemy's
    mappers) to the permanent generation: the collector no longer walks them on each collection a request
    triggers, and forked pages stay shared."""
    gc.collect()
    gc.freeze()
