"""Issue 36: the President decides alone only if no Board meeting can be held (Art. 15.5), so never once the Board
has voted, first decision or correction; a choice between bids tied at the top of the WCOC's ranking gives its
reasons; every correction tells every bidder, through the outbox."""

import html
import re

import pytest
from sqlalchemy import func, select

from board.models import Decision
from core.db import db
from events.models import Event
from operations import outbox
from tests.board.conftest import complete
from tests.board.test_board import vote
from tests.conftest import login, utcnow

pytestmark = pytest.mark.pdf_layout_once

REASON = "Three of the seven members could not travel and no remote meeting could be convened before 22 June."


def _client(app, make, email: str, **user):
    client = app.test_client()
    make.user(email=email, **user)
    login(client, email)
    return client


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True))))


def _president_decides(client, scored, selected: str, *, path="/board/fwwcm-2015/decision", follow=False,
                       **fields):
    member = scored["members"][0]
    return client.post(path, data={
        "method": "president", "selected": str(scored[selected]), "decided_on": utcnow().date().isoformat(),
        "no_meeting_reason": REASON, f"consulted_on_{member}": "2015-06-18",
        f"advice_{member}": "Lviv: the strongest bid.", "rationale": "Lviv, viewed as a whole.", **fields},
        follow_redirects=follow)


def test_the_president_cannot_decide_alone_against_the_boards_vote(app, scored, make):
    """Two members voted for Tbilisi, none for Lviv: the Board met, and the President choosing Lviv alone was
    recorded (302) before issue 36."""
    vote(app, scored["event"], make.user(roles=("board",), federation="ITA"), scored["tbilisi"])
    vote(app, scored["event"], make.user(roles=("board",), federation="DEU"), scored["tbilisi"])
    president = _client(app, make, "pres@example.org", roles=("board",), federation="FRA", is_president=True)
    response = _president_decides(president, scored, "lviv")
    assert response.status_code == 422
    assert ('Art. 15.5: the FIDE President decides alone only "if a Presidential Board meeting cannot be held", and '
            "the Board has voted on this call (2 votes cast: Georgian Chess Federation — Tbilisi, Georgia: 2; "
            "Spanish Chess Federation — Madrid, Spain: 0; Ukrainian Chess Federation — Lviv, Ukraine: 0): the Board "
            "met, so the decision is the Board's, recorded as a board vote.") in _text(response)
    assert REASON in _text(response)  # nothing typed is lost
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Decision)) == 0
        assert db.session.get(Event, scored["event"]).status == "deliberation"


def test_the_president_cannot_correct_a_board_vote_alone(app, scored, make):
    """A correction goes through the same check: once the Board voted, the record is corrected only as a board
    vote, which follows the votes recorded (closed at the decision): the bid selected cannot change."""
    vote(app, scored["event"], make.user(roles=("board",), federation="ITA"), scored["lviv"])
    admin = _client(app, make, "sec@example.org", roles=("admin",))
    assert admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-20"}).status_code == 302
    with app.app_context():
        first = db.session.scalars(select(Decision.id)).one()
    president = _client(app, make, "pres@example.org", roles=("board",), federation="FRA", is_president=True)
    response = _president_decides(president, scored, "tbilisi", path="/board/fwwcm-2015/decision/correct",
                                  corrects=str(first), correction_reason="I decided for Tbilisi.")
    assert response.status_code == 422
    assert ('Art. 15.5: the FIDE President decides alone only "if a Presidential Board meeting cannot be held", and '
            "the Board has voted on this call (1 vote cast: Ukrainian Chess Federation — Lviv, Ukraine: 1; ") \
        in _text(response)
    with app.app_context():
        assert [d.status for d in db.session.scalars(select(Decision))] == ["in_force"]


