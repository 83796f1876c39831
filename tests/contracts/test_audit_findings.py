"""What `flask audit verify` and a file's download say of evidence rows, finding by finding, word for word (the
mutation run of evidence.audit, docs/mutation.md, found these sentences and counts unguarded): a row deleted, put
back, inserted, changed in several columns at once (long values cut), changed together with its recorded form, a
row whose model's evidence columns changed since it was bound; an entry whose MAC no longer covers its binding; a
stored file gone; the rows and files counted; a row written before digests among bound rows; and the entry that
binds rows under its MAC in one canonical text."""

import hashlib
import hmac
import io
import json
from datetime import UTC
from decimal import Decimal

import pytest
from sqlalchemy import func, select, text, update

from contracts import payments, queries
from contracts.models import Contract, MatchResult, Payment, Reminder
from core.db import db
from evidence import audit
from evidence.audit import AuditEntry, evidence_problem, latest_binding, verify_evidence
from evidence.rows import DELETED, AuditRow, evidence_models, file_columns, row_digest
from tests.contracts.factories_contracts import milestone
from tests.contracts.test_contracts_pages import as_user
from tests.contracts.test_evidence_bound import PAID_AT, _pay, _verify
from tests.contracts.test_evidence_forms import NOW, _pay_with, _reminder
from tests.signing import sign, trusted_signer


def _bound(object_type: str, object_id: int) -> tuple[int, str]:
    """(entry id, digest) of a row's latest binding."""
    binding, entry, _ = latest_binding(object_type, str(object_id))
    return entry.id, binding.digest


def _changed(label: str, differences: str, entry_id: int, digest: str) -> str:
    return (f"{label}: {differences}; the audit log (entry {entry_id}) recorded a row with digest {digest[:16]}… — "
            "changed beneath the chain")


def _forge_payment(copy_of: int) -> int:
    """A payment written straight into its table, as someone with database access would (no audit entry)."""
    db.session.execute(text(
        "INSERT INTO contract_payment (milestone_id, kind, amount, received_on, reference, note, "
        "idempotency_key, recorded_at) SELECT milestone_id, kind, amount, received_on, 'forged', note, "
        "'forged-key-000000000000000000000', recorded_at FROM contract_payment WHERE id = :id"), {"id": copy_of})
    return db.session.scalar(select(Payment.id).where(Payment.reference == "forged"))


def _counts() -> tuple[int, int]:
    """(evidence rows, stored files they name) now in the database, counted table by table."""
    rows = files = 0
    for model in evidence_models().values():
        rows += db.session.scalar(select(func.count()).select_from(model.__table__))
        for name_col, _ in file_columns(model):
            column = model.__table__.c[name_col]
            files += db.session.scalar(select(func.count()).where(column.is_not(None), column != ""))
    return rows, files


def test_a_row_deleted_beneath_the_chain_is_named_with_the_entry_and_digest_that_recorded_it(app, event, cf, runner):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    with app.app_context():
        entry_id, digest = _bound("Payment", payment_id)
        payment = db.session.get(Payment, payment_id)
        db.session.execute(text("DELETE FROM contract_payment WHERE id = :id"), {"id": payment_id})
        expected = (f"payment {payment_id}: the audit log (entry {entry_id}) recorded it (digest {digest[:16]}…), "
                    "but it is not in the table — deleted beneath the chain")
        assert evidence_problem(payment) == expected
        db.session.commit()
        rows, files = _counts()
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert expected in result.output.splitlines()
    assert f"evidence BROKEN: 1 finding(s) in {rows} rows and {files} stored files" in result.output
    assert files == 1


def test_a_row_deleted_by_an_entry_passes_and_put_back_beneath_the_chain_is_named(app, event, cf):
    contract_id = cf.contract(event)
    with app.app_context():
        reminder = _reminder(db.session.get(Contract, contract_id).milestones[0].id, NOW.date())
        db.session.add(reminder)
        audit.record("reminder.test_send", reminder, actor=None, now=NOW)
        db.session.commit()
        reminder_id = reminder.id
        kept = {c.name: getattr(reminder, c.name) for c in Reminder.__table__.columns}
        db.session.delete(reminder)
        deleted = audit.record("reminder.test_delete", actor=None, now=NOW, object_type="Reminder",
                               object_id=str(reminder_id))
        db.session.commit()
        report = verify_evidence(app.config["UPLOAD_DIR"])
        assert report.ok, report.problems
        db.session.execute(Reminder.__table__.insert().values(**kept))
        db.session.commit()
        assert verify_evidence(app.config["UPLOAD_DIR"]).problems == (
            f"reminder {reminder_id}: the audit log (entry {deleted.id}) recorded its deletion, yet it is in the "
            "table — put back beneath the chain",)


