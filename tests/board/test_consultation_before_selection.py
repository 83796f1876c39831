"""Art. 15.1 as written (issue 13, part 4; issue 23): "FIDE shall consult the federation where the sponsor proposes to
hold the FWWCM. If the federation refuses or is unable to co-operate, FIDE may still accept a proposal from a
potential sponsor." A sponsor's bid cannot be selected until the federation's answer is recorded, nor after a refusal
or inability until FIDE records that it accepts the proposal nonetheless. A federation's bid has no consultation.
There is no waiver: a case the regulations do not cover, or an unforeseen event, goes to the FIDE President under
Art. 16, recorded with its ground and reason. Through the routes, the API and the documents."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from bids.models import Bid
from board.models import Decision
from core.db import db
from evidence.audit import AuditEntry
from tests.board.test_board import vote
from tests.conftest import login

pytestmark = pytest.mark.pdf_layout_once

RULING_URL = "/board/fwwcm-2015/bids/{}/consultation/president"


def _sponsor(app, bid_id: int) -> None:
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.applicant_type = "sponsor"
        db.session.commit()


def _decide(client, bid_id: int):
    return client.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(bid_id), "decided_on": "2015-06-20", "rationale": ""})


def _admin(app, make):
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    return admin


def _item(page: str, bid_id: int) -> str:
    """The Board page's line on the consultation of one bid."""
    return page.split(f'id="consultation-{bid_id}"', 1)[1].split("</li>", 1)[0]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_a_federations_bid_has_no_consultation_state_or_form(app, scored, make):
    """The consultation is of "the federation where the sponsor proposes to hold the FWWCM": a federation's bid has
    none, on its page, the Board's page, the API or the dossier, and none can be recorded on it."""
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = _admin(app, make)
    page = admin.get(f"/bids/{scored['lviv']}").get_data(as_text=True)
    assert "Consultation of the host federation" not in page and 'id="consultation-form"' not in page
    assert "Pending" not in page and "/consultation" not in page
    # A form sent all the same (an old tab, a crafted post) is refused, and the page it comes back on offers none.
    refused = admin.post(f"/bids/{scored['lviv']}/consultation", data={"outcome": "", "note": ""})
    assert refused.status_code == 422
    assert 'id="consultation-form"' not in refused.get_data(as_text=True)
    board = admin.get("/board/fwwcm-2015").get_data(as_text=True)
    assert 'id="consultations"' not in board and 'id="consultation-' not in board  # no sponsor's bid before it
    api = admin.get(f"/api/v1/bids/{scored['lviv']}")
    assert api.status_code == 200 and "consultation" not in api.get_json()
    refused = admin.post(f"/bids/{scored['lviv']}/consultation", data={"outcome": "agreed", "note": ""})
    assert refused.status_code == 409
    assert ("FIDE consults the host federation on a sponsor&#39;s bid only; Ukrainian Chess Federation — Lviv, Ukraine "
            "is not a sponsor&#39;s bid.") in refused.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).consultation == "pending"  # untouched, and never shown
    # ... and the federation's bid is selected without any consultation
    assert _decide(admin, scored["lviv"]).status_code == 302


