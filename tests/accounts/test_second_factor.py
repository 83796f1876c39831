"""A second factor for the people who decide money (issue 35, points 2 and 6), through the pages: forced enrolment,
TOTP sign-in, wrong codes counted and locked, no code twice, recovery codes once each, the secretariat's reset,
the settings in development and production, API tokens and the `flask users` commands."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pyotp
import pytest
from sqlalchemy import select

from tests.conftest import login


def _text(response) -> str:
    return " ".join(html.unescape(response.get_data(as_text=True)).split())


def _secret(response) -> str:
    match = re.search(r'id="totp-secret">([A-Z2-7]+)<', response.get_data(as_text=True))
    assert match, "no TOTP key on the page"
    return match.group(1)


def _codes(response) -> list[str]:
    return re.findall(r"<code>([0-9a-f]{5}-[0-9a-f]{5})</code>", response.get_data(as_text=True))


def _later(secret: str, seconds: int = 30) -> str:
    """The code of a later time-step (still accepted: one step either side), so it is not the one just used."""
    from core.db import utcnow

    return pyotp.TOTP(secret).at(utcnow() + timedelta(seconds=seconds))


def _not_a_code(secret: str) -> str:
    """Six digits that no time-step near now accepts."""
    from core.db import utcnow

    near = {pyotp.TOTP(secret).at(utcnow() + timedelta(seconds=30 * k)) for k in range(-3, 4)}
    return next(c for c in ("000000", "123456", "999999", "555555", "024680", "135791", "314159", "271828")
                if c not in near)


def _email(app, user_id: int) -> str:
    from accounts.models import User
    from core.db import db

    with app.app_context():
        return db.session.get(User, user_id).email


def _actions(app, action: str) -> list:
    from core.db import db
    from evidence.audit import AuditEntry

    with app.app_context():
        return list(db.session.scalars(select(AuditEntry).where(AuditEntry.action == action)
                                       .order_by(AuditEntry.id)))


def _enrol_on_account_page(client) -> tuple[str, list[str]]:
    page = client.get("/account/two-factor")
    assert page.status_code == 200
    secret = _secret(page)
    done = client.post("/account/two-factor", data={"code": pyotp.TOTP(secret).now()})
    assert done.status_code == 200, _text(done)[:2000]
    codes = _codes(done)
    assert len(codes) == 10
    return secret, codes


@pytest.fixture
def enrolled(client, login_as, app):
    """A bidder (the factor is optional for them) who set up an authenticator app and logged out."""
    user_id = login_as("bidder")
    secret, codes = _enrol_on_account_page(client)
    client.post("/logout")
    return user_id, _email(app, user_id), secret, codes


@pytest.fixture
def admin_required(app, monkeypatch):
    monkeypatch.setitem(app.config, "TWO_FACTOR_REQUIRED_ROLES", "admin,board,wcoc")


def test_required_role_enrols_at_first_sign_in_before_anything_else(client, make, app, admin_required):
    user_id = make.user(roles=("wcoc",))
    email = _email(app, user_id)
    response = login(client, email)
    assert response.status_code == 302 and response.headers["Location"].endswith("/login/second-factor/setup")
    # Half signed in: no page opens yet.
    assert client.get("/account").status_code == 302
    page = client.get("/login/second-factor/setup")
    assert "Your role requires a second step when you sign in" in _text(page)
    assert "<svg" in page.get_data(as_text=True)  # the QR code, inline
    secret = _secret(page)
    wrong = client.post("/login/second-factor/setup", data={"code": _not_a_code(secret)})
    assert wrong.status_code == 422
    assert "That is not the code your authenticator app shows for this QR code" in _text(wrong)
    done = client.post("/login/second-factor/setup", data={"code": pyotp.TOTP(secret).now()})
    assert done.status_code == 200 and len(_codes(done)) == 10
    assert client.get("/account").status_code == 200
    login_entry = _actions(app, "user.login")[-1]
    assert login_entry.object_id == str(user_id) and '"second_factor":"totp"' in login_entry.data.replace(" ", "")
    assert _actions(app, "user.two_factor_totp_enrolled")[-1].object_id == str(user_id)


def test_totp_sign_in_asks_for_the_code_after_the_password(client, enrolled):
    _user_id, email, secret, _codes_ = enrolled
    response = login(client, email)
    assert response.status_code == 302 and response.headers["Location"].endswith("/login/second-factor")
    assert client.get("/account").status_code == 302  # the password alone opens nothing
    done = client.post("/login/second-factor", data={"code": _later(secret)})
    assert done.status_code == 302
    assert client.get("/account").status_code == 200


def test_wrong_codes_are_counted_then_lock_the_second_step(client, enrolled, app):
    from accounts.models import SecondFactor
    from core.db import db

    user_id, email, secret, _codes_ = enrolled
    login(client, email)
    wrong = _not_a_code(secret)
    first = client.post("/login/second-factor", data={"code": wrong})
    assert first.status_code == 422
    assert (f"That code is not right (you entered “{wrong}”): enter the 6 digits your authenticator app shows now, "
            "or one of your recovery codes. After 4 more wrong codes the second step is locked for 15 minutes."
            ) in _text(first)
    for _ in range(3):
        client.post("/login/second-factor", data={"code": wrong})
    locked = client.post("/login/second-factor", data={"code": wrong})
    with app.app_context():
        until = db.session.get(SecondFactor, user_id).locked_until
    message = (f"Too many wrong codes: the second step of signing in to {email} is locked until "
               f"{until:%H:%M} UTC. Try again then. If you have lost your authenticator app, your passkeys and your "
               "recovery codes, ask the FIDE secretariat to reset your second factor.")
    assert message in _text(locked)
    # Locked: even the right code does not open it now.
    right = client.post("/login/second-factor", data={"code": _later(secret)})
    assert right.status_code == 422 and message in _text(right)
    assert client.get("/account").status_code == 302
    assert _actions(app, "user.two_factor_locked")[-1].object_id == str(user_id)


def test_a_code_cannot_be_used_twice(client, enrolled):
    _user_id, email, secret, _codes_ = enrolled
    code = _later(secret)
    login(client, email)
    assert client.post("/login/second-factor", data={"code": code}).status_code == 302
    client.post("/logout")
    login(client, email)
    again = client.post("/login/second-factor", data={"code": code})
    assert again.status_code == 422
    assert (f"That code (“{code}”) has been used already: a code works once. Wait for your authenticator app to "
            "show the next one.") in _text(again)
    assert client.get("/account").status_code == 302


def test_a_recovery_code_signs_in_once(client, enrolled, app):
    _user_id, email, _secret_, codes = enrolled
    login(client, email)
    used = client.post("/login/second-factor", data={"code": codes[3].upper()})
    assert used.status_code == 302
    assert "9 recovery codes left" in _text(client.get("/account", follow_redirects=True))
    assert _actions(app, "user.recovery_code_used")
    client.post("/logout")
    login(client, email)
    again = client.post("/login/second-factor", data={"code": codes[3]})
    assert again.status_code == 422
    assert f"That recovery code (“{codes[3]}”) has been used already: each works once." in _text(again)


def test_the_secretariat_resets_a_second_factor_and_the_audit_log_says_so(client, enrolled, login_as, app):
    from accounts.models import Passkey, RecoveryCode, SecondFactor
    from core.db import db

    user_id, email, _secret_, _codes_ = enrolled
    login_as("admin")
    page = client.get(f"/admin/users/{user_id}")
    assert "Authenticator app: set up" in _text(page) and "Reset the second factor" in _text(page)
    unconfirmed = client.post(f"/admin/users/{user_id}/two-factor/reset")
    assert unconfirmed.status_code == 302
    with app.app_context():
        assert db.session.get(SecondFactor, user_id).totp_secret is not None
    done = client.post(f"/admin/users/{user_id}/two-factor/reset", data={"confirm": "reset"}, follow_redirects=True)
    assert (f"The second factor of {email} is reset and their sessions have ended: they set up a new one when they "
            "next sign in.") in _text(done)
    with app.app_context():
        assert db.session.get(SecondFactor, user_id) is None
        assert not db.session.scalars(select(RecoveryCode).where(RecoveryCode.user_id == user_id)).all()
        assert not db.session.scalars(select(Passkey).where(Passkey.user_id == user_id)).all()
    entry = _actions(app, "user.two_factor_reset")[-1]
    assert entry.object_id == str(user_id) and entry.actor_label != email
    client.post("/logout")
    # The bidder now signs in with the password alone (optional for them).
    assert login(client, email).headers["Location"].endswith("/")


def test_a_person_who_lost_everything_is_told_whom_to_ask(client, enrolled, app, monkeypatch):
    monkeypatch.setitem(app.config, "SECRETARIAT_CONTACT", "the FIDE secretariat (office@fide.example)")
    login(client, enrolled[1])
    page = client.get("/login/second-factor")
    assert ("If you have lost your authenticator app, your passkeys and your recovery codes, ask the FIDE "
            "secretariat (office@fide.example) to reset your second factor.") in _text(page)


def test_a_session_without_the_factor_ends_when_the_role_comes_to_require_it(client, login_as, app, monkeypatch):
    login_as("board")
    assert client.get("/account").status_code == 200
    monkeypatch.setitem(app.config, "TWO_FACTOR_REQUIRED_ROLES", "board")
    ended = client.get("/account")
    assert ended.status_code == 302 and "/login" in ended.headers["Location"]
    assert client.get("/account").status_code == 302


def test_development_needs_no_second_factor_and_the_login_page_says_so(client, make, app):
    assert app.config["TWO_FACTOR_REQUIRED_ROLES"] == ""
    page = client.get("/login")
    assert ("This is a development site: no role needs a second factor here, so every demo account signs in with "
            "its password alone.") in _text(page)
    response = login(client, _email(app, make.user(roles=("admin",))))
    assert response.status_code == 302 and not response.headers["Location"].endswith("second-factor/setup")
    assert client.get("/account").status_code == 200


def test_production_requires_it_and_refuses_to_start_without_unless_told(another_app):
    from app import ConfigurationError

    production = {"GAMBIT_ENV": "production", "BASE_URL": "https://gambit.example.org"}
    app = another_app(**production)
    assert app.config["TWO_FACTOR_REQUIRED_ROLES"] == "admin,board,wcoc"
    with pytest.raises(ConfigurationError) as refused:
        another_app(**production, TWO_FACTOR_REQUIRED_ROLES="")
    assert str(refused.value) == (
        "TWO_FACTOR_REQUIRED_ROLES is empty: in production (GAMBIT_ENV=production) the secretariat, the Board and "
        "the WCOC sign in with a second factor (leave it unset for admin,board,wcoc). To run without requiring one, "
        "say so explicitly with TWO_FACTOR_OPTIONAL_ACKNOWLEDGED=1.")
    told = another_app(**production, TWO_FACTOR_REQUIRED_ROLES="", TWO_FACTOR_OPTIONAL_ACKNOWLEDGED=True)
    assert told.config["TWO_FACTOR_REQUIRED_ROLES"] == ""
    with pytest.raises(ConfigurationError, match="names 'treasurer', which is no role"):
        another_app(TWO_FACTOR_REQUIRED_ROLES="admin,treasurer")


def test_api_tokens_keep_working_and_are_made_only_after_the_second_step(client, enrolled, app):
    from accounts.models import ApiToken
    from core.db import db

    user_id, email, secret, _codes_ = enrolled
    login(client, email)
    half = client.post("/account/token")  # half signed in: not signed in
    assert half.status_code == 302 and "/login" in half.headers["Location"]
    with app.app_context():
        assert not db.session.scalars(select(ApiToken).where(ApiToken.user_id == user_id)).all()
    client.post("/login/second-factor", data={"code": _later(secret)})
    page = client.post("/account/token")
    token = re.search(r'<code class="token">(gbt_[^<]+)</code>', page.get_data(as_text=True)).group(1)
    api = app.test_client().get("/api/v1/events", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 200


def test_removing_the_app_asks_for_the_password(client, login_as):
    login_as("bidder")
    _enrol_on_account_page(client)
    wrong = client.post("/account/two-factor/remove", data={"password": "not my password at all"})
    assert wrong.status_code == 422 and "Your password is not correct: the authenticator app stays." in _text(wrong)
    done = client.post("/account/two-factor/remove", data={"password": "correct horse battery staple"},
                       follow_redirects=True)
    assert "The authenticator app is removed from your account." in _text(done)


def test_flask_users_reports_and_resets_second_factors(enrolled, make, app, admin_required):
    user_id, email, _secret_, _codes_ = enrolled
    missing = _email(app, make.user(roles=("wcoc",)))
    runner = app.test_cli_runner()
    report = runner.invoke(args=["users", "two-factor-report"])
    assert report.exit_code == 0, report.output
    assert "roles that require a second factor: admin, board, wcoc" in report.output
    assert f"{email}\tBidder\toptional\tauthenticator app" in report.output
    assert f"{missing}\tWCOC member\trequired (role)\tnone\tMISSING" in report.output
    only = runner.invoke(args=["users", "two-factor-report", "--missing"])
    assert email not in only.output and missing in only.output
    assert "TWO_FACTOR_REQUIRED_ROLES" in runner.invoke(args=["users", "two-factor-report", "--help"]).output
    reset = runner.invoke(args=["users", "two-factor-reset", email])
    assert reset.exit_code == 0 and f"reset the second factor of {email}" in reset.output
    assert _actions(app, "user.two_factor_reset")[-1].actor_label == "system"
    again = runner.invoke(args=["users", "two-factor-reset", email])
    assert again.exit_code == 1 and f"{email} has no second factor to reset." in again.output


HOSTILE_BODIES = [b"", b"not json", b"[]", b"null", b'{"credential": "x"}', b'{"credential": {"id": 5}}',
                  b'{"credential": {"id": "AAAA", "rawId": "AAAA", "type": "public-key", "response": {}}}',
                  b'{"name": "<script>alert(1)</script>", "credential": {"id": "\\u0000", "response": '
                  b'{"clientDataJSON": "%%%", "attestationObject": "e30"}}}']


def test_passkey_endpoints_refuse_hostile_json_with_a_message(client, enrolled, login_as):
    _user_id, email, _secret_, _codes_ = enrolled
    login(client, email)  # half signed in: the passkey sign-in's endpoints answer
    assert client.post("/login/passkey/options").status_code == 422  # no passkey on this account
    for body in HOSTILE_BODIES:
        for url in ("/login/passkey", "/passkeys/register"):
            answer = client.post(url, data=body, content_type="application/json")
            assert answer.status_code in (401, 422), (url, body, answer.status_code)
            assert answer.is_json and answer.get_json()["error"], (url, body)
    signed_in = login_as("bidder")
    assert signed_in
    options = client.post("/passkeys/register/options")
    assert options.status_code == 200 and options.get_json()["rp"]["id"] == "gambit.test"
    for body in HOSTILE_BODIES:
        client.post("/passkeys/register/options")
        answer = client.post("/passkeys/register", data=body, content_type="application/json")
        assert answer.status_code == 422 and answer.get_json()["error"].startswith("The passkey could not be "
                                                                                   "registered"), body


def test_a_session_opened_without_the_factor_makes_no_api_token_once_there_is_one(client, login_as, app):
    from tests.conftest import login as log_in

    user_id = login_as("bidder")
    before = app.test_client()
    log_in(before, _email(app, user_id))  # another browser, signed in before the app was set up
    _enrol_on_account_page(client)
    refused = before.post("/account/token", follow_redirects=True)
    assert ("Sign out and in again with your second factor to make an API token: this session was opened without "
            "it.") in _text(refused)
    assert "gbt_" not in refused.get_data(as_text=True)
    assert "gbt_" in client.post("/account/token").get_data(as_text=True)


def test_new_recovery_codes_void_the_old_ones(client, enrolled):
    _user_id, email, secret, old = enrolled
    login(client, email)
    client.post("/login/second-factor", data={"code": _later(secret)})
    made = client.post("/account/recovery-codes")
    new = _codes(made)
    assert len(new) == 10 and not set(new) & set(old)
    client.post("/logout")
    login(client, email)
    stale = client.post("/login/second-factor", data={"code": old[0]})
    assert stale.status_code == 422 and f"That code is not right (you entered “{old[0]}”)" in _text(stale)
    assert client.post("/login/second-factor", data={"code": new[0]}).status_code == 302


def test_the_second_step_is_rate_limited_per_client(another_app, enrolled):
    _user_id, email, _secret_, _codes_ = enrolled
    limited = another_app(WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=True, TWO_FACTOR_RATE_LIMIT="2 per minute",
                          RATELIMIT_STORAGE_URI="memory://", TWO_FACTOR_MAX_FAILURES=50)
    client = limited.test_client()
    login(client, email)
    codes = [client.post("/login/second-factor", data={"code": "abc"}).status_code for _ in range(3)]
    assert codes == [422, 422, 429]


def test_a_required_role_cannot_remove_its_last_factor(client, make, app, admin_required):
    email = _email(app, make.user(roles=("board",)))
    login(client, email)
    secret = _secret(client.get("/login/second-factor/setup"))
    client.post("/login/second-factor/setup", data={"code": pyotp.TOTP(secret).now()})
    kept = client.post("/account/two-factor/remove", data={"password": "correct horse battery staple"})
    assert kept.status_code == 422
    assert "Your role requires a second factor: add a passkey before you remove the authenticator app." in _text(kept)
    assert "An authenticator app is set up." in _text(client.get("/account"))
