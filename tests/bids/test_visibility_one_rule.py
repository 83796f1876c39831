"""The bid page (bids.services.can_see, one bid) and the bid lists (bids_visible_to, a select) apply one rule: for
every role set, every state of a bid, and every kind of stake in the call, the one bid is seen exactly when it is
listed. Besides the cases named in test_can_see_stake.py, this catches the two drifting apart."""

from __future__ import annotations

import pytest

from accounts.models import User, UserRole
from bids.lifecycle import BidStatus
from bids.models import Bid
from bids.services import bids_visible_to, can_see, has_stake
from core.db import db
from events.models import Event
from tests.scoring.factories_scoring import ScoringFactory

ROLE_SETS = [(), ("bidder",), ("wcoc",), ("board",), ("admin",), ("admin", "wcoc"), ("bidder", "wcoc"),
             ("bidder", "board")]


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


def _with_roles(app, make, roles: tuple[str, ...], email: str) -> int:
    """An account holding exactly `roles` (set by hand: the rule must hold for combinations the forms refuse)."""
    user_id = make.user(email=email, roles=("bidder",))
    with app.app_context():
        user = db.session.get(User, user_id)
        user.roles.clear()
        db.session.flush()
        user.roles.extend(UserRole(role=r) for r in roles)
        db.session.commit()
    return user_id


def test_the_bid_page_and_the_bid_list_see_the_same_bids_for_every_role_state_and_stake(app, make, event, practice,
                                                                                        sf):
    bids = {status: sf.bid(event, city=f"City {status.value}", status=status.value) for status in BidStatus}
    elsewhere = sf.bid(practice, city="Elsewhere")
    people = {}
    for roles in ROLE_SETS:
        label = "+".join(roles) or "none"
        people[f"{label}, no stake"] = _with_roles(app, make, roles, f"{label}-none@example.org")
        owner = people[f"{label}, owns a draft"] = _with_roles(app, make, roles, f"{label}-owns@example.org")
        sf.bid(event, city=f"Own of {label}", status="draft", owner_id=owner)
        entered = people[f"{label}, entered a bid"] = _with_roles(app, make, roles, f"{label}-entered@example.org")
        people[f"{label}, stake elsewhere"] = _with_roles(app, make, roles, f"{label}-elsewhere@example.org")
        with app.app_context():
            db.session.get(Bid, bids[BidStatus.SUBMITTED]).entered_by_id = entered
            db.session.get(Bid, elsewhere).owner_id = people[f"{label}, stake elsewhere"]
            db.session.commit()
        # The entered-by and elsewhere stakes are re-pointed for each role set: judge this set before the next.
        _judge(app, people, label)


def _judge(app, people: dict[str, int], label: str) -> None:
    with app.app_context():
        event = db.session.scalars(db.select(Event).where(Event.slug == "fwwcm-2015")).one()
        every = db.session.scalars(db.select(Bid).where(Bid.event_id == event.id)).all()
        seen_by_kind = {}
        for name, user_id in people.items():
            if not name.startswith(f"{label},"):
                continue
            user = db.session.get(User, user_id)
            listed = {b.id for b in db.session.scalars(bids_visible_to(user, event)).unique()}
            opened = {b.id for b in every if can_see(user, b)}
            assert opened == listed, f"{name}: the page opens {sorted(opened)}, the list shows {sorted(listed)}"
            seen_by_kind[name] = len(opened)
        # Not vacuous: what the roles open differs, so the comparison above compared something.
        if label == "admin":
            assert seen_by_kind["admin, no stake"] == len(every)
        if label in ("wcoc", "board"):
            assert 0 < seen_by_kind[f"{label}, owns a draft"] < seen_by_kind[f"{label}, no stake"] < len(every)


def test_a_caller_without_an_account_has_no_stake_and_opens_no_contract(app, event):
    """The rules answer a caller without an account themselves (no view reaches them so today: every page that asks
    is behind the sign-in), before reading anything of theirs: no stake in any call, no contract opened."""
    from flask_login import AnonymousUserMixin

    from contracts.queries import may_view

    with app.app_context():
        call = db.session.get(Event, event)
        for nobody in (None, AnonymousUserMixin()):
            assert has_stake(nobody, call) is False
            assert may_view(nobody, None) is False  # answered before the contract is read
