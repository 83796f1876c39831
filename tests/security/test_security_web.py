"""Issue 8: CSRF on every state-changing request, cookies, timeouts, shared rate limits."""

import re

import pytest

from tests.conftest import DEMO_PASSWORD, csrf_token_from


def test_every_post_route_refuses_a_request_without_the_csrf_token(app, another_app, make, event):
    guarded = another_app(WTF_CSRF_ENABLED=True)
    make.user(email="csrf-admin@example.org", roles=("admin", "board", "wcoc"))
    client = guarded.test_client()
    token = csrf_token_from(client.get("/login").data)
    assert client.post("/login", data={"email": "csrf-admin@example.org", "password": DEMO_PASSWORD,
                                       "csrf_token": token}).status_code == 302
    posts = [rule for rule in guarded.url_map.iter_rules() if "POST" in (rule.methods or ())]
    assert len(posts) > 20
    for rule in posts:
        url = re.sub(r"<(?:int:)?(\w+)>", lambda m: "1" if "int:" in m.group(0) else "fwwcm-2015", rule.rule)
        response = client.post(url, data={"anything": "x"})
        assert response.status_code == 400, f"{rule.rule} accepted a POST without a CSRF token"
        assert "The form expired or did not come from this site" in response.get_data(as_text=True)


def test_a_state_changing_route_never_answers_get(app):
    """No state change by GET: every route that changes state takes POST only."""
    changing = ("logout", "submit", "withdraw", "reopen", "reject", "vote", "decide", "upload",
                "new_token", "set_active", "change_status", "consultation", "end_session", "end_other_sessions",
                "end_user_sessions", "reset_two_factor", "require_two_factor")
    checked = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint.split(".")[-1] in changing:
            checked.add(rule.endpoint)
            assert "GET" not in (rule.methods or ()), rule.endpoint
    assert {"accounts.logout", "bids.submit", "bids.withdraw", "board.vote", "board.decide",
            "events.change_status", "accounts.set_active", "accounts.end_session", "accounts.end_other_sessions",
            "accounts.end_user_sessions", "accounts.reset_two_factor", "accounts.require_two_factor"} <= checked


def test_session_cookie_is_httponly_and_lax_and_secure_under_https(another_app, make, app):
    make.user(email="c@example.org")
    plain = another_app(WTF_CSRF_ENABLED=False)
    response = plain.test_client().post("/login", data={"email": "c@example.org", "password": DEMO_PASSWORD})
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    secure = another_app(WTF_CSRF_ENABLED=False, SESSION_COOKIE_SECURE=True)
    response = secure.test_client().post("/login", data={"email": "c@example.org", "password": DEMO_PASSWORD},
                                         base_url="https://gambit.test")
    assert "Secure" in response.headers["Set-Cookie"]


def test_https_setting_marks_the_cookie_secure(monkeypatch):
    from config import Config

    monkeypatch.setenv("PREFERRED_URL_SCHEME", "https")
    assert Config().SESSION_COOKIE_SECURE is True


def test_absolute_session_timeout(client, login_as):
    login_as("bidder")
    with client.session_transaction() as s:
        s["login_at"] = "2000-01-01T00:00:00+00:00"
    response = client.get("/account")
    assert response.status_code == 302 and "/login" in response.location


@pytest.mark.no_db
def test_rate_limit_counts_are_shared_between_workers_through_redis(another_app):
    import redis

    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/15").ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    redis.Redis.from_url("redis://127.0.0.1:6379/15").flushdb()
    config = {"WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": True, "REDIS_URL": "redis://127.0.0.1:6379/15",
              "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/15", "LOGIN_RATE_LIMIT": "3 per minute"}
    worker_a, worker_b = another_app(**config).test_client(), another_app(**config).test_client()
    data = {"email": "nobody@example.org", "password": "wrong wrong wrong"}
    codes = [worker_a.post("/login", data=data).status_code, worker_b.post("/login", data=data).status_code,
             worker_a.post("/login", data=data).status_code, worker_b.post("/login", data=data).status_code]
    assert codes == [422, 422, 422, 429]
    redis.Redis.from_url("redis://127.0.0.1:6379/15").flushdb()
