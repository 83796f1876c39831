"""The contract PDF, rendered by WeasyPrint through evidence.pdf and read back with pypdf: what it says, and that the
issued file is stored once, hashed, and served only while its bytes still match."""

import hashlib
import io
import re

import pytest
from pypdf import PdfReader
from sqlalchemy import select, update

from accounts.models import User
from contracts import queries, services
from core.db import db
from evidence.audit import AuditEntry, Checkpoint, verify_chain
from tests.conftest import login
from tests.contracts.factories_contracts import ISSUED_AT, issued_contract, selected_bid


def pdf_text(data: bytes) -> str:
    reader = PdfReader(io.BytesIO(data))
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))


@pytest.fixture
def issued(app, event, make):
    """A contract issued with the real renderer; returns (contract id, owner id)."""
    owner_id = make.user(roles=("bidder",), email="organizer@example.org")
    admin_id = make.user(roles=("admin",), email="secretariat@example.org")
    with app.app_context():
        admin = db.session.get(User, admin_id)
        bid = selected_bid(event, owner_id)
        contract = issued_contract(bid, admin=admin, upload_dir=app.config["UPLOAD_DIR"],
                                   render=services.render_contract_pdf)
        db.session.commit()
        return contract.id, owner_id


def test_the_issued_pdf_names_the_parties_the_amounts_the_deadlines_and_fides_account(app, issued):
    contract_id, _ = issued
    with app.app_context():
        from contracts.models import Contract

        contract = db.session.get(Contract, contract_id)
        data = queries.pdf_path(app.config["UPLOAD_DIR"], contract).read_bytes()
        reg = contract.regulation
        assert hashlib.sha256(data).hexdigest() == contract.pdf_sha256 and len(data) == contract.pdf_size
        text = pdf_text(data)
        reference = contract.reference
    # the parties and the signature blocks
    assert "World Chess Federation (FIDE)" in text and "Chess Federation of Ukraine" in text
    assert "Viktor Kapustin, President" in text
    assert f"Contract for the organisation of the {reg.event.title}" in text
    # the event, dates and venue with the schedule
    assert "Potocki Palace, Lviv, Ukraine" in text and "Opening ceremony" in text and "Closing ceremony" in text
    # the days before game 1 (Art. 3.1, 3.2, 5.1) the organizer hosts, dated from game 1 (12 October here)
    flat = " ".join(text.split())
    assert "Fri 9 Oct 2015 The players may inspect their accommodation at the venue (Art. 3.1)" in flat
    assert "Sat 10 Oct 2015 The players inspect the playing hall with the Chief Arbiter, FIDE and the organizer at " \
           "15:00 (Art. 3.2)" in flat
    assert "The days before game 1 are days the organizer hosts the players and officials." in flat
    # amounts as formatted, the two deadlines of 15.6.2
    assert "€200,000.00" in text and "€100,000.00" in text and "€197,500.00" in text and "€40,000.00" in text
    assert "30 June 2015" in text and "31 August 2015" in text
    # the prize shares for every outcome, home match included (Hou Yifan's 5% of 13.3)
    assert "If Hou Yifan (CHN) wins in the tie-break games" in text and "€10,000.00" in text
    # FIDE's bank account and the regulations by reference
    assert "CH54 0024 3243 3420 8763 Y" in text and "UBSWCHZH80A" in text
    assert reg.event.regulations_title in text
    assert reg.sha256[:32] in text.replace(" ", "")
    assert reference in text and "DRAFT" not in text


def test_the_stored_pdf_is_served_as_issued_and_refused_once_altered(app, issued):
    contract_id, owner_id = issued
    client = app.test_client()
    with app.app_context():
        from contracts.models import Contract

        contract = db.session.get(Contract, contract_id)
        path = queries.pdf_path(app.config["UPLOAD_DIR"], contract)
        original = path.read_bytes()
        email = db.session.get(User, owner_id).email
    assert login(client, email).status_code == 302
    response = client.get(f"/contracts/{contract_id}/contract.pdf")
    assert response.status_code == 200 and response.data == original
    assert response.mimetype == "application/pdf"
    response.close()
    path.write_bytes(original.replace(b"200,000", b"100,000") + b"%")
    try:
        response = client.get(f"/contracts/{contract_id}/contract.pdf")
        assert response.status_code == 409
        assert "no longer matches the SHA-256" in response.get_data(as_text=True)
        response.close()
    finally:
        path.write_bytes(original)


def test_a_draft_pdf_is_rendered_on_the_spot_and_marked_draft(app, event, make, ctx):
    admin = db.session.get(User, make.user(roles=("admin",)))
    bid = selected_bid(event, make.user())
    draft = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    text = pdf_text(services.render_contract_pdf(draft, services.build_terms(draft), draft=True))
    assert "DRAFT — not issued, not binding" in text
    assert "the date is set when the contract is issued" in text


def test_the_issued_pdf_prints_the_audit_head_before_its_issue_entry_and_it_verifies(app, issued):
    contract_id, owner_id = issued
    client = app.test_client()
    with app.app_context():
        email = db.session.get(User, owner_id).email
    login(client, email)
    response = client.get(f"/contracts/{contract_id}/contract.pdf")
    assert response.status_code == 200
    flat = re.sub(r"\s+", "", pdf_text(response.data))  # the digest may wrap across lines
    response.close()
    found = re.search(r"rendered for issue: the last entry written before its issue was recorded \(entry number "
                      r"and its MAC\):(\d+:[0-9a-f]{64})".replace(" ", ""), flat)
    assert found, flat[-800:]
    printed = Checkpoint.parse(found.group(1))
    with app.app_context():
        issue = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "contract.issue")).one()
        before = db.session.scalars(select(AuditEntry).where(AuditEntry.id < issue.id)
                                    .order_by(AuditEntry.id.desc()).limit(1)).one()
        assert printed == Checkpoint(before.id, before.hash)
        assert issue.data_dict["pdf_checkpoint"] == str(printed)
        report = verify_chain(expect=printed)
        assert report.ok, report.reason
        db.session.execute(update(AuditEntry).where(AuditEntry.id == printed.seq).values(actor_label="someone"))
        report = verify_chain(expect=printed)
        assert report.broken_at == printed.seq
        db.session.rollback()


def test_a_draft_pdf_prints_no_checkpoint(app, event, make, ctx):
    admin = db.session.get(User, make.user(roles=("admin",)))
    draft = services.create_contract(selected_bid(event, make.user()), actor=admin, now=ISSUED_AT)
    text = pdf_text(services.render_contract_pdf(draft, services.build_terms(draft), draft=True,
                                                 checkpoint=Checkpoint(1, "a" * 64)))
    assert "Audit checkpoint" not in text
