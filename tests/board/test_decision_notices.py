"""The mail server is down when the decision is recorded: the page says at once that the notices are queued, and
once the server is back every bidder gets the notice, exactly once, with an absolute link to the bid."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from board.models import Decision
from core.db import db, utcnow
from operations import delivery
from tests.conftest import login
from tests.mailservers import Inbox, free_port, smtp_server

pytestmark = pytest.mark.pdf_layout_once


def test_notices_written_while_the_mail_server_is_down_reach_every_bidder_once_it_is_back(app, scored, make):
    port = free_port()  # nothing listens there: the server is down
    saved = {k: app.config[k] for k in ("MAIL_ENABLED", "MAIL_SERVER", "MAIL_PORT", "BASE_URL")}
    app.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port,
                      BASE_URL="https://gambit.fide.example")
    try:
        board = app.test_client()
        make.user(email="board-member@example.org", roles=("board",), federation="FRA")
        login(board, "board-member@example.org")
        board.post("/board/fwwcm-2015/vote", data={"choice": str(scored["lviv"])})
        admin = app.test_client()
        make.user(email="sec@example.org", roles=("admin",))
        login(admin, "sec@example.org")
        response = admin.post("/board/fwwcm-2015/decision", data={
            "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
            "rationale": ""}, follow_redirects=True)
        page = response.get_data(as_text=True)
        assert response.status_code == 200
        assert ("The decision is recorded; the call is decided. 3 notices to the bidders are in the outbox and being "
                "sent now; the outbox shows each one&#39;s delivery.") in page
        with app.app_context():
            decision = db.session.scalars(select(Decision)).one()
            assert decision.bidders_notified
        # the decision links its notices
        assert f'3 queued — <a href="/admin/outbox/?about=decision:{decision.id}">see them in the outbox</a>' in page

        # The worker's first attempt: the server refuses; nothing is lost.
        with app.app_context():
            assert delivery.deliver_due() == 0
        listed = admin.get(f"/admin/outbox/?about=decision:{decision.id}").get_data(as_text=True)
        assert listed.count("Connection refused") == 3 and "Messages 1–3 of 3 about Decision on the" in listed

        with smtp_server(port, Inbox()) as inbox:
            with app.app_context():
                assert delivery.deliver_due(lambda: utcnow() + timedelta(minutes=2)) == 3
                assert delivery.deliver_due(lambda: utcnow() + timedelta(hours=6)) == 0  # exactly once
        assert sorted(m["Subject"].rsplit(": ", 1)[1] for m in inbox.messages) == [
            "the decision on your bid", "the decision on your bid", "your bid is selected"]
        for bid_id in (scored["lviv"], scored["tbilisi"], scored["madrid"]):
            [notice] = [m for m in inbox.messages if f"https://gambit.fide.example/bids/{bid_id}\n"
                        in m.get_content().replace("\r\n", "\n")]
            assert notice["Message-ID"].endswith("@fide.local>") and notice["Date"]
        assert "3 sent" in admin.get("/board/fwwcm-2015/decision").get_data(as_text=True)
    finally:
        app.config.update(saved)
