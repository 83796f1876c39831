"""Issue 35, point 2, in Debian's Chromium: a role that requires a second factor enrols at its first sign-in and then
signs in with it, on a phone's width with axe clean (an authenticator app, its codes computed by pyotp), and with a
passkey held by Chromium's virtual authenticator (DevTools' WebAuthn domain, through a CDP session)."""

from __future__ import annotations

import re
from datetime import timedelta

import pyotp
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import serving
from tests.e2e.test_accessibility import AXE_JS, FAILING_IMPACTS, WIDTHS, document_overflow, live_config, run_axe

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

PASSWORD = "a second factor passphrase"
TIMEOUT_MS = 20_000


@pytest.fixture
def required_site(tmp_path):
    """Gambit where the secretariat and the WCOC must sign in with a second factor, with one of each."""
    from accounts.services import create_user
    from core.auth import Role
    from core.db import db, utcnow

    with serving(live_config(tmp_path, OUTBOX_DISPATCH="manual", TWO_FACTOR_REQUIRED_ROLES="admin,wcoc")) as live:
        with live.app.app_context():
            for email, role in (("secretariat@e2e.example.org", Role.ADMIN), ("wcoc@e2e.example.org", Role.WCOC)):
                create_user(email=email, password=PASSWORD, name=email.split("@")[0].title(), roles=[role],
                            actor=None, now=utcnow())
            db.session.commit()
            db.session.remove()
        yield live


def _clean(page, what: str) -> None:
    """axe finds nothing critical, serious or moderate, and the page is no wider than the phone."""
    bad = [f"{v['impact']} {v['id']} ({v['help']}) at {'; '.join(v['targets'][:3])}" for v in run_axe(page)
           if v["impact"] in FAILING_IMPACTS]
    assert not bad, f"{what}: {bad}"
    over, culprits = document_overflow(page)
    assert over <= 0, f"{what}: {over}px wider than the phone ({culprits})"


def _password_step(page, email: str) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_totp_enrolment_at_first_sign_in_and_sign_in_with_it_on_a_phone(browser, required_site):
    from core.db import utcnow

    email = "secretariat@e2e.example.org"
    context = browser.new_context(base_url=required_site.url, viewport=WIDTHS["phone"], bypass_csp=True,
                                  is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(path=str(AXE_JS))
    page = context.new_page()
    try:
        _password_step(page, email)
        page.wait_for_url(re.compile(r"/login/second-factor/setup$"))
        expect(page.locator("main h1")).to_have_text("Set up a second factor")
        expect(page.locator("main svg")).to_be_visible()  # the QR code
        _clean(page, "forced enrolment")
        secret = page.locator("#totp-secret").inner_text().strip()
        page.get_by_label("Code from the app").fill("12345")
        page.get_by_role("button", name="Set up the app").click()
        expect(page.locator("main")).to_contain_text("That is not the code your authenticator app shows")
        _clean(page, "forced enrolment, wrong code")
        page.get_by_label("Code from the app").fill(pyotp.TOTP(secret).now())
        page.get_by_role("button", name="Set up the app").click()
        expect(page.locator("main h1")).to_have_text("Your recovery codes")
        expect(page.locator(".recovery-codes li")).to_have_count(10)
        _clean(page, "recovery codes")
        page.get_by_role("link", name="I have kept them: continue").click()
        page.goto("/account")
        expect(page.locator("main")).to_contain_text("An authenticator app is set up.")
        page.get_by_role("button", name="Log out").click()

        _password_step(page, email)
        page.wait_for_url(re.compile(r"/login/second-factor$"))
        _clean(page, "second step")
        page.get_by_role("textbox", name="Code").fill(pyotp.TOTP(secret).at(utcnow() + timedelta(seconds=30)))
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(".flashes")).to_contain_text(f"Logged in as {email}.")
    finally:
        context.close()


def test_passkey_enrolment_and_sign_in_with_a_virtual_authenticator(browser, required_site):
    from accounts.models import Passkey
    from core.db import db
    from evidence.audit import AuditEntry

    email = "wcoc@e2e.example.org"
    # WebAuthn wants a domain, not an address, as the relying party: the same server, named localhost.
    base = required_site.url.replace("127.0.0.1", "localhost")
    context = browser.new_context(base_url=base, viewport=WIDTHS["phone"], bypass_csp=True)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(path=str(AXE_JS))
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    try:
        _password_step(page, email)
        page.wait_for_url(re.compile(r"/login/second-factor/setup$"))
        page.get_by_label("Name of the passkey").fill("Virtual key")
        _clean(page, "forced enrolment, passkey shown")
        page.get_by_role("button", name="Register a passkey").click()
        expect(page.locator(".flashes")).to_contain_text("Your passkey is registered and you are signed in.")
        with required_site.app.app_context():
            keys = db.session.scalars(db.select(Passkey.name)).all()
        assert keys == ["Virtual key"]
        page.get_by_role("button", name="Log out").click()

        _password_step(page, email)
        page.wait_for_url(re.compile(r"/login/second-factor$"))
        _clean(page, "second step with a passkey")
        page.get_by_role("button", name="Use my passkey").click()
        expect(page.locator(".flashes")).to_contain_text(f"Logged in as {email}.")
        page.goto("/account")
        expect(page.locator("main")).to_contain_text("Virtual key")
        with required_site.app.app_context():
            logins = [e.data for e in db.session.scalars(db.select(AuditEntry).where(
                AuditEntry.action == "user.login").order_by(AuditEntry.id))]
        assert [("passkey" in (d or "")) for d in logins] == [True, True]
    finally:
        context.close()
