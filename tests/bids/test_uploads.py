"""Uploads: a document is accepted only if it is a PDF that opens safely; the served name is the server's, the
uploaded name only text to show (issue 12)."""

import re

import pytest
from sqlalchemy import select

from bids.models import BidDocument
from core.db import db
from evidence.storage import display_name
from tests import pdfs
from tests.bids.web import start_bid, upload

ADVICE = "Save or scan it as PDF and upload it again."
HOSTILE = [
    ("setup.exe", pdfs.EXECUTABLE, "is not a PDF (its content does not start like a PDF, whatever its name)"),
    ("report.html", pdfs.HTML, "is not a PDF (its content does not start like a PDF, whatever its name)"),
    ("header.pdf", pdfs.HEADER_ONLY, "is not a PDF that can be opened (it starts like one, but reading it failed"),
    ("locked.pdf", pdfs.encrypted_pdf(), "is encrypted (protected by a password), so it cannot be checked or read "
                                        "by the reviewers; save it without protection"),
    ("script.pdf", pdfs.javascript_pdf(), "contains JavaScript"),
    ("hidden-script.pdf", pdfs.javascript_pdf().replace(b"/JavaScript", b"/Java#53cript"), "contains JavaScript"),
    ("launch.pdf", pdfs.launch_pdf(), "contains an action that launches another program"),
    ("hidden-launch.pdf", pdfs.launch_pdf().replace(b"/Launch", b"/Launc#68"),
     "contains an action that launches another program"),
    ("empty.pdf", pdfs.no_page_pdf(), "has no page"),
    ("orphan-script.pdf", pdfs.valid_pdf() + b"\n99 0 obj << /S /JavaScript /JS (app.alert(1)) >> endobj\n",
     "contains JavaScript"),
]


@pytest.fixture(autouse=True)
def _practice(practice):
    return practice


@pytest.mark.parametrize(("name", "content", "reason"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_each_hostile_upload_is_refused_with_its_reason(client, app, login_as, name, content, reason):
    login_as("bidder")
    bid_id = start_bid(client)
    response = upload(client, bid_id, "signed_letter", content, name)
    page = client.get(response.location).get_data(as_text=True)
    assert f"The signed bid letter: {name} {reason}" in page
    assert ADVICE in page
    with app.app_context():
        assert db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id)).all() == []


def test_an_accepted_file_is_served_under_the_servers_name_with_its_name_shown_clean(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    upload(client, bid_id, "signed_letter", pdfs.valid_pdf(), "invoice\u202efdp.exe")
    upload(client, bid_id, "signed_letter", pdfs.valid_pdf(2), "letter\u200f\t.pdf")
    with app.app_context():
        first, second = db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id)
                                           .order_by(BidDocument.id)).all()
        assert first.original_name == "invoicefdp.exe"
        assert second.original_name == "letter.pdf"
        assert re.fullmatch(r"[0-9a-f]{32}\.pdf", second.stored_name)
    page = client.get(f"/bids/{bid_id}/edit/signature").get_data(as_text=True)
    assert "\u202e" not in page
    for doc, version in ((first, 1), (second, 2)):
        response = client.get(f"/bids/{bid_id}/documents/{doc.id}")
        assert response.status_code == 200
        assert response.headers["Content-Disposition"] == \
            f"attachment; filename=bid-{bid_id}-signed-letter-v{version}.pdf"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.mimetype == "application/pdf"
        response.close()


@pytest.mark.parametrize(("raw", "shown"), [
    ("../../etc/passwd.pdf", "passwd.pdf"),
    ("a\\b\\c.pdf", "c.pdf"),
    ("bid\x00.pdf", "bid.pdf"),
    ("letter\r\nSet-Cookie: x=1.pdf", "letterSet-Cookie: x=1.pdf"),
    ("\u2066left\u2069\u200b.pdf", "left.pdf"),
    ("\r\n", "document.pdf"),
    ("..", "document.pdf"),
    ("x" * 300, "x" * 200),
])
def test_display_names_lose_paths_control_and_bidi_characters(raw, shown):
    assert display_name(raw, "document.pdf") == shown
