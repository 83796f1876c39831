"""Sessions that end when they say (issue 35, point 3): every signed-in browser is listed on the account page, each
other one can be signed out, or all but this one; logout, a new password and the secretariat end them too; a browser
whose session has ended lands on the login page told why. Two test clients with two User-Agents are two devices."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from accounts.models import User, UserSession
from accounts.rules import browser_summary
from core.db import db, utcnow
from evidence.audit import AuditEntry
from tests.conftest import DEMO_PASSWORD, login

LAPTOP = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chromium/120.0.0.0 Chrome/120.0.0.0 "
          "Safari/537.36")
PHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
         "Version/17.1 Mobile/15E148 Safari/604.1")
DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0"
NEW_PASSWORD = "a new and rather long passphrase"


def _text(response) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)).split()))


def _device(app, email: str, user_agent: str, address: str = "127.0.0.1"):
    client = app.test_client()
    client.environ_base.update({"HTTP_USER_AGENT": user_agent, "REMOTE_ADDR": address})
    assert login(client, email).status_code == 302
    return client


def _rows(app, user_id: int) -> list[UserSession]:
    with app.app_context():
        rows = db.session.scalars(select(UserSession).where(UserSession.user_id == user_id)
                                  .order_by(UserSession.id)).all()
        db.session.expunge_all()
        return list(rows)


def _refused_with(client, message: str) -> None:
    """The device's next page is the login page, saying `message`; the one after it is asked as a visitor."""
    response = client.get("/account")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login?next=/account")
    assert message in _text(client.get(response.headers["Location"]))
    assert client.get("/account").status_code == 302


def _audit(app, action: str, user_id: int) -> list[AuditEntry]:
    with app.app_context():
        entries = db.session.scalars(select(AuditEntry).where(AuditEntry.action == action,
                                                              AuditEntry.object_id == str(user_id))).all()
        db.session.expunge_all()
        return list(entries)


@pytest.fixture
def person(make) -> int:
    return make.user(email="traveller@example.org", roles=("wcoc",))


def test_both_devices_are_listed_and_one_signs_the_other_out(app, make, person):
    laptop = _device(app, "traveller@example.org", LAPTOP, "192.0.2.10")
    phone = _device(app, "traveller@example.org", PHONE, "198.51.100.7")
    page = _text(laptop.get("/account"))
    assert "Where you are signed in" in page
    assert "Chromium on Linux (this device) 192.0.2.10" in page
    assert "Safari on iOS 198.51.100.7" in page and "Sign out Safari on iOS (198.51.100.7)" in page
    assert "Sign out everywhere else" in page and "just now" in page
    assert "Safari on iOS (this device)" in _text(phone.get("/account"))
    laptop_row, phone_row = _rows(app, person)
    assert (laptop_row.browser, phone_row.browser) == ("Chromium on Linux", "Safari on iOS")

    response = laptop.post(f"/account/sessions/{phone_row.id}/end")
    assert response.status_code == 302 and response.headers["Location"] == "/account#sessions"
    page = _text(laptop.get("/account"))
    assert ("The session of Safari on iOS from 198.51.100.7 is signed out: its next request goes to the login page."
            in page)
    assert "Safari on iOS" not in _text(laptop.get("/account"))
    _refused_with(phone, "This session was signed out from another device; please log in again.")
    assert laptop.get("/account").status_code == 200

    ended = _rows(app, person)[1]
    assert ended.ended_reason == "signed out from another session" and ended.ended_at is not None
    [entry] = _audit(app, "user.session_ended", person)
    assert entry.actor_id == person and entry.data_dict == {"session": phone_row.id, "browser": "Safari on iOS",
                                                            "reason": "signed out from another session"}
    make.user(email="reader@example.org", roles=("admin",))
    secretariat = _device(app, "reader@example.org", DESKTOP)
    assert "signed out a session of" in _text(secretariat.get("/admin/audit/?action=user.session_ended"))
    assert "(Safari on iOS)" in _text(secretariat.get("/admin/audit/?action=user.session_ended"))


