"""The payment and deduction rules (contracts/payments.py, contracts/results.py), word for word: the one-time key of
a form, what a
payment, a reversal, a deduction and its return write (their rows and audit entries), the contract that takes them
(in force, superseded, closed), the days they may carry (from the day the call existed to SANE_DATE_DAYS_AHEAD days
after today, both ends included), and the prize balance a deduction is taken from (a returned deduction no longer
counts against it)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import select, text

from accounts.models import User
from contracts import payments as contract_payments
from contracts import results, services
from contracts.lifecycle import ContractAction
from contracts.models import Payment, PrizeDeduction
from contracts.rules.result import MatchOutcome
from core.db import db
from evidence.audit import AuditEntry
from tests.contracts.factories_contracts import fake_render, issued_contract, milestone, selected_bid

D = Decimal
LATER = datetime(2015, 7, 15, 9, 0, tzinfo=UTC)
AFTER = datetime(2015, 11, 1, 9, 0, tzinfo=UTC)  # after the match (completed on 28 October 2015)
CALL_EXISTED = date(2015, 3, 1)  # the `event` fixture loads the call on 1 March 2015
BOOKKEEPING = "Sanity check: bookkeeping of deductions and payments"  # sanity_checks.bookkeeping
KEY_MISSING = "The form is missing its one-time key; reload the page and enter the payment again."


@pytest.fixture
def admin(ctx, make):
    return db.session.get(User, make.user(roles=("admin",), email="secretariat@example.org"))


@pytest.fixture
def contract(app, ctx, event, make, admin):
    return issued_contract(selected_bid(event, make.user(email="organizer@example.org")), admin=admin,
                           upload_dir=app.config["UPLOAD_DIR"])


def pay(m, amount, on, *, admin, key, now=LATER, reference="UBS-1", note=""):
    return contract_payments.record_payment(m, amount=D(amount), received_on=on, reference=reference, note=note,
                                            idempotency_key=key, actor=admin, now=now)


def entries(action: str) -> list[dict]:
    return [e.data_dict for e in db.session.scalars(select(AuditEntry).where(AuditEntry.action == action)
                                                    .order_by(AuditEntry.id))]


def entry_of(action: str) -> tuple:
    """Who wrote the action's one entry, when, and of which row."""
    e = db.session.scalars(select(AuditEntry).where(AuditEntry.action == action)).one()
    return e.actor_id, e.at, e.object_type, e.object_id


def superseded(app, contract, admin):
    """Issue a correction of `contract`: it is superseded, the correction in force. Returns the correction."""
    draft = services.prepare_correction(contract, reason="The dates of the stipends", actor=admin, now=LATER)
    return services.issue_contract(draft, due_dates={}, actor=admin, now=LATER, upload_dir=app.config["UPLOAD_DIR"],
                                   render=fake_render)


def with_result(contract, admin):
    results.record_result(contract, outcome=MatchOutcome("CHN", "tiebreak", date(2015, 10, 28)), actor=admin,
                          now=AFTER)


def deduct(contract, admin, *, rule="fine_playing_conditions", amount="100.00", federation="CHN",
           reason="Phone in the playing area.", on=date(2015, 10, 30), now=AFTER):
    return results.record_deduction(contract, federation=federation, rule_key=rule,
                                    amount=None if amount is None else D(amount), reason=reason, decided_on=on,
                                    actor=admin, now=now)


# ------------------------------------------------------------------------------------------ the form's key


def test_the_one_time_key_is_up_to_64_characters_its_spaces_ignored_and_never_blank(contract, admin):
    m = milestone(contract, "instalment_1")
    for key in ("", "   ", None, "k" * 65):
        with pytest.raises(services.ContractError) as refused:
            pay(m, "10.00", date(2015, 6, 20), admin=admin, key=key)
        assert str(refused.value) == KEY_MISSING
    longest, created = pay(m, "10.00", date(2015, 6, 20), admin=admin, key="k" * 64)
    assert created and longest.idempotency_key == "k" * 64
    first, created = pay(m, "20.00", date(2015, 6, 20), admin=admin, key="  form-1 ")
    again, created_again = pay(m, "20.00", date(2015, 6, 20), admin=admin, key="form-1")
    assert created and not created_again and again.id == first.id and first.idempotency_key == "form-1"
    with pytest.raises(services.ContractError) as refused:
        contract_payments.reverse_payment(first, reason="typo", idempotency_key=" ", actor=admin, now=LATER)
    assert str(refused.value) == KEY_MISSING


