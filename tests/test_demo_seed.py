"""`flask seed --demo` leaves every page filled, and running it again changes nothing."""

from sqlalchemy import func, select

from bids.models import Bid
from bids.rules import home_match
from bids.services import compliance
from core.audit import AuditEntry
from core.db import db, utcnow
from events.services import get_event


def test_demo_seed_makes_compliant_bids_a_home_match_and_a_failing_one(runner, app):
    result = runner.invoke(args=["seed", "--demo"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        event = get_event("fwwcm-2015")
        bids = db.session.scalars(select(Bid).where(Bid.event_id == event.id)).all()
        submitted = [b for b in bids if b.state.visible_to_reviewers]
        assert len(submitted) >= 3
        assert len({b.host_federation for b in submitted}) == len(submitted)
        assert all(b.last_version.compliant for b in submitted)
        assert any(home_match(event.regulation, b.to_data()) for b in submitted)
        failing = [b for b in bids if any(f.failed for f in compliance(b, today=utcnow().date()))]
        assert failing and all(b.status == "draft" for b in failing)
        entries = db.session.scalar(select(func.count()).select_from(AuditEntry))
        # scoring, the board and the decision are filled in too
        from board.models import Decision, Dossier
        from scoring.models import Scorecard

        assert event.status == "decided"
        assert db.session.scalar(select(func.count()).select_from(Scorecard)) >= 6
        assert db.session.scalar(select(func.count()).select_from(Dossier)) == len(submitted) + 1
        decision = db.session.scalars(select(Decision)).one()
        assert decision.selected_bid.status == "selected"
        assert sum(b.status == "not_selected" for b in bids) == len(submitted) - 1
        from contracts.models import Contract, Payment

        contract = db.session.scalars(select(Contract).where(Contract.bid_id == decision.selected_bid_id)).one()
        assert contract.status == "signed"
        assert db.session.scalar(select(func.count()).select_from(Payment)) >= 3
    again = runner.invoke(args=["seed", "--demo"])
    assert again.exit_code == 0 and "demo bid" not in again.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(AuditEntry)) == entries
