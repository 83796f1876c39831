"""Issue 35: a forgotten password, in a real browser: "Forgot your password?" on the sign-in page, the emailed
link, the new password twice, and a sign-in with it (the old one refused)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

OLD = "the old forgotten passphrase"
NEW = "a brand new passphrase 35"
EMAIL = "forgetful@e2e.example.org"
TIMEOUT_MS = 20_000


def test_a_forgotten_password_is_set_from_the_emailed_link(browser, live_server, mailbox):
    from accounts.services import create_user
    from core.auth import Role
    from core.db import db, utcnow

    with live_server.app.app_context():
        create_user(email=EMAIL, password=OLD, name="Fay Forgetful", roles=[Role.WCOC], actor=None, now=utcnow())
        db.session.commit()
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto("/login")
        page.get_by_role("link", name="Forgot your password?").click()
        expect(page.locator("main h1")).to_have_text("Forgot your password?")
        page.get_by_label("Email").fill(EMAIL)
        page.get_by_role("button", name="Email me a link").click()
        expect(page.locator(".flashes")).to_contain_text(
            f"If {EMAIL} is the address of an active account, we have emailed it a link to set a new password.")

        message = mailbox.wait_for(to=EMAIL)[0]
        assert message["Subject"] == "Set a new password for your Gambit account"
        link = re.search(r"(http://\S+/password/reset/\S+)", message.get_content())
        assert link, message.get_content()
        page.goto(link.group(1))
        expect(page.locator("main h1")).to_have_text("Set a new password")
        page.fill("#new_password", NEW)
        page.get_by_label("Repeat the new password").fill(NEW)
        page.get_by_role("button", name="Set the new password").click()
        expect(page.locator(".flashes")).to_contain_text("Your new password is set. Log in with it")

        page.fill("#email", EMAIL)
        page.fill("#password", OLD)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator("main")).to_contain_text("That email and password do not match an active account.")
        page.fill("#email", EMAIL)
        page.fill("#password", NEW)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator(".flashes")).to_contain_text(f"Logged in as {EMAIL}.")
    finally:
        context.close()
