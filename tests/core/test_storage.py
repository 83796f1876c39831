"""One way to read a stored file: served only while its bytes have the SHA-256 recorded when it was stored."""

import hashlib
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bids.models import BidDocument
from core.db import db
from evidence.audit import AuditEntry
from evidence.storage import StoredFileError, read_verified
from tests.bids.web import start_bid, upload
from tests.pdfs import valid_pdf

NOW = datetime(2015, 5, 1, 12, 0, tzinfo=UTC)


def _refusals():
    return db.session.scalars(select(AuditEntry).where(AuditEntry.action == "file.refused")
                              .order_by(AuditEntry.id)).all()


def test_an_intact_file_is_read(ctx, tmp_path):
    path = tmp_path / "a.pdf"
    path.write_bytes(b"content")
    assert read_verified(path, hashlib.sha256(b"content").hexdigest(), what="the thing", obj=None, actor=None,
                         now=NOW) == b"content"
    assert _refusals() == []


def test_an_altered_file_is_refused_with_an_audit_entry(ctx, tmp_path):
    path = tmp_path / "a.pdf"
    path.write_bytes(b"altered")
    recorded = hashlib.sha256(b"content").hexdigest()
    with pytest.raises(StoredFileError) as refused:
        read_verified(path, recorded, what="the thing", obj=None, actor=None, now=NOW,)
    found = hashlib.sha256(b"altered").hexdigest()
    assert str(refused.value) == (
        f"The stored file of the thing no longer matches the SHA-256 recorded when it was stored (recorded "
        f"{recorded[:16]}…, found {found[:16]}…): it was altered on disk, so it is not served. The refusal is "
        "recorded in the audit log; tell the secretariat, who can restore it from a backup.")
    [entry] = _refusals()
    assert entry.data_dict == {"what": "the thing", "file": "a.pdf", "recorded": recorded, "found": found}


def test_a_missing_file_is_refused_with_an_audit_entry(ctx, tmp_path):
    with pytest.raises(StoredFileError, match="The stored file of the thing is missing, so it is not served"):
        read_verified(tmp_path / "gone.pdf", "0" * 64, what="the thing", obj=None, actor=None, now=NOW)
    assert _refusals()[0].data_dict["found"] == "missing"


def test_an_altered_bid_document_is_refused_at_download(client, app, login_as, practice):
    login_as("bidder")
    bid_id = start_bid(client)
    content = valid_pdf()
    upload(client, bid_id, "signed_letter", content, "letter.pdf")
    with app.app_context():
        doc = db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id)).one()
        path = app.config["UPLOAD_DIR"] + f"/bids/{bid_id}/{doc.stored_name}"
    response = client.get(f"/bids/{bid_id}/documents/{doc.id}")
    assert response.status_code == 200 and response.data == content
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    response.close()
    with open(path, "wb") as fh:
        fh.write(content.replace(b"595", b"596"))
    response = client.get(f"/bids/{bid_id}/documents/{doc.id}")
    assert response.status_code == 409
    assert (f"The stored file of the signed bid letter of bid {bid_id} no longer matches the SHA-256 recorded when "
            "it was stored") in response.get_data(as_text=True)
    with app.app_context():
        [entry] = _refusals()
        assert (entry.object_type, entry.object_id) == ("BidDocument", str(doc.id))
