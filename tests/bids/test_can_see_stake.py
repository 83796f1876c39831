"""A reviewer (WCOC or Board) who owns or entered a bid in a call opens no rival bid of that call, by URL or the API
(bids.services.can_see and bids_visible_to, the stake check); a stake in another call hides nothing of this one, and
a reviewer with no stake reads the same rival bid (so the refusals below are the stake's, not the page's)."""

from __future__ import annotations

import pytest

from accounts.models import User, UserRole
from bids.models import Bid
from core.db import db
from tests.conftest import login
from tests.scoring.factories_scoring import ScoringFactory


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


def _reviewer(app, make, role: str, email: str) -> int:
    """An account holding `role` beside a bidder's (made before the rule forbade it, or by hand in the database)."""
    user_id = make.user(email=email, roles=("bidder",), federation="FRA")
    with app.app_context():
        user = db.session.get(User, user_id)
        user.roles.append(UserRole(role=role))
        db.session.commit()
    return user_id


def _paths(bid_id: int) -> tuple[str, str]:
    return f"/bids/{bid_id}", f"/api/v1/bids/{bid_id}"


@pytest.mark.parametrize("role", ["wcoc", "board"])
@pytest.mark.parametrize("stake", ["owns", "entered"])
def test_a_reviewer_with_a_bid_in_the_call_opens_no_rival_bid_of_it(client, app, make, event, sf, role, stake):
    reviewer = _reviewer(app, make, role, "staked@example.org")
    rival = sf.bid(event, city="Lviv", host="UKR")
    if stake == "owns":
        own = sf.bid(event, city="Paris", host="FRA", owner_id=reviewer)
    else:  # keyed in on a federation's behalf: the federation owns it, the reviewer entered it
        own = sf.bid(event, city="Paris", host="FRA")
        with app.app_context():
            db.session.get(Bid, own).entered_by_id = reviewer
            db.session.commit()
    clean = make.user(email="clean@example.org", roles=(role,))
    if role == "wcoc":
        sf.declare(event, clean)
    sf.status(event, "scoring")

    other = app.test_client()
    login(other, "clean@example.org")
    assert [other.get(p).status_code for p in _paths(rival)] == [200, 200]

    login(client, "staked@example.org")
    assert [client.get(p).status_code for p in _paths(rival)] == [404, 404]
    listed = client.get("/api/v1/events/fwwcm-2015/bids")
    assert listed.status_code == 200
    ids = {b["id"] for b in listed.get_json()["bids"]}
    assert rival not in ids
    if stake == "owns":
        assert client.get(f"/bids/{own}").status_code == 200 and own in ids
    page = client.get("/bids/").get_data(as_text=True)
    assert f'href="/bids/{rival}"' not in page


def test_a_stake_in_another_call_hides_nothing_of_this_one(client, app, make, event, practice, sf):
    reviewer = _reviewer(app, make, "wcoc", "elsewhere@example.org")
    sf.bid(practice, city="Paris", host="FRA", owner_id=reviewer)
    rival = sf.bid(event, city="Lviv", host="UKR")
    sf.declare(event, reviewer)
    sf.status(event, "scoring")
    login(client, "elsewhere@example.org")
    assert [client.get(p).status_code for p in _paths(rival)] == [200, 200]
    assert f'href="/bids/{rival}"' in client.get("/bids/").get_data(as_text=True)


def test_a_bidder_opens_and_lists_only_their_own_bids(client, app, make, event, sf):
    own = sf.bid(event, city="Paris", host="FRA", owner_id=make.user(email="bidder-only@example.org",
                                                                     roles=("bidder",), federation="FRA"))
    rival = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    login(client, "bidder-only@example.org")
    assert [client.get(p).status_code for p in _paths(own)] == [200, 200]
    assert [client.get(p).status_code for p in _paths(rival)] == [404, 404]
    listed = client.get("/api/v1/events/fwwcm-2015/bids")
    assert [b["id"] for b in listed.get_json()["bids"]] == [own]
    page = client.get("/bids/").get_data(as_text=True)
    assert f'href="/bids/{own}"' in page and f'href="/bids/{rival}"' not in page


def test_a_bidder_with_no_bid_in_the_call_opens_none_of_it(client, app, make, event, sf):
    """Whose bid it is decides, not a stake: a federation that has not bid reads no bid of the call either."""
    make.user(email="no-bid-yet@example.org", roles=("bidder",), federation="FRA")
    rival = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    login(client, "no-bid-yet@example.org")
    assert [client.get(p).status_code for p in _paths(rival)] == [404, 404]
    assert client.get("/api/v1/events/fwwcm-2015/bids").get_json()["bids"] == []
