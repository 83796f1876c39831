"""A section's page with documents (signature, guarantee, evaluation) is one form: uploading a file keeps the fields
typed beside it, whether the file is accepted or refused, and saving attaches a file that was chosen."""

import io
import re

import pytest
from sqlalchemy import select

from bids.models import Bid, BidDocument
from core.db import db
from tests import pdfs
from tests.bids.web import revision, start_bid

SIGNATURE = {"signatory_name": "Gia Giorgadze", "signatory_position": "President", "signed_on": "2014-09-01"}


@pytest.fixture(autouse=True)
def _practice(practice):
    return practice


def post_section(client, bid_id, section, fields, files, action):
    data = {"revision": revision(client, bid_id, section), "action": action, **fields,
            **{name: (io.BytesIO(content), filename) for name, (content, filename) in files.items()}}
    return client.post(f"/bids/{bid_id}/edit/{section}", data=data, content_type="multipart/form-data")


def saved(app, bid_id):
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        docs = [d.original_name for d in db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id))]
        return (bid.signatory_name, bid.signatory_position, bid.signed_on and bid.signed_on.isoformat()), docs


def test_upload_after_typing_the_signatory_keeps_and_saves_the_three_fields(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    response = post_section(client, bid_id, "signature", SIGNATURE,
                            {"file-signed_letter": (pdfs.valid_pdf(), "letter.pdf")}, "upload")
    assert response.status_code == 302
    page = client.get(response.location).get_data(as_text=True)
    assert "Signature: saved." in page and "The signed bid letter attached: letter.pdf" in page
    assert 'value="Gia Giorgadze"' in page and 'value="President"' in page
    assert saved(app, bid_id) == (("Gia Giorgadze", "President", "2014-09-01"), ["letter.pdf"])


def test_a_refused_upload_saves_the_fields_and_says_why_the_file_was_refused(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    response = post_section(client, bid_id, "signature", SIGNATURE,
                            {"file-signed_letter": (pdfs.HTML, "letter.html")}, "upload")
    # Issue 36: a refused file is an error like any other, answered 422 (not a redirect to a 200 page).
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert ("The signed bid letter: letter.html is not a PDF (its content does not start like a PDF, whatever its "
            "name). Save or scan it as PDF and upload it again.") in page
    assert "What you typed in the fields is saved; the file below was not attached." in page
    assert 'value="Gia Giorgadze"' in page
    assert saved(app, bid_id) == (("Gia Giorgadze", "President", "2014-09-01"), [])
    # The page that came back continues from the saved revision: sending it again is not refused as stale.
    again = post_section(client, bid_id, "signature", SIGNATURE,
                         {"file-signed_letter": (pdfs.valid_pdf(), "letter.pdf")}, "upload")
    assert again.status_code == 302


def test_attaching_a_letter_without_changing_a_field_says_it_was_saved(client, app, login_as):
    """Issue 36: "nothing had changed" right after "letter attached" read as if the upload had been lost."""
    login_as("bidder")
    bid_id = start_bid(client)
    post_section(client, bid_id, "signature", SIGNATURE, {}, "save")
    response = post_section(client, bid_id, "signature", SIGNATURE,
                            {"file-signed_letter": (pdfs.valid_pdf(), "letter.pdf")}, "upload")
    page = client.get(response.location).get_data(as_text=True)
    assert "The signed bid letter attached: letter.pdf" in page
    assert "Signature: saved." in page and "nothing had changed" not in page
    post_section(client, bid_id, "signature", SIGNATURE, {}, "save")
    assert "Signature: nothing had changed." in client.get(f"/bids/{bid_id}/edit/signature").get_data(as_text=True)


def test_a_refused_upload_beside_a_wrong_date_brings_every_typed_value_back(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    response = post_section(client, bid_id, "signature", {**SIGNATURE, "signed_on": "1 Sept"},
                            {"file-signed_letter": (b"", "")}, "upload")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'value="Gia Giorgadze"' in page and 'value="President"' in page and 'value="1 Sept"' in page
    assert "The signed bid letter: no file was chosen. Choose the PDF to upload." in page
    file_input = re.search(r'<input type="file"[^>]*>', page).group(0)
    assert 'aria-describedby="file-signed_letter-desc file-signed_letter-err' in file_input
    assert 'aria-invalid="true"' in file_input
    assert saved(app, bid_id) == ((None, None, None), [])


@pytest.mark.parametrize(("section", "kind", "fields"), [
    ("guarantee", "guarantee", {"guarantee_offered": "yes", "guarantee_bank": "Bank of Georgia",
                                "guarantee_amount_eur": "300000.00", "guarantee_valid_until": "2016-01-31"}),
    ("evaluation", "supporting", {"eval_visas": "Visa-free entry for most countries."}),
])
def test_save_on_every_section_with_a_document_attaches_the_chosen_file_and_keeps_the_fields(
        client, app, login_as, section, kind, fields):
    login_as("bidder")
    bid_id = start_bid(client)
    response = post_section(client, bid_id, section, fields, {f"file-{kind}": (pdfs.valid_pdf(), "scan.pdf")},
                            "save")
    assert response.status_code == 302
    page = client.get(response.location).get_data(as_text=True)
    assert "attached: scan.pdf" in page
    for value in fields.values():
        assert value in page
    with app.app_context():
        assert [d.kind for d in db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id))] == [kind]

