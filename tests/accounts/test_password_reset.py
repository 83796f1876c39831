"""A forgotten password, set again with an emailed link (issue 35): asked for on the sign-in page, the link mailed
through the outbox, good once and for PASSWORD_RESET_HOURS; using it ends every session and revokes every API
token. The form answers the same whether or not the address has an active account, and is rate-limited per client
and per address."""

import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from accounts.models import User
from accounts.services import RESET_LINK_GONE, issue_api_token, password_reset_token, user_for_token
from core.db import db, utcnow
from evidence.audit import AuditEntry
from tests.conftest import login

NEW = "a fresh long pass phrase 35"
EXPIRED = ("This link to set a new password has expired (links are valid for 1 hour): ask for a new one on the "
           "sign-in page.")
ALTERED = ("This link to set a new password is not valid: it was changed or cut short. Open the link from the email "
           "as it is.")


def sent_to(email: str) -> str:
    return (f"If {email} is the address of an active account, we have emailed it a link to set a new password. "
            "The link works once, for 1 hour.")


def _text(response) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)).split())


def _link(message, base: str = "http://gambit.test") -> str:
    found = re.search(re.escape(base) + r"(/password/reset/\S+)", message.get_content())
    assert found, message.get_content()
    return found.group(1)


def _hash(app, email: str) -> str:
    with app.app_context():
        return db.session.scalars(select(User.password_hash).where(User.email == email)).one()


def _deactivate(app, email: str) -> None:
    with app.app_context():
        db.session.scalars(select(User).where(User.email == email)).one().active = False
        db.session.commit()


def test_a_forgotten_password_is_set_with_the_emailed_link_once(client, app, make, smtp, monkeypatch):
    user_id = make.user(email="forgetful@example.org", name="Fay Forgetful", roles=("wcoc",))
    with app.app_context():
        api_token = issue_api_token(db.session.get(User, user_id), actor=None, now=utcnow())
        db.session.commit()
    elsewhere = app.test_client()
    assert login(elsewhere, "forgetful@example.org").status_code == 302

    assert '<a href="/password/forgot">Forgot your password?</a>' in client.get("/login").get_data(as_text=True)
    page = client.get("/password/forgot")
    assert page.status_code == 200 and 'for="email"' in page.get_data(as_text=True)
    monkeypatch.setitem(app.config, "BASE_URL", "https://bids.fide.example")
    response = client.post("/password/forgot", data={"email": " Forgetful@Example.org "})
    assert response.status_code == 302 and response.location == "/login"
    assert sent_to("forgetful@example.org") in _text(client.get("/login"))

    [message] = smtp.deliver()
    assert message["To"] == "forgetful@example.org"
    assert message["Subject"] == "Set a new password for your Gambit account"
    link = _link(message, "https://bids.fide.example")  # absolute, on BASE_URL whatever host the request named
    assert "follow this link within 1 hour; it works once" in message.get_content()

    form = client.get(link)
    assert form.status_code == 200
    assert "Choose a new password for forgetful@example.org." in _text(form)
    response = client.post(link, data={"new_password": NEW, "confirm": NEW})
    assert response.status_code == 302 and response.location == "/login"
    assert ("Your new password is set. Log in with it: every session of the account has ended and its API tokens "
            "are revoked.") in _text(client.get("/login"))

    assert login(app.test_client(), "forgetful@example.org").status_code == 422  # the old password is refused
    assert login(app.test_client(), "forgetful@example.org", NEW).status_code == 302
    assert elsewhere.get("/account").status_code == 302  # the other session has ended
    with app.app_context():
        assert user_for_token(api_token) is None
        entries = db.session.scalars(select(AuditEntry).where(AuditEntry.object_type == "User",
                                                              AuditEntry.object_id == str(user_id))
                                     .order_by(AuditEntry.id)).all()
        entries = [e for e in entries if e.action != "user.login"]
        actions = [(e.action, e.data_dict.get("reason")) for e in entries]
        assert actions[-4:] == [("user.password_reset_requested", None), ("user.api_tokens_revoked", "password reset"),
                                ("user.sessions_ended", "password reset"), ("user.password_reset", None)]
        assert entries[-1].actor_id == user_id
    admin = app.test_client()
    make.user(email="audit-reader@example.org", roles=("admin",))
    login(admin, "audit-reader@example.org")
    audit_page = _text(admin.get("/admin/audit/?action=user.password_reset"))
    assert "set a new password for" in audit_page and "with an emailed link" in audit_page

    # The link is good once: used, it no longer opens the form nor sets a password.
    hashed = _hash(app, "forgetful@example.org")
    again = client.get(link)
    assert again.status_code == 400 and RESET_LINK_GONE in _text(again)
    other = "yet another pass phrase 9"
    again = client.post(link, data={"new_password": other, "confirm": other})
    assert again.status_code == 400 and RESET_LINK_GONE in _text(again)
    assert _hash(app, "forgetful@example.org") == hashed


