"""What the busiest pages load: the same SQL statements at 5 bids as at 50, and no ORM object of a relation the page
does not show (room rates, documents, versions of every bid; a ScorecardScore per score). Counted, not timed."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapper

from bids.models import Bid
from core.db import db
from tests.conftest import login

SLUG = "fwwcm-2015"
HOSTS = ("UKR", "ARM", "AZE", "BUL", "CRO", "POL", "ITA", "NED", "SWE", "NOR")
NOT_SHOWN = {"BidRoomRate", "BidDocument", "BidVersion", "ScorecardScore", "ScorecardVersion"}


@contextmanager
def counting():
    """Count the SQL statements run and the ORM objects loaded (by class) inside the block."""
    seen = {"statements": 0, "objects": Counter()}

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        seen["statements"] += 1

    def on_load(target, context):
        seen["objects"][type(target).__name__] += 1

    sa_event.listen(Engine, "before_cursor_execute", on_execute)
    sa_event.listen(Mapper, "load", on_load)
    try:
        yield seen
    finally:
        sa_event.remove(Engine, "before_cursor_execute", on_execute)
        sa_event.remove(Mapper, "load", on_load)


class Call:
    """The 2015 call in scoring with `n` submitted bids, each scored by three WCOC members."""

    def __init__(self, app, sf, event):
        self.app, self.sf, self.event = app, sf, event
        self.members = [sf.member(federation="GER", name=f"Member {i}") for i in range(3)]
        self.owner = sf.make.user(email="costs-bidder@example.org", roles=("bidder",))
        self.bids: list[int] = []
        self.scored: set[int] = set()

    def grow(self, n: int) -> None:
        while len(self.bids) < n:
            i = len(self.bids)
            bid = self.sf.bid(self.event, city=f"City {i}", host=HOSTS[i % len(HOSTS)], name=f"Federation {i}",
                              owner_id=self.owner)
            self.bids.append(bid)
            with self.app.app_context():
                db.session.get(Bid, bid).status = "submitted"
                db.session.commit()

    def score(self) -> None:
        """Every member declares no conflict and submits a scorecard on each new bid (rows written directly, as the
        services would leave them: the counts, not the scoring rules, are under test here)."""
        from decimal import Decimal

        from events.models import Event
        from scoring.models import Scorecard, ScorecardScore
        from tests.scoring.factories_scoring import SCORING_DAY

        self.sf.status(self.event, "scoring")
        with self.app.app_context():
            keys = [c.key for c in db.session.get(Event, self.event).regulation.criteria]
            for m in self.members:
                for i, bid in enumerate(self.bids):
                    if bid not in self.scored:
                        db.session.add(Scorecard(
                            bid_id=bid, member_id=m, status="submitted", version=1, revision=2,
                            created_at=SCORING_DAY, updated_at=SCORING_DAY, submitted_at=SCORING_DAY,
                            scores=[ScorecardScore(criterion=k, score=Decimal(1 + (i + m + j) % 5), comment="")
                                    for j, k in enumerate(keys)]))
            db.session.commit()
        for m in self.members:
            self.sf.declare(self.event, m)
        self.scored.update(self.bids)


def cost(client, url: str) -> dict:
    client.get(url)  # the first view fills the caches (the ranking's arithmetic)
    with counting() as seen:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return seen


@pytest.fixture
def admin(client, make):
    make.user(email="costs-admin@example.org", roles=("admin",))
    assert login(client, "costs-admin@example.org").status_code == 302
    return client


def test_the_bid_list_and_a_bid_cost_the_same_statements_at_5_and_50_bids(app, sf, event, admin):
    call = Call(app, sf, event)
    call.grow(5)
    small_list, small_bid = cost(admin, "/bids/"), cost(admin, f"/bids/{call.bids[0]}")
    call.grow(50)
    large_list, large_bid = cost(admin, "/bids/"), cost(admin, f"/bids/{call.bids[0]}")
    assert large_list["statements"] == small_list["statements"]
    assert large_bid["statements"] == small_bid["statements"]
    # The list shows the bid rows: one Bid object each, nothing of their room rates, documents, versions or owners.
    assert large_list["objects"]["Bid"] == 50
    assert not NOT_SHOWN & set(large_list["objects"])
    assert large_list["objects"]["User"] == small_list["objects"]["User"]  # the viewer, not the bids' owners
    assert sum(large_list["objects"].values()) - sum(small_list["objects"].values()) == 45
    # A bid's page loads that bid, whatever the number of bids.
    assert large_bid["objects"] == small_bid["objects"]


def test_the_ranking_costs_the_same_statements_at_5_and_50_bids_and_loads_no_score_object(app, sf, event, admin):
    call = Call(app, sf, event)
    call.grow(5)
    call.score()
    url = f"/events/{SLUG}/scoring/ranking"
    small = cost(admin, url)
    call.grow(50)
    call.score()
    large = cost(admin, url)
    assert large["statements"] == small["statements"]
    assert not NOT_SHOWN & set(large["objects"]), large["objects"]
    # What grows is what is shown: one Bid and one Scorecard per member and bid.
    grown = Counter(large["objects"])
    grown.subtract(small["objects"])
    assert +grown == Counter({"Bid": 45, "Scorecard": 45 * 3})


def test_unshown_relations_of_a_listed_bid_stay_unloaded(app, sf, event, admin):
    from sqlalchemy import inspect

    from bids import views

    call = Call(app, sf, event)
    call.grow(3)
    kept = []
    original = views.render_template

    def keep(template, **context):
        kept.extend(context.get("bids", []))
        return original(template, **context)

    views.render_template = keep
    try:
        assert admin.get("/bids/").status_code == 200
    finally:
        views.render_template = original
    assert len(kept) == 3
    for bid in kept:
        assert {"room_rates", "documents", "versions", "owner"} <= inspect(bid).unloaded


def test_the_compliance_column_follows_the_version_submitted_last(app, sf, event):
    compliant = sf.bid(event, city="Lviv", host="UKR")
    failed = sf.bid(event, city="Baku", host="AZE", compliant=False)
    with app.app_context():
        rows = dict(db.session.execute(select(Bid.id, Bid.submitted_compliant)
                                       .where(Bid.id.in_([compliant, failed]))).all())
    assert rows == {compliant: True, failed: False}
