"""The admin's role editor (issue 14, items 1 and 2): the boxes show the roles the account holds, saving what the
browser sends keeps the roles not touched, a refused combination is said and nothing changes, and the header
keeps showing the logged-in admin, not the account being edited."""

from __future__ import annotations

import re

from accounts.models import User
from core.db import db
from tests.browser_form import form_data
from tests.conftest import login


def _ticked(html: str) -> set[str]:
    return set(form_data(html).get("roles", []))


def test_the_role_editor_ticks_the_roles_the_account_holds(client, app, login_as, make):
    admin = login_as("admin")
    member = make.user(email="wcoc-board@example.org", roles=("wcoc", "board"))
    assert _ticked(client.get(f"/admin/users/{admin}").get_data(as_text=True)) == {"admin"}
    assert _ticked(client.get(f"/admin/users/{member}").get_data(as_text=True)) == {"wcoc", "board"}


def test_ticking_one_more_role_keeps_the_roles_already_held(client, app, login_as, make):
    login_as("admin")
    member = make.user(email="member@example.org", roles=("wcoc",))
    data = form_data(client.get(f"/admin/users/{member}").get_data(as_text=True))
    data["roles"] = [*data["roles"], "board"]
    response = client.post(f"/admin/users/{member}", data=data)
    assert response.status_code == 302
    with app.app_context():
        assert db.session.get(User, member).role_set == {"wcoc", "board"}


def test_a_refused_combination_is_said_the_ticks_are_kept_and_nothing_changes(client, app, login_as, make):
    login_as("admin")
    bidder = make.user(email="ukr@example.org", roles=("bidder",), federation="UKR")
    data = form_data(client.get(f"/admin/users/{bidder}").get_data(as_text=True))
    assert data["roles"] == ["bidder"]
    data["roles"] = [*data["roles"], "wcoc"]
    response = client.post(f"/admin/users/{bidder}", data=data)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "An account cannot be both a bidder and a reviewer (WCOC member)" in html
    assert _ticked(html) == {"bidder", "wcoc"}
    with app.app_context():
        assert db.session.get(User, bidder).role_set == {"bidder"}


def _header(html: str) -> str:
    return re.search(r'<header class="site">(.*?)</header>', html, re.S).group(1)


def test_the_header_shows_the_logged_in_admin_on_the_account_pages(client, app, make):
    make.user(email="admin@example.org", name="Ada Admin", roles=("admin",))
    bidder = make.user(email="ukr@example.org", name="Olena Bidder", roles=("bidder",), federation="UKR")
    login(client, "admin@example.org")
    for url in ("/admin/users/new", f"/admin/users/{bidder}", "/admin/users"):
        header = _header(client.get(url).get_data(as_text=True))
        assert "Ada Admin" in header and "Olena Bidder" not in header, url
        assert "Log out" in header and "Register to bid" not in header, url
        assert "Users" in header, url


def test_a_too_short_password_is_said_together_with_a_mismatch(client, app):
    """Issue 14, item 15: the length was said only once the repeated password matched."""
    response = client.post("/register", data={
        "organisation": "Ukrainian Chess Federation", "applicant_type": "federation", "federation": "UKR",
        "name": "Olena", "email": "olena@example.org", "password": "short", "confirm": "shorter"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "Use at least 12 characters (this one has 5)." in html
    assert "The two passwords are not the same." in html
    assert 'value="olena@example.org"' in html  # nothing else typed is lost


def test_a_too_short_new_password_is_said_together_with_a_mismatch(client, app, login_as):
    from tests.conftest import DEMO_PASSWORD

    login_as("bidder")
    response = client.post("/account/password", data={"current_password": DEMO_PASSWORD, "new_password": "short",
                                                      "confirm": "other"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "Use at least 12 characters (this one has 5)." in html and "The two passwords are not the same." in html


def test_every_admin_page_shows_the_logged_in_admin_in_the_header(client, app, make, event, practice):
    """Item 2 everywhere: no page hands the header another `user` (the access matrix's admin pages that need no
    made-up rows)."""
    from tests.access_matrix import MATRIX

    make.user(email="admin@example.org", name="Ada Admin", roles=("admin",))
    other = make.user(email="olena@example.org", name="Olena Bidder", roles=("bidder",), federation="UKR")
    login(client, "admin@example.org")
    checked = 0
    for rows in MATRIX.values():
        for method, url, expected in rows:
            if method != "GET" or expected.get("admin") != 200 or re.search(r"\{(?!slug|practice|other_user)", url):
                continue
            response = client.get(url.format(slug="fwwcm-2015", practice="fwwcm-practice", other_user=other))
            if response.status_code != 200 or not response.mimetype == "text/html":
                response.close()
                continue
            header = _header(response.get_data(as_text=True))
            assert "Ada Admin" in header and "Olena Bidder" not in header, url
            checked += 1
    assert checked >= 10
