"""The bid lifecycle's guard through the routes, the services and the CLI: every path meets the same deadline and
the same call states (the reproductions of issue 11)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from accounts.models import User
from bids import services
from bids.models import Bid, BidVersion
from bids.shape import bid_to_json
from core.db import db, utcnow
from events.models import Event
from tests.bids.factories import valid_bid
from tests.bids.web import fill_bid, start_bid, upload


def _set_call(app, slug: str, status: str) -> None:
    with app.app_context():
        db.session.execute(update(Event).where(Event.slug == slug).values(status=status))
        db.session.commit()


def _bid(app, bid_id: int) -> Bid:
    with app.app_context():
        return db.session.get(Bid, bid_id)


@pytest.fixture
def preg(app, practice):
    with app.app_context():
        return db.session.get(Event, practice).regulation


def _paper_bid(client, slug: str, owner_id: int | None = None):
    return client.post(f"/admin/events/{slug}/paper-bid", data={"owner": str(owner_id or "")})


def test_no_paper_bid_is_keyed_into_a_decided_call(client, app, login_as, event):
    _set_call(app, "fwwcm-2015", "decided")
    login_as("admin")
    response = _paper_bid(client, "fwwcm-2015")
    assert response.status_code == 422
    assert "The call is &#39;Decided&#39;: a draft can no longer be started." in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Bid)).all() == []


@pytest.mark.parametrize("later", ["scoring", "deliberation", "decided"])
def test_a_paper_draft_cannot_enter_a_call_once_scoring_has_opened(client, app, make, login_as, practice, preg,
                                                                    later):
    bidder_id = make.user(email="ukr@example.org", roles=("bidder",), federation="UKR")
    login_as("admin", email="sec@example.org")
    bid_id = int(re.search(r"/bids/(\d+)/", _paper_bid(client, "fwwcm-practice", bidder_id).location).group(1))
    fill_bid(client, bid_id, valid_bid(preg, signed_on=utcnow().date()))
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    _set_call(app, "fwwcm-practice", later)
    # the bidder presses submit (the reproduction), then the secretariat tries
    bidder = app.test_client()
    from tests.conftest import login

    login(bidder, "ukr@example.org")
    html = bidder.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    assert "the secretariat submits it on your behalf" in html
    html = client.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    label = {"scoring": "Scoring by the WCOC", "deliberation": "Before the Presidential Board",
             "decided": "Decided"}[later]
    assert (f"The call is &#39;{label}&#39;: no bid can be submitted any more (nothing enters or leaves a call once "
            "scoring has opened).") in html
    assert _bid(app, bid_id).status == "draft"
    # and nobody can admit it late any more
    refused = client.post(f"/bids/{bid_id}/admit-late", data={"reason": "It arrived by post."})
    assert refused.status_code == 422
    assert "no bid can be admitted once scoring has opened" in refused.get_data(as_text=True)
    assert _bid(app, bid_id).late_admitted_at is None


def test_the_secretariat_submits_a_paper_bid_on_the_bidders_behalf(client, app, make, login_as, practice, preg):
    bidder_id = make.user(email="ukr@example.org", roles=("bidder",), federation="UKR")
    admin_id = login_as("admin", email="sec@example.org")
    bid_id = int(re.search(r"/bids/(\d+)/", _paper_bid(client, "fwwcm-practice", bidder_id).location).group(1))
    fill_bid(client, bid_id, valid_bid(preg, signed_on=utcnow().date()))
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    assert "Submit the bid on the bidder's behalf" in client.get(f"/bids/{bid_id}").get_data(as_text=True)
    client.post(f"/bids/{bid_id}/submit")
    bid = _bid(app, bid_id)
    assert bid.status == "submitted" and bid.owner_id == bidder_id and bid.entered_by_id == admin_id
    with app.app_context():
        assert db.session.scalars(select(BidVersion.submitted_by_id).where(BidVersion.bid_id == bid_id)).one() == (
            admin_id)


def test_a_bidder_cannot_reopen_a_submitted_bid_once_the_call_is_closed(client, app, login_as, practice, preg):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, valid_bid(preg, signed_on=utcnow().date()))
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    client.post(f"/bids/{bid_id}/submit")
    assert _bid(app, bid_id).status == "submitted"
    _set_call(app, "fwwcm-practice", "scoring")
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "Reopen as a new version" not in page and "Withdraw the bid" not in page
    assert ("The bid can no longer be changed: The call is &#39;Scoring by the WCOC&#39;: a submitted bid can no "
            "longer be reopened.") in page
    html = client.post(f"/bids/{bid_id}/reopen", follow_redirects=True).get_data(as_text=True)
    assert "The call is &#39;Scoring by the WCOC&#39;: a submitted bid can no longer be reopened." in html
    assert _bid(app, bid_id).status == "submitted"


def test_an_online_draft_cannot_be_saved_once_the_call_is_decided(client, app, login_as, practice, preg):
    login_as("bidder")
    bid_id = start_bid(client)
    _set_call(app, "fwwcm-practice", "decided")
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "The call is &#39;Decided&#39;: a draft can no longer be changed." in page
    saved = client.post(f"/bids/{bid_id}/edit/dates_venue", data={"venue_city": "Lviv", "revision": "1"},
                        follow_redirects=True).get_data(as_text=True)
    assert "The call is &#39;Decided&#39;: a draft can no longer be changed." in saved
    assert _bid(app, bid_id).venue_city is None


def test_the_deadline_is_the_guards_whatever_the_path(app, make, practice, preg):
    """Break the deadline check in bids.lifecycle and this fails: the service, not the page, refuses."""
    with app.app_context():
        owner = db.session.get(User, make.user(email="b@example.org", roles=("bidder",)))
        event = db.session.get(Event, practice)
        bid = services.create_bid(event, owner=owner, actor=owner, now=utcnow())
        services.apply_data(bid, valid_bid(preg, signed_on=utcnow().date()))
        db.session.flush()
        late = preg.event.bid_deadline + timedelta(seconds=1)
        with pytest.raises(services.BidError, match=r"has passed: a bid can no longer be submitted"):
            services.submit_bid(bid, actor=owner, now=late)
        assert bid.status == "draft"
        db.session.rollback()


def test_flask_bids_import_records_the_secretariat_as_who_keyed_it_in(runner, tmp_path, event, reg, make):
    admin_id = make.user(roles=("admin",), email="sec@example.org")
    owner_id = make.user(roles=("bidder",), email="ukr@example.org")
    path = tmp_path / "bid.json"
    path.write_text(json.dumps(bid_to_json(valid_bid(reg))))
    result = runner.invoke(args=["bids", "import", str(path), "--event", "fwwcm-2015", "--owner", "ukr@example.org"])
    assert result.exit_code == 0, result.output
    assert "keyed in by sec@example.org" in result.output
    with runner.app.app_context():
        bid = db.session.scalars(select(Bid)).one()
        assert bid.owner_id == owner_id and bid.entered_by_id == admin_id
    refused = runner.invoke(args=["bids", "import", str(path), "--event", "fwwcm-2015", "--by", "ukr@example.org"])
    assert refused.exit_code == 1
    assert "ukr@example.org is not a secretariat (admin) account" in refused.output
