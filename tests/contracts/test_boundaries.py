"""The boundary days and amounts of the contract's rules, through the services: a date the contract sets may fall on
the day it is issued (not the day before), a date the regulations fix is past only from the next day; a payment or a
deduction may take exactly what is left (not a cent more); money received today counts (tomorrow's does not); a
payment made on its due day is paid on time, and one due today or at the end of the "due soon" window is due soon."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from accounts.models import User
from contracts import payments as contract_payments
from contracts import reminders, results, services
from contracts.queries import amount_owed, recorded_total, status_of
from contracts.rules.result import MatchOutcome
from contracts.rules.terms import DueSetBy, MilestoneKind
from contracts.rules.tracker import MilestoneState
from core.db import db
from core.money import format_day, format_eur
from tests.contracts.factories_contracts import ISSUED_AT, fake_render, issued_contract, milestone, proposed_dates
from tests.contracts.factories_contracts import selected_bid as make_selected_bid

BOOKKEEPING = "Sanity check: bookkeeping of deductions and payments"  # sanity_checks.bookkeeping

CENT = Decimal("0.01")


@pytest.fixture
def people(app, make):
    return {"admin": make.user(roles=("admin",), email="secretariat@example.org"),
            "organizer": make.user(roles=("bidder",), email="organizer@example.org")}


def _admin(people) -> User:
    return db.session.get(User, people["admin"])


def _draft(app, event, people):
    bid = make_selected_bid(event, people["organizer"])
    bid.event.signal_blocker_required = True
    return services.create_contract(bid, actor=_admin(people), now=ISSUED_AT)


def _issue(app, contract, people, dates, now):
    return services.issue_contract(contract, due_dates=dates, actor=_admin(people), now=now,
                                   upload_dir=app.config["UPLOAD_DIR"], render=fake_render)


def test_a_date_the_contract_sets_may_fall_on_the_issue_day_but_not_the_day_before(app, ctx, event, people):
    contract = _draft(app, event, people)
    dates = proposed_dates(contract)
    terms = services.build_terms(contract, dates)
    key = next(m.key for m in terms.milestones if m.due_set_by is DueSetBy.CONTRACT)
    title = next(m.title for m in terms.milestones if m.key == key)
    issue_day, day_before = ISSUED_AT.date(), ISSUED_AT.date() - timedelta(days=1)
    with pytest.raises(services.ContractError) as refused:
        _issue(app, contract, people, {**dates, key: day_before}, ISSUED_AT)
    assert refused.value.errors == {f"due_{key}": (
        f"Sanity check: {title} cannot be due on {format_day(day_before)} (you entered {day_before.isoformat()}): "
        f"that is before {format_day(issue_day)}, the day the contract is issued, so it would be overdue from the "
        f"start. Enter a date from {format_day(issue_day)} on.")}
    issued = _issue(app, contract, people, {**dates, key: issue_day}, ISSUED_AT)
    assert milestone(issued, key).due == issue_day


def test_a_date_the_regulations_fix_is_past_only_from_the_day_after_it(app, ctx, event, people):
    contract = _draft(app, event, people)
    dates = proposed_dates(contract)
    fixed = [m for m in services.build_terms(contract, dates).milestones
             if m.due_set_by is DueSetBy.REGULATION and m.due is not None and m.due >= ISSUED_AT.date()]
    first = min(fixed, key=lambda m: m.due)
    # Every date the contract sets is moved to that day or later, so only the fixed date is judged.
    later = {k: max(v, first.due) for k, v in dates.items()}
    on_the_day = datetime.combine(first.due, ISSUED_AT.timetz())
    with pytest.raises(services.ContractError) as refused:
        _issue(app, contract, people, later, on_the_day + timedelta(days=1))
    assert f"due_{first.key}" in refused.value.errors
    assert (f"which is already past on {format_day(first.due + timedelta(days=1))}, the day the contract is issued"
            in refused.value.errors[f"due_{first.key}"])
    issued = _issue(app, contract, people, later, on_the_day)
    assert milestone(issued, first.key).due == first.due


@pytest.fixture
def contract(app, event, people):
    """An issued contract (in an app context of its own; the test's `ctx` reads it)."""
    with app.app_context():
        bid = make_selected_bid(event, people["organizer"])
        c = issued_contract(bid, admin=_admin(people), upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        return c.id


def _pay(m, amount, *, received_on, now, key):
    return contract_payments.record_payment(m, amount=Decimal(amount), received_on=received_on, reference="R", note="",
                                            idempotency_key=key, actor=None, now=now)


def test_a_payment_may_take_exactly_what_is_outstanding_and_not_a_cent_more(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    m = next(m for m in c.milestones if MilestoneKind(m.kind).organizer_pays and not m.is_cap and m.due is not None)
    now = datetime.combine(m.due, ISSUED_AT.timetz())
    outstanding = amount_owed(m) - recorded_total(m.id)
    with pytest.raises(services.ContractError) as refused:
        _pay(m, outstanding + CENT, received_on=m.due, now=now, key="over")
    assert refused.value.errors == {"amount": (
        f"Art. {m.article}: {format_eur(outstanding)} is outstanding on {m.title}; a payment of "
        f"{format_eur(outstanding + CENT)} would exceed it.")}
    with pytest.raises(services.ContractError) as refused:
        _pay(m, "0.00", received_on=m.due, now=now, key="zero")
    assert refused.value.errors["amount"] == ("A payment is a positive amount. To correct a payment already "
                                              "recorded, reverse it.")
    tomorrow = m.due + timedelta(days=1)
    with pytest.raises(services.ContractError) as refused:
        _pay(m, outstanding, received_on=tomorrow, now=now, key="tomorrow")
    assert refused.value.errors == {"received_on": (
        f"The day the money was received cannot be after today ({format_day(m.due)}).")}
    payment, created = _pay(m, outstanding, received_on=m.due, now=now, key="all")  # received today, due today
    assert created and payment.amount == outstanding
    status = status_of(m, m.due, 14)
    assert (status.state, status.outstanding, status.label) == (
        MilestoneState.PAID, Decimal("0.00"), f"Paid on {format_day(m.due)}")


def test_a_payment_a_day_after_its_due_day_is_paid_late_by_one_day(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    m = next(m for m in c.milestones if MilestoneKind(m.kind).organizer_pays and not m.is_cap and m.due is not None)
    late = m.due + timedelta(days=1)
    _pay(m, amount_owed(m), received_on=late, now=datetime.combine(late, ISSUED_AT.timetz()), key="late")
    status = status_of(m, late, 14)
    assert (status.state, status.days, status.label) == (
        MilestoneState.PAID_LATE, 1, f"Paid late, on {format_day(late)}: 1 day after the due date")


def test_due_today_and_at_the_end_of_the_due_soon_window_is_due_soon_and_the_day_after_overdue(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    m = next(m for m in c.milestones if MilestoneKind(m.kind).organizer_pays and not m.is_cap and m.due is not None)
    today = status_of(m, m.due, 14)
    assert (today.state, today.days, today.due_soon, today.label) == (
        MilestoneState.DUE_SOON, 0, True, f"Due today, by {format_day(m.due)}")
    window = status_of(m, m.due - timedelta(days=14), 14)
    assert (window.state, window.days) == (MilestoneState.DUE_SOON, 14)
    before = status_of(m, m.due - timedelta(days=15), 14)
    assert (before.state, before.due_soon) == (MilestoneState.NOT_YET_DUE, False)
    after = status_of(m, m.due + timedelta(days=1), 14)
    assert (after.state, after.days, after.overdue, after.label) == (
        MilestoneState.OVERDUE, 1, True, "Overdue by 1 day")


def test_a_deduction_may_take_exactly_the_balance_left_and_not_a_cent_more(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    completed = date(2015, 10, 28)
    now = datetime(2015, 11, 1, 9, 0, tzinfo=UTC)
    results.record_result(c, outcome=MatchOutcome("CHN", "tiebreak", completed), actor=None, now=now)
    balance = results.prize_balance_milestone(c, "CHN")
    assert balance is not None
    # FIDE has paid all of the balance but €300.00: €300.00 is what a fine can still take.
    _pay(balance, balance.amount - Decimal("300.00"), received_on=now.date(), now=now, key="most")

    def deduct(amount: str):
        return results.record_deduction(c, federation="CHN", rule_key="fine_playing_conditions",
                                        amount=Decimal(amount), reason="Phone in the playing area.",
                                        decided_on=now.date(), actor=None, now=now)

    with pytest.raises(services.ContractError) as refused:
        deduct("300.01")
    assert refused.value.errors == {"amount": (f"{BOOKKEEPING}: the deductions cannot exceed the "
                                               "prize balance still due, €300.00 (you entered €300.01).")}
    assert deduct("300.00").amount == Decimal("300.00")
    with pytest.raises(services.ContractError) as refused:
        deduct("0.01")
    assert refused.value.errors == {"amount": (f"{BOOKKEEPING}: the deductions cannot exceed the "
                                               "prize balance still due, €0.00 (you entered €0.01).")}


def _result(c, now):
    results.record_result(c, outcome=MatchOutcome("CHN", "tiebreak", date(2015, 10, 28)), actor=None, now=now)


def test_a_fine_of_not_more_than_an_amount_may_be_that_amount_and_not_zero(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    now = datetime(2015, 11, 1, 9, 0, tzinfo=UTC)
    _result(c, now)

    def fine(amount: str, reason: str = "Phone in the playing area."):
        return results.record_deduction(c, federation="CHN", rule_key="fine_playing_conditions",
                                        amount=Decimal(amount), reason=reason, decided_on=now.date(), actor=None,
                                        now=now)

    with pytest.raises(services.ContractError) as refused:
        fine("0.00", reason=" ")
    assert refused.value.errors == {
        "reason": (f"{BOOKKEEPING}: say why the deduction (fine for an "
                   "infringement of the playing conditions, Art. 3.8.4) is made (the decision and its date)."),
        "amount": f"{BOOKKEEPING}: enter the amount deducted, above zero."}
    with pytest.raises(services.ContractError) as refused:
        fine("5000.01")
    assert refused.value.errors == {"amount": ("Art. 3.8.4: fine for an infringement of the playing conditions is "
                                               "at most €5,000.00 (you entered €5,000.01).")}
    assert fine("5000.00").amount == Decimal("5000.00")
    assert fine("0.01").amount == CENT


def test_a_withheld_protest_fee_may_be_returned_on_the_day_it_was_withheld_not_before_and_once(app, ctx, contract):
    from contracts.models import Contract

    c = db.session.get(Contract, contract)
    now = datetime(2015, 11, 1, 9, 0, tzinfo=UTC)
    _result(c, now)
    withheld_on = date(2015, 10, 30)
    fee = results.record_deduction(c, federation="CHN", rule_key="protest_fee", amount=Decimal("3000.00"),
                                   reason="Protest against the pairing of game 8.", decided_on=withheld_on,
                                   actor=None, now=now)

    def give_back(day: date, reason: str = "The Appeals Committee accepted the protest."):
        return results.return_deduction(c, fee.id, decided_on=day, reason=reason, actor=None, now=now)

    with pytest.raises(services.ContractError) as refused:
        give_back(withheld_on - timedelta(days=1))
    assert refused.value.errors == {"decided_on": (
        f"{BOOKKEEPING}: the decision to return it comes after the deduction of 30 "
        "October 2015 (you entered 29 October 2015).")}
    assert give_back(withheld_on).returned_on == withheld_on
    with pytest.raises(services.ContractError) as refused:
        give_back(withheld_on)
    assert refused.value.errors == {"deduction": (f"{BOOKKEEPING}: protest deposit fee withheld from "
                                                  "the prize money (Art. 7.3.1) was already returned; it is "
                                                  "returned once.")}


def test_a_reminder_says_what_was_recorded_only_once_something_was_and_is_written_whole(app, ctx, contract):
    """contracts.services.send_reminder writes the reminder into the outbox: its exact words, for a payment overdue
    by one day with a part paid, and for one due today with nothing paid (no "recorded so far" line)."""
    from contracts.models import Contract
    from contracts.rules.reminders import ReminderKind
    from operations.outbox import OutboxMessage

    c = db.session.get(Contract, contract)
    fide_paid = [m for m in c.milestones if MilestoneKind(m.kind).organizer_pays and not m.is_cap
                 and m.due is not None and m.payee_kind == "fide"]
    first, second = fide_paid[0], fide_paid[1]
    day = datetime.combine(first.due, ISSUED_AT.timetz())
    _pay(first, "1000.00", received_on=first.due, now=day, key="part")
    late = status_of(first, first.due + timedelta(days=1), 14)
    soon = status_of(second, second.due, 14)
    assert (late.state, soon.state) == (MilestoneState.OVERDUE, MilestoneState.DUE_SOON)
    reminders.send_reminder(first, ReminderKind.OVERDUE, late, url="http://gambit.test/contracts/1", now=day)
    reminders.send_reminder(second, ReminderKind.DUE_SOON, soon, url="http://gambit.test/contracts/1", now=day)
    overdue, due_soon = db.session.scalars(db.select(OutboxMessage).order_by(OutboxMessage.id)).all()[-2:]
    bank = c.regulation.fide_bank
    title, event_title = c.regulation.event.title, first.title
    assert overdue.subject == (f"{title}: payment overdue since {format_day(first.due)} "
                               f"({format_eur(late.outstanding)})")
    assert overdue.body == "\n".join([
        f"Dear {c.inputs.contact_name or 'organizer'},", "",
        f"the payment of {event_title} (Art. {first.article}) fell due on {format_day(first.due)} and is overdue by "
        f"1 day. {format_eur(late.outstanding)} is outstanding.",
        f"FIDE has recorded €1,000.00 of {format_eur(first.amount)} so far.", "",
        f"Contract {c.reference}; payee: {first.payee_name}.", "",
        "FIDE's account:", f"  {bank.holder}", f"  {bank.bank}, {bank.address}", f"  IBAN {bank.iban}",
        f"  SWIFT {bank.swift}", "",
        "What FIDE has recorded against your obligations: http://gambit.test/contracts/1", "",
        "If you have already paid, thank you: please send the bank's reference to the FIDE secretariat.", "",
        "FIDE secretariat (sent by Gambit)"])
    assert due_soon.subject == f"{title}: payment due {format_day(second.due)} ({format_eur(second.amount)})"
    assert "recorded" not in due_soon.body.split("\n\n")[1]
    assert (f"the payment of {second.title} (Art. {second.article}) falls due on {format_day(second.due)}. "
            f"{format_eur(second.amount)} is outstanding.") in due_soon.body
