"""Issue 13, part 4: a sponsor's bid cannot be selected until FIDE's consultation of the host federation is recorded
(Art. 15.1), or set aside by the FIDE President with a reason; the Board's page, the dossier and the pack show it."""

from __future__ import annotations

from sqlalchemy import select

from bids.models import Bid
from board.models import Decision
from core.audit import AuditEntry
from core.db import db
from tests.board.test_board import vote
from tests.conftest import login


def _sponsor(app, bid_id: int) -> None:
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.applicant_type = "sponsor"
        db.session.commit()


def _decide(client, bid_id: int):
    return client.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(bid_id), "decided_on": "2015-06-20", "rationale": ""})


def test_a_sponsors_bid_is_not_selected_while_the_consultation_is_pending(app, scored, make):
    """Art. 15.1: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM. If the
    federation refuses or is unable to co-operate, FIDE may still accept a proposal from a potential sponsor." """
    _sponsor(app, scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    page = admin.get("/board/fwwcm-2015").get_data(as_text=True)
    assert 'id="consultation-' in page and "Pending: the host federation&#39;s answer is not recorded" in page
    response = _decide(admin, scored["lviv"])
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "Art. 15.1: FIDE shall consult the federation where a sponsor proposes to hold the match." in html
    assert "is a sponsor&#39;s bid and the host federation&#39;s answer is not recorded" in html
    with app.app_context():
        assert db.session.scalars(select(Decision)).first() is None
        assert db.session.get(Bid, scored["lviv"]).status != "selected"
    # once the answer is recorded (a refusal does not bar the bid), the decision goes through
    assert admin.post(f"/bids/{scored['lviv']}/consultation", data={
        "outcome": "refused", "note": "The federation declined by letter of 2 June."}).status_code == 302
    assert _decide(admin, scored["lviv"]).status_code == 302
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).status == "selected"


def test_the_president_may_set_the_consultation_aside_with_a_reason(app, scored, make):
    """Art. 15.1: "If the federation refuses or is unable to co-operate, FIDE may still accept a proposal from a
    potential sponsor." Art. 16: "any grounds that are not covered or any unforeseen event shall be referred to the
    FIDE President, for final decision." """
    _sponsor(app, scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    member = app.test_client()
    make.user(email="member@example.org", roles=("board",), federation="DEU")
    login(member, "member@example.org")
    url = f"/board/fwwcm-2015/bids/{scored['lviv']}/consultation/set-aside"
    assert member.post(url, data={"reason": "No answer."}).status_code == 403
    president = app.test_client()
    make.user(email="pres@example.org", roles=("board",), federation="FRA", is_president=True)
    login(president, "pres@example.org")
    page = president.get("/board/fwwcm-2015").get_data(as_text=True)
    assert url in page  # the President is offered the form
    refused = president.post(url, data={"reason": "  "})
    assert refused.status_code == 422  # shown again, with why, and the reason field marked invalid
    assert 'aria-invalid="true"' in refused.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).consultation_set_aside_reason is None
    reason = "The federation did not answer FIDE's letters of 2 and 9 June."
    assert president.post(url, data={"reason": reason}).status_code == 302
    with app.app_context():
        bid = db.session.get(Bid, scored["lviv"])
        assert bid.consultation_set_aside_reason == reason
        assert db.session.scalars(select(AuditEntry).where(
            AuditEntry.action == "bid.consultation_set_aside")).one().object_id == str(bid.id)
    page = president.get("/board/fwwcm-2015").get_data(as_text=True)
    assert f"Set aside by the FIDE President: {reason}".replace("'", "&#39;") in page
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    assert _decide(admin, scored["lviv"]).status_code == 302
    # Once decided, the record stays what the decision saw: a second set-aside (a direct POST) is refused.
    again = president.post(url, data={"reason": "Another reason."})
    assert again.status_code == 422
    assert "The decision is recorded: the consultation can no longer be set aside" in again.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, scored["lviv"]).consultation_set_aside_reason == reason


def test_the_dossier_and_the_pack_show_the_consultation(app, scored, make):
    """Art. 15.1: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM." """
    from board.documents import dossier_context, pack_context
    from board.services import ranking_report
    from events.models import Event

    _sponsor(app, scored["lviv"])
    with app.app_context(), app.test_request_context():
        bid = db.session.get(Bid, scored["lviv"])
        report = ranking_report(db.session.get(Event, scored["event"]))
        ctx = dossier_context(bid, report, identifier="X", now=bid.updated_at)
        assert ctx["consultation"]["state"] == "pending" and ctx["consultation"]["article"] == "15.1"
        from flask import render_template

        html = render_template("pdf/dossier.html", **ctx, inputs_sha256="0" * 64)
        assert "Consultation of the host federation (Art. 15.1)" in html and "Pending" in html
        pack = pack_context(bid.event, report, [], identifier="P", now=bid.updated_at)
        row = next(r for r in pack["rows"] if r["bid"].id == bid.id)
        assert row["consultation"]["blocks_selection"] is True
        html = render_template("pdf/board_pack.html", **pack, inputs_sha256="0" * 64)
        assert "Consultation of the host federation (Art. 15.1)" in html
