"""Two payments recorded at once on one milestone, with real commits from two threads on a database of their own
(SQLite file, or a fresh PostgreSQL database when DATABASE_URL names one): the outstanding check holds (the
milestone row is locked) and a form sent twice at once is recorded once."""

from datetime import date
from decimal import Decimal

import pytest
from sqlalchemy import select

from core.db import db
from tests.conftest import run_twice

pytestmark = pytest.mark.no_db


def _milestone(app) -> tuple[int, int]:
    """An issued contract in the 2015 call; returns (first milestone id, admin id)."""
    from datetime import UTC, datetime

    from accounts.services import create_user
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.contracts.factories_contracts import issued_contract, selected_bid

    with app.app_context():
        now = datetime(2015, 3, 1, tzinfo=UTC)
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=now, source="test")
        users = [create_user(email=f"{r}@example.org", password="a long enough password", name=r, roles=[r],
                             actor=None, now=now) for r in ("admin", "bidder")]
        bid = selected_bid(event.id, users[1].id)
        contract = issued_contract(bid, admin=users[0], upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        return contract.milestones[0].id, users[0].id


def _pay(milestone_id, admin_id, amount, key):
    from datetime import UTC, datetime

    from accounts.models import User
    from contracts import payments as contract_payments
    from contracts.models import Milestone

    payment, created = contract_payments.record_payment(
        db.session.get(Milestone, milestone_id), amount=Decimal(amount), received_on=date(2015, 6, 20),
        reference="UBS", note="", idempotency_key=key, actor=db.session.get(User, admin_id),
        now=datetime(2015, 6, 21, tzinfo=UTC))
    return payment.id, created


def _amounts(app, milestone_id):
    from contracts.models import Payment

    with app.app_context():
        return [p.amount for p in db.session.scalars(select(Payment).where(Payment.milestone_id == milestone_id))]


def test_two_payments_at_once_cannot_together_exceed_what_is_outstanding(live):
    from contracts import services

    milestone_id, admin_id = _milestone(live)
    results, errors = run_twice(live, lambda i: _pay(milestone_id, admin_id, "60000.00", f"form-{i}"))
    assert _amounts(live, milestone_id) == [Decimal("60000.00")]
    assert sum(r is not None for r in results) == 1
    loser = next(e for e in errors if e is not None)
    # the loser waited for the winner's lock (PostgreSQL: the milestone row; SQLite: BEGIN IMMEDIATE), then saw
    # what was left
    assert isinstance(loser, services.ContractError), repr(loser)
    assert str(loser) == ("Art. 15.6.2: €40,000.00 is outstanding on instalment 1, due 30 June 2015; a payment "
                          "of €60,000.00 would exceed it.")


def test_a_form_sent_twice_at_once_is_recorded_once_and_both_get_it(live):
    """Both requests may find no payment under their key at first; the second waits for the first's lock and then
    finds the first's payment: it answers with it, as a form sent again later would, never with the database's
    refusal of a second row (on PostgreSQL the second's first look-up can miss the first's row: the look-up under the
    lock answers it)."""
    milestone_id, admin_id = _milestone(live)
    results, errors = run_twice(live, lambda i: _pay(milestone_id, admin_id, "1000.00", "the-same-form"))
    assert errors == [None, None]
    assert _amounts(live, milestone_id) == [Decimal("1000.00")]
    assert len({payment_id for payment_id, _ in results}) == 1
    assert sorted(created for _, created in results) == [False, True]


def test_a_reversal_sent_twice_at_once_is_recorded_once_and_both_get_it(live):
    """Both requests find no reversal under their key at first; the second waits for the first's lock and then finds
    the first's reversal: it answers with it, as a form sent again later would, not "already reversed"."""
    from datetime import UTC, datetime

    from accounts.models import User
    from contracts import payments as contract_payments
    from contracts.models import Payment

    milestone_id, admin_id = _milestone(live)
    with live.app_context():
        payment_id, _ = _pay(milestone_id, admin_id, "1000.00", "the-payment")
        db.session.commit()

    def reverse(i):
        reversal, created = contract_payments.reverse_payment(
            db.session.get(Payment, payment_id), reason="Recorded against the wrong milestone.",
            idempotency_key="the-same-reversal", actor=db.session.get(User, admin_id),
            now=datetime(2015, 6, 22, tzinfo=UTC))
        return reversal.id, created

    results, errors = run_twice(live, reverse)
    assert errors == [None, None]
    assert len({reversal_id for reversal_id, _ in results}) == 1
    assert sorted(created for _, created in results) == [False, True]
    assert _amounts(live, milestone_id) == [Decimal("1000.00"), Decimal("-1000.00")]
