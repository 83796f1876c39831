"""What evidence.rows promises, pinned one by one (its mutation run, docs/mutation.md, found them unguarded): the one
canonical form of an evidence row, word for word; the stored files a row names; which rows the next audit entry
binds — a row deleted, a row changed by an UPDATE statement (a compare-and-swap) — and that a row written in the
current transaction is not judged against a binding it has not been given yet, while any other row is."""

import hashlib
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import select, text, update

from contracts.models import Payment
from core.db import db
from evidence import audit
from evidence.rows import DELETED, AuditRow, file_columns, form_values, row_digest, row_form
from tests.contracts.test_evidence_bound import PAID_AT, _pay

NOW = datetime(2015, 6, 1, 12, tzinfo=UTC)


class Thing:
    """A stand-in evidence model: row_form reads only its name and its `__evidence__`."""

    __evidence__ = ("name", "amount", "on", "at", "blob", "flag", "none")


VALUES = {"id": 7, "name": "Žaneta – Оксана", "amount": Decimal("1.50"), "on": date(2015, 3, 1),
          "at": datetime(2015, 3, 1, 12, 0, 5, 42, tzinfo=UTC), "blob": b"signed bytes", "flag": True, "none": None}


def test_the_canonical_form_of_a_row_is_one_exact_string():
    blob = hashlib.sha256(b"signed bytes").hexdigest()
    assert row_form(Thing, VALUES) == (
        '["Thing",[["id",7],["name","Žaneta – Оксана"],["amount","1.50"],["on","2015-03-01"],'
        f'["at","2015-03-01T12:00:05.000042+00:00"],["blob","sha256:{blob}"],["flag",true],["none",null]]]')
    # A memoryview (what a driver may hand back for a binary column) is the same bytes, so the same form.
    assert row_form(Thing, VALUES | {"blob": memoryview(b"signed bytes")}) == row_form(Thing, VALUES)
    assert row_digest(row_form(Thing, VALUES)) == hashlib.sha256(row_form(Thing, VALUES).encode()).hexdigest()


def test_a_value_of_a_type_the_form_does_not_know_is_refused_by_name():
    with pytest.raises(TypeError, match=r"^cannot put float in an evidence digest$"):
        row_form(Thing, VALUES | {"amount": 1.5})
    with pytest.raises(KeyError):
        row_form(Thing, {k: v for k, v in VALUES.items() if k != "flag"})


def test_the_values_of_a_form_are_read_back_and_an_empty_form_holds_none():
    assert form_values(row_form(Thing, VALUES))["amount"] == "1.50"
    assert form_values(row_form(Thing, VALUES))["id"] == 7
    assert form_values("") == {}


def test_a_stored_name_without_a_hash_beside_it_names_no_file():
    class Partial:
        __evidence__ = ("stored_name", "letter_stored_name", "letter_sha256", "scan_stored_name", "scan_pdf_sha256")

    assert file_columns(Partial) == [("letter_stored_name", "letter_sha256"), ("scan_stored_name", "scan_pdf_sha256")]


def _entry_rows(entry) -> dict:
    return json.loads(entry.rows or "{}")


def test_an_evidence_row_deleted_is_bound_as_deleted_by_the_next_entry(app, event, cf):
    from contracts.models import Contract, Reminder

    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    with app.app_context():
        milestone_id = db.session.get(Contract, contract_id).milestones[0].id
        reminder = Reminder(milestone_id=milestone_id, kind="due_soon", as_of=date(2015, 5, 1), sent_at=NOW,
                            sent_to="organizer@example.org", carried=False)
        db.session.add(reminder)
        audit.record("reminder.test_send", reminder, actor=None, now=NOW)
        db.session.commit()
        reminder_id = reminder.id
    with app.app_context():
        db.session.delete(db.session.get(Reminder, reminder_id))
        entry = audit.record("reminder.test_delete", actor=None, now=NOW, object_type="Reminder",
                             object_id=str(reminder_id))
        assert _entry_rows(entry) == {f"Reminder:{reminder_id}": DELETED}
        rows = db.session.scalars(select(AuditRow).where(AuditRow.entry_id == entry.id)).all()
        assert [(r.object_type, r.object_id, r.digest, r.form) for r in rows] == [
            ("Reminder", str(reminder_id), DELETED, "")]
        db.session.rollback()


