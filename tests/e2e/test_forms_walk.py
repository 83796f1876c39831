"""A bidder's walk through the bid form in Chromium: what they type stays when they upload the signed letter in
the natural order (fields first, then the file), and the submitted version, the frozen record, fits the screen at
a desktop's and a phone's width with nothing cut off."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.drafts import EMAIL, draft_bid
from tests.e2e.test_accessibility import WIDTHS, document_overflow
from tests.pdfs import valid_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

PASSWORD = "a letter from Tbilisi, 2015"


def _login(browser, live):
    context = browser.new_context(base_url=live.url, viewport=WIDTHS["desktop"])
    page = context.new_page()
    page.goto("/login")
    page.fill("#email", EMAIL)
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    return context, page


# A refused file is an error like a refused field: its message stands in the page's error summary and beside its
# input (the page answers 422), and the flash says the fields typed beside it were saved.
@pytest.mark.parametrize(("filename", "content", "where", "outcome"), [
    ("signed-letter.pdf", valid_pdf(), ".flashes", "The signed bid letter attached: signed-letter.pdf"),
    ("signed-letter.docx", b"PK\x03\x04 a word document", "main",
     "The signed bid letter: signed-letter.docx is not a PDF"),
], ids=["accepted", "refused"])
def test_typing_the_signatory_then_uploading_the_letter_keeps_what_was_typed(browser, live_server, filename,
                                                                            content, where, outcome):
    bid_id = draft_bid(live_server, password=PASSWORD)
    context, page = _login(browser, live_server)
    try:
        page.goto(f"/bids/{bid_id}/edit/signature")
        page.fill("#signatory_name", "Gia Giorgadze")
        page.fill("#signatory_position", "President")
        page.fill("#signed_on", "2014-09-01")
        page.set_input_files("#file-signed_letter", files=[{"name": filename, "mimeType": "application/pdf",
                                                              "buffer": content}])
        page.get_by_role("button", name="Upload").click()
        expect(page.locator(where)).to_contain_text(outcome)
        if where == "main":
            expect(page.locator(".flashes")).to_contain_text(
                "What you typed in the fields is saved; the file below was not attached.")
        expect(page.locator("#signatory_name")).to_have_value("Gia Giorgadze")
        expect(page.locator("#signatory_position")).to_have_value("President")
        expect(page.locator("#signed_on")).to_have_value("2014-09-01")
        page.reload()  # kept because saved, not only shown again
        expect(page.locator("#signatory_name")).to_have_value("Gia Giorgadze")
    finally:
        context.close()


def test_a_file_above_the_limit_is_refused_before_it_is_sent_and_the_fields_stay(browser, live_server):
    bid_id = draft_bid(live_server, password=PASSWORD)
    context, page = _login(browser, live_server)
    try:
        page.goto(f"/bids/{bid_id}/edit/signature")
        page.fill("#signatory_name", "Gia Giorgadze")
        limit_mb = live_server.app.config["MAX_UPLOAD_MB"]
        page.set_input_files("#file-signed_letter", files=[{"name": "scan.pdf", "mimeType": "application/pdf",
                                                              "buffer": b"%PDF-1.7\n" + b"0" * (limit_mb << 20)}])
        expect(page.locator("#file-signed_letter-size")).to_have_text(
            f"scan.pdf is {limit_mb:.1f} MB, above the limit of {limit_mb} MB: choose a smaller file. Nothing was "
            "sent; what you typed stays on the page.")
        assert page.locator("#file-signed_letter").evaluate("el => el.files.length") == 0
        expect(page.locator("#signatory_name")).to_have_value("Gia Giorgadze")
    finally:
        context.close()


CLIPPED_JS = """() => [...document.querySelectorAll('main dl.facts dt, main dl.facts dd')]
    .filter((el) => el.scrollWidth > el.clientWidth + 1
            || el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map((el) => el.textContent.trim().slice(0, 40))"""


@pytest.fixture
def demo_live(tmp_path):
    """Gambit on the demo data (a decided 2015 call with submitted bids); seeded before Playwright starts, whose
    event loop would stop pyHanko signing the demo's contract."""
    from core.db import db, utcnow
    from demo.seed import seed_demo, seed_events
    from tests.e2e.conftest import live_config, serving
    from tests.e2e.test_accessibility import _facts

    with serving(live_config(tmp_path, OUTBOX_DISPATCH="manual")) as live:
        with live.app.app_context():
            now = utcnow()
            seed_events(now=now)
            seed_demo(now=now)
            db.session.commit()
            db.session.remove()
        yield live, _facts(live.app)


def test_the_submitted_version_fits_the_screen_with_no_value_cut(demo_live, browser):
    """As the federation, at 1280 and 390 px."""
    from demo.users import DEMO_PASSWORD
    from tests.e2e.test_accessibility import ROLES

    live, facts = demo_live
    if True:
        context = browser.new_context(base_url=live.url, viewport=WIDTHS["desktop"])
        page = context.new_page()
        try:
            page.goto("/login")
            page.get_by_label("Email").fill(ROLES["federation"])
            page.get_by_label("Password").fill(DEMO_PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url("**/")
            for width, viewport in WIDTHS.items():
                page.set_viewport_size(viewport)
                page.goto(f"/bids/{facts['federation_bid']}/versions/1")
                expect(page.locator("main h1")).to_contain_text("version 1")
                assert document_overflow(page) == [0, []], width
                assert page.evaluate(CLIPPED_JS) == [], width
                # The declaration's long label does not take the width: its value sits beside it (desktop) or
                # under it (phone), in full.
                label = page.locator("dl.facts dt", has_text="Olympic Committee")
                value = label.locator("xpath=following-sibling::dd[1]")
                assert value.bounding_box()["width"] >= 0.3 * page.locator("main").bounding_box()["width"], width
        finally:
            context.close()
