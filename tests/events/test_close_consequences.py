"""Closing the call (and the other moves of its life) is confirmed with what it does in figures: the deadline and how
far away it is, how many submitted bids go on and how many drafts are locked out; afterwards a locked-out draft reads
as such on its bidder's list."""

import re
from html import unescape

from core.db import db, utcnow
from core.money import format_day
from events.models import Event
from tests.bids.web import start_bid
from tests.conftest import login


def confirm_of(page: str, action: str) -> str:
    form = re.search(rf'<form[^>]*data-confirm="([^"]*)"[^>]*>(?:(?!</form>).)*value="{action}"', page, re.S)
    return unescape(form.group(1))


def test_closing_the_call_says_the_deadline_how_far_and_the_drafts_locked_out(app, client, practice, login_as, make):
    login_as("bidder", email="nino@example.org")
    start_bid(client)
    client.post("/logout")
    admin_email = "secretariat@example.org"
    make.user(roles=("admin",), email=admin_email)
    assert login(client, admin_email).status_code == 302
    with app.app_context():
        event = db.session.get(Event, practice)
        slug, deadline = event.slug, event.regulation.event.bid_deadline
    days = (deadline.date() - utcnow().date()).days
    page = client.get(f"/events/{slug}").get_data(as_text=True)
    assert confirm_of(page, "close") == (
        f"Close the call for bids? The deadline for bids is {format_day(deadline)} at {deadline.strftime('%H:%M')} "
        f"UTC, {days} days from today. Closing now ends the call before it. 0 submitted bids stay in the call; 1 "
        "draft not submitted will be locked out: their bidders can no longer submit them unless the call is re-opened.")
    assert client.post(f"/events/{slug}/status", data={"action": "close"}).status_code == 302
    page = client.get(f"/events/{slug}").get_data(as_text=True)
    assert confirm_of(page, "open_scoring").startswith(
        "Open scoring? 0 submitted bids stay in the call and go to the WCOC; 1 draft not submitted will be left out "
        "for good: once scoring opens, the call cannot be re-opened for bids.")
    client.post("/logout")
    assert login(client, "nino@example.org").status_code == 302
    mine = client.get("/bids/").get_data(as_text=True)
    assert '<td class="answer" data-label="Status">Draft — not submitted, the call is closed</td>' in mine


def test_submitting_reopening_and_withdrawing_a_bid_are_confirmed_with_the_deadline(app, client, practice, login_as):
    from bids.models import Bid
    from tests.bids.factories import valid_bid
    from tests.bids.web import fill_bid, upload

    login_as("bidder")
    bid_id = start_bid(client)
    with app.app_context():
        event = db.session.get(Event, practice)
        deadline, data = event.regulation.event.bid_deadline, valid_bid(event.regulation, signed_on=utcnow().date())
    fill_bid(client, bid_id, data)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    days = (deadline.date() - utcnow().date()).days
    until = f"{format_day(deadline)} at {deadline.strftime('%H:%M')} UTC ({days} days from today)"
    page = unescape(client.get(f"/bids/{bid_id}").get_data(as_text=True))
    assert (f'data-confirm="Submit this bid to FIDE? It becomes version 1, read-only. Until the deadline, {until}, you '
            'can still withdraw it or reopen it as a new version; after it, neither."') in page
    assert client.post(f"/bids/{bid_id}/submit").status_code == 302
    with app.app_context():
        assert db.session.get(Bid, bid_id).status == "submitted"
    page = unescape(client.get(f"/bids/{bid_id}").get_data(as_text=True))
    assert (f'data-confirm="Reopen the bid? Version 1 stays on record, but the bid stops being submitted: unless you '
            f'submit it again before the deadline, {until}, FIDE keeps no submitted bid from you."') in page
    assert (f'data-confirm="Withdraw the bid? This cannot be undone: version 1 stays on record but leaves the call for '
            f'good; it can never be submitted or reopened again, even before the deadline, {until}."') in page


def test_closing_at_the_deadline_itself_still_ends_the_call_before_it_and_a_moment_after_not(app, practice):
    """The note asks the one deadline rule (events.rules.bid_deadline_passed): a bid is on time up to and including
    the deadline's instant, so closing at that instant still cuts the call short; a microsecond later it does not."""
    from datetime import timedelta

    from events.views import action_notes

    with app.app_context():
        event = db.session.get(Event, practice)
        deadline = event.regulation.event.bid_deadline
        with app.test_request_context():
            at = action_notes(event, ["close"], deadline)["close"]
            after = action_notes(event, ["close"], deadline + timedelta(microseconds=1))["close"]
    assert "Closing now ends the call before it." in at
    assert "Closing now ends the call before it." not in after
