"""demo/seed.seed_contract_demo: the selected demo bid gets its contract and a few months of payments."""

from datetime import UTC, date, datetime
from decimal import Decimal

from accounts.models import User
from contracts import queries
from contracts.rules.tracker import MilestoneState
from core.db import db
from demo.seed import seed_contract_demo
from tests.contracts.factories_contracts import milestone, selected_bid


def test_the_demo_contract_shows_every_state_of_the_tracker_and_is_made_once(app, ctx, event, make):
    admin = db.session.get(User, make.user(roles=("admin",)))
    bid = selected_bid(event, make.user())
    out = seed_contract_demo(bid, admin=admin, now=datetime(2015, 6, 20, 10, 0, tzinfo=UTC))
    contract = queries.in_force(bid.id)
    assert out[0] == f"demo contract: {contract.reference} issued" and contract.status == "signed"
    day = date(2015, 11, 1)

    def state(key):
        return queries.status_of(milestone(contract, key), day, 14).state

    assert state("instalment_1") is MilestoneState.PAID
    assert state("instalment_2") is MilestoneState.OVERDUE
    assert milestone(contract, "instalment_2").paid_total == Decimal("98750.00")
    assert state("travel_1") is MilestoneState.PAID_LATE and state("travel_2") is MilestoneState.OVERDUE
    assert state("advance_CHN") is MilestoneState.PAID
    assert seed_contract_demo(bid, admin=admin, now=datetime(2015, 6, 20, tzinfo=UTC)) == [
        f"demo contract: unchanged ({contract.reference})"]
