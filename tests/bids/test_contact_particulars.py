"""Issue 23: the contact person and e-mail are not of Art. 15.1 (who may bid); issue 36: nor of Art. 15.2, whose
particulars a-k name no contact person: they are the call's bidding procedure. The format of an e-mail address is
Gambit's sanity check (a warning), never an article."""

import re

import pytest

from bids.models import Bid
from core.db import db
from events.models import Event
from tests.bids.web import fill_bid, start_bid


@pytest.fixture
def good(app, practice):
    from core.db import utcnow
    from tests.bids.factories import valid_bid
    with app.app_context():
        return valid_bid(db.session.get(Event, practice).regulation, signed_on=utcnow().date())


def _set(app, bid_id, **values):
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        for k, v in values.items():
            setattr(bid, k, v)
        db.session.commit()


def _rows(page: str) -> set[tuple[str, str]]:
    """(source, requirement) of each row of the compliance table that does not pass (fails or warns)."""
    return {(cite, message) for outcome, cite, message in re.findall(
        r"<tr class=\"outcome-row-([^\"]*)\">\s*<td[^>]*>([^<]*)</td>\s*<td[^>]*>([^<]*)</td>", page)
        if outcome != "pass"}


def test_a_missing_contact_cites_the_bidding_procedure_not_an_article(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good, only=("applicant",))
    _set(app, bid_id, contact_name=" ", contact_email=None)
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    rows = _rows(page)
    assert ("Bidding procedure: contact person", "the bid must name a contact person.") in rows
    assert ("Bidding procedure: contact person", "the bid must give the contact person&#39;s e-mail address.") in rows
    assert not {r for r in rows if r[0].startswith("Art. 15.2") and "contact" in r[1]}
    assert not {r for r in rows if r[0] == "Art. 15.1" and "contact" in r[1]}


def test_a_malformed_email_is_a_sanity_check_warning_not_an_article(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good, only=("applicant",))
    _set(app, bid_id, contact_email="secretary.example.org")
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    rows = _rows(page)
    assert ("Sanity check: e-mail address format", "the contact person&#39;s e-mail address does not read like "
            "name@example.org: please check it (a warning, not a requirement of the regulations).") in rows
    assert not {r for r in rows if r[0].startswith("Art.") and "e-mail" in r[1]}