def test_a_row_changed_by_an_update_statement_is_bound_by_the_entry_about_it_and_no_other(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    first = _pay(app, contract_id, admin_id)
    with app.app_context():
        payment = db.session.get(Payment, first)
        # A compare-and-swap: the ORM never sees the change as an attribute of the instance.
        db.session.execute(update(Payment).where(Payment.id == first).values(note="checked by the bank"))
        # Until the entry is written the row is this transaction's own: not judged against its older binding.
        assert audit.evidence_problem(payment) is None
        entry = audit.record("payment.test_cas", payment, actor=None, now=NOW)
        db.session.refresh(payment)
        assert payment.note == "checked by the bank"
        form = db.session.scalars(select(AuditRow.form).where(AuditRow.entry_id == entry.id)).one()
        assert _entry_rows(entry) == {f"Payment:{first}": row_digest(form)}
        assert form_values(form)["note"] == "checked by the bank"
        db.session.commit()
        assert audit.evidence_problem(db.session.get(Payment, first)) is None


def _pay_with(app, contract_id: int, admin_id: int, amount: str, key: str) -> int:
    from accounts.models import User
    from contracts import payments
    from contracts.models import Contract
    from tests.contracts.factories_contracts import milestone

    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        target = next(m for m in contract.milestones if m.amount >= Decimal(amount) and m.due is not None)
        payment, _ = payments.record_payment(
            milestone(contract, target.key), amount=Decimal(amount), received_on=PAID_AT.date(), reference=key,
            note="", idempotency_key=key * 32, actor=db.session.get(User, admin_id), now=PAID_AT)
        db.session.commit()
        return payment.id


def test_a_row_changed_beneath_the_chain_is_judged_even_while_the_transaction_writes_another(app, event, cf):
    from contracts.models import Reminder

    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    edited_id = _pay(app, contract_id, admin_id)
    with app.app_context():
        db.session.execute(text("UPDATE contract_payment SET note = 'edited' WHERE id = :id"), {"id": edited_id})
        db.session.commit()
    with app.app_context():
        edited = db.session.get(Payment, edited_id)
        other = Reminder(milestone_id=edited.milestone_id, kind="due_soon", as_of=date(2015, 5, 1), sent_at=NOW,
                         sent_to="organizer@example.org", carried=False)
        db.session.add(other)
        db.session.flush()
        assert audit.evidence_problem(other) is None  # this transaction's own row, not bound yet
        problem = audit.evidence_problem(edited)
        assert problem is not None and "changed beneath" in problem, problem
        db.session.rollback()


def _reminder(milestone_id: int, as_of: date):
    from contracts.models import Reminder

    return Reminder(milestone_id=milestone_id, kind="due_soon", as_of=as_of, sent_at=NOW,
                    sent_to="organizer@example.org", carried=False)


def test_an_entry_binds_the_rows_its_transaction_wrote_and_not_the_others_of_their_table(app, event, cf):
    from contracts.models import Contract, Reminder

    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    with app.app_context():
        milestones = [m.id for m in db.session.get(Contract, contract_id).milestones[:2]]
        ids = []
        for milestone_id in milestones:
            reminder = _reminder(milestone_id, date(2015, 5, 1))
            db.session.add(reminder)
            audit.record("reminder.test_send", reminder, actor=None, now=NOW)
            db.session.commit()
            ids.append(reminder.id)
    with app.app_context():
        changed = db.session.get(Reminder, ids[0])
        changed.sent_to = "secretariat@example.org"
        entry = audit.record("reminder.test_send", changed, actor=None, now=NOW)
        assert list(_entry_rows(entry)) == [f"Reminder:{ids[0]}"]
        db.session.rollback()


def test_a_row_this_transaction_deleted_is_its_own_until_an_entry_binds_the_deletion(app, event, cf):
    from contracts.models import Contract, Reminder

    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    with app.app_context():
        first, second = (m.id for m in db.session.get(Contract, contract_id).milestones[:2])
        kept, gone = _reminder(first, date(2015, 5, 1)), _reminder(second, date(2015, 5, 1))
        db.session.add_all([kept, gone])
        audit.record("reminder.test_send", kept, actor=None, now=NOW)
        db.session.commit()
        kept_id, gone_id = kept.id, gone.id
    with app.app_context():
        gone = db.session.get(Reminder, gone_id)
        db.session.delete(gone)
        db.session.flush()
        # Deleted here, not yet recorded: the transaction's own change, not a row deleted beneath the chain.
        assert audit.evidence_problem(gone) is None
        # Another row of the same table is still judged against its binding.
        db.session.execute(text("UPDATE contract_reminder SET sent_to = 'x@example.org' WHERE id = :id"),
                           {"id": kept_id})
        problem = audit.evidence_problem(db.session.get(Reminder, kept_id))
        assert problem is not None and "changed beneath" in problem, problem
        db.session.rollback()
