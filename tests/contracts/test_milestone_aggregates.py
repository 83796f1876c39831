"""A milestone's status and figures read from aggregates (contracts.queries.ledgers: one GROUP BY milestone and day,
summed in exact cents) equal what the tracker's rule gives on the Payment objects themselves, whatever the payments
and reversals, on SQLite (which keeps Numeric as a binary float) as on PostgreSQL."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete

from contracts import queries
from contracts.models import Contract, Milestone, Payment
from contracts.rules.tracker import milestone_status, outstanding_on_record
from core.db import db
from tests.contracts.factories_contracts import ContractFactory
from tests.scoring.factories_scoring import SCORING_DAY

START = date(2015, 6, 1)
# Cents that a binary float cannot hold exactly (0.10, 0.20, 0.70 ...) and large sums among them.
# WHOLE, HALF and THIRD are shares of the milestone's amount, so that payments meet it, exactly or not.
AMOUNTS = st.one_of(st.sampled_from(["0.10", "0.20", "0.70", "1.01", "33333.33", "WHOLE", "HALF", "THIRD"]),
                    st.decimals(min_value=Decimal("0.01"), max_value=Decimal("250000.00"), places=2,
                                allow_nan=False, allow_infinity=False).map(str))
ENTRY = st.tuples(AMOUNTS, st.integers(0, 60), st.booleans())  # amount, day, reversed


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(entries=st.lists(ENTRY, max_size=12), as_of=st.integers(0, 70))
def test_status_and_figures_from_aggregates_equal_those_from_the_payment_objects(app, event, make, entries, as_of):
    if not hasattr(app, "_aggregates_contract"):
        app._aggregates_contract = ContractFactory(app, make).contract(event)
    with app.app_context():
        contract = db.session.get(Contract, app._aggregates_contract)
        m = next(m for m in contract.milestones if m.milestone_kind.organizer_pays and not m.is_cap)
        db.session.execute(delete(Payment).where(Payment.milestone_id == m.id, Payment.reverses_id.is_not(None)))
        db.session.execute(delete(Payment).where(Payment.milestone_id == m.id))
        shares = {"WHOLE": m.amount, "HALF": (m.amount / 2).quantize(Decimal("0.01")),
                  "THIRD": (m.amount / 3).quantize(Decimal("0.01"))}
        for k, (raw, day, reversed_) in enumerate(entries):
            amount = shares.get(raw, raw)
            paid = Payment(milestone_id=m.id, amount=Decimal(amount), received_on=START + timedelta(days=day),
                           reference=f"P{k}", idempotency_key=f"agg-{k}", recorded_at=SCORING_DAY)
            db.session.add(paid)
            if reversed_:
                db.session.flush()
                db.session.add(Payment(milestone_id=m.id, kind="reversal", amount=-Decimal(amount),
                                       received_on=paid.received_on, reverses_id=paid.id, reason="Refund",
                                       reference=f"R{k}", idempotency_key=f"agg-r-{k}", recorded_at=SCORING_DAY))
        db.session.commit()
        db.session.expire_all()
        m = db.session.get(Milestone, m.id)
        day = START + timedelta(days=as_of)
        # The old computation: the rule fed every Payment object.
        objects = list(m.payments)
        before = milestone_status(queries.amount_owed(m), objects, m.due, day, 14, at_cost=m.is_cap)
        ledger = queries.ledger_of(m.id)
        after = queries.status_of(m, day, 14, ledger=ledger)
        assert after == before
        assert ledger.entries == len(objects)
        assert ledger.total == sum((p.amount for p in objects), Decimal("0.00")) == queries.recorded_total(m.id)
        assert queries.still_recordable(m, ledger) == m.outstanding == outstanding_on_record(m.amount, ledger.total)
        assert queries.outstanding_totals([contract])[contract.id] == sum(
            (x.outstanding for x in contract.milestones if x.milestone_kind.organizer_pays and not x.is_cap),
            Decimal("0.00"))
        assert all(isinstance(e.amount, Decimal) and e.amount == e.amount.quantize(Decimal("0.01"))
                   for e in ledger.days)