# ------------------------------------------------------------------------------------------------ payments


def test_a_payment_is_recorded_with_its_reference_note_and_recorder_and_its_audit_entry_says_so(contract, admin):
    m = milestone(contract, "instalment_1")
    payment, created = pay(m, "60000.00", date(2015, 6, 20), admin=admin, key="k1", reference="  UBS 4711 ",
                           note=" first part\n")
    assert created
    db.session.expire_all()
    row = db.session.get(Payment, payment.id)
    assert (row.milestone_id, row.kind, row.amount, row.received_on, row.reference, row.note, row.recorded_at,
            row.recorded_by_id) == (m.id, "payment", D("60000.00"), date(2015, 6, 20), "UBS 4711", "first part",
                                    LATER, admin.id)
    assert entries("payment.record") == [{"milestone": m.id, "contract": contract.id, "amount": "60000.00",
                                          "received_on": "2015-06-20", "reference": "UBS 4711"}]
    assert entry_of("payment.record") == (admin.id, LATER, "Payment", str(payment.id))
    bare, _ = pay(m, "1.00", date(2015, 6, 20), admin=admin, key="k2", reference=None, note=None)
    assert (bare.reference, bare.note) == ("", "")


def test_money_may_be_dated_from_the_day_the_call_existed_and_not_the_day_before(contract, admin):
    m = milestone(contract, "instalment_1")
    day_before = CALL_EXISTED - timedelta(days=1)
    with pytest.raises(services.ContractError) as refused:
        pay(m, "10.00", day_before, admin=admin, key="early")
    problem = ("Sanity check: the day the money was received cannot be 28 February 2015 (you entered 2015-02-28): "
               "that is before this call existed (1 March 2015). Check the date.")
    assert (str(refused.value), refused.value.field, refused.value.errors) == (
        problem, "received_on", {"received_on": problem})
    assert contract_payments.payment_problems(m, amount=None, received_on=day_before,
                                              now=LATER) == {"received_on": problem}
    assert pay(m, "10.00", CALL_EXISTED, admin=admin, key="first-day")[1]


def test_every_problem_of_a_payment_is_named_at_once_by_its_field(contract, admin):
    m = milestone(contract, "instalment_1")
    problems = contract_payments.payment_problems(m, amount=D("100000.01"), received_on=date(2015, 7, 16), now=LATER)
    assert problems == {
        "received_on": "The day the money was received cannot be after today (15 July 2015).",
        "amount": ("Art. 15.6.2: €100,000.00 is outstanding on instalment 1, due 30 June 2015; a payment of "
                   "€100,000.01 would exceed it.")}
    assert contract_payments.payment_problems(m, amount=None, received_on=None, now=LATER) == {}
    assert contract_payments.payment_problems(m, amount=D("100000.00"), received_on=LATER.date(), now=LATER) == {}
    with pytest.raises(services.ContractError) as refused:
        pay(m, "100000.01", date(2015, 7, 16), admin=admin, key="both")
    assert (str(refused.value), refused.value.field, refused.value.errors) == (
        problems["received_on"], "received_on", problems)
    assert db.session.scalars(select(Payment)).first() is None


