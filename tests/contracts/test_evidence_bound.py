"""Evidence rows bound to the audit chain (issue 25, finding 5): a payment edited in its table, a stored contract
swapped with its hash column updated to match, a row inserted without an audit entry are named by
`flask audit verify`, and a swapped file is refused to whoever asks for it."""

from datetime import date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import delete, select, text

from contracts import payments, queries
from contracts.models import Contract, Payment
from core.db import db
from evidence.audit import AuditEntry, evidence_problem, latest_binding
from evidence.rows import AuditRow
from tests.contracts.factories_contracts import ISSUED_AT, milestone
from tests.contracts.test_contracts_pages import as_user
from tests.pdfs import valid_pdf
from tests.signing import sign, trusted_signer

PAID_AT = ISSUED_AT + timedelta(days=3)


def _pay(app, contract_id: int, admin_id: int, amount: str = "4000.00") -> int:
    from accounts.models import User

    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        target = next(m for m in contract.milestones if m.amount >= Decimal(amount) and m.due is not None)
        payment, _ = payments.record_payment(
            milestone(contract, target.key), amount=Decimal(amount), received_on=PAID_AT.date(), reference="wire 1",
            note="", idempotency_key="k" * 32, actor=db.session.get(User, admin_id), now=PAID_AT)
        db.session.commit()
        return payment.id


def _verify(app, runner):
    with app.app_context():
        return runner.invoke(args=["audit", "verify"])


