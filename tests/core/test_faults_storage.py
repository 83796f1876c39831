"""The upload folder full (ENOSPC) or read-only (EROFS), for real: a small tmpfs mounted for the test, filled up or
remounted read-only (the tests run as root, so a chmod would not stop a write). An upload and a rendered dossier
get a 503 saying what happened and that nothing was recorded: no row without its file, no file without its row."""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import func, select

from bids.models import BidDocument
from board.models import Dossier
from core.db import db
from evidence.audit import AuditEntry
from tests.bids.web import start_bid, upload
from tests.board.conftest import scored_call
from tests.conftest import login
from tests.faults import fill, remount_read_only, tmpfs
from tests.pdfs import valid_pdf
from tests.scoring.factories_scoring import ScoringFactory

FAULTS = {
    "full": (fill, "The document could not be stored: the server's upload folder is full. Nothing was recorded; "
                   "tell the secretariat."),
    "read-only": (remount_read_only, "The document could not be stored: the server's upload folder is read-only. "
                                     "Nothing was recorded; tell the secretariat."),
}


@pytest.fixture
def broken_uploads(app, tmp_path, request):
    """The app's upload folder moved onto a tmpfs with the fault named by the test's parameter; returns (folder,
    the message expected)."""
    make_fault, message = FAULTS[request.param]
    saved = app.config["UPLOAD_DIR"]
    with tmpfs(tmp_path / "uploads") as folder:
        app.config["UPLOAD_DIR"] = str(folder)
        try:
            yield folder, make_fault, message
        finally:
            app.config["UPLOAD_DIR"] = saved


def files_in(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "filler")


def assert_refused(response, message: str) -> None:
    html = response.get_data(as_text=True)
    assert response.status_code == 503, html[:1000]
    assert str(escape(message)) in html and "Traceback" not in html


@pytest.mark.parametrize("broken_uploads", list(FAULTS), indirect=True)
def test_an_upload_into_a_broken_folder_is_refused_and_records_nothing(app, client, login_as, practice,
                                                                      broken_uploads):
    folder, make_fault, message = broken_uploads
    login_as("bidder")
    bid_id = start_bid(client)
    make_fault(folder)
    assert_refused(upload(client, bid_id, "signed_letter", valid_pdf(), "letter.pdf"), message)
    with app.app_context():
        assert db.session.scalar(select(func.count(BidDocument.id)).where(BidDocument.bid_id == bid_id)) == 0
        assert db.session.scalar(select(func.count(AuditEntry.id)).where(AuditEntry.action == "bid.document")) == 0
    assert files_in(folder) == []  # nor a partly written file
    page = client.get(f"/bids/{bid_id}/edit/signature")
    assert page.status_code == 200  # the bid itself is untouched and still served


@pytest.mark.parametrize("broken_uploads", list(FAULTS), indirect=True)
def test_a_rendered_dossier_that_cannot_be_stored_is_refused_and_records_nothing(app, client, make, event,
                                                                                broken_uploads):
    folder, make_fault, message = broken_uploads
    scored = scored_call(app, event, ScoringFactory(app, make))
    make.user(email="faults-board@example.org", roles=("board",), federation="FRA")
    login(client, "faults-board@example.org")
    make_fault(folder)
    assert_refused(client.get(f"/board/fwwcm-2015/bids/{scored['lviv']}/dossier.pdf"), message)
    with app.app_context():
        assert db.session.scalar(select(func.count(Dossier.id))) == 0
        assert db.session.scalar(select(func.count(AuditEntry.id)).where(AuditEntry.action.like("dossier.%"))) == 0
    assert files_in(folder) == []
