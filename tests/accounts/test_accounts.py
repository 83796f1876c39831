import hashlib
import re
import time
from datetime import timedelta

import pytest
from sqlalchemy import select

from accounts.models import ApiToken, User
from accounts.services import user_for_token
from core.db import db
from evidence.audit import AuditEntry
from tests.conftest import DEMO_PASSWORD, login

GOOD = {"organisation": "Ukrainian Chess Federation", "applicant_type": "federation", "federation": "UKR",
        "name": "Oksana Example", "email": "Oksana@Example.org", "password": "a long pass phrase 42",
        "confirm": "a long pass phrase 42"}


CHECK_EMAIL = ("Check your email: we sent a message to oksana@example.org. Follow the link in it to confirm the "
               "address and open your account.")


def _link(message) -> str:
    found = re.search(r"http://gambit\.test(/register/confirm/\S+)", message.get_content())
    assert found, message.get_content()
    return found.group(1)


def test_a_federation_registers_confirms_its_address_by_email_and_is_logged_in(client, app, smtp):
    response = client.post("/register", data=GOOD, follow_redirects=True)
    assert CHECK_EMAIL in response.get_data(as_text=True)
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "oksana@example.org")).one()
        assert user.role_set == {"bidder"} and user.federation == "UKR" and user.applicant_type == "federation"
        assert user.password_hash.startswith("$argon2id$")
        assert not user.active and user.email_confirmed_at is None
    assert login(client, "oksana@example.org", GOOD["password"]).status_code == 422  # not before confirming
    [message] = smtp.deliver()
    assert message["To"] == "oksana@example.org"
    assert message["Subject"] == "Confirm your address to open your Gambit account"
    response = client.get(_link(message), follow_redirects=True)
    assert ("Welcome, Oksana Example. Your address is confirmed and your account for Ukrainian Chess Federation is "
            "ready: you can now bid.") in response.get_data(as_text=True)
    assert "oksana@example.org" in client.get("/").get_data(as_text=True)
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "oksana@example.org")).one()
        assert user.active and user.email_confirmed_at is not None
    client.post("/logout")
    again = client.get(_link(message))
    assert again.status_code == 400 and "This address is confirmed already: log in." in again.get_data(as_text=True)


def test_a_changed_or_expired_link_confirms_nothing(client, app, smtp):
    client.post("/register", data=GOOD)
    link = _link(smtp.deliver()[0])
    response = client.get(link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB"))
    assert response.status_code == 400
    assert "This confirmation link is not valid: it was changed or cut short." in response.get_data(as_text=True)
    app.config["CONFIRM_EMAIL_HOURS"] = 0
    try:
        time.sleep(1.1)
        response = client.get(link)
    finally:
        app.config["CONFIRM_EMAIL_HOURS"] = 48
    assert response.status_code == 400
    assert "This confirmation link has expired (links are valid for 0 hours): register again." in \
        response.get_data(as_text=True)
    with app.app_context():
        assert not db.session.scalars(select(User).where(User.email == "oksana@example.org")).one().active


def test_registering_a_taken_address_answers_the_same_and_emails_its_owner(client, app, make, smtp):
    make.user(email="oksana@example.org", name="Staff Member")
    response = client.post("/register", data=GOOD, follow_redirects=True)
    assert CHECK_EMAIL in response.get_data(as_text=True)  # the very answer a free address gets
    [message] = smtp.deliver()
    assert message["To"] == "oksana@example.org"
    assert message["Subject"] == "Someone tried to register with your address"
    assert "already has one. Nothing was changed." in message.get_content()
    assert "/register/confirm/" not in message.get_content()
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "oksana@example.org")).one()
        assert user.name == "Staff Member" and user.organisation != GOOD["organisation"]


@pytest.mark.parametrize("change, field_message", [
    ({"password": "short", "confirm": "short"}, "Use at least 12 characters (this one has 5)."),
    ({"password": "password1234", "confirm": "password1234"}, "This password is on a list of common passwords"),
    ({"confirm": "something else entirely"}, "The two passwords are not the same."),
    ({"email": "not-an-email"}, "Enter a valid email address"),
    ({"federation": ""}, "Choose a federation."),
    # registration serves every call: it names no one call's article
    ({"applicant_type": ""}, "Choose federation or sponsor."),
    ({"organisation": "   "}, "Enter the name of your federation or company."),
])
def test_registration_refuses_bad_input_with_a_message_and_keeps_the_values(client, change, field_message):
    data = {**GOOD, **change}
    response = client.post("/register", data=data)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert field_message in html
    assert f'value="{data["organisation"].strip()}"' in html
    assert 'value="Oksana Example"' in html
    assert "error-summary" in html


