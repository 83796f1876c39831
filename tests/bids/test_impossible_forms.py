"""Issue 14, item 9: a page offers a form only for what can succeed. A draft in a decided call cannot be saved (the
bid lifecycle's guard says why, and the page says it instead of offering Save); the weights of a decided call are
shown, not offered for change."""

from __future__ import annotations

from html import unescape

import pytest

from bids.lifecycle import draft_refusal
from bids.services import situation
from core.db import db, utcnow
from events.models import Event
from tests.browser_form import read_form
from tests.conftest import login
from tests.scoring.factories_scoring import ScoringFactory


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


def test_a_draft_in_a_decided_call_is_shown_with_why_it_cannot_be_saved(client, app, event, sf, make):
    from accounts.models import User
    from bids.models import Bid

    owner = make.user(email="late@example.org", roles=("bidder",), federation="UKR")
    bid_id = sf.bid(event, status="draft", owner_id=owner)
    sf.status(event, "decided")
    login(client, "late@example.org")
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        why = draft_refusal(situation(bid, db.session.get(User, owner), utcnow()))
    assert why == "The call is 'Decided': a draft can no longer be changed."
    for section in ("money", "hotel", "signature"):
        page = unescape(client.get(f"/bids/{bid_id}/edit/{section}").get_data(as_text=True))
        assert f"{why} The bid is shown as saved." in page, section
        assert "Saving keeps a draft" not in page, section  # a draft that cannot be saved is not told it can
        form = read_form(page)
        assert not [b for b in form.buttons if b.get("type") == "submit"], section  # no Save, no add-rate, no upload
        assert "<fieldset disabled" in page
    # The guard still refuses a post made anyway.
    response = client.post(f"/bids/{bid_id}/edit/money", data={"revision": "2", "prize_fund_eur": "300000"})
    assert response.status_code == 302
    with app.app_context():
        assert db.session.get(Bid, bid_id).prize_fund_eur != 300000


def test_an_open_draft_is_still_offered_its_form(client, app, practice, sf, make):
    owner = make.user(email="open@example.org", roles=("bidder",), federation="UKR")
    bid_id = sf.bid(practice, status="draft", owner_id=owner)
    login(client, "open@example.org")
    page = client.get(f"/bids/{bid_id}/edit/hotel").get_data(as_text=True)
    names = [b.get("value") for b in read_form(page).buttons]
    assert names[0] == "save" and "add_rate" in names and "next" in names  # Save comes first: Enter saves
    assert "draft-refusal" not in page and "<fieldset disabled" not in page
    assert "Saving keeps a draft; the rules below are checked when you submit." in page


def test_the_weights_of_a_decided_call_are_shown_not_offered(client, app, event, login_as):
    login_as("admin")
    with app.app_context():
        db.session.get(Event, event).status = "decided"
        db.session.commit()
    page = client.get("/events/fwwcm-2015/scoring/weights").get_data(as_text=True)
    assert "The decision is recorded (Decided): the weights can no longer change." in page
    assert "Record new weights" not in page and 'name="weight_a"' not in page
    with app.app_context():
        db.session.get(Event, event).status = "scoring"
        db.session.commit()
    page = client.get("/events/fwwcm-2015/scoring/weights").get_data(as_text=True)
    assert "Record new weights" in page and "weights-final" not in page


def test_the_secretariat_editing_a_federations_draft_is_told_on_whose_behalf(client, app, practice, sf, make):
    """Issue 14, item 10: the admin's page is not identical to the bidder's."""
    owner = make.user(email="ukr@example.org", roles=("bidder",), federation="UKR",
                      organisation="Ukrainian Chess Federation")
    bid_id = sf.bid(practice, status="draft", owner_id=owner)
    make.user(email="sec@example.org", roles=("admin",))
    login(client, "sec@example.org")
    page = unescape(client.get(f"/bids/{bid_id}/edit/money").get_data(as_text=True))
    assert ("Editing on behalf of Ukrainian Chess Federation: this is their online draft; what you save here is "
            "what they see. Every change is recorded in the audit log under your name.") in page
    owner_client = app.test_client()
    login(owner_client, "ukr@example.org")
    assert "Editing on behalf of" not in owner_client.get(f"/bids/{bid_id}/edit/money").get_data(as_text=True)


def test_a_room_rate_line_can_be_removed(client, app, practice, sf, make):
    owner = make.user(email="rates@example.org", roles=("bidder",), federation="UKR")
    bid_id = sf.bid(practice, status="draft", owner_id=owner)
    login(client, "rates@example.org")
    page = client.get(f"/bids/{bid_id}/edit/hotel").get_data(as_text=True)
    form = read_form(page)
    data = {**dict(form.fields), "room_rates-0-room_type": "Single", "room_rates-0-eur_per_night": "90.00",
            "room_rates-1-room_type": "Double", "room_rates-1-eur_per_night": "120.00",
            "action": "remove_rate:0"}
    response = client.post(f"/bids/{bid_id}/edit/hotel", data=data)
    assert response.status_code == 200
    page = unescape(response.get_data(as_text=True))
    assert "The room rate line (Single) is removed below; save to keep the change." in page
    assert 'value="Double"' in page and 'value="Single"' not in page
    assert "Remove this room rate" in page
    data = {k: v for k, v in data.items() if not k.startswith("room_rates-0-")} | {"action": "save"}
    assert client.post(f"/bids/{bid_id}/edit/hotel", data=data).status_code == 302
    with app.app_context():
        from bids.models import Bid

        rates = db.session.get(Bid, bid_id).to_data().room_rates
    assert [r.room_type for r in rates] == ["Double"]
