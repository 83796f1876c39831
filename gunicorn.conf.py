"""gunicorn settings for `make serve` (gunicorn reads ./gunicorn.conf.py by itself)."""

import gc


def post_worker_init(worker):
    """Once the worker has built the app, move every object alive now (modules, templates, the app, SQLAlchemy's
    mappers) to the permanent generation: the collector no longer walks them on each collection a request
    triggers, and forked pages stay shared."""
    gc.collect()
    gc.freeze()