def test_every_changed_column_is_named_and_a_value_over_80_characters_is_cut(app, event, cf, runner):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    with app.app_context():
        entry_id, digest = _bound("Payment", payment_id)
        db.session.execute(update(Payment).where(Payment.id == payment_id).values(
            amount=Decimal("5000.00"), reference="y" * 80, note="x" * 81))
        db.session.commit()
        expected = _changed(f"payment {payment_id}", "amount is 5000.00 in the table, 4000.00 in the audit log; "
                            f"reference is {'y' * 80} in the table, wire 1 in the audit log; "
                            f"note is {'x' * 77}… in the table,  in the audit log", entry_id, digest)
        assert evidence_problem(db.session.get(Payment, payment_id)) == expected
    result = _verify(app, runner)
    assert result.exit_code == 1 and expected in result.output.splitlines()


def test_a_row_changed_with_its_recorded_form_is_named_as_such(app, event, cf, runner):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    with app.app_context():
        entry_id, digest = _bound("Payment", payment_id)
        db.session.execute(text("UPDATE contract_payment SET amount = 5000 WHERE id = :id"), {"id": payment_id})
        # The index's copy made to match the table: it no longer hashes to the digest the entry's MAC covers.
        form = db.session.scalar(select(AuditRow.form).where(AuditRow.object_type == "Payment"))
        db.session.execute(update(AuditRow).where(AuditRow.object_type == "Payment").values(
            form=form.replace('"4000.00"', '"5000.00"')))
        db.session.commit()
        expected = _changed(f"payment {payment_id}", "its recorded form in the bindings index (audit_row) was "
                            "edited too", entry_id, digest)
        assert evidence_problem(db.session.get(Payment, payment_id)) == expected
    result = _verify(app, runner)
    assert result.exit_code == 1 and expected in result.output.splitlines()


def test_a_contracts_file_hash_changed_with_its_recorded_form_is_checked_against_nothing_recorded(app, event, cf,
                                                                                                  runner):
    contract_id = cf.contract(event)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        name, on_disk = contract.pdf_stored_name, contract.pdf_sha256
        entry_id, _ = _bound("Contract", contract_id)
        db.session.execute(text("UPDATE contract SET pdf_sha256 = :sha WHERE id = :id"),
                           {"sha": "f" * 64, "id": contract_id})
        db.session.execute(update(AuditRow).where(AuditRow.object_type == "Contract").values(form=""))
        db.session.commit()
    result = _verify(app, runner)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert (f"contract {contract_id}: its stored file {name} has pdf_sha256 {'f' * 64} in the table, but the audit "
            f"log (entry {entry_id}) recorded empty — the file's hash was changed beneath the chain") in lines
    assert (f"contract {contract_id}: its stored file {name} has SHA-256 {on_disk[:16]}…, the audit log (entry "
            f"{entry_id}) recorded empty… — its bytes were changed") in lines


def test_a_row_bound_before_its_models_evidence_columns_changed_is_named_without_a_column(app, event, cf,
                                                                                       monkeypatch):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    # A release that no longer counts a column as evidence: every value left is as recorded, the form is not.
    monkeypatch.setattr(Payment, "__evidence__", Payment.__evidence__[:-1])
    with app.app_context():
        entry_id, digest = _bound("Payment", payment_id)
        assert evidence_problem(db.session.get(Payment, payment_id)) == _changed(
            f"payment {payment_id}", "its canonical form differs from the one the audit log recorded", entry_id,
            digest)


