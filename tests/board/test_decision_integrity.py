"""Issue 11: one decision in force per call; a board vote follows the votes; the date follows the votes and the
close of scoring; a correction closes the old winner's contract; PDFs are not rendered in the recording
transaction; races end in a clear refusal."""

import html
import re
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from accounts.models import User
from bids.models import Bid
from board import queries, services
from board.models import Decision
from board.rules import DecisionError
from contracts import payments as contract_payments
from contracts import queries as contract_queries
from contracts import services as contracts
from contracts.models import Contract
from core.db import db
from events.models import Event
from evidence.signing import verify_issued
from tests.board.test_board import vote
from tests.conftest import login, utcnow
from tests.contracts.factories_contracts import issued_contract
from tests.pdfs import valid_pdf

pytestmark = pytest.mark.pdf_layout_once

VOTED = datetime(2015, 6, 19, 10, tzinfo=UTC)
NOW = datetime(2015, 6, 25, 12, tzinfo=UTC)


def _client(app, make, *, roles=("admin",), **overrides):
    client = app.test_client()
    email = f"{'-'.join(roles)}-{make.count + 1}@example.org"
    user_id = make.user(email=email, roles=roles, **overrides)
    login(client, email)
    return client, user_id


def _state(app, scored) -> tuple[str, int, dict]:
    with app.app_context():
        return (db.session.get(Event, scored["event"]).status,
                db.session.scalar(select(func.count()).select_from(Decision)),
                {b.id: b.status for b in db.session.scalars(select(Bid))})


def _record(app, scored, selected: str, *, method="board_vote", decided_on=date(2015, 6, 20), actor_id, now=NOW,
            consultations=(), **kwargs) -> int:
    """A decision through the service, the pack made first (as the page does); returns its id."""
    with app.app_context():
        event = db.session.get(Event, scored["event"])
        actor = db.session.get(User, actor_id)
        services.ensure_pack(event, actor=actor, now=now, upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        decision = services.record_decision(
            event, method=method, selected=db.session.get(Bid, scored[selected]), rationale=kwargs.pop(
                "rationale", "Viewed as a whole."), decided_on=decided_on,
            consultations=[(db.session.get(User, m), a, on) for m, a, on in consultations], actor=actor, now=now,
            **kwargs)
        db.session.commit()
        return decision.id


def test_a_board_vote_for_a_bid_the_votes_do_not_favour_is_refused(app, scored, make):
    board = make.user(roles=("board",), federation="FRA")
    president = make.user(roles=("board",), federation="ITA", is_president=True)
    for member in (board, president):
        vote(app, scored["event"], member, scored["lviv"])
    before = _state(app, scored)
    admin, _ = _client(app, make)
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["tbilisi"]), "decided_on": "2015-06-20",
        "rationale": "Tbilisi, viewed as a whole."})
    assert response.status_code == 422
    assert ("Bidding procedure: Board voting: a board vote selects the bid with the most votes of "
            "the members not recused. The votes are Ukrainian Chess Federation — Lviv, Ukraine: 2; Georgian Chess "
            "Federation — Tbilisi, Georgia: 0; Spanish Chess Federation — Madrid, Spain: 0, so it is Ukrainian Chess "
            "Federation — Lviv, Ukraine; you chose Georgian Chess Federation — Tbilisi, Georgia.") in \
        response.get_data(as_text=True)
    assert _state(app, scored) == before


def test_a_decision_cannot_be_dated_before_the_votes_the_close_of_scoring_or_in_the_future(app, scored, make):
    from events.services import change_event_status

    with app.app_context():  # scoring closed on 16 June 2015, as the audit log records it
        event = db.session.get(Event, scored["event"])
        change_event_status(event, "reopen_scoring", actor=None, now=datetime(2015, 6, 15, tzinfo=UTC))
        change_event_status(event, "close_scoring", actor=None, now=datetime(2015, 6, 16, 9, tzinfo=UTC))
        db.session.commit()
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = make.user(roles=("admin",))
    cases = [(date(1999, 1, 1), "The date of the decision cannot precede the close of the WCOC's scoring on 16 June "
                                "2015 (you entered 1 January 1999)."),
             (date(2015, 6, 18), "The date of a decision by board vote cannot precede the last vote, cast on 19 June "
                                 "2015 (you entered 18 June 2015)."),
             (date(2015, 6, 26), "The date of the decision cannot be in the future: today is 25 June 2015 (you "
                                 "entered 26 June 2015).")]
    for decided_on, message in cases:
        with pytest.raises(DecisionError) as exc:
            _record(app, scored, "lviv", decided_on=decided_on, actor_id=admin)
        assert str(exc.value) == message and exc.value.field == "decided_on"
    assert _state(app, scored)[:2] == ("deliberation", 0)
    _record(app, scored, "lviv", decided_on=date(2015, 6, 19), actor_id=admin)
    assert _state(app, scored)[:2] == ("decided", 1)


