"""`make serve`'s gunicorn.conf.py: once a worker has built the app, what it built is frozen out of the collector."""

import gc
import importlib.util
from pathlib import Path


def test_the_worker_hook_freezes_what_the_app_built():
    spec = importlib.util.spec_from_file_location("gunicorn_conf", Path(__file__).parents[2] / "gunicorn.conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    try:
        conf.post_worker_init(None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