def test_a_reversal_is_recorded_once_with_its_reason_and_its_audit_entry(contract, admin):
    m = milestone(contract, "instalment_1")
    payment, _ = pay(m, "500.00", date(2015, 6, 21), admin=admin, key="p", reference="UBS 9")
    reversal, created = contract_payments.reverse_payment(payment, reason="  Recorded twice. ", idempotency_key="r1",
                                                          actor=admin, now=LATER)
    again, created_again = contract_payments.reverse_payment(payment, reason="Recorded twice.", idempotency_key="r1",
                                                             actor=admin, now=LATER)
    assert created and not created_again and again.id == reversal.id
    db.session.expire_all()
    row = db.session.get(Payment, reversal.id)
    assert (row.milestone_id, row.kind, row.amount, row.received_on, row.reference, row.reason, row.reverses_id,
            row.recorded_at, row.recorded_by_id) == (
        m.id, "reversal", D("-500.00"), date(2015, 6, 21), "UBS 9", "Recorded twice.", payment.id,
        LATER, admin.id)
    assert entries("payment.reverse") == [{"reverses": payment.id, "milestone": m.id, "amount": "-500.00",
                                           "reason": "Recorded twice."}]
    assert entry_of("payment.reverse") == (admin.id, LATER, "Payment", str(reversal.id))
    with pytest.raises(services.ContractError) as refused:
        contract_payments.reverse_payment(db.session.get(Payment, payment.id), reason="Again.", idempotency_key="r2",
                                          actor=admin, now=LATER)
    assert str(refused.value) == "This payment of €500.00 was already reversed on 15 July 2015."
    with pytest.raises(services.ContractError) as refused:
        contract_payments.reverse_payment(row, reason="Undo.", idempotency_key="r3", actor=admin, now=LATER)
    assert str(refused.value) == "A reversal cannot itself be reversed; record the payment again instead."
    other, _ = pay(m, "5.00", date(2015, 6, 22), admin=admin, key="p2")
    for blank in (" \n", None):
        with pytest.raises(services.ContractError) as refused:
            contract_payments.reverse_payment(other, reason=blank, idempotency_key="r4", actor=admin, now=LATER)
        assert (str(refused.value), refused.value.field) == (
            "Give the reason for the reversal; it stays on record with it.", "reason")
    assert len(entries("payment.reverse")) == 1


def test_a_superseded_contract_takes_no_payment_nor_reversal_and_names_the_version_in_force(app, contract, admin):
    m = milestone(contract, "instalment_1")
    payment, _ = pay(m, "100.00", date(2015, 6, 20), admin=admin, key="p")
    correction = superseded(app, contract, admin)
    said = (f"{contract.reference} is superseded by a correction: its milestones take no more entries. Record it on "
            f"{correction.reference}, the version in force.")
    with pytest.raises(services.ContractError) as refused:
        pay(m, "1.00", date(2015, 6, 22), admin=admin, key="late")
    assert str(refused.value) == said
    with pytest.raises(services.ContractError) as refused:
        contract_payments.reverse_payment(payment, reason="Refund.", idempotency_key="r", actor=admin, now=LATER)
    assert str(refused.value) == said
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin)
    assert str(refused.value) == (f"{contract.reference} is superseded by a correction: record deductions on the "
                                  "contract in force.")
    # Once the Board's corrected decision closes the correction too, no version is in force to name.
    services._move(correction, ContractAction.CLOSE, closed_at=LATER, closed_reason="Decision 1 was corrected")
    with pytest.raises(services.ContractError) as refused:
        pay(m, "1.00", date(2015, 6, 22), admin=admin, key="later")
    assert str(refused.value) == (f"{contract.reference} is superseded by a correction: its milestones take no more "
                                  "entries.")


def test_a_closed_contract_takes_no_new_payment_but_refunds_by_reversal(contract, admin):
    m = milestone(contract, "instalment_1")
    payment, _ = pay(m, "100.00", date(2015, 6, 20), admin=admin, key="p")
    services._move(contract, ContractAction.CLOSE, closed_at=LATER,
                   closed_reason="Decision 1 was corrected by decision 2 on 15 July 2015")
    with pytest.raises(services.ContractError) as refused:
        pay(m, "1.00", date(2015, 6, 22), admin=admin, key="late")
    assert str(refused.value) == (
        f"{contract.reference} was closed on 15 July 2015 because the Board's decision was corrected (Decision 1 "
        "was corrected by decision 2 on 15 July 2015). It takes no new payments; what was paid stays on record, "
        "and a refund is recorded by reversing the payment.")
    refund, created = contract_payments.reverse_payment(payment, reason="Refunded.", idempotency_key="r", actor=admin,
                                                        now=LATER)
    assert created and refund.amount == D("-100.00")