def test_a_tied_board_vote_is_refused_citing_the_bidding_procedures_tie_break_and_a_new_round_decides(
        app, scored, make):
    """Art. 15.5 sets no tie-break, and a tie is not a case of its last sentence (the President decides alone only
    "if a Presidential Board meeting cannot be held"): the call's bidding procedure breaks it, by a new round."""
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    ita = make.user(roles=("board",), federation="ITA")
    vote(app, scored["event"], ita, scored["tbilisi"])
    admin, _ = _client(app, make)
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-20"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    errors = [html.unescape(e) for e in re.findall(r'<p class="flash error">(.*?)</p>', page)]
    assert errors == [
        "Bidding procedure: tie-break of the Board's vote: the votes are tied between Ukrainian Chess Federation — "
        "Lviv, Ukraine and Georgian Chess Federation — Tbilisi, Georgia (1 each; the votes: Georgian Chess "
        "Federation — Tbilisi, Georgia: 1; Ukrainian Chess Federation — Lviv, Ukraine: 1; Spanish Chess Federation — "
        "Madrid, Spain: 0). A tie is not a decision of the Board. A tied vote of the Presidential Board is decided by "
        "a new round of voting. The members vote again (each may change their vote on the Board's page); the "
        "decision is recorded once one bid has the most votes."]
    assert "15.5" not in errors[0] and "President" not in errors[0].replace("Presidential Board", "")
    warning = html.unescape(re.search(r'<p class="flash warning">(.*?)</p>', admin.get("/board/fwwcm-2015")
                                      .get_data(as_text=True)).group(1))
    assert warning == ("Bidding procedure: tie-break of the Board's vote: the votes are tied, which is not a decision "
                       "of the Board. A tied vote of the Presidential Board is decided by a new round of voting.")
    assert _state(app, scored)[:2] == ("deliberation", 0)
    # The new round: a member votes again, one bid leads, and the Board's decision is recorded by its vote.
    vote(app, scored["event"], ita, scored["lviv"], now=datetime(2015, 6, 20, 9, tzinfo=UTC))
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-20"})
    assert response.status_code == 302
    with app.app_context():
        decision = db.session.scalars(select(Decision)).one()
        assert decision.method == "board_vote" and decision.loads("tally")["votes"][str(scored["lviv"])] == 2


def test_no_vote_no_board_vote_and_a_recused_members_vote_does_not_count(app, scored, make):
    admin = make.user(roles=("admin",))
    with pytest.raises(DecisionError, match="no member of the Board has voted for a bid"):
        _record(app, scored, "lviv", actor_id=admin)
    fra = make.user(roles=("board",), federation="FRA")
    vote(app, scored["event"], fra, scored["tbilisi"])
    vote(app, scored["event"], make.user(roles=("board",), federation="ITA"), scored["lviv"])
    with app.app_context():  # the FRA member now represents Georgia, host of the bid they voted for
        db.session.get(User, fra).federation = "GEO"
        db.session.commit()
    _record(app, scored, "lviv", actor_id=admin)
    with app.app_context():
        tally = db.session.scalars(select(Decision)).one().loads("tally")
        assert tally["votes"][str(scored["lviv"])] == 1 and tally["votes"][str(scored["tbilisi"])] == 0
        assert tally["recused"] == [db.session.get(User, fra).name]