def test_sign_out_everywhere_else_keeps_this_session_only(app, person):
    laptop = _device(app, "traveller@example.org", LAPTOP)
    phone = _device(app, "traveller@example.org", PHONE)
    desktop = _device(app, "traveller@example.org", DESKTOP)
    response = laptop.post("/account/sessions/end-others", follow_redirects=True)
    assert "Signed out everywhere else: 2 other sessions ended; this one carries on." in _text(response)
    for device in (phone, desktop):
        _refused_with(device, "This session was signed out from another device; please log in again.")
    page = _text(laptop.get("/account"))
    assert "Chromium on Linux (this device)" in page and "Sign out everywhere else" not in page
    assert [r.ended_reason for r in _rows(app, person)] == ["", "signed out from another session",
                                                            "signed out from another session"]
    [entry] = _audit(app, "user.sessions_ended", person)
    assert entry.actor_id == person and entry.data_dict == {"reason": "signed out from another session"}
    # Asked again with no other session: nothing to end, nothing recorded.
    again = laptop.post("/account/sessions/end-others", follow_redirects=True)
    assert "You were signed in nowhere else: no other session to end." in _text(again)
    assert len(_audit(app, "user.sessions_ended", person)) == 1


def test_logout_ends_the_session_row(app, person):
    laptop = _device(app, "traveller@example.org", LAPTOP)
    phone = _device(app, "traveller@example.org", PHONE)
    assert laptop.post("/logout").status_code == 302
    assert [(r.ended_reason, r.ended_at is not None) for r in _rows(app, person)] == [("logout", True),
                                                                                     ("logout", True)]
    _refused_with(phone, "This session ended when you logged out on another device; please log in again.")


def test_a_new_password_ends_the_other_sessions_and_this_one_carries_on(app, person):
    laptop = _device(app, "traveller@example.org", LAPTOP)
    phone = _device(app, "traveller@example.org", PHONE)
    response = laptop.post("/account/password", data={"current_password": DEMO_PASSWORD,
                                                      "new_password": NEW_PASSWORD, "confirm": NEW_PASSWORD})
    assert response.status_code == 302
    _refused_with(phone, "This session ended because the account's password was changed; please log in again with "
                         "the new password.")
    page = _text(laptop.get("/account"))
    assert "Chromium on Linux (this device)" in page and "Safari on iOS" not in page
    rows = _rows(app, person)
    assert [(r.browser, r.ended_reason) for r in rows] == [("Chromium on Linux", "password changed"),
                                                           ("Safari on iOS", "password changed"),
                                                           ("Chromium on Linux", "")]


def test_the_secretariat_sees_the_count_and_ends_every_session(app, make, person):
    laptop = _device(app, "traveller@example.org", LAPTOP)
    phone = _device(app, "traveller@example.org", PHONE)
    admin = make.user(email="secretariat@example.org", roles=("admin",))
    secretariat = _device(app, "secretariat@example.org", DESKTOP)
    page = _text(secretariat.get(f"/admin/users/{person}"))
    assert f"{_name(app, person)} is signed in in 2 places." in page
    response = secretariat.post(f"/admin/users/{person}/sessions/end", follow_redirects=True)
    assert (f"Every session of traveller@example.org has ended (2 signed in): {_name(app, person)} must log in "
            "again.") in _text(response)
    assert f"{_name(app, person)} is signed in nowhere." in _text(response)
    for device in (laptop, phone):
        _refused_with(device, "This session was ended by the FIDE secretariat; please log in again.")
    [entry] = _audit(app, "user.sessions_ended", person)
    assert entry.actor_id == admin and entry.data_dict == {"reason": "ended by the secretariat"}
    assert "ended the sessions of" in _text(secretariat.get("/admin/audit/?action=user.sessions_ended"))
    # The person logs in again: a new session, listed alone.
    again = _device(app, "traveller@example.org", LAPTOP)
    assert _text(again.get("/account")).count("Chromium on Linux") == 1


def _name(app, user_id: int) -> str:
    with app.app_context():
        return db.session.get(User, user_id).name


