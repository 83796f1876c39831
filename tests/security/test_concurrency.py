"""Issue 8: what happens twice at once happens once, and nothing is lost (database constraints, not only Python
checks). Each test has its own database (SQLite file, or a fresh PostgreSQL database in CI) and real commits
from two threads."""

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from core.db import db
from tests.conftest import run_twice, utcnow
from tests.pdfs import valid_pdf

pytestmark = pytest.mark.no_db


def _ready_bid(app):
    """A complete draft bid with its documents in an open call; returns its id."""
    from accounts.services import create_user
    from bids import services
    from demo.seed import practice_regulation
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.bids.factories import valid_bid

    with app.app_context():
        now = utcnow()
        event, _ = load_event(practice_regulation(load_regulation_file(default_event_file()), now=now), actor=None,
                              now=now)
        owner = create_user(email="owner@example.org", password="a long enough password", name="O",
                            roles=["bidder"], actor=None, now=now)
        bid = services.create_bid(event, owner=owner, actor=owner, now=now)
        services.apply_data(bid, valid_bid(event.regulation, signed_on=now.date()))
        for kind in ("signed_letter", "guarantee"):
            services.store_document(bid, kind, filename="x.pdf", content=valid_pdf(),
                                    upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**6, actor=owner, now=now)
        db.session.commit()
        return bid.id, owner.id


def test_a_bid_submitted_twice_at_once_is_submitted_once(live):
    from accounts.models import User
    from bids import services
    from bids.models import Bid, BidVersion

    bid_id, owner_id = _ready_bid(live)

    def submit(i):
        bid = db.session.get(Bid, bid_id)
        return services.submit_bid(bid, actor=db.session.get(User, owner_id), now=utcnow()).number

    results, errors = run_twice(live, submit)
    assert sorted(r for r in results if r is not None) == [1]
    loser = next(e for e in errors if e is not None)
    assert isinstance(loser, services.BidError) and "already submitted" in str(loser)
    with live.app_context():
        assert db.session.scalar(select(func.count()).select_from(BidVersion)) == 1
        assert db.session.get(Bid, bid_id).version == 1


def test_two_members_scoring_at_once_lose_nothing(live):
    from decimal import Decimal

    from accounts.models import User
    from accounts.services import create_user
    from bids.models import Bid
    from events.services import change_event_status
    from scoring.models import Scorecard
    from scoring.queries import bids_before_reviewers
    from scoring.services import declare_conflicts, save_scorecard

    bid_id, owner_id = _ready_bid(live)
    with live.app_context():
        from bids import services

        bid = db.session.get(Bid, bid_id)
        services.submit_bid(bid, actor=db.session.get(User, owner_id), now=utcnow())
        event = bid.event
        for action in ("close", "open_scoring"):
            change_event_status(event, action, actor=None, now=utcnow())
        members = [create_user(email=f"m{i}@example.org", password="a long enough password", name=f"M{i}",
                               roles=["wcoc"], federation="FRA", actor=None, now=utcnow()) for i in range(2)]
        for m in members:
            listed = bids_before_reviewers(event)
            declare_conflicts(event, m, has_conflict=False, conflicted=[], reason="", listed=listed, actor=m,
                              now=utcnow())
        member_ids = [m.id for m in members]
        keys = [c.key for c in event.regulation.criteria]
        db.session.commit()

    def score(i):
        member = db.session.get(User, member_ids[i])
        bid = db.session.get(Bid, bid_id)
        card = save_scorecard(bid, member, scores=dict.fromkeys(keys, Decimal(3 + i)),
                              comments=dict.fromkeys(keys, f"by member {i}"), revision=0, submit=True,
                              actor=member, now=utcnow() + timedelta(seconds=i))
        return card.id

    results, errors = run_twice(live, score)
    assert errors == [None, None], errors
    with live.app_context():
        cards = db.session.scalars(select(Scorecard).where(Scorecard.bid_id == bid_id)).all()
        assert sorted(c.member_id for c in cards) == sorted(member_ids)
        assert sorted(str(c.score_map()["a"]) for c in cards) == ["3.0", "4.0"]


# ---- issue 11: one decision in force; first votes and new contracts at once end in a clear refusal


