"""Issue 35.6: the secretariat requires a second factor of one person, whatever their role, through `flask users
two-factor-require EMAIL [--off]` or the person's user page (one service function, two_factor.set_required): their
running session ends, their next sign-in enrols a factor, they cannot remove their last one; lifting it makes it
optional again, unless their role still requires it."""

from __future__ import annotations

import html
import re

import pyotp
import pytest
from sqlalchemy import select

from tests.conftest import DEMO_PASSWORD, login


def _text(response) -> str:
    return " ".join(html.unescape(response.get_data(as_text=True)).split())


def _email(app, user_id: int) -> str:
    from accounts.models import User
    from core.db import db

    with app.app_context():
        return db.session.get(User, user_id).email


def _entries(app, action: str) -> list:
    from core.db import db
    from evidence.audit import AuditEntry

    with app.app_context():
        return list(db.session.scalars(select(AuditEntry).where(AuditEntry.action == action)
                                       .order_by(AuditEntry.id)))


def _required_flag(app, user_id: int) -> bool:
    from accounts.models import User
    from core.db import db

    with app.app_context():
        return db.session.get(User, user_id).two_factor_required


@pytest.fixture
def roles_required(app, monkeypatch):
    # Not admin: the secretariat signs in here with its password alone.
    monkeypatch.setitem(app.config, "TWO_FACTOR_REQUIRED_ROLES", "board,wcoc")


def test_the_cli_requires_it_of_a_bidder_whose_session_ends_and_who_enrols_and_keeps_it(app, client, login_as):
    user_id = login_as("bidder")
    email = _email(app, user_id)
    assert client.get("/account").status_code == 200
    runner = app.test_cli_runner()
    done = runner.invoke(args=["users", "two-factor-require", email])
    assert done.exit_code == 0, done.output
    assert (f"A second factor is now required of {email}: a session they opened without one ends at its next "
            "request, and they set one up when they next sign in.") in done.output
    # The running session (signed in with the password alone) ends at its next request.
    ended = client.get("/account")
    assert ended.status_code == 302 and "/login" in ended.headers["Location"]
    assert client.get("/account").status_code == 302
    # The next sign-in is sent to the forced enrolment, as for a role that requires one.
    signed = login(client, email)
    assert signed.status_code == 302 and signed.headers["Location"].endswith("/login/second-factor/setup")
    assert client.get("/account").status_code == 302
    page = client.get("/login/second-factor/setup")
    assert "The secretariat requires a second step when you sign in" in _text(page)
    secret = html.unescape(page.get_data(as_text=True)).split('id="totp-secret">')[1].split("<")[0]
    enrolled = client.post("/login/second-factor/setup", data={"code": pyotp.TOTP(secret).now()})
    assert enrolled.status_code == 200
    assert "The secretariat requires a second factor when you sign in." in _text(client.get("/account"))
    # The last factor stays.
    kept = client.post("/account/two-factor/remove", data={"password": DEMO_PASSWORD})
    assert kept.status_code == 422
    assert ("The secretariat requires a second factor: add a passkey before you remove the authenticator app."
            in _text(kept))
    report = runner.invoke(args=["users", "two-factor-report"])
    assert f"{email}\tBidder\trequired (set for them)\tauthenticator app" in report.output
    entry = _entries(app, "user.two_factor_required")[-1]
    assert entry.object_id == str(user_id) and entry.actor_label == "system"
    # Lifted: optional again, and the app can go.
    lifted = runner.invoke(args=["users", "two-factor-require", email, "--off"])
    assert lifted.exit_code == 0, lifted.output
    assert (f"A second factor is no longer required of {email} individually. It is optional for them again."
            in lifted.output)
    assert not _required_flag(app, user_id)
    assert _entries(app, "user.two_factor_requirement_lifted")[-1].object_id == str(user_id)
    assert f"{email}\tBidder\toptional\tauthenticator app" in runner.invoke(args=["users", "two-factor-report"]).output
    removed = client.post("/account/two-factor/remove", data={"password": DEMO_PASSWORD}, follow_redirects=True)
    assert "The authenticator app is removed from your account." in _text(removed)