def test_a_session_of_another_account_or_none_is_not_found(app, make, person):
    make.user(email="stranger@example.org", roles=("wcoc",))
    mine = _device(app, "traveller@example.org", LAPTOP)
    stranger = _device(app, "stranger@example.org", PHONE)
    theirs = _rows(app, person)[0]
    assert stranger.post(f"/account/sessions/{theirs.id}/end").status_code == 404
    assert stranger.post("/account/sessions/999999/end").status_code == 404
    assert _rows(app, person)[0].ended_at is None and mine.get("/account").status_code == 200
    # One's own current session is ended by logging out; one ended already says so.
    response = mine.post(f"/account/sessions/{theirs.id}/end", follow_redirects=True)
    assert "That is the session you are using: log out to end it." in _text(response)
    other = _device(app, "traveller@example.org", PHONE)
    other_row = _rows(app, person)[1]
    assert mine.post(f"/account/sessions/{other_row.id}/end").status_code == 302
    response = mine.post(f"/account/sessions/{other_row.id}/end", follow_redirects=True)
    assert "has ended already (signed out from another session)." in _text(response)
    assert other.get("/account").status_code == 302
    assert len(_audit(app, "user.session_ended", person)) == 1


def test_a_cookie_from_before_the_upgrade_is_refused_politely(app, person):
    """After the migration, a session begun before it names no row: the browser is sent to log in, told why."""
    old = _device(app, "traveller@example.org", LAPTOP)
    with old.session_transaction() as cookie:
        del cookie["sid"]  # what a cookie made before sessions were listed holds: the user, no session reference
        del cookie["sid_noted_at"]
    _refused_with(old, "Gambit now lists every place you are signed in, and this session began before it did: "
                       "please log in again.")
    assert _device(app, "traveller@example.org", LAPTOP).get("/account").status_code == 200


def test_last_activity_is_written_at_most_once_a_minute(app, person):
    laptop = _device(app, "traveller@example.org", LAPTOP)
    [row] = _rows(app, person)
    earlier = utcnow() - timedelta(minutes=30)

    def set_back(noted_minutes_ago: float) -> None:
        with app.app_context():
            db.session.get(UserSession, row.id).last_seen_at = earlier
            db.session.commit()
        with laptop.session_transaction() as cookie:
            cookie["sid_noted_at"] = (utcnow() - timedelta(minutes=noted_minutes_ago)).isoformat()

    set_back(0.5)  # noted half a minute ago: not written again
    assert laptop.get("/account").status_code == 200
    assert _rows(app, person)[0].last_seen_at == earlier
    set_back(2)
    assert "just now" in _text(laptop.get("/account"))
    assert _rows(app, person)[0].last_seen_at > earlier + timedelta(minutes=29)


@pytest.mark.parametrize("user_agent, summary", [
    (LAPTOP, "Chromium on Linux"), (PHONE, "Safari on iOS"), (DESKTOP, "Firefox on Windows"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
     "Safari/537.36 Edg/120.0.0.0", "Edge on Windows"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
     "Safari/537.36", "Chrome on macOS"),
    ("Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
     "Chrome on Android"),
    ("curl/8.5.0", "curl"), ("Mozilla/5.0 (X11; Linux x86_64)", "A browser on Linux"), ("", "An unknown browser"),
    ("Werkzeug/3.1", "An unknown browser"),
])
def test_a_user_agent_is_summarised_in_plain_words(user_agent, summary):
    assert browser_summary(user_agent) == summary


def test_a_login_over_a_login_in_the_same_browser_replaces_its_session(app, make, person):
    make.user(email="colleague@example.org", roles=("wcoc",))
    shared = _device(app, "traveller@example.org", LAPTOP)
    assert login(shared, "colleague@example.org").status_code == 302  # another person signs in on the same browser
    [mine] = _rows(app, person)
    assert mine.ended_reason == "signed in again in the same browser"
    assert "Where you are signed in" in _text(shared.get("/account"))
    assert "traveller@example.org" not in _text(shared.get("/account"))