@pytest.fixture
def tied(app, event, sf):
    """Two bids the WCOC scored alike (a tie at the top of the ranking), scoring closed."""
    lviv = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Chess Federation")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO", name="Georgian Chess Federation")
    complete(app, lviv, venue_country="UA")
    complete(app, tbilisi, venue_country="GE")
    sf.status(event, "scoring")
    members = [sf.member(name="Anna Aalto", federation="FIN"), sf.member(name="Bo Berg", federation="SWE")]
    for m in members:
        sf.declare(event, m)
        for bid in (lviv, tbilisi):
            sf.score(bid, m, "3", comments={k: "" for k in "abcdefghij"})
    sf.status(event, "deliberation")
    return {"event": event, "lviv": lviv, "tbilisi": tbilisi}


def test_a_choice_between_bids_tied_in_the_ranking_gives_its_reasons(app, tied, make):
    """Before issue 36 the decision was recorded with no reasons and read "The Board followed the WCOC's
    ranking.", which chose neither of the tied bids."""
    vote(app, tied["event"], make.user(roles=("board",), federation="FRA"), tied["tbilisi"])
    admin = _client(app, make, "sec@example.org", roles=("admin",))
    fields = {"method": "board_vote", "selected": str(tied["tbilisi"]), "decided_on": "2015-06-20"}
    response = admin.post("/board/fwwcm-2015/decision", data=fields)
    assert response.status_code == 422
    assert ("Bidding procedure: duty to give reasons: give the reasons for the decision: the selected bid is tied for "
            "first place in the WCOC's ranking, which therefore does not choose between the tied bids.") \
        in _text(response)
    response = admin.post("/board/fwwcm-2015/decision", data={
        **fields, "rationale": "Tbilisi's hall is closer to the players' hotel."})
    assert response.status_code == 302
    page = _text(admin.get("/board/fwwcm-2015/decision"))
    assert "Tbilisi's hall is closer to the players' hotel." in page and "followed the WCOC's ranking" not in page


def test_a_correction_that_selects_another_bid_notifies_every_bidder(app, scored, make, smtp):
    """Before issue 36 only the first decision wrote notices: a correction changing the selected bid told no
    one."""
    president = _client(app, make, "pres@example.org", roles=("board",), federation="FRA", is_president=True)
    assert _president_decides(president, scored, "lviv").status_code == 302
    assert len(smtp.deliver()) == 3
    with app.app_context():
        first = db.session.scalars(select(Decision.id)).one()
    member = scored["members"][1]
    response = _president_decides(
        president, scored, "tbilisi", path="/board/fwwcm-2015/decision/correct", corrects=str(first),
        rationale="Tbilisi, viewed as a whole.", correction_reason="The guarantee of Lviv lapsed",
        **{f"consulted_on_{member}": "2015-06-19", f"advice_{member}": "Tbilisi."}, follow=True)
    assert response.status_code == 200, _text(response)[-2000:]
    with app.app_context():
        correction = db.session.scalars(select(Decision).where(Decision.status == "in_force")).one()
        assert correction.corrects_id == first and correction.bidders_notified
        assert sum(outbox.counts(about=("decision", correction.id)).values()) == 3
    assert ("The correction is recorded as a new decision record linked to the one it corrects. 3 notices to the "
            "bidders are in the outbox") in _text(response)
    received = smtp.deliver()[3:]
    assert sorted(m["Subject"].rsplit(": ", 1)[1] for m in received) == [
        "the decision on your bid", "the decision on your bid", "your bid is selected"]
    assert all(": correction: " in m["Subject"] for m in received)
    bodies = {m["To"]: m.get_content().replace("\r\n", "\n") for m in received}
    for body in bodies.values():
        assert "is corrected (The guarantee of Lviv lapsed); it selects another bid than the decision it " \
               "corrects, which had selected Ukrainian Chess Federation — Lviv, Ukraine." in body
    selected = [m for m in received if m["Subject"].endswith("your bid is selected")]
    assert f"/bids/{scored['tbilisi']}\n" in selected[0].get_content().replace("\r\n", "\n")