# ---------------------------------------------------------------------------------------------- deductions


def test_a_deduction_needs_the_result_a_known_rule_and_a_sane_day(contract, admin):
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin)
    assert (str(refused.value), refused.value.errors) == (
        "Record the match result first: a deduction is made from a player's prize balance, which exists once the "
        "result is known.", {"player": "No prize balance yet."})
    with_result(contract, admin)
    assert results.prize_balance_milestone(contract, " chn ") is milestone(contract, "prize_balance_CHN")
    assert results.prize_balance_milestone(contract, "") is None
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin, rule="fine_for_nothing")
    assert (str(refused.value), refused.value.errors) == (
        "Choose what the deduction is for.", {"rule": "Choose what the deduction is for."})
    day_before = CALL_EXISTED - timedelta(days=1)
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin, on=day_before)
    problem = ("Sanity check: the day the deduction was decided cannot be 28 February 2015 (you entered "
               "2015-02-28): that is before this call existed (1 March 2015). Check the date.")
    assert (str(refused.value), refused.value.field, refused.value.errors) == (
        problem, "decided_on", {"decided_on": problem})
    ahead = AFTER.date() + timedelta(days=366)  # SANE_DATE_DAYS_AHEAD
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin, on=ahead + timedelta(days=1))
    assert refused.value.errors == {"decided_on": (
        "Sanity check: the day the deduction was decided cannot be 2 November 2016 (you entered 2016-11-02): that "
        "is more than 366 days after today (1 November 2015). Check the date.")}
    assert deduct(contract, admin, on=ahead).decided_on == ahead
    assert deduct(contract, admin, on=CALL_EXISTED, federation=" chn").decided_on == CALL_EXISTED
    assert db.session.scalars(select(PrizeDeduction.milestone_id)).all() == [
        milestone(contract, "prize_balance_CHN").id] * 2


def test_a_deduction_is_recorded_with_its_article_reason_and_parts_and_its_audit_entry(contract, admin):
    with_result(contract, admin)
    balance = milestone(contract, "prize_balance_CHN")
    row = deduct(contract, admin, rule="forfeit_absence_conduct", amount="11450.00",
                 reason="  Absent from the closing ceremony. ")
    db.session.expire_all()
    row = db.session.get(PrizeDeduction, row.id)
    parts = [{"key": "organizer", "label": "the Organizer", "share": "0.05", "amount": "5725.00"},
             {"key": "fide", "label": "FIDE", "share": "0.05", "amount": "5725.00"}]
    assert (row.milestone_id, row.rule_key, row.article, row.amount, row.reason, row.decided_on, row.recorded_at,
            row.recorded_by_id) == (balance.id, "forfeit_absence_conduct", "5.2", D("11450.00"),
                                    "Absent from the closing ceremony.", date(2015, 10, 30),
                                    AFTER, admin.id)
    assert [p.as_dict() for p in row.parts] == parts
    assert entries("prize.deduction") == [{
        "contract": contract.id, "milestone": "prize_balance_CHN", "article": "5.2", "rule": "forfeit_absence_conduct",
        "amount": "11450.00", "reason": "Absent from the closing ceremony.", "decided_on": "2015-10-30",
        "parts": parts}]
    assert entry_of("prize.deduction") == (admin.id, AFTER, "PrizeDeduction", str(row.id))


def test_a_returned_deduction_no_longer_counts_against_the_balance_left(contract, admin):
    with_result(contract, admin)
    balance = milestone(contract, "prize_balance_CHN")
    pay(balance, str(balance.amount - D("4000.00")), AFTER.date(), admin=admin, key="most", now=AFTER)
    fee = deduct(contract, admin, rule="protest_fee", amount="3000.00", reason="Protest against game 8.")
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin, amount="1000.01")
    assert refused.value.errors == {"amount": (f"{BOOKKEEPING}: the deductions cannot exceed the prize balance "
                                               "still due, €1,000.00 (you entered €1,000.01).")}
    results.return_deduction(contract, fee.id, decided_on=date(2015, 10, 31), reason="Protest accepted.",
                             actor=admin, now=AFTER)
    with pytest.raises(services.ContractError) as refused:
        deduct(contract, admin, amount="4000.01")
    assert refused.value.errors["amount"].endswith("still due, €4,000.00 (you entered €4,000.01).")
    assert deduct(contract, admin, amount="4000.00").amount == D("4000.00")


