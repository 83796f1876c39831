"""Art. 15.5: "If a Presidential Board meeting cannot be held, the FIDE President takes the decision in consultation
with the WCOC." The President's decision alone records why no Board meeting could be held and which WCOC members
were consulted on which day; the decision page, the minutes, the bidders' emails and the API say so. A tied vote of
the Board is not such a case: the call's bidding procedure breaks it (tests/board/test_decision_integrity)."""

import html
import io
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from board.models import Decision
from core.db import db
from events.models import Event
from tests.board.test_board import vote
from tests.conftest import login, utcnow

pytestmark = pytest.mark.pdf_layout_once("dossier.html", "board_pack.html")

REASON = "Three of the seven members could not travel and no remote meeting could be convened before 22 June."
GROUNDS = ("Decided by the FIDE President because a Presidential Board meeting could not be held (Three of the seven "
           "members could not travel and no remote meeting could be convened before 22 June), in consultation with "
           "the WCOC (Anna Aalto, consulted on 18 June 2015; Bo Berg, consulted on 19 June 2015), under Art. 15.5.")


@pytest.fixture
def president(app, make):
    client = app.test_client()
    make.user(email="pres@example.org", roles=("board",), federation="FRA", is_president=True)
    login(client, "pres@example.org")
    return client


def _consulted(scored, *people) -> dict:
    """The form's fields for each (member index, day, advice)."""
    out = {}
    for index, day, advice in people:
        member = scored["members"][index]
        out[f"consulted_on_{member}"] = day
        out[f"advice_{member}"] = advice
    return out


def _decide(client, scored, **fields):
    return client.post("/board/fwwcm-2015/decision", data={
        "method": "president", "selected": str(scored["lviv"]), "decided_on": "2015-06-21", **fields})


