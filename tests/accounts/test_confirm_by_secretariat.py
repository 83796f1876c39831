"""Issue 35: with mail off the registration page says what is true (the message waits; the secretariat can confirm
the account), the same whether or not the address has an account; the secretariat confirms an unconfirmed account
from the user's page."""

from __future__ import annotations

from html import unescape

from sqlalchemy import select

from accounts.models import User
from core.db import db
from evidence.audit import AuditEntry
from operations.outbox import OutboxMessage
from tests.conftest import login

GOOD = {"organisation": "Ukrainian Chess Federation", "applicant_type": "federation", "federation": "UKR",
        "name": "Oksana Example", "email": "oksana@example.org", "password": "a long pass phrase 42",
        "confirm": "a long pass phrase 42"}
MAIL_OFF = ("Your registration is received. This site is not sending email at the moment: the message to "
            "oksana@example.org with the link that confirms the address will be sent when mail is available. "
            "Meanwhile the FIDE secretariat can confirm your account; you can log in once it is confirmed.")
BUTTON = "Confirm the address and open the account"


def _registered(app) -> User:
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == "oksana@example.org")).one()
        db.session.expunge(user)
        return user


def test_registering_with_mail_off_says_the_message_waits_and_the_secretariat_can_confirm(client, app):
    assert not app.config["MAIL_ENABLED"]
    page = unescape(client.post("/register", data=GOOD, follow_redirects=True).get_data(as_text=True))
    assert MAIL_OFF in page
    assert "Check your email" not in page
    with app.app_context():
        [message] = db.session.scalars(select(OutboxMessage)).all()
        assert message.kind == "account.confirm" and message.status == "queued"


def test_registering_a_taken_address_with_mail_off_answers_the_same(app, make):
    make.user(email="oksana@example.org", name="Staff Member")
    page = unescape(app.test_client().post("/register", data=GOOD, follow_redirects=True).get_data(as_text=True))
    assert MAIL_OFF in page


def test_the_secretariat_confirms_an_unconfirmed_account_from_its_page(client, app, login_as):
    registrant = app.test_client()
    registrant.post("/register", data=GOOD)
    user = _registered(app)
    assert login(registrant, GOOD["email"], GOOD["password"]).status_code == 422  # not confirmed yet
    admin_id = login_as("admin")
    page = client.get(f"/admin/users/{user.id}").get_data(as_text=True)
    assert BUTTON in page and f'action="/admin/users/{user.id}/confirm"' in page
    response = client.post(f"/admin/users/{user.id}/confirm")
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/admin/users/{user.id}")
    page = unescape(client.get(f"/admin/users/{user.id}").get_data(as_text=True))
    assert ("oksana@example.org is confirmed and the account of Ukrainian Chess Federation is open: Oksana Example "
            "can log in.") in page
    assert BUTTON not in page
    with app.app_context():
        confirmed = db.session.get(User, user.id)
        assert confirmed.active and confirmed.email_confirmed_at is not None
        [entry] = db.session.scalars(select(AuditEntry).where(
            AuditEntry.action == "user.confirmed_by_secretariat")).all()
        assert entry.actor_id == admin_id and entry.object_id == str(user.id)
    assert login(registrant, GOOD["email"], GOOD["password"]).status_code == 302
    again = client.post(f"/admin/users/{user.id}/confirm", follow_redirects=True)
    assert "oksana@example.org is confirmed already: nothing changed." in unescape(again.get_data(as_text=True))
    with app.app_context():
        assert len(db.session.scalars(select(AuditEntry).where(
            AuditEntry.action == "user.confirmed_by_secretariat")).all()) == 1


def test_a_confirmed_account_s_page_offers_no_confirmation(client, app, login_as, make):
    other = make.user(email="member@example.org")
    login_as("admin")
    assert BUTTON not in client.get(f"/admin/users/{other}").get_data(as_text=True)
