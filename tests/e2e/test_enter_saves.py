"""Issue 14, item 4: Enter in a field of "Official hotel" saves the section (it used to click "Add another room
rate", the form's first submit button, and nothing was saved)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.drafts import EMAIL, draft_bid

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

PASSWORD = "a hotel in Tbilisi, 2015"


def test_enter_in_a_hotel_field_saves_the_section(browser, live_server):
    from bids.models import Bid
    from core.db import db

    bid_id = draft_bid(live_server, password=PASSWORD)
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    try:
        page.goto("/login")
        page.fill("#email", EMAIL)
        page.fill("#password", PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.goto(f"/bids/{bid_id}/edit/hotel")
        page.fill("#hotel_name", "Radisson Blu Iveria")
        page.fill("#hotel_stars", "5")
        page.fill("#room_rates-0-room_type", "single")
        page.fill("#room_rates-0-eur_per_night", "110.00")
        page.press("#room_rates-0-eur_per_night", "Enter")
        expect(page.locator(".flashes")).to_contain_text("saved")
        # One row of rates, as typed: Enter did not add an empty row.
        expect(page.locator(".rate-row")).to_have_count(1)
    finally:
        context.close()
    with live_server.app.app_context():
        bid = db.session.get(Bid, bid_id)
        assert bid.hotel_name == "Radisson Blu Iveria" and bid.hotel_stars == 5
        db.session.remove()