def test_a_clean_flow_verifies_intact_with_every_row_bound(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    _pay(app, contract_id, admin_id)
    result = _verify(app, runner)
    assert result.exit_code == 0, result.output
    assert "evidence intact:" in result.output and "not bound" not in result.output
    with app.app_context():
        payment = db.session.scalars(select(Payment)).one()
        binding, entry, _ = latest_binding("Payment", str(payment.id))
        assert entry.action == "payment.record" and binding.digest in entry.rows


def test_a_payment_amount_edited_in_its_table_is_named_by_audit_verify(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    payment_id = _pay(app, contract_id, admin_id)
    with app.app_context():
        entry_id = latest_binding("Payment", str(payment_id))[1].id
        db.session.execute(text("UPDATE contract_payment SET amount = 5000 WHERE id = :id"), {"id": payment_id})
        db.session.commit()
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert "audit log intact" in result.output  # the chain itself is whole: only the evidence shows the edit
    assert (f"payment {payment_id}: amount is 5000.00 in the table, 4000.00 in the audit log; the audit log (entry "
            f"{entry_id}) recorded a row with digest") in result.output
    assert "— changed beneath the chain" in result.output
    assert "evidence BROKEN: 1 finding(s)" in result.output


def test_a_row_inserted_without_an_audit_entry_is_named(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    payment_id = _pay(app, contract_id, admin_id)
    with app.app_context():
        db.session.execute(text(
            "INSERT INTO contract_payment (milestone_id, kind, amount, received_on, reference, note, "
            "idempotency_key, recorded_at) SELECT milestone_id, kind, amount, received_on, 'forged', note, "
            "'forged-key-000000000000000000000', recorded_at FROM contract_payment WHERE id = :id"),
            {"id": payment_id})
        forged = db.session.scalar(select(Payment.id).where(Payment.reference == "forged"))
        db.session.commit()
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert f"payment {forged}: no audit entry records it — inserted beneath the chain" in result.output


def test_a_row_written_before_digests_is_reported_as_not_bound_not_as_tampering(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    payment_id = _pay(app, contract_id, admin_id)
    with app.app_context():
        # What the migration leaves for a row already in the database: a marker, no entry.
        db.session.execute(delete(AuditRow).where(AuditRow.object_type == "Payment"))
        db.session.execute(text("UPDATE audit_entry SET rows = NULL WHERE action = 'payment.record'"))
        db.session.add(AuditRow(entry_id=None, object_type="Payment", object_id=str(payment_id), digest="", form=""))
        db.session.commit()
    result = _verify(app, runner)
    # The entry's rows were blanked to make the legacy case, so the chain breaks there: check the evidence alone.
    with app.app_context():
        from evidence.audit import verify_evidence

        report = verify_evidence(app.config["UPLOAD_DIR"])
    assert report.unbound == (f"payment {payment_id}: not bound (written before digests)",)
    assert not [p for p in report.problems if p.startswith(f"payment {payment_id}")]
    assert result.exit_code == 1  # the blanked entry itself no longer matches its MAC


def test_a_deleted_binding_is_named(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    payment_id = _pay(app, contract_id, admin_id)
    with app.app_context():
        entry_id = latest_binding("Payment", str(payment_id))[1].id
        db.session.execute(delete(AuditRow).where(AuditRow.object_type == "Payment"))
        db.session.commit()
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert (f"audit entry {entry_id}: the rows it binds under its MAC differ from its bindings index (audit_row) — "
            "the index was edited") in result.output
    assert f"payment {payment_id}: no audit entry records it" in result.output


def test_a_stored_contract_swapped_with_its_hash_column_updated_is_named_and_refused(app, event, cf, runner,
                                                                                      signing_ca):
    admin_id, organizer_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=organizer_id, admin_id=admin_id)
    organizer = as_user(app, organizer_id)
    response = organizer.get(f"/contracts/{contract_id}/contract.pdf")
    assert response.status_code == 200
    response.close()
    assert _verify(app, runner).exit_code == 0
    forged = sign(valid_pdf(2), trusted_signer(signing_ca))  # another signed PDF, valid on its own
    import hashlib

    forged_sha = hashlib.sha256(forged).hexdigest()
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        reference, recorded = contract.reference, contract.pdf_sha256
        entry_id = latest_binding("Contract", str(contract_id))[1].id
        queries.pdf_path(app.config["UPLOAD_DIR"], contract).write_bytes(forged)
        db.session.execute(text("UPDATE contract SET pdf_sha256 = :sha, pdf_size = :size WHERE id = :id"),
                           {"sha": forged_sha, "size": len(forged), "id": contract_id})
        db.session.commit()
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert (f"contract {contract_id}: pdf_sha256 is {forged_sha} in the table, {recorded} in the audit log"
            in result.output)
    assert (f"contract {contract_id}: its stored file" in result.output and f"has pdf_sha256 {forged_sha} in the "
            f"table, but the audit log (entry {entry_id}) recorded {recorded} — the file's hash was changed "
            "beneath the chain") in result.output
    assert f"has SHA-256 {forged_sha[:16]}…, the audit log (entry {entry_id}) recorded {recorded[:16]}…" in (
        result.output)
    response = organizer.get(f"/contracts/{contract_id}/contract.pdf")
    page = response.get_data(as_text=True)
    response.close()
    assert response.status_code == 409 and response.data != forged
    assert f"The stored file of contract {reference} is not served: its record was tampered with" in page
    assert "changed beneath the chain" in page
    with app.app_context():
        refusal = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "file.refused")).one()
        assert (refusal.object_type, refusal.object_id) == ("Contract", str(contract_id))
        assert refusal.rows is None  # a refusal binds nothing: the tampered row is not laundered
    assert _verify(app, runner).exit_code == 1  # still named after the refusal was recorded


def test_a_file_swapped_without_touching_its_row_is_named_by_verify(app, event, cf, runner):
    admin_id = cf.admin()
    contract_id = cf.contract(event, admin_id=admin_id)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        queries.pdf_path(app.config["UPLOAD_DIR"], contract).write_bytes(valid_pdf(3))
    result = _verify(app, runner)
    assert result.exit_code == 1
    assert f"contract {contract_id}: its stored file" in result.output and "its bytes were changed" in result.output


def test_evidence_problem_passes_a_row_as_recorded(app, event, cf):
    contract_id = cf.contract(event)
    with app.app_context():
        assert evidence_problem(db.session.get(Contract, contract_id)) is None


def test_bound_forms_use_decimal_text_and_iso_dates(app, event, cf):
    admin_id = cf.admin()
    payment_id = _pay(app, cf.contract(event, admin_id=admin_id), admin_id)
    with app.app_context():
        binding = latest_binding("Payment", str(payment_id))[0]
        values = dict(__import__("json").loads(binding.form)[1])
    assert values["amount"] == "4000.00" and values["received_on"] == PAID_AT.date().isoformat()
    assert datetime.fromisoformat(values["recorded_at"]).utcoffset() == timedelta(0)
    assert isinstance(date.fromisoformat(values["received_on"]), date)


def test_the_trust_recheck_leaves_a_contract_changed_beneath_the_chain_as_it_was_judged(app, event, cf, runner,
                                                                                      signing_ca):
    import hashlib

    from cryptography.hazmat.primitives.serialization import Encoding

    from accounts.models import User
    from evidence import trust

    admin_id, organizer_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=organizer_id, admin_id=admin_id)
    admin = as_user(app, admin_id)
    with app.app_context():
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
    # (the organizer's CA is not on the trust list yet: the secretariat accepts the signature explicitly)
    response = admin.post(f"/contracts/{contract_id}/sign", content_type="multipart/form-data", data={
        "file": (__import__("io").BytesIO(sign(issued, trusted_signer(signing_ca), field="Organizer")), "c.pdf"),
        "accept_untrusted": "The organizer confirmed the signature by telephone."})
    assert response.status_code == 302
    response.close()
    forged = sign(issued, trusted_signer(signing_ca, name="Someone Else"), field="Organizer")
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        judged = contract.signed_pdf_signatures
        queries.pdf_path(app.config["UPLOAD_DIR"], contract, signed=True).write_bytes(forged)
        db.session.execute(text("UPDATE contract SET signed_pdf_sha256 = :sha WHERE id = :id"),
                           {"sha": hashlib.sha256(forged).hexdigest(), "id": contract_id})
        db.session.commit()
        actor, now = db.session.get(User, admin_id), datetime.now(ISSUED_AT.tzinfo)
        trust.add_certificate(signing_ca.other_ca.public_bytes(Encoding.PEM), actor=actor, now=now)
        # The one signed document, altered beneath the audit log, is skipped: its judgement stands.
        assert trust.recheck_all(actor=actor, now=now, upload_dir=app.config["UPLOAD_DIR"]) == 0
        db.session.commit()
        assert db.session.get(Contract, contract_id).signed_pdf_signatures == judged
