"""`make serve`'s gunicorn.conf.py: the master builds the app once, and what it built is frozen out of the collector
before each fork (a real two-worker gunicorn runs with this file in tests/security/test_shared_limits.py)."""

import gc
import importlib.util
from pathlib import Path


def _conf():
    spec = importlib.util.spec_from_file_location("gunicorn_conf", Path(__file__).parents[2] / "gunicorn.conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_the_app_is_built_once_in_the_master():
    assert _conf().preload_app is True


def test_the_master_freezes_what_it_built_before_each_fork():
    conf = _conf()
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    try:
        conf.pre_fork(None, None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_worker_freezes_what_it_made_after_the_fork():
    conf = _conf()
    gc.unfreeze()
    try:
        conf.post_worker_init(None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
