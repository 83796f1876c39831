"""Independence of scoring (issue 11): the blind phase cannot be bypassed by recusing oneself from everything, a
declaration no longer changes once the member has read others' scores, a recused member sees nothing of that bid's
scores (page, API, CSV), and every route showing a bid sends an undeclared WCOC member to the declaration first."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import func, select

from accounts.models import User
from core.db import db
from core.money import format_day
from events.models import Event
from evidence.audit import AuditEntry
from scoring.models import ConflictDeclaration, Scorecard
from tests.conftest import run_twice, utcnow
from tests.scoring.factories_scoring import SCORING_DAY
from tests.scoring.test_views_scoring import KEYS, SLUG, as_user, scorecard_url

RANKING = f"/events/{SLUG}/scoring/ranking"
API_RANKING = f"/api/v1/events/{SLUG}/ranking"
CSV = f"/events/{SLUG}/scoring/scores.csv"
CONFLICTS = f"/events/{SLUG}/scoring/conflicts"
RECUSED_FROM_ALL = ("Gambit's rule for independent scoring: you are recused from every bid, so you have no scorecard "
                    "to submit; the other members' scores stay closed to you until scoring closes.")


@pytest.fixture
def scene(sf, event):
    a = sf.bid(event, city="Lviv", host="UKR")
    b = sf.bid(event, city="Sochi", host="RUS")
    m1 = sf.member(federation="GER", name="Anna")
    m2 = sf.member(federation="FRA", name="Bruno")
    m3 = sf.member(federation="ESP", name="Carla")
    sf.status(event, "scoring")
    for m in (m1, m2):
        sf.declare(event, m)
        # Lviv, criterion (c): Anna 1, Bruno 5: with two members the minimum and maximum are their own scores.
        sf.score(a, m, {**{k: "3" for k in KEYS}, "c": "1" if m == m1 else "5"},
                 comments={**{k: "" for k in KEYS}, "c": f"{'Anna' if m == m1 else 'Bruno'} on Lviv (c)"})
        sf.score(b, m, "2")
    return {"event": event, "a": a, "b": b, "m1": m1, "m2": m2, "m3": m3}


def declaration(app, event_id: int, member_id: int) -> dict | None:
    with app.app_context():
        decl = db.session.scalars(select(ConflictDeclaration).filter_by(event_id=event_id, member_id=member_id)).first()
        if decl is None:
            return None
        return {"conflicts": sorted(decl.conflicted_bid_ids), "reason": decl.reason, "confirmed_at": decl.confirmed_at,
                "covered": sorted(decl.covered), "first_shown": decl.scores_first_shown_at}


def post_declaration(client, conflicted: tuple[int, ...] = (), reason: str = ""):
    page = client.get(CONFLICTS).get_data(as_text=True)
    listed = re.search(r'name="listed" value="([^"]*)"', page).group(1)
    data = {"listed": listed, "has_conflict": "yes" if conflicted else "no", "reason": reason, "confirm": "y"}
    if conflicted:
        data["bids"] = [str(b) for b in conflicted]
    return client.post(CONFLICTS, data=data)


def declare_service(app, event_id: int, member_id: int, conflicted: tuple[int, ...] = (), reason: str = "",
                    now: datetime = SCORING_DAY):
    """declare_conflicts as the page calls it; returns the ScoringError's message or None, and commits only
    when it succeeded."""
    from scoring.queries import bids_before_reviewers
    from scoring.services import ScoringError, declare_conflicts

    with app.app_context():
        event = db.session.get(Event, event_id)
        member = db.session.get(User, member_id)
        listed = bids_before_reviewers(event)
        try:
            declare_conflicts(event, member, has_conflict=bool(conflicted),
                              conflicted=[b for b in listed if b.id in conflicted], reason=reason, listed=listed,
                              actor=member, now=now)
        except ScoringError as exc:
            db.session.rollback()
            return str(exc)
        db.session.commit()
        return None


# ------------------------------------------------------------------ recusing oneself from everything


def test_recusing_oneself_from_every_bid_opens_no_score_while_scoring_is_open(app, client, sf, scene):
    event, a, b, m3 = scene["event"], scene["a"], scene["b"], scene["m3"]
    as_user(client, app, m3)
    assert post_declaration(client, (a, b), "I know everyone").status_code == 302

    page = html.unescape(client.get(RANKING).get_data(as_text=True))
    assert RECUSED_FROM_ALL in page
    assert "Weighted total" not in page and "Bruno on Lviv" not in page
    api = client.get(API_RANKING)
    assert api.status_code == 403 and api.get_json()["error"] == RECUSED_FROM_ALL
    response = client.get(CSV)
    assert response.status_code == 302 and response.headers["Location"].endswith(RANKING)
    assert declaration(app, event, m3)["first_shown"] is None

    # Nothing was shown, so taking the declaration back is still allowed: then the scorecards are due.
    assert post_declaration(client).status_code == 302
    page = client.get(RANKING).get_data(as_text=True)
    assert "The ranking opens to you once you have submitted your own scorecards (independent first): 2 to go" in page
    assert "Bruno on Lviv" not in client.get(scorecard_url(a)).get_data(as_text=True)


def test_a_member_recused_from_every_bid_sees_no_scores_through_the_services_either(app, sf, scene):
    from scoring.queries import build_ranking, load_scoring

    sf.declare(scene["event"], scene["m3"], conflicted=(scene["a"], scene["b"]), reason="I know everyone")
    with app.app_context():
        data = load_scoring(db.session.get(Event, scene["event"]))
        carla = db.session.get(User, scene["m3"])
        assert data.ranking_closed_to(carla) == RECUSED_FROM_ALL
        assert all(data.others_on(b, carla) == [] for b in data.ranked)
        # Once scoring closes the ranking opens to them, without a figure of the bids they are recused from.
        data.event.status = "deliberation"
        assert data.ranking_closed_to(carla) is None
        report = build_ranking(data, carla)
        assert report.ranking.bids == () and report.counted == {}
        assert {b.id for b, _ in report.withheld} == {scene["a"], scene["b"]}
        db.session.rollback()


# ------------------------------------------------------------- a declaration after the scores were read


@pytest.mark.parametrize("url", [RANKING, API_RANKING, CSV])
def test_after_reading_the_scores_a_member_cannot_recuse_themselves(app, client, sf, scene, url):
    event, a, m1 = scene["event"], scene["a"], scene["m1"]
    as_user(client, app, m1)
    assert declaration(app, event, m1)["first_shown"] is None
    assert client.get(url).status_code == 200
    before = declaration(app, event, m1)
    assert before["first_shown"] is not None

    response = post_declaration(client, (a,), "Former employee of the organiser")
    assert response.status_code == 422
    shown = f"{format_day(before['first_shown'])} at {before['first_shown']:%H:%M} UTC"
    assert (f"Gambit's rule for independent scoring: you were shown the other members' scores on {shown}, so "
            "your declaration of conflicts of interest can no longer change (you asked to change it for Federation "
            "of Lviv — Lviv, Ukraine). Ask the secretariat if it is wrong.") in html.unescape(response.get_data(True))
    assert declaration(app, event, m1) == before
    assert "from then on it can no longer change, except for a bid listed since" in html.unescape(
        client.get(CONFLICTS).get_data(as_text=True))
    # Their scores on Lviv still count.
    page = client.get(RANKING).get_data(as_text=True)
    assert "Federation of Lviv — Lviv, Ukraine: declared a conflict" not in page
    with app.app_context():
        shown = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "scoring.scores_first_shown")).all()
        assert len(shown) == 1 and json.loads(shown[0].data)["member"] == m1


def test_the_service_refuses_a_change_of_declaration_after_scores_were_shown(app, sf, scene):
    from scoring.services import record_scores_shown

    event, a, b, m1 = scene["event"], scene["a"], scene["b"], scene["m1"]
    shown_at = datetime(2015, 6, 11, 8, 30, tzinfo=UTC)
    with app.app_context():
        ev = db.session.get(Event, event)
        anna = db.session.get(User, m1)
        decl = db.session.scalars(select(ConflictDeclaration).filter_by(member_id=m1)).one()
        assert record_scores_shown(ev, anna, declared_at=decl.confirmed_at, now=shown_at) is True
        assert record_scores_shown(ev, anna, declared_at=decl.confirmed_at, now=utcnow()) is False
        db.session.commit()
    before = declaration(app, event, m1)
    assert before["first_shown"] == shown_at
    message = declare_service(app, event, m1, (a, b), "Both organisers are friends")
    assert message == ("Gambit's rule for independent scoring: you were shown the other members' scores on "
                       "11 June 2015 at 08:30 UTC, so your declaration of conflicts of interest can no longer change "
                       "(you asked to change it for Federation of Lviv — Lviv, Ukraine, Federation of Sochi — "
                       "Sochi, Ukraine). "
                       "Ask the secretariat if it is wrong.")
    assert declaration(app, event, m1) == before
    # Confirming the same declaration again is no change.
    assert declare_service(app, event, m1) is None


def test_a_bid_listed_after_the_scores_were_read_can_still_be_declared(app, client, sf, scene):
    event, m1 = scene["event"], scene["m1"]
    as_user(client, app, m1)
    assert client.get(RANKING).status_code == 200
    baku = sf.bid(event, city="Baku", host="AZE")
    assert declare_service(app, event, m1, (baku,), "My brother runs the Baku bid") is None
    after = declaration(app, event, m1)
    assert after["conflicts"] == [baku] and baku in after["covered"]


def test_the_first_showing_is_refused_when_the_declaration_changed_meanwhile(app, sf, scene):
    from scoring.services import ScoringError, record_scores_shown

    event, m1 = scene["event"], scene["m1"]
    read = declaration(app, event, m1)["confirmed_at"]  # the page was built on this declaration
    assert declare_service(app, event, m1, (scene["a"],), "Former employee", now=datetime(2015, 6, 12, tzinfo=UTC)) \
        is None
    with app.app_context():
        ev = db.session.get(Event, event)
        with pytest.raises(ScoringError, match="Your declaration of conflicts of interest changed while this page "
                                               "was loading; reload it."):
            record_scores_shown(ev, db.session.get(User, m1), declared_at=read, now=utcnow())
        db.session.rollback()
    assert declaration(app, event, m1)["first_shown"] is None


def test_the_other_members_scores_beside_a_scorecard_open_only_with_every_own_scorecard_and_count_as_shown(
        app, client, sf, scene):
    from scoring.queries import load_scoring

    event, a, b, m3 = scene["event"], scene["a"], scene["b"], scene["m3"]
    sf.declare(event, m3)
    sf.score(a, m3, "4")  # Lviv submitted, Sochi not yet
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        carla = db.session.get(User, m3)
        assert data.others_on(data.ranked[0], carla) == []
    as_user(client, app, m3)
    page = html.unescape(client.get(scorecard_url(a)).get_data(as_text=True))
    assert "Bruno on Lviv (c)" not in page
    assert "1 to go (Federation of Sochi — Sochi, Ukraine)" in page
    assert declaration(app, event, m3)["first_shown"] is None
    assert post_declaration(client, (b,), "I coach a Sochi player").status_code == 302  # still free to change
    page = client.get(scorecard_url(a)).get_data(as_text=True)
    assert "Bruno on Lviv (c)" in page
    assert declaration(app, event, m3)["first_shown"] is not None
    response = post_declaration(client)
    assert response.status_code == 422 and "can no longer change" in response.get_data(as_text=True)
    assert declaration(app, event, m3)["conflicts"] == [b]


# ----------------------------------------------------------------- a recused member sees nothing of the bid


def test_a_recused_member_sees_nothing_of_that_bids_scores_on_page_api_or_csv(app, client, sf, scene):
    event, a, b, m3 = scene["event"], scene["a"], scene["b"], scene["m3"]
    sf.declare(event, m3, conflicted=(a,), reason="Former employee of the organiser")
    sf.score(b, m3, "4")
    as_user(client, app, m3)

    page = html.unescape(client.get(RANKING).get_data(as_text=True))
    assert f'id="bid-{b}"' in page and f'id="bid-{a}"' not in page
    assert ("<li>Federation of Lviv — Lviv, Ukraine: you are recused from this bid (declared a conflict of interest: "
            "Former employee of the organiser): its scores are not shown to you.</li>") in page
    assert "1.00–5.00" not in page and "Anna on Lviv" not in page

    body = client.get(API_RANKING).get_json()
    assert [r["bid_id"] for r in body["bids"]] == [b]
    assert body["leaders"] == [b]
    assert body["withheld"] == [{"bid_id": a, "title": "Federation of Lviv — Lviv, Ukraine", "reason": (
        "you are recused from this bid (declared a conflict of interest: Former employee of the organiser): its "
        "scores are not shown to you")}]
    assert "Lviv" not in json.dumps(body["sensitivity"]) and "Lviv" not in json.dumps(body["notes"])

    rows = list(csv.DictReader(io.StringIO(client.get(CSV).get_data(as_text=True))))
    assert rows and {r["bid_id"] for r in rows} == {str(b)}

    # The Board still reads everything.
    board = app.test_client()
    as_user(board, app, sf.member(roles=("board",), name="Board member"))
    body = board.get(API_RANKING).get_json()
    assert {r["bid_id"] for r in body["bids"]} == {a, b} and body["withheld"] == []
    lviv = next(r for r in body["bids"] if r["bid_id"] == a)
    assert (lviv["criteria"][2]["min"], lviv["criteria"][2]["max"]) == ("1.00", "5.00")


def test_a_member_of_the_host_federation_sees_nothing_of_that_bids_scores(app, client, sf, scene):
    event, b = scene["event"], scene["b"]
    ukr = sf.member(federation="UKR", name="Oksana")
    sf.declare(event, ukr)
    sf.score(b, ukr, "4")
    as_user(client, app, ukr)
    body = client.get(API_RANKING).get_json()
    assert [r["bid_id"] for r in body["bids"]] == [b]
    assert "member of the host federation (UKR)" in body["withheld"][0]["reason"]
    rows = list(csv.DictReader(io.StringIO(client.get(CSV).get_data(as_text=True))))
    assert {r["bid_id"] for r in rows} == {str(b)}


# ------------------------------------------------------------------------------- the declaration gate


def test_every_route_showing_a_bid_sends_an_undeclared_member_to_the_declaration(app, client, sf, scene):
    a, m3 = scene["a"], scene["m3"]
    as_user(client, app, m3)
    for url in (f"/bids/{a}", f"/bids/{a}/versions/1", f"/bids/{a}/documents/999999", f"/events/{SLUG}/scoring/",
                scorecard_url(a)):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.headers["Location"].endswith(CONFLICTS), url
    flashed = client.get(CONFLICTS).get_data(as_text=True)
    assert "Before you see any bid, declare your conflicts of interest for this call." in flashed
    for url in (f"/api/v1/bids/{a}", f"/api/v1/bids/{a}/obligations"):
        response = client.get(url)
        assert response.status_code == 403, url
        assert response.get_json()["error"] == ("Before you see any bid, declare your conflicts of interest for this "
                                                "call.")

    assert post_declaration(client).status_code == 302
    assert client.get(f"/bids/{a}/versions/1").status_code == 200
    assert client.get(f"/bids/{a}/documents/999999").status_code == 404
    assert client.get(f"/api/v1/bids/{a}").status_code == 200


def test_a_bid_added_after_the_declaration_closes_the_gate_again(app, client, sf, scene):
    event, m1 = scene["event"], scene["m1"]
    baku = sf.bid(event, city="Baku", host="AZE")
    as_user(client, app, m1)
    response = client.get(f"/api/v1/bids/{baku}")
    assert response.status_code == 403
    assert response.get_json()["error"] == ("A bid was added since your declaration: confirm your declaration again "
                                            "before you see any bid.")
    assert client.get(f"/bids/{scene['a']}/versions/1").status_code == 302


# ------------------------------------------------------------------------------------------- races


@pytest.mark.no_db
def test_two_first_declarations_at_once_give_one_row_and_one_clear_refusal(live):
    from accounts.services import create_user
    from bids.models import Bid
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from scoring.queries import bids_before_reviewers
    from scoring.services import ScoringError, declare_conflicts
    from tests.scoring.factories_scoring import ScoringFactory

    with live.app_context():
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        member = create_user(email="m@example.org", password="a long enough password", name="M", roles=["wcoc"],
                             federation="FRA", actor=None, now=utcnow())
        db.session.commit()
        event_id, member_id = event.id, member.id

    class Make:
        count = 0

        def user(self, *, roles, email, **kw):
            with live.app_context():
                u = create_user(email=email, password="a long enough password", name=kw.get("name") or email,
                                roles=list(roles), actor=None, now=utcnow(), federation=kw.get("federation"))
                db.session.commit()
                return u.id

    ScoringFactory(live, Make()).bid(event_id)

    def declare(i):
        event = db.session.get(Event, event_id)
        member = db.session.get(User, member_id)
        listed = bids_before_reviewers(event)
        return declare_conflicts(event, member, has_conflict=False, conflicted=[], reason="", listed=listed,
                                 actor=member, now=utcnow()).id

    with live.app_context():
        engine = db.engine
    # On PostgreSQL both threads read "no declaration yet" before either writes: the race, made certain. SQLite
    # starts every transaction with BEGIN IMMEDIATE, so there the two run one after the other (no race to lose).
    racing = engine.dialect.name == "postgresql"
    both_read = threading.Barrier(2, timeout=10)
    waited: set[int] = set()

    def hold(conn, cursor, statement, parameters, context, executemany):
        me = threading.get_ident()
        if statement.lstrip().startswith("SELECT") and "FROM conflict_declaration" in statement and me not in waited:
            waited.add(me)
            both_read.wait()

    if racing:
        sa_event.listen(engine, "after_cursor_execute", hold)
    try:
        results, errors = run_twice(live, declare)
    finally:
        if racing:
            sa_event.remove(engine, "after_cursor_execute", hold)
    message = ("Your declaration of conflicts of interest was recorded from another tab or window at the same "
               "moment, so this one was not recorded. Reload the page to see the declaration in force.")
    assert all(e is None or (isinstance(e, ScoringError) and str(e) == message) for e in errors), errors
    if racing:
        assert len([r for r in results if r is not None]) == 1, errors
        assert len([e for e in errors if e is not None]) == 1
    with live.app_context():
        assert db.session.scalar(select(func.count()).select_from(ConflictDeclaration)) == 1
        assert db.session.scalar(select(func.count()).select_from(Bid)) == 1
        assert db.session.scalar(select(func.count()).select_from(Scorecard)) == 0


def test_a_change_of_declaration_racing_the_first_showing_of_scores_is_refused(app, sf, scene):
    """The page read the declaration before the ranking, opened at the same moment in another window, recorded
    the first showing: the compare-and-swap refuses the change instead of slipping it in after the scores."""
    from sqlalchemy import update

    from scoring.queries import bids_before_reviewers
    from scoring.services import ScoringError, declare_conflicts

    event, a, m1 = scene["event"], scene["a"], scene["m1"]
    before = declaration(app, event, m1)
    with app.app_context():
        ev = db.session.get(Event, event)
        anna = db.session.get(User, m1)
        stale = db.session.scalars(select(ConflictDeclaration).filter_by(member_id=m1)).one()
        assert stale.scores_first_shown_at is None  # what this transaction read
        db.session.execute(update(ConflictDeclaration).where(ConflictDeclaration.id == stale.id)
                           .values(scores_first_shown_at=datetime(2015, 6, 11, 8, 30, tzinfo=UTC))
                           .execution_options(synchronize_session=False))  # the other window's first showing
        listed = bids_before_reviewers(ev)
        with pytest.raises(ScoringError, match=r"shown the other members' scores on 11 June 2015 at 08:30 UTC"):
            declare_conflicts(ev, anna, has_conflict=True, conflicted=[b for b in listed if b.id == a],
                              reason="Former employee", listed=listed, actor=anna, now=SCORING_DAY)
        db.session.rollback()
    assert declaration(app, event, m1) == before


@pytest.mark.parametrize("other", ["board", "admin"])
def test_a_member_who_also_sits_on_the_board_or_the_secretariat_is_blind_like_any_member(app, client, sf, scene,
                                                                                        other):
    """Another role opens nothing early: whoever scores reads the others' scores only after their own."""
    both = sf.member(federation="ESP", roles=("wcoc", other))
    sf.declare(scene["event"], both)
    as_user(client, app, both)
    page = client.get(RANKING).get_data(as_text=True)
    assert "The ranking opens to you once you have submitted your own scorecards (independent first): 2 to go" in page
    assert client.get(API_RANKING).status_code == 403
    assert client.get(CSV).status_code == 302


def test_once_scoring_is_over_a_member_reads_the_ranking_without_their_own_scorecards(app, client, sf, scene):
    """No score can change any more, so nothing is left to keep independent; recusals still hide their bids."""
    late = sf.member(federation="UKR")  # the Lviv bid's host federation: recused from it
    as_user(client, app, late)
    sf.status(scene["event"], "deliberation")
    page = html.unescape(client.get(RANKING).get_data(as_text=True))
    assert "The ranking opens to you once" not in page and "Declare your conflicts" not in page
    assert client.get(API_RANKING).status_code == 200
    assert client.get(API_RANKING).get_json()["withheld"], "the bid of the member's federation stays withheld"
