"""The issued and the countersigned contract are served only while their stored bytes are unaltered."""

import io

from sqlalchemy import select

from contracts import queries
from contracts.models import Contract
from core.db import db
from evidence.audit import AuditEntry
from tests.contracts.test_contracts_pages import as_user
from tests.pdfs import javascript_pdf, valid_pdf
from tests.signing import sign, trusted_signer


def test_altered_issued_and_countersigned_contracts_are_refused(app, event, cf, signing_ca):
    admin_id, organizer_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=organizer_id, admin_id=admin_id)
    admin = as_user(app, admin_id)
    with app.app_context():
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
    signed = sign(issued, trusted_signer(signing_ca), field="Organizer")
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (io.BytesIO(signed), "countersigned.pdf"),
        "accept_untrusted": "The organizer's CA is not on the list yet; confirmed by telephone."},
        content_type="multipart/form-data")
    assert response.status_code == 302
    response.close()
    response = admin.get(f"/contracts/{contract_id}/signed.pdf")
    assert response.status_code == 200 and response.data == signed
    assert response.headers["Content-Disposition"].startswith("attachment")
    response.close()
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        reference = contract.reference
        issued_path = queries.pdf_path(app.config["UPLOAD_DIR"], contract)
        signed_path = queries.pdf_path(app.config["UPLOAD_DIR"], contract, signed=True)
    signed_path.write_bytes(valid_pdf(3))
    response = admin.get(f"/contracts/{contract_id}/signed.pdf")
    assert response.status_code == 409
    assert (f"The stored file of the countersigned contract {reference} no longer matches the SHA-256 recorded"
            in response.get_data(as_text=True))
    issued_path.write_bytes(issued_path.read_bytes() + b"%")
    response = admin.get(f"/contracts/{contract_id}/contract.pdf")
    assert response.status_code == 409
    assert f"The stored file of contract {reference} no longer matches" in response.get_data(as_text=True)
    with app.app_context():
        refused = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "file.refused")
                                     .order_by(AuditEntry.id)).all()
        assert [(e.object_type, e.object_id, e.data_dict["what"]) for e in refused] == [
            ("Contract", str(contract_id), f"the countersigned contract {reference}"),
            ("Contract", str(contract_id), f"contract {reference}")]


def test_a_hostile_countersigned_contract_is_refused_with_its_reason(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    admin = as_user(app, admin_id)
    response = admin.post(f"/contracts/{contract_id}/sign",
                          data={"file": (io.BytesIO(javascript_pdf()), "signed\u202efdp.exe")},
                          content_type="multipart/form-data")
    assert response.status_code == 422
    assert ("signedfdp.exe contains JavaScript. Scan or save the countersigned contract as PDF and upload it again."
            in response.get_data(as_text=True))
    response.close()
    with app.app_context():
        assert db.session.get(Contract, contract_id).signed_pdf_stored_name is None
