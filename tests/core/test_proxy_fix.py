"""PROXY_FIX_HOPS: behind that many reverse proxies, their X-Forwarded-* headers are believed (https, the public
host); with 0, the default, a client sending them changes nothing."""

import pytest

from app import ConfigurationError
from tests.conftest import login

FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "gambit.example.org", "X-Forwarded-For": "203.0.113.7"}


def _events_url(another_app, make, event, hops):
    app = another_app(PROXY_FIX_HOPS=hops, WTF_CSRF_ENABLED=False, SERVER_NAME=None)
    client = app.test_client()
    # Every request of the browser comes through the proxy, the login too (a session that changes address is ended).
    client.environ_base.update({f"HTTP_{k.upper().replace('-', '_')}": v for k, v in FORWARDED.items()})
    with app.app_context():
        from accounts.models import User
        from core.db import db

        email = db.session.get(User, make.user(roles=("admin",))).email
    assert login(client, email).status_code == 302
    response = client.get("/api/v1/events")
    assert response.status_code == 200
    return response, response.get_json()["events"][0]["url"]


def test_behind_one_proxy_its_https_and_host_are_believed(another_app, make, event):
    response, url = _events_url(another_app, make, event, 1)
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")
    assert url.startswith("https://gambit.example.org/events/")


def test_with_no_proxy_the_forwarded_headers_are_ignored(another_app, make, event):
    response, url = _events_url(another_app, make, event, 0)
    assert "Strict-Transport-Security" not in response.headers
    assert url.startswith("http://localhost/events/")


def test_the_client_address_is_the_proxys_word_only_behind_a_proxy(another_app):
    from flask import request

    for hops, expected in ((1, "203.0.113.7"), (0, "127.0.0.1")):
        app = another_app(PROXY_FIX_HOPS=hops)

        @app.get("/_test/addr")
        def _addr():
            return request.remote_addr or ""

        response = app.test_client().get("/_test/addr", headers=FORWARDED, environ_base={"REMOTE_ADDR": "127.0.0.1"})
        assert response.get_data(as_text=True) == expected


def test_a_negative_hop_count_stops_the_start(another_app):
    with pytest.raises(ConfigurationError, match="PROXY_FIX_HOPS is -1"):
        another_app(PROXY_FIX_HOPS=-1)
