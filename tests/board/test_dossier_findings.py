"""The dossier the Board reads carries the bid's compliance report as the bid's page does: a failing finding is in
it, with its badge's word, its source and its message (hiding one from the PDF fails here)."""

from __future__ import annotations

import io
from decimal import Decimal

from pypdf import PdfReader

from bids.models import Bid
from bids.services import compliance
from core.db import db
from core.findings import Outcome
from tests.board.conftest import complete
from tests.conftest import login


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_dossier_shows_a_failing_finding_of_the_bid(app, scored, make):
    # Madrid's prize fund falls below the minimum after it went before the Board (an amendment does the same).
    complete(app, scored["madrid"], venue_country="ES", prize_fund_eur=Decimal("150000.00"))
    with app.app_context():
        bid = db.session.get_one(Bid, scored["madrid"])
        failing = [f for f in compliance(bid, today=(bid.submitted_at or bid.updated_at).date())
                   if f.outcome is Outcome.FAIL]
        expected = [_words(f"{Outcome.FAIL.label} {f.cite}: {f.message}") for f in failing]
    assert expected, "the bid fails no check: the test shows nothing"
    client = app.test_client()
    make.user(email="findings-board@example.org", roles=("board",), federation="FRA")
    login(client, "findings-board@example.org")
    response = client.get(f"/board/fwwcm-2015/bids/{scored['madrid']}/dossier.pdf")
    assert response.status_code == 200
    text = _words(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.data)).pages))
    response.close()
    for line in expected:
        assert line in text
