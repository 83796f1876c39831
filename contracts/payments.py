"""Payments on a contract's milestones: the problems of a payment entered (before it is recorded), recording one once
(its one-time key), and reversing one. The only code that writes payments; each function checks the rules, changes
rows, flushes and writes the audit entry; none commits, none reads the request."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import select, text

from accounts.models import User
from contracts import queries
from contracts.guards import ContractError, lock_contract
from contracts.lifecycle import ContractStatus
from contracts.models import Milestone, Payment
from contracts.rules.tracker import PaymentRefused, check_payment, outstanding_on_record
from core.db import db
from core.money import format_day, format_eur
from core.validators import implausible_day
from evidence import audit


def _check_in_force(milestone: Milestone, *, reversal: bool = False) -> None:
    c = milestone.contract
    if c.state is ContractStatus.CLOSED and not reversal:
        raise ContractError(f"{c.reference} was closed on {format_day(c.closed_at)} because the Board's decision was "
                            f"corrected ({c.closed_reason}). It takes no new payments; what was paid stays on record, "
                            "and a refund is recorded by reversing the payment.")
    if not (c.state.takes_reversals if reversal else c.state.in_force):
        current = queries.in_force(c.bid_id)
        where = f" Record it on {current.reference}, the version in force." if current else ""
        raise ContractError(f"{c.reference} is {c.state.label.lower()}: its milestones take no more entries.{where}")


def _lock(milestone: Milestone) -> None:
    """Serialise writers on one milestone, so the outstanding amount read next is the one the insert relies on:
    SELECT ... FOR UPDATE on PostgreSQL; on SQLite a write takes the database's single writer lock at once."""
    if db.session.get_bind().dialect.name == "sqlite":
        db.session.execute(text("UPDATE contract_milestone SET id = id WHERE id = :id"), {"id": milestone.id})
    else:
        db.session.execute(select(Milestone.id).where(Milestone.id == milestone.id).with_for_update())


def _existing(milestone_id: int, key: str) -> Payment | None:
    return queries.payment_by_key(milestone_id, key)


def _check_key(key: str) -> str:
    key = (key or "").strip()
    if not key or len(key) > 64:
        raise ContractError("The form is missing its one-time key; reload the page and enter the payment again.")
    return key


def _received_on_problem(milestone: Milestone, received_on: date, now: datetime) -> str | None:
    if received_on > now.date():
        return f"The day the money was received cannot be after today ({format_day(now.date())})."
    earliest = min(milestone.contract.bid.event.created_at.date(),
                   milestone.contract.regulation.event.bid_deadline.date())
    return implausible_day(received_on, what="the day the money was received", earliest=earliest,
                           earliest_is="this call existed", today=now.date(), days_ahead=queries.sane_days_ahead())


def payment_problems(milestone: Milestone, *, amount: Decimal | None, received_on: date | None,
                     now: datetime) -> dict[str, str]:
    """Everything wrong with a payment about to be recorded, by form field ("received_on", "amount"), all at
    once; a value None (not entered, or not readable) is not checked. Reads what is outstanding as it stands: the
    service checks again under its lock. Raises nothing."""
    problems = {}
    if received_on is not None:
        problem = _received_on_problem(milestone, received_on, now)
        if problem:
            problems["received_on"] = problem
    if amount is not None:
        # What the milestone calls for less what was paid: a prize balance is owed less its deductions.
        outstanding = outstanding_on_record(queries.amount_owed(milestone), queries.recorded_total(milestone.id))
        try:
            check_payment(article=milestone.article, title=milestone.title, amount=amount, outstanding=outstanding,
                          is_cap=milestone.is_cap, cap=milestone.amount)
        except PaymentRefused as exc:
            problems["amount"] = str(exc)
    return problems


def record_payment(milestone: Milestone, *, amount: Decimal, received_on: date, reference: str, note: str,
                   idempotency_key: str, actor: User, now: datetime) -> tuple[Payment, bool]:
    """Record money received against a milestone (Art. 15.6.2); part payments are allowed.

    Returns (payment, created): a form sent twice with the same one-time key is recorded once, and the second
    call returns the first payment with created=False. The milestone row is locked first, so two writers
    cannot both fit under what is outstanding. Raises ContractError when the contract is not in force, or, with
    every problem in its `errors` by field (`payment_problems`), when the date lies in the future or is
    implausible and when the payment would exceed what is outstanding ("Art. 15.6.2: €X is outstanding on
    <milestone>; a payment of €Y would exceed it."). Writes `payment.record` to the audit log.
    """
    key = _check_key(idempotency_key)
    _check_in_force(milestone)
    found = _existing(milestone.id, key)
    if found is not None:
        return found, False
    lock_contract(milestone.contract)  # a deduction reads what is left of a prize balance inside the same lock
    _lock(milestone)
    found = _existing(milestone.id, key)  # the other writer we waited for may have been this same form
    if found is not None:
        return found, False
    problems = payment_problems(milestone, amount=amount, received_on=received_on, now=now)
    if problems:
        field, message = next(iter(problems.items()))
        raise ContractError(message, field, errors=problems)
    # Tied to its milestone without loading the milestone's other entries (a collection not loaded stays so).
    payment = Payment(milestone=milestone, kind="payment", amount=amount, received_on=received_on,
                      reference=(reference or "").strip(), note=(note or "").strip(), idempotency_key=key,
                      recorded_at=now, recorded_by_id=getattr(actor, "id", None))
    db.session.add(payment)
    db.session.flush()
    audit.record("payment.record", payment, actor=actor, now=now,
                 data={"milestone": milestone.id, "contract": milestone.contract_id, "amount": amount,
                       "received_on": received_on, "reference": payment.reference})
    return payment, True


def reverse_payment(payment: Payment, *, reason: str, idempotency_key: str, actor: User, now: datetime
                    ) -> tuple[Payment, bool]:
    """Cancel a recorded payment with a reversing entry: the negative of its amount, dated like it, linked to
    it, with a reason. The payment itself is never edited or deleted.

    Returns (reversal, created) as record_payment does. Raises ContractError for a reversal, a payment already
    reversed, a contract not in force or a missing reason. Writes `payment.reverse` to the audit log.
    """
    key = _check_key(idempotency_key)
    milestone = payment.milestone
    _check_in_force(milestone, reversal=True)
    found = _existing(milestone.id, key)
    if found is not None:
        return found, False
    if payment.is_reversal:
        raise ContractError("A reversal cannot itself be reversed; record the payment again instead.")
    reason = (reason or "").strip()
    if not reason:
        raise ContractError("Give the reason for the reversal; it stays on record with it.", "reason")
    lock_contract(milestone.contract)
    _lock(milestone)
    found = _existing(milestone.id, key)
    if found is not None:
        return found, False
    db.session.refresh(payment)
    if payment.reversed_by is not None:
        raise ContractError(f"This payment of {format_eur(payment.amount)} was already reversed on "
                            f"{format_day(payment.reversed_by.recorded_at)}.")
    reversal = Payment(milestone=milestone, kind="reversal", amount=-payment.amount, received_on=payment.received_on,
                       reference=payment.reference, reason=reason, reverses_id=payment.id, idempotency_key=key,
                       recorded_at=now, recorded_by_id=getattr(actor, "id", None))
    db.session.add(reversal)
    db.session.flush()
    db.session.refresh(payment)
    audit.record("payment.reverse", reversal, actor=actor, now=now,
                 data={"reverses": payment.id, "milestone": milestone.id, "amount": reversal.amount,
                       "reason": reason})
    return reversal, True