def test_a_sponsors_bid_is_not_selected_while_the_consultation_is_pending(app, scored, make):
    """Art. 15.1: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM." """
    _sponsor(app, scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = _admin(app, make)
    board = admin.get("/board/fwwcm-2015").get_data(as_text=True)
    assert "Art. 15.1: pending: the host federation&#39;s answer is not recorded" in _item(board, scored["lviv"])
    assert f'id="consultation-{scored["tbilisi"]}"' not in board  # a federation's bid is not listed
    bid_page = admin.get(f"/bids/{scored['lviv']}").get_data(as_text=True)
    assert 'id="consultation-form"' in bid_page and 'name="fide_accepts"' in bid_page
    api = admin.get(f"/api/v1/bids/{scored['lviv']}").get_json()["consultation"]
    assert api["state"] == "pending" and api["cite"] == "Art. 15.1" and api["blocks_selection"] is True
    response = _decide(admin, scored["lviv"])
    assert response.status_code == 422
    assert ("Art. 15.1: FIDE shall consult the federation where the sponsor proposes to hold the match. Ukrainian "
            "Chess Federation — Lviv, Ukraine is a sponsor's bid and the host federation's answer is not recorded: "
            "record it on the bid before the bid can be selected.") in _text(response.get_data(as_text=True))
    with app.app_context():
        assert db.session.scalars(select(Decision)).first() is None
        assert db.session.get(Bid, scored["lviv"]).status != "selected"


def test_a_refusal_allows_selection_once_fide_accepts_the_sponsors_proposal(app, scored, make):
    """Art. 15.1: "If the federation refuses or is unable to co-operate, FIDE may still accept a proposal from a
    potential sponsor." """
    _sponsor(app, scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = _admin(app, make)
    url = f"/bids/{scored['lviv']}/consultation"
    assert admin.post(url, data={"outcome": "refused", "note": "Letter of 2 June."}).status_code == 302
    response = _decide(admin, scored["lviv"])
    assert response.status_code == 422
    assert ("Art. 15.1: if the federation refuses or is unable to co-operate, FIDE may still accept a proposal "
            "from a potential sponsor. The host federation of Ukrainian Chess Federation — Lviv, Ukraine did not "
            "co-operate and FIDE has not recorded that it accepts the sponsor's proposal nonetheless") in _text(
        response.get_data(as_text=True))
    # FIDE's acceptance goes with a refusal or an inability only
    wrong = admin.post(url, data={"outcome": "agreed", "fide_accepts": "y", "note": ""})
    assert wrong.status_code == 422
    assert ("FIDE&#39;s acceptance of the sponsor&#39;s proposal nonetheless is recorded only when the federation "
            "refuses or is unable to co-operate.") in wrong.get_data(as_text=True)
    assert admin.post(url, data={"outcome": "unable", "fide_accepts": "y",
                                 "note": "No reply to three letters."}).status_code == 302
    with app.app_context():
        bid = db.session.get(Bid, scored["lviv"])
        assert bid.consultation == "unable" and bid.consultation_accepted_at is not None
        assert bid.consultation_accepted_by_id is not None
    page = admin.get(f"/bids/{scored['lviv']}").get_data(as_text=True)
    assert ("Art. 15.1: The federation is unable to co-operate (No reply to three letters.); FIDE accepts the "
            "sponsor&#39;s proposal nonetheless.") in page
    assert _decide(admin, scored["lviv"]).status_code == 302
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).status == "selected"


def test_the_president_decides_a_case_referred_under_article_16_with_its_ground(app, scored, make):
    """Art. 16: "any grounds that are not covered or any unforeseen event shall be referred to the FIDE President,
    for final decision." Recorded as such, never as a waiver under Art. 15.1."""
    _sponsor(app, scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    member = app.test_client()
    make.user(email="member@example.org", roles=("board",), federation="DEU")
    login(member, "member@example.org")
    url = RULING_URL.format(scored["lviv"])
    assert member.post(url, data={"grounds": "unforeseen", "reason": "No answer."}).status_code == 403
    president = app.test_client()
    make.user(email="pres@example.org", roles=("board",), federation="FRA", is_president=True)
    login(president, "pres@example.org")
    page = president.get("/board/fwwcm-2015").get_data(as_text=True)
    item = _item(page, scored["lviv"])
    assert url in item and "Record the President's decision (Art. 16)" in item
    assert "set aside" not in page.lower()
    reason = "The federation's offices closed after the flood; FIDE cannot reach it before the decision."
    no_ground = president.post(url, data={"reason": reason})
    assert no_ground.status_code == 422  # shown again, with why and what was typed
    html = no_ground.get_data(as_text=True)
    assert "Say which it is: a ground not covered by the regulations, or an unforeseen event." in html
    assert reason.replace("'", "&#39;") in html and 'aria-invalid="true"' in html
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).consultation_ruling_grounds is None
    assert president.post(url, data={"grounds": "unforeseen", "reason": reason}).status_code == 302
    with app.app_context():
        bid = db.session.get(Bid, scored["lviv"])
        assert (bid.consultation_ruling_grounds, bid.consultation_ruling_reason) == ("unforeseen", reason)
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "bid.president_ruling")).one()
        assert entry.object_id == str(bid.id)
        assert '"article": "16"' in entry.data and '"grounds": "unforeseen"' in entry.data
    item = _item(president.get("/board/fwwcm-2015").get_data(as_text=True), scored["lviv"])
    assert ("Art. 16: referred to the FIDE President as an unforeseen event; the President&#39;s final decision, "
            "that the bid may be selected without the host federation&#39;s answer: "
            + reason.replace("'", "&#39;")) in item
    assert "15.1" not in item
    api = president.get(f"/api/v1/bids/{scored['lviv']}").get_json()["consultation"]
    assert api["cite"] == "Art. 16" and api["state"] == "president" and api["blocks_selection"] is False
    admin = _admin(app, make)
    assert _decide(admin, scored["lviv"]).status_code == 302
    # Once decided, the record stays what the decision saw: another decision of the President is refused.
    again = president.post(url, data={"grounds": "not_covered", "reason": "Another reason."})
    assert again.status_code == 422
    assert "The decision is recorded: no case can be added to what it saw" in again.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).consultation_ruling_grounds == "unforeseen"