def _deliberation(app):
    """The 2015 call with three scored bids and scoring closed, one board vote for the leader, the pack made."""
    from accounts.models import User
    from board import services
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.board.conftest import scored_call
    from tests.conftest import Factory
    from tests.scoring.factories_scoring import ScoringFactory

    with app.app_context():
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        db.session.commit()
        event_id = event.id
    make = Factory(app)
    scored = scored_call(app, event_id, ScoringFactory(app, make))
    admin_id = make.user(roles=("admin",), email="sec@example.org")
    scored["board"] = make.user(roles=("board",), federation="FRA", email="board@example.org")
    with app.app_context():
        from bids.models import Bid
        from events.models import Event

        event = db.session.get(Event, event_id)
        services.cast_vote(event, db.session.get(User, scored["board"]), db.session.get(Bid, scored["lviv"]),
                           now=utcnow())
        services.ensure_pack(event, actor=db.session.get(User, admin_id), now=utcnow(),
                             upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
    return scored, admin_id


def _decide(app, scored, admin_id, **kwargs):
    from accounts.models import User
    from bids.models import Bid
    from board import services
    from events.models import Event

    return services.record_decision(
        db.session.get(Event, scored["event"]), method="board_vote", selected=db.session.get(Bid, scored["lviv"]),
        rationale="", decided_on=utcnow().date(), consultations=[], actor=db.session.get(User, admin_id),
        now=utcnow(), **kwargs).id


def test_two_decisions_at_once_leave_exactly_one_in_force(live):
    from board.models import Decision
    from board.rules import DecisionError
    from board.services import ALREADY_DECIDED

    scored, admin_id = _deliberation(live)
    results, errors = run_twice(live, lambda i: _decide(live, scored, admin_id))
    assert len([r for r in results if r is not None]) == 1, errors
    loser = next(e for e in errors if e is not None)
    assert isinstance(loser, DecisionError) and str(loser) == ALREADY_DECIDED
    with live.app_context():
        first = db.session.scalars(select(Decision)).one()
        assert first.status == "in_force"
        first_id = first.id

    def correct(i):  # both correct the decision their page showed: the first one
        return _decide(live, scored, admin_id, corrects=db.session.get(Decision, first_id),
                       correction_reason=f"Correction {i}.")

    results, errors = run_twice(live, correct)
    assert len([r for r in results if r is not None]) == 1, errors
    loser = next(e for e in errors if e is not None)
    assert isinstance(loser, DecisionError) and (str(loser).startswith(
        "This decision was already corrected at ") or str(loser) in (
        f"Decision {first_id} was corrected at the same moment by someone else; nothing was recorded by this "
        "correction. Reload the page to see the decision in force.",)), loser
    with live.app_context():
        rows = db.session.scalars(select(Decision).order_by(Decision.id)).all()
        assert [d.status for d in rows] == ["superseded", "in_force"]


def test_two_first_votes_of_a_member_at_once_end_in_a_clear_refusal(live):
    from accounts.models import User
    from bids.models import Bid
    from board import services
    from board.models import Vote
    from board.rules import DecisionError
    from events.models import Event

    scored, _ = _deliberation(live)
    with live.app_context():
        member_id = db.session.get(User, scored["board"]).id
        db.session.execute(Vote.__table__.delete())
        db.session.commit()

    def cast(i):
        bid = db.session.get(Bid, scored["lviv" if i else "tbilisi"])
        return services.cast_vote(db.session.get(Event, scored["event"]), db.session.get(User, member_id), bid,
                                  now=utcnow()).id

    results, errors = run_twice(live, cast)
    winners = [r for r in results if r is not None]
    loser = next((e for e in errors if e is not None), None)
    # Either both ran one after the other (the second replaced the first), or the second was refused clearly.
    assert len(winners) == 2 or (isinstance(loser, DecisionError) and "at the same moment" in str(loser)), errors
    with live.app_context():
        assert db.session.scalar(select(func.count()).select_from(Vote)) == 1


def test_two_new_contracts_at_once_end_in_a_clear_refusal(live):
    from accounts.models import User
    from bids.models import Bid
    from contracts import services
    from contracts.models import Contract

    scored, admin_id = _deliberation(live)
    with live.app_context():
        _decide(live, scored, admin_id)
        db.session.commit()

    def create(i):
        return services.create_contract(db.session.get(Bid, scored["lviv"]), actor=db.session.get(User, admin_id),
                                        now=utcnow()).id

    results, errors = run_twice(live, create)
    assert len([r for r in results if r is not None]) == 1, errors
    loser = next(e for e in errors if e is not None)
    assert isinstance(loser, services.ContractError) and "already has a contract" in str(loser), loser
    with live.app_context():
        assert db.session.scalar(select(func.count()).select_from(Contract)) == 1
