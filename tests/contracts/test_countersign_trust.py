"""Issue 25, finding 4: a countersignature by a certificate that is not trusted does not make the contract signed.
The secretariat may accept it explicitly, with a reason (kept on the contract and in the audit log, shown with the
signature), or put the organizer's certificate on the trust list. Real keys: a self-made one, and the run's CA."""

import io
import json
import re

from sqlalchemy import select

from contracts import queries
from contracts.models import Contract
from core.db import db
from evidence import signing, trust
from evidence.audit import AuditEntry
from tests.conftest import utcnow
from tests.contracts.test_contracts_pages import as_user, get
from tests.signing import sign, trusted_signer


def _issued_pdf(app, contract_id) -> bytes:
    with app.app_context():
        return queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()


def _self_made_signer():
    """A key and certificate made by the signer itself: on no trust list, issued by nobody anyone trusts."""
    key, cert = signing.make_ca("Mallory Selfmade", organisation="Nobody in particular", unit=None)
    return signing.issue_identity(key, cert, "Mallory Selfmade", "Nobody in particular", unit=None)


def test_a_countersignature_by_a_self_made_key_leaves_the_contract_issued(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    admin = as_user(app, admin_id)
    signed = sign(_issued_pdf(app, contract_id), _self_made_signer(), field="Organizer")
    response = admin.post(f"/contracts/{contract_id}/sign", data={"file": (io.BytesIO(signed), "signed.pdf")},
                          content_type="multipart/form-data")
    assert response.status_code == 422
    page = response.get_data(as_text=True).replace("&#39;", "'")
    response.close()
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "issued" and contract.signed_pdf_stored_name is None
        reference = contract.reference
    assert "signed.pdf: the organizer's signature is not trusted (signed by Mallory Selfmade" in page
    assert (f"not trusted (the signer's certificate is not on the secretariat's trust list, nor issued by one on "
            f"it)), so {reference} stays issued, not signed. Add the organizer's certificate (or the certification "
            "authority's that issued it) to the trust list and upload the file again, or accept this signature "
            "explicitly and say why.") in page


def test_the_secretariat_accepts_an_untrusted_countersignature_only_explicitly_with_a_reason(app, event, cf):
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    admin = as_user(app, admin_id)
    signed = sign(_issued_pdf(app, contract_id), _self_made_signer(), field="Organizer")
    reason = "The organizer's signatory confirmed the signature in person at FIDE's office on 2 July."
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (io.BytesIO(signed), "signed.pdf"), "accept_untrusted": reason}, content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)[-2000:]
    response.close()
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "signed" and contract.signature_accepted_reason == reason
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "contract.sign")).one()
        assert entry.data_dict["accepted_untrusted"] == reason
    page = get(admin, f"/contracts/{contract_id}").replace("&#39;", "'")
    assert "Countersignature: signed by Mallory Selfmade (Nobody in particular)" in page
    assert "The organizer's signature is not trusted; the secretariat accepted it explicitly (" in page
    assert reason in page


def test_a_countersignature_from_a_certificate_on_the_trust_list_signs_the_contract(app, event, cf, signing_ca):
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    with app.app_context():
        trust.add_certificate(signing.pem(signing_ca.ca), actor=None, now=utcnow())
        db.session.commit()
    admin = as_user(app, admin_id)
    signed = sign(_issued_pdf(app, contract_id), trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"),
                  field="Organizer")
    response = admin.post(f"/contracts/{contract_id}/sign", data={"file": (io.BytesIO(signed), "signed.pdf")},
                          content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)[-2000:]
    response.close()
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "signed" and contract.signature_accepted_reason is None


def test_a_countersignature_from_a_stale_page_is_refused(app, event, cf, signing_ca):
    """The form names the version of the contract it was shown: once signed from another page, a second filing
    from the first page is refused with what happened."""
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    admin = as_user(app, admin_id)
    page = get(admin, f"/contracts/{contract_id}")

    seen = re.search(r'<input[^>]*name="seen"[^>]*value="([^"]*)"', page).group(1)
    signed = sign(_issued_pdf(app, contract_id), _self_made_signer(), field="Organizer")
    data = {"accept_untrusted": "Confirmed by telephone.", "seen": seen}
    first = admin.post(f"/contracts/{contract_id}/sign", data={**data, "file": (io.BytesIO(signed), "a.pdf")},
                       content_type="multipart/form-data")
    assert first.status_code == 302
    again = admin.post(f"/contracts/{contract_id}/sign", data={**data, "file": (io.BytesIO(signed), "a.pdf")},
                       content_type="multipart/form-data")
    assert again.status_code == 422
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        at, reference = contract.signed_at, contract.reference
    assert (f"{reference} changed since this page was loaded: it is now signed at {at:%H:%M} UTC on "
            ) in again.get_data(as_text=True)


def _countersignature_trusted(app, contract_id) -> bool:
    """Whether the stored judgement of the contract's last signature (the organizer's) says it is trusted."""
    with app.app_context():
        stored = json.loads(db.session.get(Contract, contract_id).signed_pdf_signatures)
    return stored["signatures"][-1]["trusted"]


def test_a_certificate_put_on_the_trust_list_or_taken_off_judges_a_countersigned_contract_again(
        app, event, cf, signing_ca):
    """The trust list changes through the secretariat's page: the stored judgement of a contract accepted as
    untrusted turns trusted once its authority is added, and untrusted again once it is removed (the hook
    evidence.trust.recheck_signatures reaches the contracts' countersigned copies, not only the bids' letters)."""
    admin_id = cf.admin()
    contract_id = cf.contract(event, owner_id=cf.organizer(), admin_id=admin_id)
    admin = as_user(app, admin_id)
    signed = sign(_issued_pdf(app, contract_id), trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"),
                  field="Organizer")
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (io.BytesIO(signed), "signed.pdf"), "accept_untrusted": "Confirmed in person."},
        content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)[-2000:]
    response.close()
    assert _countersignature_trusted(app, contract_id) is False

    response = admin.post("/admin/trust", data={"file": (io.BytesIO(signing.pem(signing_ca.ca)), "ca.pem")},
                          content_type="multipart/form-data", follow_redirects=True)
    page = response.get_data(as_text=True)
    response.close()
    assert "is on the trust list; 1 stored document had its signatures checked again." in page
    assert _countersignature_trusted(app, contract_id) is True

    with app.app_context():
        cert_id = db.session.scalars(select(trust.TrustedCertificate.id)).one()
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    response = admin.post(f"/admin/trust/{cert_id}/remove", data={"csrf_token": csrf.group(1) if csrf else ""},
                          follow_redirects=True)
    page = response.get_data(as_text=True)
    response.close()
    assert "is off the trust list; 1 stored document had its signatures checked again." in page
    assert _countersignature_trusted(app, contract_id) is False
