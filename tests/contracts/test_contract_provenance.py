"""The contract says where its terms come from (issue 13): the regulations by the SHA-256 of their text, the
call's data by its own; who selected the organizer as recorded; the guarantee's terms as the bidding procedure's.
Read back from the real PDF with pypdf."""

import hashlib
import io
import json
import re
from datetime import date

import pytest
from pypdf import PdfReader

from accounts.models import User
from board.models import Decision
from contracts import services
from core.db import db
from events.regulation import default_event_file
from tests.contracts.factories_contracts import ISSUED_AT, issued_contract, selected_bid


def pdf_text(data: bytes) -> str:
    reader = PdfReader(io.BytesIO(data))
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))


NO_MEETING = "The members could not meet before the deadline."
CONSULTED = [{"member": "Anna Aalto", "member_id": None, "advice": "Lviv.", "on": "2015-06-18"}]


def _contract_text(app, event, make, method: str | None) -> tuple[str, object]:
    owner_id = make.user(roles=("bidder",), email="organizer@example.org")
    admin_id = make.user(roles=("admin",), email="secretariat@example.org")
    with app.app_context():
        admin = db.session.get(User, admin_id)
        bid = selected_bid(event, owner_id)
        if method:
            by_president = method == "president"
            db.session.add(Decision(
                event_id=bid.event_id, method=method, selected_bid_id=bid.id, decided_on=date(2015, 6, 20),
                tally="{}", no_meeting_reason=NO_MEETING if by_president else "",
                consultations=json.dumps(CONSULTED if by_president else []), rationale="", ranking="{}",
                reviewed="[]", recorded_at=ISSUED_AT, recorded_by_id=admin.id))
            db.session.flush()
        contract = issued_contract(bid, admin=admin, upload_dir=app.config["UPLOAD_DIR"],
                                   render=services.render_contract_pdf)
        from contracts import queries

        text = pdf_text(queries.pdf_path(app.config["UPLOAD_DIR"], contract).read_bytes())
        reg = contract.regulation
        db.session.rollback()
        return text, reg


def test_section_8_names_the_regulations_by_their_texts_hash_and_the_data_by_its_own(app, event, make):
    """Before: §8 gave the data file's hash as "the Regulations". Now the regulations' text is identified by its
    SHA-256 (the file stored beside the call's data) and the call's data by its own."""
    text, reg = _contract_text(app, event, make, "board_vote")
    stored = (default_event_file().parent / reg.regulations_text.file).read_bytes()
    text_sha = hashlib.sha256(stored).hexdigest()
    flat = text.replace(" ", "")
    assert reg.regulations_text.sha256 == text_sha != reg.sha256
    assert f"SHA-256{text_sha}" in flat and f"Calldata:SHA-256{reg.sha256}" in flat


def test_the_contract_says_the_president_selected_when_the_president_decided(app, event, make):
    """Art. 15.5: "If a Presidential Board meeting cannot be held, the FIDE President takes the decision in
    consultation with the WCOC." The contract says who decided, as the decision records it."""
    text, _ = _contract_text(app, event, make, "president")
    assert ("selected by the FIDE President, a Presidential Board meeting not being possible, in consultation with "
            "the WCOC under Art. 15.5") in text
    assert ("Decided by the FIDE President because a Presidential Board meeting could not be held (The members could "
            "not meet before the deadline), in consultation with the WCOC (Anna Aalto, consulted on 18 June 2015), "
            "under Art. 15.5.") in text
    assert "selected by the FIDE Presidential Board" not in text


def test_the_contract_says_the_board_selected_after_a_board_vote(app, event, make):
    """Art. 15.5: "The FIDE Presidential Board shall decide which applicant shall be chosen.\""""
    text, _ = _contract_text(app, event, make, "board_vote")
    assert "selected by the FIDE Presidential Board under Art. 15.5" in text
    assert "FIDE President," not in text and "consultation with the WCOC" not in text


@pytest.mark.parametrize("method", ["board_vote"])
def test_the_guarantee_terms_are_the_bidding_procedures_not_the_articles(app, event, make, method):
    """Art. 15.2(j) asks only for "Any bank guarantees as described in the bidding procedure": the contract adds
    no guarantee clause of its own, and labels the procedure's terms as the procedure's."""
    text, _ = _contract_text(app, event, make, method)
    assert "It stays valid until every payment to FIDE is made" not in text
    assert ("Bidding procedure: bank guarantee terms (the call's bidding procedure (published with the call)): "
            "it covers prize fund and fide contribution and stays valid after 31 August 2015.") in text