def test_an_answered_consultation_is_not_referred_to_the_president(app, scored, make):
    """A refusal or inability is covered by Art. 15.1 (FIDE may still accept the proposal): nothing for Art. 16."""
    _sponsor(app, scored["lviv"])
    admin = _admin(app, make)
    assert admin.post(f"/bids/{scored['lviv']}/consultation", data={"outcome": "refused"}).status_code == 302
    president = app.test_client()
    make.user(email="pres@example.org", roles=("board",), federation="FRA", is_president=True)
    login(president, "pres@example.org")
    page = president.get("/board/fwwcm-2015").get_data(as_text=True)
    assert RULING_URL.format(scored["lviv"]) not in page
    refused = president.post(RULING_URL.format(scored["lviv"]), data={"grounds": "unforeseen", "reason": "x"})
    assert refused.status_code == 422
    assert ("the host federation&#39;s answer is recorded (The federation refused to co-operate); the consultation "
            "is covered by Art. 15.1, not referred to the President.") in refused.get_data(as_text=True)


def test_the_dossier_and_the_pack_show_the_consultation_of_a_sponsors_bid_only(app, scored, make):
    """Art. 15.1: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM." """
    from flask import render_template

    from board.documents import dossier_context, pack_context
    from board.queries import ranking_report
    from events.models import Event

    _sponsor(app, scored["lviv"])
    with app.app_context(), app.test_request_context():
        bid = db.session.get(Bid, scored["lviv"])
        report = ranking_report(db.session.get(Event, scored["event"]))
        ctx = dossier_context(bid, report, identifier="X", now=bid.updated_at)
        assert ctx["consultation"]["state"] == "pending" and ctx["consultation"]["article"] == "15.1"
        html = render_template("pdf/dossier.html", **ctx, inputs_sha256="0" * 64)
        assert "Consultation of the host federation" in html and "Art. 15.1: pending" in html
        federation = db.session.get(Bid, scored["tbilisi"])
        ctx = dossier_context(federation, report, identifier="Y", now=federation.updated_at)
        assert ctx["consultation"] is None
        assert "Consultation of the host federation" not in render_template("pdf/dossier.html", **ctx,
                                                                            inputs_sha256="0" * 64)
        pack = pack_context(bid.event, report, [], identifier="P", now=bid.updated_at)
        rows = {r["bid"].id: r for r in pack["rows"]}
        assert rows[bid.id]["consultation"]["blocks_selection"] is True
        assert rows[federation.id]["consultation"] is None
        html = render_template("pdf/board_pack.html", **pack, inputs_sha256="0" * 64)
        assert html.count("Consultation of the host federation") == 1