def test_lifting_it_from_a_role_that_requires_one_says_the_role_still_does(app, client, make, roles_required):
    user_id = make.user(roles=("wcoc",))
    email = _email(app, user_id)
    runner = app.test_cli_runner()
    done = runner.invoke(args=["users", "two-factor-require", email])
    assert done.exit_code == 0, done.output
    assert ("Their role (WCOC member) requires one as well; this stays if their role changes." in done.output)
    assert f"{email}\tWCOC member\trequired (role; set for them)\tnone\tMISSING" in runner.invoke(
        args=["users", "two-factor-report"]).output
    again = runner.invoke(args=["users", "two-factor-require", email])
    assert again.exit_code == 1
    assert f"A second factor is already required of {email}: nothing changed." in again.output
    lifted = runner.invoke(args=["users", "two-factor-require", email, "--off"])
    assert lifted.exit_code == 0, lifted.output
    assert (f"A second factor is no longer required of {email} individually. Their role (WCOC member) still requires "
            "one (TWO_FACTOR_REQUIRED_ROLES): lifting the requirement set for them does not lift their role's."
            ) in lifted.output
    assert f"{email}\tWCOC member\trequired (role)\tnone\tMISSING" in runner.invoke(
        args=["users", "two-factor-report"]).output
    # Still required by the role: the next sign-in enrols.
    assert login(client, email).headers["Location"].endswith("/login/second-factor/setup")
    nothing = runner.invoke(args=["users", "two-factor-require", email, "--off"])
    assert nothing.exit_code == 1
    assert (f"No second factor was required of {email} individually: nothing to lift. Their role (WCOC member) still "
            "requires one") in nothing.output


def test_an_unknown_email_is_quoted_and_fails(app):
    runner = app.test_cli_runner()
    for args in (["users", "two-factor-require", "nobody@example.org"],
                 ["users", "two-factor-require", "nobody@example.org", "--off"]):
        result = runner.invoke(args=args)
        assert result.exit_code == 1
        assert "There is no account with the email “nobody@example.org”." in result.output
    assert not _entries(app, "user.two_factor_required")


def test_the_secretariat_requires_and_lifts_it_on_the_user_page_and_the_audit_log_says_so(app, client, make,
                                                                                          login_as):
    user_id = make.user(roles=("bidder",), name="Mariya Muzychuk")
    email = _email(app, user_id)
    person = app.test_client()
    assert login(person, email).status_code == 302
    assert person.get("/account").status_code == 200
    login_as("admin")
    page = _text(client.get(f"/admin/users/{user_id}"))
    assert "Optional for this account's role." in page and "Require a second factor for this person" in page
    unchosen = client.post(f"/admin/users/{user_id}/two-factor/require", follow_redirects=True)
    assert (f"Nothing changed for {email}: use the button “Require a second factor for this person” or “No longer "
            "require it”.") in _text(unchosen)
    assert not _required_flag(app, user_id)
    done = _text(client.post(f"/admin/users/{user_id}/two-factor/require", data={"required": "on"},
                             follow_redirects=True))
    assert (f"A second factor is now required of {email}: a session they opened without one ends at its next "
            "request, and they set one up when they next sign in.") in done
    assert "Required of this person (set by the secretariat), though optional for their role." in done
    assert "No longer require it" in done and "Require a second factor for this person" not in done
    # Their session ends; their next sign-in enrols.
    assert person.get("/account").status_code == 302
    assert login(person, email).headers["Location"].endswith("/login/second-factor/setup")
    lifted = _text(client.post(f"/admin/users/{user_id}/two-factor/require", data={"required": "off"},
                               follow_redirects=True))
    assert f"A second factor is no longer required of {email} individually. It is optional for them again." in lifted
    assert "Optional for this account's role." in lifted
    audit = " ".join(re.sub(r"<[^>]+>", "", _text(client.get("/admin/audit/?action=user."))).split())
    assert "required a second factor of Mariya Muzychuk at every sign-in, whatever their role" in audit
    assert "lifted the second factor required of Mariya Muzychuk (a role that requires one still does)" in audit
    assert _entries(app, "user.two_factor_required")[-1].actor_label != email


def test_the_user_page_says_when_the_role_requires_it_anyway(app, client, make, login_as, roles_required):
    user_id = make.user(roles=("board",))
    email = _email(app, user_id)
    login_as("admin")
    page = _text(client.get(f"/admin/users/{user_id}"))
    assert "Required for this account's role." in page
    assert "Their role requires one anyway; this keeps it required if their role changes." in page
    done = _text(client.post(f"/admin/users/{user_id}/two-factor/require", data={"required": "on"},
                             follow_redirects=True))
    assert "Required for this account's role, and required of this person whatever their role." in done
    assert "Lifting this changes nothing while their role requires one anyway." in done
    lifted = _text(client.post(f"/admin/users/{user_id}/two-factor/require", data={"required": "off"},
                               follow_redirects=True))
    assert (f"A second factor is no longer required of {email} individually. Their role (Presidential Board "
            "member) still requires one") in lifted
    assert "Required for this account's role." in lifted