def test_a_second_decision_is_refused_and_the_call_changes_by_compare_and_swap(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = make.user(roles=("admin",))
    _record(app, scored, "lviv", actor_id=admin)
    with app.app_context():  # as a request that read the call before the first decision was committed sees it
        db.session.get(Event, scored["event"]).status = "deliberation"
        for bid in db.session.scalars(select(Bid)):
            bid.status = "submitted"
        db.session.commit()
    with pytest.raises(DecisionError, match="only once; a mistake is mended by a correction"):
        _record(app, scored, "lviv", actor_id=admin)
    with app.app_context():
        assert db.session.scalars(select(Decision).where(Decision.status == "in_force")).one()


def test_a_correction_closes_the_old_winners_contract_before_a_new_one(app, scored, make):
    """The President decided alone (no Board meeting could be held) and corrects the decision: a call the Board
    voted on is never corrected by the President alone (test_the_president_cannot_correct_a_board_vote_alone)."""
    president, president_id = _client(app, make, roles=("board",), federation="NOR", is_president=True)
    admin_client, admin = _client(app, make)
    first = _record(app, scored, "lviv", method="president", actor_id=president_id,
                    no_meeting_reason="The Board could not meet before the guarantee lapsed.",
                    consultations=[(scored["members"][0], "Lviv.", date(2015, 6, 19))])
    with app.app_context():
        contract = issued_contract(db.session.get(Bid, scored["lviv"]), admin=db.session.get(User, admin),
                                   upload_dir=app.config["UPLOAD_DIR"], now=NOW)
        milestone = contract.milestones[0]
        payment, _ = contract_payments.record_payment(milestone, amount=Decimal("1000.00"),
                                                      received_on=date(2015, 6, 25),
                                                      reference="T-1", note="", idempotency_key="k1",
                                                      actor=db.session.get(User, admin), now=NOW)
        contract_id, milestone_id, payment_id = contract.id, milestone.id, payment.id
        db.session.commit()
        with pytest.raises(contracts.ContractError, match="with another bid of this call is issued"):
            tbilisi = db.session.get(Bid, scored["tbilisi"])
            tbilisi.status = "selected"  # what a decision without the closing step would leave
            contracts.create_contract(tbilisi, actor=None, now=NOW)
        db.session.rollback()
    # A correction "by board vote" with no vote is refused, as a first decision would be.
    refused = admin_client.post("/board/fwwcm-2015/decision/correct", data={
        "method": "board_vote", "selected": str(scored["tbilisi"]), "decided_on": "2015-06-20", "corrects": str(first),
        "rationale": "Tbilisi.", "correction_reason": "The Board chose Tbilisi."})
    assert refused.status_code == 422
    assert "no member of the Board has voted for a bid" in refused.get_data(as_text=True)
    response = president.post("/board/fwwcm-2015/decision/correct", data={
        "method": "president", "selected": str(scored["tbilisi"]), "decided_on": utcnow().date().isoformat(),
        "corrects": str(first),
        "rationale": "Tbilisi, viewed as a whole.", "correction_reason": "The Board could not meet; I decided.",
        "no_meeting_reason": "The Board could not meet before the guarantee lapsed.",
        f"consulted_on_{scored['members'][0]}": "2015-06-24", f"advice_{scored['members'][0]}": "Tbilisi."})
    assert response.status_code == 302, response.get_data(as_text=True)[-3000:]
    with app.app_context():
        decisions = db.session.scalars(select(Decision).order_by(Decision.id)).all()
        assert [(d.id, d.status) for d in decisions] == [(first, "superseded"), (decisions[1].id, "in_force")]
        assert decisions[1].minutes_sha256  # made after the recording
        statuses = {b.id: b.status for b in db.session.scalars(select(Bid))}
        assert statuses[scored["lviv"]] == "not_selected" and statuses[scored["tbilisi"]] == "selected"
        old = db.session.get(Contract, contract_id)
        assert old.status == "closed" and f"Decision {first} was corrected by decision {decisions[1].id}" in \
            old.closed_reason
        with pytest.raises(contracts.ContractError) as exc:
            contract_payments.record_payment(old.milestones[0], amount=Decimal("10.00"), received_on=date(2015, 6, 25),
                                             reference="T-2", note="", idempotency_key="k2", actor=None, now=utcnow())
        assert str(exc.value).startswith(f"{old.reference} was closed on ")
        assert "It takes no new payments; what was paid stays on record, and a refund is recorded by reversing " \
               "the payment." in str(exc.value)
        db.session.rollback()
    page = admin_client.get(f"/contracts/{contract_id}").get_data(as_text=True)
    assert ("This contract is closed because the Board's decision was corrected and selected another bid (Decision "
            f"{first} was corrected by decision {first + 1} on ") in page
    assert "which selects Georgian Chess Federation — Tbilisi, Georgia: The Board could not meet; I decided.)" in page
    refund = admin_client.post(f"/contracts/{contract_id}/payments/{payment_id}/reverse", data={
        "reason": "Refunded after the correction of the decision.", "idempotency_key": "r1"})
    assert refund.status_code in (302, 303), refund.get_data(as_text=True)[-2000:]
    with app.app_context():
        paid = contract_queries.recorded_total(milestone_id)
        assert paid == Decimal("0.00")
        new = contracts.create_contract(db.session.get(Bid, scored["tbilisi"]), actor=None, now=utcnow())
        assert new.status == "draft"
        db.session.rollback()


def test_a_superseded_decision_cannot_be_corrected_again(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = make.user(roles=("admin",))
    first = _record(app, scored, "lviv", actor_id=admin)
    with app.app_context():
        stale = db.session.get(Decision, first)
        _ = services.record_decision(
            db.session.get(Event, scored["event"]), method="board_vote", selected=db.session.get(Bid, scored["lviv"]),
            rationale="", decided_on=date(2015, 6, 21), consultations=[], actor=db.session.get(User, admin),
            now=NOW, corrects=stale, correction_reason="The date was 21 June.")
        db.session.commit()
        with pytest.raises(DecisionError) as exc:
            services.record_decision(
                db.session.get(Event, scored["event"]), method="board_vote",
                selected=db.session.get(Bid, scored["lviv"]), rationale="", decided_on=date(2015, 6, 22),
                consultations=[], actor=db.session.get(User, admin), now=NOW, corrects=stale,
                correction_reason="The date was 22 June.")
        by = db.session.get(User, admin).name
        assert str(exc.value) == (
            f"This decision was already corrected at 12:00 UTC on 25 June 2015 by {by} (decision {first + 1}); "
            "nothing was recorded by this correction. Reload the page to see the correction.")
        db.session.rollback()
        assert db.session.scalar(select(func.count()).where(Decision.status == "in_force")) == 1


def test_the_recording_transaction_renders_no_pdf(app, scored, make, monkeypatch):
    """The pack before, the minutes after: record_decision itself never calls WeasyPrint."""
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = make.user(roles=("admin",))
    with app.app_context():
        event = db.session.get(Event, scored["event"])
        actor = db.session.get(User, admin)
        services.ensure_pack(event, actor=actor, now=NOW, upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        rendered = []
        monkeypatch.setattr(services, "render_pdf", lambda *a, **k: rendered.append(a) or valid_pdf())
        decision = services.record_decision(event, method="board_vote", selected=db.session.get(Bid, scored["lviv"]),
                                            rationale="", decided_on=date(2015, 6, 20), consultations=[],
                                            actor=actor, now=NOW)
        assert rendered == [] and decision.minutes_sha256 is None
        db.session.commit()
        monkeypatch.undo()
        services.store_minutes(decision, actor=actor, now=NOW, upload_dir=app.config["UPLOAD_DIR"])
        assert len(decision.minutes_sha256) == 64
        # The stored minutes carry Gambit's signature, naming the decision (issue 17).
        minutes = (queries.dossier_dir(app.config["UPLOAD_DIR"]) / decision.minutes_stored_name).read_bytes()
        verdict = verify_issued(minutes)
        assert verdict.ok and verdict.document == f"minutes of decision DECISION-{decision.id}"
        db.session.commit()


def test_the_decision_needs_the_current_pack_made_beforehand(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    with app.app_context():
        with pytest.raises(DecisionError, match="The board pack is not up to date with the scores"):
            services.record_decision(db.session.get(Event, scored["event"]), method="board_vote",
                                     selected=db.session.get(Bid, scored["lviv"]), rationale="",
                                     decided_on=date(2015, 6, 20), consultations=[],
                                     actor=db.session.get(User, make.user(roles=("admin",))), now=NOW)
        db.session.rollback()