def _text(response) -> str:
    """The page's text as a reader sees it (entities decoded, tags and runs of spaces collapsed)."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True))))


def _nothing_recorded(app, scored) -> bool:
    with app.app_context():
        return (db.session.scalar(select(func.count()).select_from(Decision)) == 0
                and db.session.get(Event, scored["event"]).status == "deliberation")


def test_a_presidents_decision_without_why_no_board_meeting_could_be_held_is_refused(app, scored, president):
    response = _decide(president, scored, **_consulted(scored, (0, "2015-06-18", "Lviv: the strongest bid.")))
    assert response.status_code == 422
    assert ('Art. 15.5: the FIDE President decides alone only "if a Presidential Board meeting cannot be held": say '
            "why no Board meeting could be held.") in _text(response)
    assert "Lviv: the strongest bid." in response.get_data(as_text=True)  # what was typed comes back
    assert _nothing_recorded(app, scored)


def test_a_presidents_decision_without_consulting_the_wcoc_is_refused(app, scored, president):
    response = _decide(president, scored, no_meeting_reason=REASON)
    assert response.status_code == 422
    assert ('Art. 15.5: the FIDE President takes the decision "in consultation with the WCOC": name the WCOC members '
            "consulted, the day each was consulted and what each advised.") in _text(response)
    assert REASON in _text(response)
    assert _nothing_recorded(app, scored)


@pytest.mark.parametrize(("day", "advice", "message"), [
    ("", "Lviv.", "Art. 15.5: say on which day Anna Aalto was consulted."),
    ("2015-06-18", "", "Art. 15.5: say what Anna Aalto advised."),
    ("18/06/2015", "Lviv.", "Art. 15.5: say on which day Anna Aalto was consulted."),
    ("2015-02-28", "Lviv.", "Anna Aalto cannot have been consulted before the call existed: it was recorded in "
                            "Gambit on 1 March 2015 (you entered 28 February 2015)."),
    ("2015-06-22", "Lviv.", "Art. 15.5: the decision is taken in consultation with the WCOC, so Anna Aalto is "
                            "consulted before it: you entered 22 June 2015, after the decision of 21 June 2015."),
])
def test_each_consultation_names_its_day_and_advice_within_the_call_and_before_the_decision(
        app, scored, president, day, advice, message):
    response = _decide(president, scored, no_meeting_reason=REASON, **_consulted(scored, (0, day, advice)))
    assert response.status_code == 422
    assert message in _text(response)
    assert _nothing_recorded(app, scored)


def test_a_consultation_cannot_be_dated_in_the_future(app, scored, president):
    tomorrow = utcnow().date() + timedelta(days=1)
    response = _decide(president, scored, decided_on=tomorrow.isoformat(), no_meeting_reason=REASON,
                       **_consulted(scored, (0, tomorrow.isoformat(), "Lviv.")))
    assert response.status_code == 422
    assert "Anna Aalto cannot have been consulted in the future: today is" in _text(response)
    assert _nothing_recorded(app, scored)


def test_only_wcoc_members_of_the_call_count_as_consulted(app, scored, president, make, sf):
    board_member = make.user(roles=("board",), federation="SWE", name="Dora Dahl")
    response = _decide(president, scored, no_meeting_reason=REASON, **{
        f"consulted_on_{board_member}": "2015-06-18", f"advice_{board_member}": "Lviv."})
    assert response.status_code == 422
    assert ("Art. 15.5: the President consults the WCOC, and Dora Dahl is not a member of the WCOC of this call."
            in _text(response))
    # A WCOC member who owns a bid in the call is not of its WCOC (they neither score nor vote in it).
    owner = sf.member(name="Eva Ek", federation="NOR")
    sf.bid(scored["event"], city="Oslo", host="NOR", status="rejected", owner_id=owner)
    response = _decide(president, scored, no_meeting_reason=REASON, **{
        f"consulted_on_{owner}": "2015-06-18", f"advice_{owner}": "Lviv."})
    assert "Eva Ek is not a member of the WCOC of this call." in _text(response)
    assert _nothing_recorded(app, scored)


def test_the_presidents_decision_states_its_grounds_on_the_page_the_minutes_the_emails_and_the_api(
        app, scored, president, smtp):
    response = _decide(president, scored, no_meeting_reason=REASON, **_consulted(
        scored, (0, "2015-06-18", "Lviv: the strongest bid on playing conditions."),
        (1, "2015-06-19", "Lviv, viewed as a whole.")))
    assert response.status_code == 302, _text(response)[:3000]
    anna, bo = scored["members"][:2]
    with app.app_context():
        decision = db.session.scalars(select(Decision)).one()
        assert (decision.method, decision.no_meeting_reason) == ("president", REASON)
        assert decision.loads("consultations") == [
            {"member": "Anna Aalto", "member_id": anna, "advice": "Lviv: the strongest bid on playing conditions.",
             "on": "2015-06-18"},
            {"member": "Bo Berg", "member_id": bo, "advice": "Lviv, viewed as a whole.", "on": "2015-06-19"}]
        decision_id = decision.id
    page = _text(president.get("/board/fwwcm-2015/decision"))
    assert GROUNDS in page
    assert "Anna Aalto, consulted on 18 June 2015: “Lviv: the strongest bid on playing conditions.”" in page
    minutes = president.get(f"/board/fwwcm-2015/decision/{decision_id}/minutes.pdf")
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(io.BytesIO(minutes.data)).pages))
    minutes.close()
    assert GROUNDS in text
    assert f"Why no Presidential Board meeting could be held {REASON}" in text
    assert "Anna Aalto, consulted on 18 June 2015, advised: Lviv: the strongest bid on playing conditions." in text
    assert len(smtp.deliver()) == 3
    for message in smtp.deliver():
        body = re.sub(r"\s+", " ", message.get_content())
        assert "The FIDE President has " in body and GROUNDS in body
    api = president.get("/api/v1/events/fwwcm-2015/decision").get_json()
    assert (api["method"], api["no_meeting_reason"], api["grounds"]) == ("president", REASON, GROUNDS)
    assert api["consultations"] == [
        {"member": "Anna Aalto", "member_id": anna, "advice": "Lviv: the strongest bid on playing conditions.",
         "on": "2015-06-18"},
        {"member": "Bo Berg", "member_id": bo, "advice": "Lviv, viewed as a whole.", "on": "2015-06-19"}]


def test_a_board_vote_records_no_presidents_grounds(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-20",
        "no_meeting_reason": "typed by mistake", **_consulted(scored, (0, "2015-06-18", "Lviv."))})
    assert response.status_code == 302
    with app.app_context():
        decision = db.session.scalars(select(Decision)).one()
        assert (decision.no_meeting_reason, decision.loads("consultations"), decision.grounds) == ("", [], "")
    assert admin.get("/api/v1/events/fwwcm-2015/decision").get_json()["grounds"] == ""


def test_the_database_refuses_a_presidents_decision_that_does_not_say_why_no_board_meeting_was_held(app, scored, make):
    admin = make.user(roles=("admin",))
    with app.app_context():
        for method, reason in (("president", ""), ("board_vote", REASON)):
            db.session.add(Decision(
                event_id=scored["event"], method=method, selected_bid_id=scored["lviv"], decided_on=date(2015, 6, 20),
                tally="{}", no_meeting_reason=reason, consultations="[]", ranking="{}", reviewed="[]",
                recorded_at=datetime(2015, 6, 20, tzinfo=UTC), recorded_by_id=admin))
            with pytest.raises(IntegrityError, match="president_says_why"):
                db.session.flush()
            db.session.rollback()


def test_the_president_cannot_decide_alone_over_a_tied_board_vote(app, scored, president, make):
    """A tied vote means the Board met: Art. 15.5 gives the President the decision only "if a Presidential Board
    meeting cannot be held", and the bidding procedure breaks the tie."""
    vote(app, scored["event"], make.user(roles=("board",), federation="ITA"), scored["lviv"])
    vote(app, scored["event"], make.user(roles=("board",), federation="DEU"), scored["tbilisi"])
    response = _decide(president, scored, no_meeting_reason=REASON,
                       **_consulted(scored, (0, "2015-06-18", "Lviv: the strongest bid.")))
    assert response.status_code == 422
    text = _text(response)
    assert ("Bidding procedure: tie-break of the Board's vote: the Board's votes are tied (Georgian Chess Federation "
            "— Tbilisi, Georgia: 1; Ukrainian Chess Federation — Lviv, Ukraine: 1; Spanish Chess Federation — "
            "Madrid, Spain: 0), "
            "and a tie is broken as the bidding procedure says (A tied vote of the Presidential Board is decided by "
            "a new round of voting.), not by the President deciding alone: Art. 15.5 gives the President the "
            "decision only if a Presidential Board meeting cannot be held.") in text
    assert _nothing_recorded(app, scored)


def test_a_decision_recorded_before_the_reason_was_asked_says_the_reason_is_unknown():
    from board.rules import president_grounds

    sentence = president_grounds("Not recorded: this decision was recorded before Gambit asked why no Presidential "
                                 "Board meeting could be held.", [("Anna Aalto", date(2015, 6, 18))],
                                 selection="Art. 15.5")
    assert sentence == ("Decided by the FIDE President alone, in consultation with the WCOC (Anna Aalto, consulted on "
                        "18 June 2015), under Art. 15.5; why no Presidential Board meeting could be held was not "
                        "recorded.")