def test_a_deduction_is_returned_once_with_its_reason_and_recorder_and_its_audit_entry(contract, admin):
    with_result(contract, admin)
    fee = deduct(contract, admin, rule="protest_fee", amount="3000.00", reason="Protest against game 8.")
    returned = results.return_deduction(contract, fee.id, decided_on=date(2015, 10, 31),
                                        reason=" The Appeals Committee accepted the protest. ", actor=admin,
                                        now=AFTER)
    db.session.expire_all()
    row = db.session.get(PrizeDeduction, returned.id)
    assert (row.returned_on, row.return_reason, row.returned_at, row.returned_by_id) == (
        date(2015, 10, 31), "The Appeals Committee accepted the protest.", AFTER, admin.id)
    assert entries("prize.deduction_returned") == [{
        "contract": contract.id, "milestone": "prize_balance_CHN", "article": "7.3.1", "rule": "protest_fee",
        "amount": "3000.00", "decided_on": "2015-10-31", "reason": "The Appeals Committee accepted the protest."}]
    assert entry_of("prize.deduction_returned") == (admin.id, AFTER, "PrizeDeduction", str(row.id))


def test_only_a_deduction_of_this_contract_is_returned_and_never_twice_at_the_same_moment(app, contract, admin,
                                                                                          event, make):
    with_result(contract, admin)
    fee = deduct(contract, admin, rule="protest_fee", amount="3000.00", reason="Protest against game 8.")
    for deduction_id in (fee.id + 1, -1):
        with pytest.raises(services.ContractError) as refused:
            results.return_deduction(contract, deduction_id, decided_on=date(2015, 10, 31), reason="Accepted.",
                                     actor=admin, now=AFTER)
        assert (str(refused.value), refused.value.errors) == (
            "No such deduction on this contract.", {"deduction": "No such deduction."})
    # Another person returned it after this session read it: the compare-and-swap refuses the second return.
    assert db.session.get(PrizeDeduction, fee.id).returned_on is None
    db.session.execute(text("UPDATE prize_deduction SET returned_on = '2015-10-31', return_reason = 'Accepted.', "
                            "returned_at = '2015-11-01 09:00:00' "
                            "WHERE id = :id"), {"id": fee.id})
    with pytest.raises(services.ContractError) as refused:
        results.return_deduction(contract, fee.id, decided_on=date(2015, 10, 31), reason="Accepted too.",
                                 actor=admin, now=AFTER)
    assert (str(refused.value), refused.value.errors) == (
        "Protest deposit fee withheld from the prize money (Art. 7.3.1) was returned at the same moment by someone "
        "else; reload the page.", {"deduction": "Already returned."})
    assert entries("prize.deduction_returned") == []


def test_a_superseded_contract_returns_no_deduction(app, contract, admin):
    with_result(contract, admin)
    fee = deduct(contract, admin, rule="protest_fee", amount="3000.00", reason="Protest against game 8.")
    correction = superseded(app, contract, admin)
    with pytest.raises(services.ContractError) as refused:
        results.return_deduction(contract, fee.id, decided_on=date(2015, 10, 31), reason="Accepted.",
                                 actor=admin, now=AFTER)
    assert str(refused.value) == (f"{contract.reference} is superseded by a correction: record it on the contract "
                                  "in force.")
    # The version in force has balances of its own: the deduction from the old version's is not one of them.
    with pytest.raises(services.ContractError) as refused:
        results.return_deduction(correction, fee.id, decided_on=date(2015, 10, 31), reason="Accepted.",
                                 actor=admin, now=AFTER)
    assert (str(refused.value), refused.value.errors) == (
        "No such deduction on this contract.", {"deduction": "No such deduction."})
