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


DEADLINE_PASSED = ("The bid deadline (31 May 2015, 23:59 UTC; Bidding procedure: bid deadline) has passed: a bid can "
                   "no longer be")
LATE_HINT = " The secretariat can admit a late bid, with its reason, until scoring opens."
DONE = {"submit": "submitted", "withdraw": "withdrawn", "reopen": "reopened"}


def _bid_in_the_2015_call(app, event, owner_id: int, status: str) -> int:
    """An online bid in the 2015 call (its deadline long passed), started a month before the deadline; a bid to
    withdraw or reopen is set submitted as it would have been then."""
    with app.app_context():
        owner = db.session.get(User, owner_id)
        call = db.session.get(Event, event)
        then = call.regulation.event.bid_deadline - timedelta(days=30)
        bid = services.create_bid(call, owner=owner, actor=owner, now=then)
        if status != "draft":
            db.session.execute(update(Bid).where(Bid.id == bid.id).values(
                status=status, version=1, submitted_at=then, first_submitted_at=then))
        db.session.commit()
        return bid.id


@pytest.mark.parametrize(("action", "status"), [("submit", "draft"), ("withdraw", "submitted"),
                                                ("reopen", "submitted")])
def test_after_the_deadline_the_service_refuses_the_bidders_move(app, make, event, action, status):
    """Break `events.rules.bid_deadline_passed` and this fails: the service refuses, with the deadline's sentence;
    at the deadline's instant the guard lets the move through (a submission then meets the bid's own rules)."""
    owner_id = make.user(email="b@example.org", roles=("bidder",))
    bid_id = _bid_in_the_2015_call(app, event, owner_id, status)
    move = {"submit": services.submit_bid, "withdraw": services.withdraw_bid, "reopen": services.reopen_bid}[action]
    with app.app_context():
        bid, owner = db.session.get(Bid, bid_id), db.session.get(User, owner_id)
        deadline = bid.event.regulation.event.bid_deadline
        with pytest.raises(services.BidError) as exc:
            move(bid, actor=owner, now=deadline + timedelta(seconds=1))
        assert str(exc.value) == f"{DEADLINE_PASSED} {DONE[action]}.{LATE_HINT if action == 'submit' else ''}"
        assert bid.status == status
        if action == "submit":
            with pytest.raises(services.BidError, match="^The bid cannot be submitted yet"):
                move(bid, actor=owner, now=deadline)
        else:
            move(bid, actor=owner, now=deadline)
            assert bid.status == {"withdraw": "withdrawn", "reopen": "draft"}[action]
        db.session.rollback()


@pytest.mark.parametrize(("action", "status"), [("submit", "draft"), ("withdraw", "submitted"),
                                                ("reopen", "submitted")])
def test_after_the_deadline_the_page_offers_no_move_and_the_route_refuses_it(client, app, login_as, event, action,
                                                                            status):
    """The bidder's page of a bid in the 2015 call says the deadline has passed and offers no move; a post made
    anyway is refused with the deadline's sentence and changes nothing."""
    bid_id = _bid_in_the_2015_call(app, event, login_as("bidder"), status)
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "31 May 2015, 23:59 UTC (passed)" in page
    assert f'action="/bids/{bid_id}/{action}"' not in page
    html = client.post(f"/bids/{bid_id}/{action}", follow_redirects=True).get_data(as_text=True)
    assert f"{DEADLINE_PASSED} {DONE[action]}.{LATE_HINT if action == 'submit' else ''}" in html
    assert _bid(app, bid_id).status == status


def test_before_the_deadline_the_bids_page_does_not_say_it_passed(client, app, login_as, practice):
    login_as("bidder")
    bid_id = start_bid(client)
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "UTC (passed)" not in page and f'action="/bids/{bid_id}/submit"' in page


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


def test_a_paper_bid_form_with_an_error_answers_422_and_says_what_was_wrong(client, app, login_as, practice):
    """Issue 36: every form sent with an error answers 422, as sign-in and registration do; the paper-bid form
    answered 200."""
    login_as("admin")
    response = client.post("/admin/events/fwwcm-practice/paper-bid", data={"owner": "123456"})
    assert response.status_code == 422
    assert "Not a valid choice." in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Bid)).all() == []