def test_an_expired_or_altered_link_sets_nothing(client, app, make):
    user_id = make.user(email="late@example.org")
    with app.app_context():
        user = db.session.get(User, user_id)
        secret = app.config["SECRET_KEY"]
        expired = password_reset_token(user, secret=secret, now=utcnow() - timedelta(hours=1, seconds=5))
        in_time = password_reset_token(user, secret=secret, now=utcnow() - timedelta(minutes=59))
    hashed = _hash(app, "late@example.org")
    for method in (client.get, client.post):
        response = method(f"/password/reset/{expired}", data={"new_password": NEW, "confirm": NEW})
        assert response.status_code == 400 and EXPIRED in _text(response)
        response = method(f"/password/reset/{in_time[:-2]}", data={"new_password": NEW, "confirm": NEW})
        assert response.status_code == 400 and ALTERED in _text(response)
    assert _hash(app, "late@example.org") == hashed
    assert client.get(f"/password/reset/{in_time}").status_code == 200  # a minute before it expires, it works


def test_unknown_and_deactivated_addresses_get_the_same_answer_and_no_mail(client, app, make, smtp):
    make.user(email="active@example.org")
    make.user(email="gone@example.org")
    _deactivate(app, "gone@example.org")
    answers = {}
    for email in ("active@example.org", "nobody@example.org", "gone@example.org"):
        response = client.post("/password/forgot", data={"email": email})
        landing = client.get(response.location)
        answers[email] = (response.status_code, response.location, landing.status_code,
                          _text(landing).replace(email, "EMAIL"))
    assert answers["nobody@example.org"] == answers["active@example.org"] == answers["gone@example.org"]
    assert sent_to("EMAIL") in answers["active@example.org"][3]
    assert [m["To"] for m in smtp.deliver()] == ["active@example.org"]


def test_a_link_for_an_account_deactivated_since_does_nothing(client, app, make, smtp):
    make.user(email="leaving@example.org")
    client.post("/password/forgot", data={"email": "leaving@example.org"})
    link = _link(smtp.deliver()[0])
    _deactivate(app, "leaving@example.org")
    hashed = _hash(app, "leaving@example.org")
    for response in (client.get(link), client.post(link, data={"new_password": NEW, "confirm": NEW})):
        # the words a used link gets: the page does not tell that the account was deactivated
        assert response.status_code == 400 and RESET_LINK_GONE in _text(response)
    assert _hash(app, "leaving@example.org") == hashed


@pytest.mark.parametrize("data, said", [
    ({"new_password": "short", "confirm": "short"}, "Use at least 12 characters (this one has 5)."),
    ({"new_password": NEW, "confirm": NEW + "!"}, "The two passwords are not the same."),
    ({"new_password": "password1234", "confirm": "password1234"}, "This password is on a list of common passwords"),
    ({"new_password": "", "confirm": ""}, "Choose a new password."),
])
def test_a_refused_new_password_is_said_beside_its_field_and_the_link_still_works(client, app, make, data, said):
    user_id = make.user(email="careful@example.org")
    with app.app_context():
        token = password_reset_token(db.session.get(User, user_id), secret=app.config["SECRET_KEY"], now=utcnow())
    response = client.post(f"/password/reset/{token}", data=data)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert said in html and "error-summary" in html and 'aria-invalid="true"' in html
    assert client.post(f"/password/reset/{token}", data={"new_password": NEW, "confirm": NEW}).status_code == 302
    assert login(app.test_client(), "careful@example.org", NEW).status_code == 302


def test_the_request_form_keeps_a_mistyped_address(client):
    response = client.post("/password/forgot", data={"email": "not-an-email"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "Enter a valid email address, like name@example.org." in html and 'value="not-an-email"' in html


def test_asking_for_a_link_is_rate_limited_per_client_and_per_address(another_app):
    limited = another_app(WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=True, RATELIMIT_STORAGE_URI="memory://",
                          PASSWORD_RESET_RATE_LIMIT="3 per minute", PASSWORD_RESET_ADDRESS_RATE_LIMIT="2 per hour")
    client = limited.test_client()
    one_client = [client.post("/password/forgot", data={"email": f"someone{i}@example.org"},
                              environ_base={"REMOTE_ADDR": "192.0.2.1"}).status_code for i in range(4)]
    assert one_client == [302, 302, 302, 429]
    one_address = [client.post("/password/forgot", data={"email": "Target@example.org" if i else "target@example.org"},
                               environ_base={"REMOTE_ADDR": f"192.0.2.{10 + i}"}) for i in range(3)]
    assert [r.status_code for r in one_address] == [302, 302, 429]
    assert "Too many attempts" in one_address[-1].get_data(as_text=True)
