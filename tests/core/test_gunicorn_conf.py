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


def test_the_access_log_is_left_to_the_app_which_logs_each_request_with_its_id():
    assert _conf().accesslog is None


def test_gunicorns_own_messages_come_out_as_the_apps_json_lines(monkeypatch, capsys):
    """gunicorn's way: its defaults updated key by key with logconfig_dict, then dictConfig."""
    import json
    import logging
    import logging.config

    from gunicorn.glogging import CONFIG_DEFAULTS

    monkeypatch.setenv("GAMBIT_ENV", "production")
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    error_log = logging.getLogger("gunicorn.error")
    try:
        logging.config.dictConfig({**CONFIG_DEFAULTS, **_conf().logconfig_dict})
        capsys.readouterr()
        error_log.info("Booting worker with pid: %s", 42)
        (line,) = capsys.readouterr().err.splitlines()
        record = json.loads(line)
        assert record["message"] == "Booting worker with pid: 42" and record["logger"] == "gunicorn.error"
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        error_log.handlers.clear()


def test_gunicorn_believes_no_forwarded_header_itself():
    """PROXY_FIX_HOPS decides alone (tests/core/test_proxy_fix.py); gunicorn's default would believe
    X-Forwarded-Proto from any local client."""
    assert _conf().secure_scheme_headers == {}
