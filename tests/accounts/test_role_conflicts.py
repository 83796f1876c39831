"""Roles that conflict: whoever bids neither scores, votes nor reads rival bids (Gambit's rule on conflicts of
interest, from DESIGN.md; not an article of the regulations)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from accounts.models import User, UserRole
from accounts.services import AccountError, create_user
from bids.models import Bid
from board.rules import DecisionError
from board.services import cast_vote
from core.db import db, utcnow
from events.models import Event
from scoring.services import Recused, save_scorecard
from tests.conftest import run_twice
from tests.scoring.factories_scoring import ScoringFactory

MESSAGE = ("An account cannot be both a bidder and a reviewer (WCOC member): whoever bids neither scores nor votes, "
           "nor reads rival bids. Give the reviewer a separate account.")


def test_the_role_editor_refuses_a_bidder_who_would_also_score(client, app, login_as, make):
    login_as("admin")
    bidder_id = make.user(email="ukr@example.org", roles=("bidder",), federation="UKR")
    response = client.post(f"/admin/users/{bidder_id}", data={"roles": ["bidder", "wcoc"], "federation": "UKR"})
    assert response.status_code == 422
    assert MESSAGE in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(User, bidder_id).role_set == {"bidder"}


def test_users_create_refuses_a_bidder_and_reviewer(runner, app):
    result = runner.invoke(args=["users", "create", "x@example.org", "--role", "bidder", "--role", "board"])
    assert result.exit_code != 0
    assert "An account cannot be both a bidder and a reviewer (Presidential Board member)" in result.output
    with app.app_context():
        assert db.session.scalars(select(User).where(User.email == "x@example.org")).first() is None


@pytest.fixture
def sf(app, make):
    return ScoringFactory(app, make)


def _both(app, make, email="both@example.org") -> int:
    """An account that holds a bidder's and every reviewer's role (made before the rule, or by hand in the database)."""
    user_id = make.user(email=email, roles=("bidder",), federation="FRA")
    with app.app_context():
        user = db.session.get(User, user_id)
        user.roles.extend([UserRole(role="wcoc"), UserRole(role="board")])
        db.session.commit()
    return user_id


def test_an_account_with_a_bid_in_the_call_reads_no_rival_bid_scores_or_votes_in_it(client, app, make, event, sf):
    both = _both(app, make)
    rival = sf.bid(event, city="Lviv", host="UKR")
    own = sf.bid(event, city="Paris", host="FRA", owner_id=both)
    sf.status(event, "scoring")
    from tests.conftest import login

    login(client, "both@example.org")
    assert client.get(f"/bids/{own}").status_code == 200
    assert client.get(f"/bids/{rival}").status_code == 404
    assert client.get(f"/api/v1/bids/{rival}").status_code == 404
    with app.app_context():
        member = db.session.get(User, both)
        bid = db.session.get(Bid, rival)
        keys = [c.key for c in bid.event.regulation.criteria]
        with pytest.raises(Recused, match="You own or entered a bid in this call: you do not score in it."):
            save_scorecard(bid, member, scores=dict.fromkeys(keys, Decimal(3)), comments={}, revision=0,
                           submit=False, actor=member, now=utcnow())
        db.session.rollback()
    sf.status(event, "deliberation")
    assert client.get("/board/fwwcm-2015").status_code == 403
    assert client.get("/board/fwwcm-2015/pack.pdf").status_code == 403
    with app.app_context():
        member = db.session.get(User, both)
        ev = db.session.get(Event, event)
        with pytest.raises(DecisionError, match="You own or entered a bid in this call: you do not vote in it."):
            cast_vote(ev, member, db.session.get(Bid, rival), now=utcnow())
        db.session.rollback()


@pytest.mark.no_db
def test_two_registrations_of_one_address_at_once_end_in_one_account_and_one_clear_refusal(live):
    def register(i):
        return create_user(email="same@example.org", password="a long enough password", name=f"R{i}",
                           roles=["bidder"], actor=None, now=utcnow()).id

    results, errors = run_twice(live, register)
    assert sorted(e is None for e in errors) == [False, True], errors
    refusal = next(e for e in errors if e is not None)
    assert isinstance(refusal, AccountError)
    assert str(refusal) == "An account with the email same@example.org already exists; log in instead."
    with live.app_context():
        assert len(db.session.scalars(select(User).where(User.email == "same@example.org")).all()) == 1


@pytest.mark.no_db
def test_two_presidents_named_at_once_end_in_one_and_a_clear_refusal(live):
    with live.app_context():
        ids = [create_user(email=f"p{i}@example.org", password="a long enough password", name=f"P{i}",
                           roles=["board"], actor=None, now=utcnow()).id for i in range(2)]
        db.session.commit()

    def name_president(i):
        from accounts.services import update_roles

        user = db.session.get(User, ids[i])
        update_roles(user, roles=["board"], is_president=True, federation=None, actor=None, now=utcnow())

    results, errors = run_twice(live, name_president)
    refusals = [e for e in errors if e is not None]
    assert len(refusals) == 1 and isinstance(refusals[0], AccountError), errors
    assert "is already the FIDE President, and there is one President at a time" in str(refusals[0])
    with live.app_context():
        assert len(db.session.scalars(select(User).where(User.is_president.is_(True))).all()) == 1