def test_registration_survives_hostile_input(client):
    data = {**GOOD, "organisation": "<script>alert(1)</script>" + "x" * 10, "name": "a" * 1_000_000}
    response = client.post("/register", data=data)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_login_with_a_wrong_password_says_so_without_saying_which(client, make):
    make.user(email="someone@example.org")
    for email, password in (("someone@example.org", "wrong password!!"), ("nobody@example.org", DEMO_PASSWORD)):
        response = client.post("/login", data={"email": email, "password": password})
        assert response.status_code == 422
        html = response.get_data(as_text=True)
        assert "That email and password do not match an active account." in html
        assert f'value="{email}"' in html


def test_login_starts_a_new_session(client, make):
    make.user(email="someone@example.org")
    with client.session_transaction() as s:
        s["planted"] = "by an attacker"
    login(client, "someone@example.org")
    with client.session_transaction() as s:
        assert "planted" not in s
        assert "_user_id" in s


def test_logout_ends_the_session_on_the_server(client, make, app):
    make.user(email="someone@example.org")
    login(client, "someone@example.org")
    stolen = client.get_cookie("session", domain="gambit.test").value
    assert client.get("/account").status_code == 200
    client.post("/logout")
    assert client.get("/account").status_code == 302
    other = app.test_client()
    other.set_cookie("session", stolen, domain="gambit.test")
    assert other.get("/account").status_code == 302  # the copied cookie no longer logs anyone in


def test_deactivation_ends_the_session(client, make, app, login_as):
    target = make.user(email="leaving@example.org")
    victim = app.test_client()
    login(victim, "leaving@example.org")
    assert victim.get("/account").status_code == 200
    login_as("admin")
    response = client.post(f"/admin/users/{target}/active", data={"active": "0"})
    assert response.status_code == 302
    assert victim.get("/account").status_code == 302
    assert login(victim, "leaving@example.org").status_code == 422


@pytest.mark.parametrize("data, said", [
    ({}, "the request did not say whether the account is to be active or deactivated."),
    ({"active": ""}, "say whether the account is to be active (1) or deactivated (0); the request said “”."),
    ({"active": "no"}, "say whether the account is to be active (1) or deactivated (0); the request said “no”."),
])
def test_a_missing_or_unknown_active_value_changes_nothing(client, make, app, login_as, data, said):
    target = make.user(email="staying@example.org")
    login_as("admin")
    response = client.post(f"/admin/users/{target}/active", data=data, follow_redirects=True)
    assert f"Nothing changed for staying@example.org: {said}" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(User, target).active is True
    assert login(app.test_client(), "staying@example.org").status_code == 302


def test_password_change_ends_other_sessions_but_keeps_this_one(client, make, app):
    make.user(email="someone@example.org")
    elsewhere = app.test_client()
    login(elsewhere, "someone@example.org")
    login(client, "someone@example.org")
    response = client.post("/account/password", data={"current_password": DEMO_PASSWORD,
                                                      "new_password": "another long phrase 7",
                                                      "confirm": "another long phrase 7"})
    assert response.status_code == 302
    assert client.get("/account").status_code == 200
    assert elsewhere.get("/account").status_code == 302


def test_password_change_refuses_a_wrong_current_password(client, login_as):
    login_as("bidder")
    response = client.post("/account/password", data={"current_password": "not it at all",
                                                      "new_password": "another long phrase 7",
                                                      "confirm": "another long phrase 7"})
    assert response.status_code == 422
    assert "Your current password is not correct." in response.get_data(as_text=True)


def test_idle_session_times_out(client, login_as, app):
    login_as("bidder")
    with client.session_transaction() as s:
        s["seen_at"] = "2000-01-01T00:00:00+00:00"
    response = client.get("/account")
    assert response.status_code == 302 and "/login" in response.location


def test_api_token_is_shown_once_and_stored_hashed(client, login_as, app):
    user_id = login_as("wcoc")
    html = client.post("/account/token").get_data(as_text=True)
    token = html.split('<code class="token">')[1].split("</code>")[0]
    assert token.startswith("gbt_")
    with app.app_context():
        stored = db.session.scalars(select(ApiToken).where(ApiToken.user_id == user_id)).one()
        assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest() and token not in stored.token_hash
        assert user_for_token(token).id == user_id
    assert token not in client.get("/account").get_data(as_text=True)
    anonymous = app.test_client()
    response = anonymous.get("/api/v1/events", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert anonymous.get("/api/v1/events", headers={"Authorization": "Bearer gbt_wrong"}).status_code == 401


def test_state_changes_are_audited(client, login_as, app):
    login_as("bidder")
    with app.app_context():
        actions = db.session.scalars(select(AuditEntry.action)).all()
    assert "user.create" in actions and "user.login" in actions


def test_admin_creates_a_wcoc_and_board_account(client, login_as, app):
    login_as("admin")
    response = client.post("/admin/users/new", data={
        "email": "member@fide.example.org", "name": "A Member", "organisation": "WCOC", "federation": "CHN",
        "roles": ["wcoc", "board"], "password": "quite a long secret 9"})
    assert response.status_code == 302
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "member@fide.example.org")).one()
        assert user.role_set == {"wcoc", "board"} and user.federation == "CHN"