def test_an_entry_whose_mac_no_longer_covers_a_rows_binding_is_named_when_the_row_is_read(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    first = _pay(app, contract_id, admin_id)
    second = _pay_with(app, contract_id, admin_id, "100.00", "b")
    with app.app_context():
        # Each row is judged against its own latest binding, not the latest of its table.
        assert evidence_problem(db.session.get(Payment, first)) is None
        assert evidence_problem(db.session.get(Payment, second)) is None
        entry_id, _ = _bound("Payment", first)
        expected = (f"payment {first}: its record in the audit log (entry {entry_id}) does not hold under the "
                    "entry's MAC")
        db.session.execute(update(AuditEntry).where(AuditEntry.id == entry_id).values(data='{"forged": true}'))
        assert evidence_problem(db.session.get(Payment, first)) == expected
        db.session.rollback()
        db.session.execute(update(AuditEntry).where(AuditEntry.id == entry_id).values(rows=None))
        assert evidence_problem(db.session.get(Payment, first)) == expected
        db.session.rollback()


def test_a_row_is_inserted_beneath_the_chain_unless_the_migration_marked_it_as_written_before_digests(app, event,
                                                                                                     cf):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    with app.app_context():
        forged = _forge_payment(payment_id)
        inserted = f"payment {forged}: no audit entry records it — inserted beneath the chain"
        assert evidence_problem(db.session.get(Payment, forged)) == inserted
        # Markers of other rows, and a binding whose entry is not in the log, do not stand for this row's marker.
        db.session.add_all([AuditRow(entry_id=None, object_type="Payment", object_id=str(payment_id), digest=""),
                            AuditRow(entry_id=None, object_type="Reminder", object_id=str(forged), digest=""),
                            AuditRow(entry_id=10**6, object_type="Payment", object_id=str(forged), digest="x")])
        db.session.flush()
        assert evidence_problem(db.session.get(Payment, forged)) == inserted
        db.session.add(AuditRow(entry_id=None, object_type="Payment", object_id=str(forged), digest=""))
        db.session.flush()
        assert evidence_problem(db.session.get(Payment, forged)) is None
        db.session.rollback()


def test_a_row_written_before_digests_is_listed_and_the_rows_after_it_are_still_checked(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    first = _pay(app, contract_id, admin_id)
    with app.app_context():
        legacy = _forge_payment(first)
        db.session.add(AuditRow(entry_id=None, object_type="Payment", object_id=str(legacy), digest=""))
        db.session.commit()
    later = _pay_with(app, contract_id, admin_id, "100.00", "c")
    with app.app_context():
        assert legacy < later
        report = verify_evidence(app.config["UPLOAD_DIR"])
        assert report.ok and report.unbound == (f"payment {legacy}: not bound (written before digests)",)
        entry_id, digest = _bound("Payment", later)
        db.session.execute(text("UPDATE contract_payment SET note = 'edited' WHERE id = :id"), {"id": later})
        db.session.commit()
        report = verify_evidence(app.config["UPLOAD_DIR"])
    assert report.problems == (_changed(f"payment {later}", "note is edited in the table,  in the audit log",
                                        entry_id, digest),)


def test_a_stored_file_gone_from_the_folder_is_named(app, event, cf, runner):
    contract_id = cf.contract(event)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        queries.pdf_path(app.config["UPLOAD_DIR"], contract).unlink()
        name = contract.pdf_stored_name
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert f"contract {contract_id}: its stored file {name} is missing" in result.output.splitlines()


def test_a_row_of_a_two_word_model_is_named_in_words(app, event, cf):
    cf.contract(event)
    with app.app_context():
        db.session.execute(MatchResult.__table__.insert().values(
            event_id=event, winner_federation="UKR", decided_in="regular", completed_on=NOW.date(), recorded_at=NOW))
        result_id = db.session.scalar(select(MatchResult.id))
        assert verify_evidence(app.config["UPLOAD_DIR"]).problems == (
            f"match result {result_id}: no audit entry records it — inserted beneath the chain",)
        db.session.rollback()


@pytest.mark.pdf_layout_once
def test_audit_verify_counts_every_evidence_row_and_every_stored_file(app, event, cf, runner, signing_ca):
    admin_id, organizer_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=organizer_id, admin_id=admin_id)
    _pay(app, contract_id, admin_id)
    with app.app_context():
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
    response = as_user(app, admin_id).post(f"/contracts/{contract_id}/sign", content_type="multipart/form-data", data={
        "file": (io.BytesIO(sign(issued, trusted_signer(signing_ca), field="Organizer")), "c.pdf"),
        "accept_untrusted": "The organizer confirmed the signature by telephone."})
    assert response.status_code == 302
    response.close()
    with app.app_context():
        rows, files = _counts()
    assert files == 2 and rows > 2
    result = _verify(app, runner)
    assert result.exit_code == 0, result.output
    assert f"evidence intact: {rows} rows and {files} stored files match the audit log\n" in result.output


def test_an_entry_binds_its_rows_under_its_mac_as_sorted_compact_json(app, event, cf):
    from accounts.models import User

    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        reminder = _reminder(contract.milestones[0].id, NOW.date())
        db.session.add(reminder)
        audit.record("reminder.test_send", reminder, actor=None, now=NOW)
        db.session.commit()
        reminder_id = reminder.id
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        head = audit.checkpoint()
        # One transaction deletes the reminder and records a payment: its entry binds both.
        db.session.delete(db.session.get(Reminder, reminder_id))
        target = next(m for m in contract.milestones if m.amount >= Decimal("4000.00") and m.due is not None)
        payment, _ = payments.record_payment(
            milestone(contract, target.key), amount=Decimal("4000.00"), received_on=PAID_AT.date(),
            reference="wire 1", note="", idempotency_key="k" * 32, actor=db.session.get(User, admin_id),
            now=PAID_AT)
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.id > head.seq)).one()
        form = db.session.scalar(select(AuditRow.form).where(AuditRow.entry_id == entry.id,
                                                             AuditRow.object_type == "Payment"))
        rows = f'{{"Payment:{payment.id}":"{row_digest(form)}","Reminder:{reminder_id}":"{DELETED}"}}'
        assert entry.rows == rows
        at = PAID_AT.astimezone(UTC).isoformat(timespec="microseconds")
        payload = json.dumps(["gambit-audit-3", entry.id, head.digest, at, admin_id, entry.actor_label,
                              "payment.record", "Payment", str(payment.id), entry.data, rows],
                             separators=(",", ":"), ensure_ascii=False)
        key = app.config["AUDIT_KEY"].encode()
        assert entry.hash == hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
        db.session.rollback()

