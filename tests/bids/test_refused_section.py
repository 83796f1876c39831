"""Issue 14, item 11: a refused section shows, beside its fields, notes about what was typed (not the saved state
it replaces), and every link of the error summary leads to an element of the page."""

from __future__ import annotations

import re
from html import unescape

from tests.bids.web import fill_section, revision, start_bid
from tests.browser_form import page_ids


def _notes(html: str) -> list[str]:
    return [unescape(n) for n in re.findall(r'<p class="rule-note">(.*?)</p>', html)]


def _summary_targets(html: str) -> list[str]:
    summary = re.search(r'<div class="error-summary".*?</div>', html, re.S).group(0)
    return re.findall(r'<a href="#([^"]+)"', summary)


def test_a_refused_hotel_section_notes_what_was_typed_and_links_to_real_fields(client, app, practice, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    saved = fill_section(client, bid_id, "hotel", {"hotel_name": "Old Inn", "hotel_stars": "3"})
    assert saved.status_code == 302
    before = client.get(f"/bids/{bid_id}/edit/hotel").get_data(as_text=True)
    assert any("(you entered 3 stars)" in n for n in _notes(before))  # the saved state: 3 stars, too few

    response = client.post(f"/bids/{bid_id}/edit/hotel", data={
        "revision": revision(client, bid_id, "hotel"), "action": "save", "hotel_name": "Grand Hotel",
        "hotel_stars": "5", "room_rates-0-room_type": "single", "room_rates-0-eur_per_night": "12,50"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert not any("(you entered 3 stars)" in n for n in _notes(html)), _notes(html)  # 5 stars were typed
    assert "Judged on what you entered above, which is not saved yet." in html
    targets = _summary_targets(html)
    assert targets == ["room_rates-0-eur_per_night"]
    assert "Special room rates for visitors, meals included, line 1: Euros per night, meals included" in unescape(html)
    assert set(targets) <= page_ids(html)


def test_every_error_summary_link_of_every_section_leads_to_the_page(client, app, practice, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    bad = {
        "applicant": {"contact_email": "not an email"},
        "dates_venue": {"opening_date": "31/02/2015", "closing_date": "soon"},
        "money": {"prize_fund_eur": "200,000", "fide_contribution_eur": "-1"},
        "hotel": {"hotel_stars": "seven", "room_rates-0-room_type": "single", "room_rates-0-eur_per_night": "x",
                  **{f"room_rates-{i}-room_type": "double" for i in range(1, 22)}},
        "inspection": {"wcoc_inspectors_invited": "many"},
        "guarantee": {"guarantee_offered": "yes", "guarantee_amount_eur": "lots", "guarantee_valid_until": "never"},
        "signature": {"signed_on": "yesterday"},
    }
    for section, values in bad.items():
        response = client.post(f"/bids/{bid_id}/edit/{section}",
                               data={"revision": revision(client, bid_id, section), "action": "save", **values})
        html = response.get_data(as_text=True)
        assert response.status_code == 422, section
        targets = _summary_targets(html)
        assert targets, section
        missing = set(targets) - page_ids(html)
        assert not missing, (section, missing)