def test_president_must_sit_on_the_board(client, login_as):
    login_as("admin")
    response = client.post("/admin/users/new", data={
        "email": "p@fide.example.org", "name": "P", "roles": ["wcoc"], "is_president": "y",
        "password": "quite a long secret 9"})
    assert response.status_code == 422
    assert "The FIDE President sits on the Presidential Board" in response.get_data(as_text=True)


def test_admin_list_sorts_and_filters(client, login_as, make):
    login_as("admin", email="zz-admin@example.org")
    make.user(email="aa-wcoc@example.org", roles=("wcoc",))
    html = client.get("/admin/users?sort=email&dir=asc").get_data(as_text=True).split("<tbody>")[1]
    assert html.index("aa-wcoc@example.org") < html.index("zz-admin@example.org")
    html = client.get("/admin/users?sort=email&dir=desc").get_data(as_text=True).split("<tbody>")[1]
    assert html.index("aa-wcoc@example.org") > html.index("zz-admin@example.org")
    html = client.get("/admin/users?role=wcoc").get_data(as_text=True)
    assert "aa-wcoc@example.org" in html and "zz-admin@example.org" not in html.split("<tbody>")[1]


def test_users_create_command(runner, app):
    result = runner.invoke(args=["users", "create", "m@fide.example.org", "--role", "wcoc", "--role", "board",
                                 "--president", "--federation", "CHN"])
    assert result.exit_code == 0, result.output
    assert "password (shown once):" in result.output
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "m@fide.example.org")).one()
        assert user.is_president and user.role_set == {"wcoc", "board"}


def test_users_create_command_refuses_bad_input_cleanly(runner):
    result = runner.invoke(args=["users", "create", "m@fide.example.org", "--role", "wcoc", "--federation", "china"])
    assert result.exit_code == 1
    assert "A FIDE federation code is three capital letters (you entered 'china')." in result.output
    assert "Traceback" not in result.output


def test_login_is_rate_limited(another_app):
    limited = another_app(WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per minute",
                          RATELIMIT_STORAGE_URI="memory://")
    client = limited.test_client()
    codes = [client.post("/login", data={"email": "x@example.org", "password": "wrong wrong wrong"}).status_code
             for _ in range(4)]
    assert codes == [422, 422, 422, 429]
    assert "Too many attempts" in client.post("/login", data={}).get_data(as_text=True)


def test_an_address_never_confirmed_in_time_registers_again_and_the_old_link_dies(client, app, smtp):
    client.post("/register", data=GOOD)
    old_link = _link(smtp.deliver()[0])
    with app.app_context():  # the first registration's window has passed
        user = db.session.scalars(select(User).where(User.email == "oksana@example.org")).one()
        user.created_at = user.created_at - timedelta(hours=49)
        db.session.commit()
    client.post("/register", data={**GOOD, "name": "Oksana Again", "password": "another long phrase 43",
                                   "confirm": "another long phrase 43"})
    assert smtp.deliver()[1]["Subject"] == "Confirm your address to open your Gambit account"
    response = client.get(old_link)
    assert response.status_code == 400
    assert "This confirmation link was replaced: the address was registered again since." in \
        response.get_data(as_text=True)
    client.get(_link(smtp.deliver()[1]))
    assert login(app.test_client(), "oksana@example.org", "another long phrase 43").status_code == 302
    with app.app_context():
        assert db.session.scalars(select(User).where(User.email == "oksana@example.org")).one().name == \
            "Oksana Again"


def test_a_login_checked_against_a_password_changed_since_is_not_recorded(app, make):
    """The password is verified outside the write lock (issue 15); if the account changes before the login is
    recorded (a new password, a deactivation), the login is refused, never made with the old password."""
    from accounts import services
    from core.db import utcnow

    make.user(email="racer@example.org", roles=("bidder",))
    with app.app_context():
        user, new_hash = services.authenticate("racer@example.org", DEMO_PASSWORD)
        verified = user.password_hash
        services.change_password(user, current=DEMO_PASSWORD, new="a brand new passphrase", actor=user, now=utcnow())
        assert services.record_login(user, now=utcnow(), new_hash=new_hash, verified_hash=verified) is False
        assert user.password_hash != verified  # the new password stays
        user.active = False  # as the secretariat's deactivation leaves it
        assert services.record_login(user, now=utcnow(), verified_hash=user.password_hash) is False
        assert not db.session.scalars(select(AuditEntry).where(AuditEntry.action == "user.login")).all()
        db.session.rollback()
