"""What the busiest pages load: the same SQL statements at 5 bids as at 50, and no ORM object of a relation the page
does not show (room rates, documents, versions of every bid; a ScorecardScore per score; a bid's versions and owner
on its own page). Counted, not timed."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from decimal import Decimal

import pytest
from flask import url_for
from sqlalchemy import event as sa_event
from sqlalchemy import inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapper

from accounts.models import User
from bids.models import Bid, BidVersion
from bids.queries import BidRow, bid_rows
from bids.services import bids_visible_to
from core.db import db, utcnow
from core.templating import id_url
from events.models import Event
from scoring.models import Scorecard, ScorecardScore
from tests.conftest import computed, login
from tests.scoring.factories_scoring import SCORING_DAY

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
        self.scored: set[tuple[int, int]] = set()  # (member, bid)

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
        self.sf.status(self.event, "scoring")
        with self.app.app_context():
            keys = [c.key for c in db.session.get(Event, self.event).regulation.criteria]
            for m in self.members:
                for i, bid in enumerate(self.bids):
                    if (m, bid) not in self.scored:
                        db.session.add(Scorecard(
                            bid_id=bid, member_id=m, status="submitted", version=1, revision=2,
                            created_at=SCORING_DAY, updated_at=SCORING_DAY, submitted_at=SCORING_DAY,
                            scores=[ScorecardScore(criterion=k, score=Decimal(1 + (i + m + j) % 5), comment="")
                                    for j, k in enumerate(keys)]))
            db.session.commit()
        for m in self.members:
            self.sf.declare(self.event, m)
        self.scored.update((m, bid) for m in self.members for bid in self.bids)

    def log_in_member(self, client) -> None:
        """Log the client in as the first WCOC member."""
        with self.app.app_context():
            email = db.session.get(User, self.members[0]).email
        assert login(client, email).status_code == 302

    def costs_at_5_and_50(self, client, url: str) -> tuple[dict, dict]:
        """What `url` costs with 5 scored bids, then with 50."""
        self.grow(5)
        self.score()
        small = cost(client, url)
        self.grow(50)
        self.score()
        return small, cost(client, url)


def cost(client, url: str) -> dict:
    client.get(url)  # the first view fills the caches (the ranking's arithmetic)
    with counting() as seen, computed(client.application):
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
    drafts = [sf.bid(event, city=f"Draft {i}", status="draft") for i in range(2)]
    call.grow(5)
    small_list, small_bid = cost(admin, "/bids/"), cost(admin, f"/bids/{call.bids[0]}")
    call.grow(50)
    large_list, large_bid = cost(admin, "/bids/"), cost(admin, f"/bids/{call.bids[0]}")
    assert large_list["statements"] == small_list["statements"]
    assert large_bid["statements"] == small_bid["statements"]
    # The list reads its columns as plain rows: no ORM object for a submitted bid (its compliance is a column), only
    # the drafts, judged now, are loaded whole; nothing of any bid's documents, versions or owner.
    assert large_list["objects"]["Bid"] == small_list["objects"]["Bid"] == len(drafts)
    assert not NOT_SHOWN & set(large_list["objects"])
    assert large_list["objects"] == small_list["objects"]
    # A bid's page loads that bid, whatever the number of bids.
    assert large_bid["objects"] == small_bid["objects"]


def _loaded_by(client, url: str) -> tuple[list, str]:
    """The ORM objects loaded while `url` is shown (after a first view that fills the caches), and the page."""
    client.get(url)
    loaded: list = []

    def keep(target, context):
        loaded.append(target)

    sa_event.listen(Mapper, "load", keep)
    try:
        with computed(client.application):
            page = client.get(url)
    finally:
        sa_event.remove(Mapper, "load", keep)
    assert page.status_code == 200, (url, page.status_code)
    return loaded, page.get_data(as_text=True)


def _add_version(app, bid_id: int, number: int) -> None:
    with app.app_context():
        first = db.session.scalars(select(BidVersion).where(BidVersion.bid_id == bid_id,
                                                            BidVersion.number == 1)).one()
        db.session.add(BidVersion(bid_id=bid_id, number=number, submitted_at=first.submitted_at,
                                  submitted_by_id=first.submitted_by_id,
                                  regulation_version_id=first.regulation_version_id, data=first.data,
                                  documents=first.documents, compliance=first.compliance, compliant=first.compliant,
                                  sha256=f"{number:x}" * 64))
        db.session.get(Bid, bid_id).version = number
        db.session.commit()


def test_a_bid_page_loads_the_bid_its_call_rates_and_documents_and_reads_its_versions_as_rows(app, sf, event, admin):
    bid_id = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Federation")
    url = f"/bids/{bid_id}"
    one_version = cost(admin, url)
    for number in (2, 3):
        _add_version(app, bid_id, number)
    three_versions = cost(admin, url)
    # The versions are one statement of plain rows, however many there are; no BidVersion object (each holds the
    # frozen JSON of the bid, its documents and its compliance report, none of which this page shows).
    assert three_versions["statements"] == one_version["statements"]
    assert three_versions["objects"] == one_version["objects"]
    loaded, text = _loaded_by(admin, url)
    kinds = Counter(type(o).__name__ for o in loaded)
    assert not (NOT_SHOWN - {"BidRoomRate", "BidDocument"}) & set(kinds), kinds
    assert kinds["Bid"] == 1 and kinds["Event"] == 1
    bid = next(o for o in loaded if isinstance(o, Bid))
    assert {"versions", "owner"} <= inspect(bid).unloaded
    assert {"event", "room_rates", "documents"}.isdisjoint(inspect(bid).unloaded)
    # The bid has an applicant's name, so its title does not need the owner: the only user loaded is the one
    # logged in, whose roles decide what the page offers.
    assert [o.email for o in loaded if isinstance(o, User)] == ["costs-admin@example.org"]
    for number in (1, 2, 3):
        assert f'<a href="/bids/{bid_id}/versions/{number}">Version {number}</a>' in text
    assert "<h1>Ukrainian Federation — Lviv, Ukraine</h1>" in text


def test_a_bid_without_an_applicant_name_is_titled_by_its_owner_loaded_for_that(app, sf, event, admin, make):
    owner = make.user(email="costs-owner@example.org", roles=("bidder",), organisation="Owner Federation")
    bid_id = sf.bid(event, city="Lviv", owner_id=owner)
    with app.app_context():
        db.session.get(Bid, bid_id).applicant_name = None
        db.session.commit()
    loaded, text = _loaded_by(admin, f"/bids/{bid_id}")
    assert sorted(o.email for o in loaded if isinstance(o, User)) == ["costs-admin@example.org",
                                                                     "costs-owner@example.org"]
    assert "<h1>Owner Federation — Lviv, Ukraine</h1>" in text


def test_the_list_judges_its_drafts_in_one_statement_however_many_there_are(app, sf, event, admin):
    call = Call(app, sf, event)
    call.grow(3)
    sf.bid(event, city="Draft 0", status="draft")
    one = cost(admin, "/bids/")
    for i in (1, 2, 3):
        sf.bid(event, city=f"Draft {i}", status="draft")
    four = cost(admin, "/bids/")
    assert four["statements"] == one["statements"]
    assert (one["objects"]["Bid"], four["objects"]["Bid"]) == (1, 4)
    assert not {"BidVersion", "ScorecardScore", "ScorecardVersion"} & set(four["objects"])


def test_the_ranking_costs_the_same_statements_at_5_and_50_bids_and_loads_no_score_object(app, sf, event, admin):
    call = Call(app, sf, event)
    small, large = call.costs_at_5_and_50(admin, f"/events/{SLUG}/scoring/ranking")
    assert large["statements"] == small["statements"]
    assert not NOT_SHOWN & set(large["objects"]), large["objects"]
    # What grows is what is shown: one Bid per bid. The scorecards are read as plain rows (scoring.queries.CardRow),
    # 150 of them here, 3,000 at 200 bids and 15 members: never one ORM object each.
    assert "Scorecard" not in large["objects"], large["objects"]
    grown = Counter(large["objects"])
    grown.subtract(small["objects"])
    assert +grown == Counter({"Bid": 45})


def test_a_scorecard_page_reads_its_bids_scores_in_one_statement_whatever_the_members(app, sf, event, client):
    """The member's own scorecard and the others' beside it: one query for that bid's scores, not one per
    scorecard, and no ORM object per score."""
    call = Call(app, sf, event)
    call.grow(3)
    call.score()
    url = f"/events/{SLUG}/scoring/bids/{call.bids[0]}"
    call.log_in_member(client)
    small = cost(client, url)
    call.members.extend(sf.member(federation="GER", name=f"Member {i}") for i in range(3, 9))
    call.score()  # the six new members score every bid: nine scorecards on the bid now
    large = cost(client, url)
    assert large["statements"] == small["statements"]
    assert not {"Scorecard", "ScorecardScore"} & set(large["objects"]), large["objects"]
    text = client.get(url).get_data(as_text=True)
    assert all(f"Member {i}" in text for i in range(1, 9))


def test_the_list_loads_only_its_drafts_whole_and_nothing_of_their_versions_or_owner(app, sf, event, admin):
    call = Call(app, sf, event)
    call.grow(3)
    draft = sf.bid(event, city="Drafted", status="draft")
    loaded: list = []

    def keep(target, context):
        loaded.append(target)

    sa_event.listen(Mapper, "load", keep)
    try:
        page = admin.get("/bids/")
    finally:
        sa_event.remove(Mapper, "load", keep)
    assert page.status_code == 200
    bids = [o for o in loaded if isinstance(o, Bid)]
    assert [b.id for b in bids] == [draft]
    # Judged with its room rates and documents (the rules read them), never its versions or owner.
    assert {"versions", "owner"} <= inspect(bids[0]).unloaded
    assert {"room_rates", "documents"}.isdisjoint(inspect(bids[0]).unloaded)
    text = page.get_data(as_text=True)
    for bid_id in [*call.bids, draft]:
        assert f'<td data-label="#"><a href="/bids/{bid_id}">{bid_id}</a></td>' in text


def test_a_list_row_is_the_text_the_page_shows(app, sf, event, admin):
    submitted = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Federation")
    failed = sf.bid(event, city="Baku", host="AZE", compliant=False)
    draft = sf.bid(event, city="Drafted", status="draft")
    with app.test_request_context():
        admin_user = db.session.scalars(select(User).where(User.email == "costs-admin@example.org")).one()
        events = {e.id: e for e in db.session.scalars(select(Event))}
        rows = {r.id: r for r in bid_rows(bids_visible_to(admin_user), events, today=utcnow().date(),
                                          url=id_url("bids.view", "bid_id"))}
        assert all(isinstance(r, BidRow) for r in rows.values())
        row = rows[submitted]
        assert row.url == url_for("bids.view", bid_id=submitted)
        assert (row.applicant, row.place, row.status) == ("Ukrainian Federation", "Lviv (Ukraine)", "Submitted (v1)")
        assert (row.call, row.practice) == (events[event].regulation.event.short_title, False)
        assert (row.complies, row.open_findings) == (True, None)
        assert (rows[failed].complies, rows[failed].open_findings) == (False, None)
        assert rows[draft].open_findings is not None and rows[draft].status.startswith("Draft")


def test_the_compliance_column_follows_the_version_submitted_last(app, sf, event):
    compliant = sf.bid(event, city="Lviv", host="UKR")
    failed = sf.bid(event, city="Baku", host="AZE", compliant=False)
    with app.app_context():
        rows = dict(db.session.execute(select(Bid.id, Bid.submitted_compliant)
                                       .where(Bid.id.in_([compliant, failed]))).all())
    assert rows == {compliant: True, failed: False}


def test_a_members_scorecards_page_costs_the_same_statements_at_5_and_50_bids(app, sf, event, client):
    """The member's own list of bids to score reads the same rows as the ranking (a bid's columns not among
    scoring.queries.REVIEW_COLUMNS would be read one bid at a time): the same statements at 5 bids as at 50."""
    call = Call(app, sf, event)
    call.log_in_member(client)  # a member: the page is theirs; logging in needs no bid
    small, large = call.costs_at_5_and_50(client, f"/events/{SLUG}/scoring/")
    assert large["statements"] == small["statements"]
    assert not NOT_SHOWN & set(large["objects"]), large["objects"]
    assert "Scorecard" not in large["objects"]
