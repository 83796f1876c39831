"""API tokens: several per account, listed with creation and last use, revoked one by one, and all revoked when
the password changes or the secretariat deactivates the account (issue 12)."""

import re

from sqlalchemy import select

from accounts.models import ApiToken, User
from accounts.services import revoke_all_tokens, user_for_token
from core.db import db, utcnow
from evidence.audit import AuditEntry
from tests.conftest import DEMO_PASSWORD, login


def _new_token(client) -> str:
    html = client.post("/account/token").get_data(as_text=True)
    return re.search(r'<code class="token">([^<]+)</code>', html).group(1)


def _api(app, token) -> int:
    response = app.test_client().get("/api/v1/events", headers={"Authorization": f"Bearer {token}"})
    response.close()
    return response.status_code


def test_tokens_are_listed_with_their_use_and_revoked_one_by_one(client, app, login_as):
    user_id = login_as("wcoc")
    first, second = _new_token(client), _new_token(client)
    assert _api(app, first) == 200 and _api(app, second) == 200
    page = client.get("/account").get_data(as_text=True)
    with app.app_context():
        rows = db.session.scalars(select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id)).all()
        assert all(r.last_used_at is not None for r in rows)
        first_id = rows[0].id
    # ids, not positions: PostgreSQL's sequences do not roll back with the tests that used them before
    assert f"Token {rows[0].id}" in page and f"Token {rows[1].id}" in page and "never" not in page  # used just now
    response = client.post(f"/account/tokens/{first_id}/revoke", follow_redirects=True)
    assert f"API token {first_id} is revoked: it no longer opens the API." in response.get_data(as_text=True)
    assert _api(app, first) == 401 and _api(app, second) == 200
    response = client.post(f"/account/tokens/{first_id}/revoke", follow_redirects=True)
    assert f"API token {first_id} is revoked already." in response.get_data(as_text=True)
    assert "(revoked by its owner)" in client.get("/account").get_data(as_text=True)


def test_nobody_revokes_another_users_token(client, app, login_as, make):
    owner = make.user(roles=("wcoc",), email="owner@example.org")
    owner_client = app.test_client()
    login(owner_client, "owner@example.org")
    token = _new_token(owner_client)
    login_as("admin")
    with app.app_context():
        token_id = db.session.scalars(select(ApiToken.id).where(ApiToken.user_id == owner)).one()
    response = client.post(f"/account/tokens/{token_id}/revoke", follow_redirects=True)
    assert "There is no such API token on your account." in response.get_data(as_text=True)
    assert _api(app, token) == 200


def test_a_password_change_revokes_every_token(client, app, login_as):
    login_as("wcoc")
    tokens = [_new_token(client), _new_token(client)]
    response = client.post("/account/password", data={"current_password": DEMO_PASSWORD,
                                                      "new_password": "another long pass phrase 7",
                                                      "confirm": "another long pass phrase 7"})
    assert response.status_code == 302
    assert [_api(app, t) for t in tokens] == [401, 401]
    assert client.get("/account").get_data(as_text=True).count("(password changed)") == 2
    with app.app_context():
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "user.api_tokens_revoked")).one()
        assert entry.data_dict == {"count": 2, "reason": "password changed"}


def test_deactivating_an_account_revokes_its_tokens_for_good(client, app, login_as, make):
    make.user(roles=("wcoc",), email="member@example.org")
    member = app.test_client()
    login(member, "member@example.org")
    token = _new_token(member)
    login_as("admin")
    with app.app_context():
        member_id = db.session.scalars(select(User.id).where(User.email == "member@example.org")).one()
    assert client.post(f"/admin/users/{member_id}/active", data={"active": "0"}).status_code == 302
    client.post(f"/admin/users/{member_id}/active", data={"active": "1"})
    assert _api(app, token) == 401  # reactivation does not bring the token back


def test_revoking_all_counts_only_live_tokens(ctx, make):
    user = db.session.get(User, make.user())
    assert revoke_all_tokens(user, actor=None, now=utcnow(), reason="test") == 0
    assert user_for_token("gbt_nothing") is None


def test_password_change_and_token_creation_are_rate_limited(another_app, make):
    limited = another_app(WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=True, PASSWORD_CHANGE_RATE_LIMIT="3 per minute",
                          TOKEN_RATE_LIMIT="2 per minute", RATELIMIT_STORAGE_URI="memory://")
    make.user(roles=("wcoc",), email="limited@example.org")
    client = limited.test_client()
    assert login(client, "limited@example.org").status_code == 302
    codes = [client.post("/account/password", data={"current_password": "a wrong guess of mine",
                                                    "new_password": "another long pass phrase 7",
                                                    "confirm": "another long pass phrase 7"}).status_code
             for _ in range(4)]
    assert codes == [422, 422, 422, 429]
    assert [client.post("/account/token").status_code for _ in range(3)] == [200, 200, 429]


def test_logging_out_revokes_every_token(client, app, login_as):
    login_as("wcoc")
    tokens = [_new_token(client), _new_token(client)]
    assert [_api(app, t) for t in tokens] == [200, 200]
    assert "Logging out, or changing your password, revokes every API token" in client.get("/account").get_data(
        as_text=True)
    response = client.post("/logout", follow_redirects=True)
    assert "You are logged out. Your 2 API token(s) are revoked." in response.get_data(as_text=True)
    assert [_api(app, t) for t in tokens] == [401, 401]
    with app.app_context():
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "user.api_tokens_revoked")).one()
        assert entry.data_dict == {"count": 2, "reason": "logged out"}
