import pytest

from tests.scoring.factories_scoring import ScoringFactory


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


def complete(app, bid_id: int, **overrides) -> None:
    """Give a factory bid every column of a valid bid (the scoring factory sets only a few)."""
    from bids.models import Bid
    from bids.services import apply_data
    from core.db import db
    from tests.bids.factories import valid_bid

    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        apply_data(bid, valid_bid(bid.event.regulation, applicant_name=bid.applicant_name,
                                  host_federation=bid.host_federation, venue_city=bid.venue_city, **overrides))
        db.session.commit()


@pytest.fixture
def scored(app, event, sf):
    """The 2015 call with three scored bids (Lviv leads, Tbilisi second, Madrid last with a red flag), scoring
    closed. Returns a dict of ids."""
    return scored_call(app, event, sf)


def scored_call(app, event, sf) -> dict:
    """What `scored` makes, on any app (the two-thread tests bring their own)."""
    lviv = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Chess Federation")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO", name="Georgian Chess Federation")
    madrid = sf.bid(event, city="Madrid", host="ESP", name="Spanish Chess Federation")
    complete(app, lviv, venue_country="UA")
    complete(app, tbilisi, venue_country="GE")
    complete(app, madrid, venue_country="ES")
    sf.status(event, "scoring")
    members = [sf.member(name="Anna Aalto", federation="FIN"), sf.member(name="Bo Berg", federation="SWE"),
               sf.member(name="Carla Cruz", federation="UKR")]
    for m in members:
        sf.declare(event, m)
    for m in members:
        sf.score(lviv, m, "4", comments={k: f"Lviv ({k}) by member {m}" for k in "abcdefghij"}) \
            if m != members[2] else None
        sf.score(tbilisi, m, "3", comments={k: "" for k in "abcdefghij"})
        sf.score(madrid, m, {**dict.fromkeys("abcdefghij", "2.5"), "c": "1"},
                 comments={"c": "The hall is too small.", **{k: "" for k in "abdefghij"}})
    sf.status(event, "deliberation")
    return {"event": event, "lviv": lviv, "tbilisi": tbilisi, "madrid": madrid, "members": members}
