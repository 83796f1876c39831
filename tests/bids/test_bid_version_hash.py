"""A submitted version's SHA-256 is taken over its data and documents in one fixed form (evidence.hashing's plain form),
whenever it was submitted: the dossier prints it and the audit log records it."""

from __future__ import annotations

import hashlib
import json

from accounts.models import User
from bids import services
from core.db import db, utcnow
from events.models import Event
from tests.bids.factories import valid_bid
from tests.pdfs import valid_pdf


def test_a_submitted_version_is_fingerprinted_in_the_plain_form(app, make, practice):
    with app.app_context():
        now = utcnow()
        owner = db.session.get(User, make.user(email="hash@example.org", roles=("bidder",)))
        event = db.session.get(Event, practice)
        bid = services.create_bid(event, owner=owner, actor=owner, now=now)
        services.apply_data(bid, valid_bid(event.regulation, signed_on=now.date(), venue_city="Kyiv–Lviv"))
        for kind in ("signed_letter", "guarantee"):
            services.store_document(bid, kind, filename="x.pdf", content=valid_pdf(),
                                    upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**6, actor=owner, now=now)
        version = services.submit_bid(bid, actor=owner, now=now)
        body = {"data": json.loads(version.data), "documents": json.loads(version.documents)}
        assert "Kyiv–Lviv" in version.data or "Kyiv\\u2013Lviv" in version.data
        assert version.sha256 == hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        db.session.rollback()
