"""Issue 13, part 2: the schedule as Art. 2.2 publishes it, the pre-match days of Art. 3.1, 3.2 and 5.1 inside the
15.2(a) window, and both closing rules (2.2 and 10.3) applied to a bid's dates — through the public page and the
compliance the API serves (bids.services.compliance)."""

from __future__ import annotations

from datetime import date

from bids.models import Bid
from core.db import db
from tests.api.test_bids_api import _imported_bid
from tests.conftest import login


def test_the_public_page_shows_the_schedule_as_art_2_2_publishes_it(client, event):
    """Art. 2.2: "| …(2nd day) ………13-10-2015 | GAME 1 |" ... "| …(18th day) ……29-10-2015 | TIE-BREAK GAMES |" """
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    section = html[html.index('id="published-schedule"'):]
    section = section[:section.index("</section>")]
    assert '<time datetime="2015-10-13">Tue 13 Oct</time></span> Game 1, 15:00' in section
    assert '<time datetime="2015-10-29">Thu 29 Oct</time></span> Tie-break games, if needed, 15:00' in section
    assert '<time datetime="2015-10-12">Mon 12 Oct</time></span> Opening ceremony' in section
    assert "Game 1, 15:00" not in section.split("2015-10-13")[0]  # no game before 13 October


def test_the_public_page_says_where_the_published_schedule_meets_the_window_and_which_openings_fit(client, event):
    """Art. 3.1: the players may inspect their accommodation "three (3) days before the first game"; Art. 2.2
    publishes game 1 on 13-10-2015, so that day is 10 October; Art. 15.2(a): "exact dates for the event between 11
    and 31 October 2015". A federation reading the page is told before it bids, not only when its bid is refused."""
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert ("In the schedule as published, the players may inspect their accommodation at the venue (Art. 3.1) falls "
            "on 10 October 2015, outside those dates: a bid that copies the published dates exactly is refused on "
            "it.") in html
    assert '<p id="fitting-openings">Opening ceremonies that meet every dated rule: 13 October 2015.</p>' in html


def _findings(app, client, bid_id, opening, closing):
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.opening_date, bid.closing_date = opening, closing
        db.session.commit()
    body = client.get(f"/api/v1/bids/{bid_id}").get_json()
    return {f["code"]: f for f in body["compliance"]["findings"]}


def test_pre_match_days_must_fall_in_the_window(app, runner, tmp_path, reg, make, event, client):
    """Art. 3.1: the players may inspect their accommodation "three (3) days before the first game"; Art. 3.2: they
    inspect the playing hall "two (2) days before the first game of the FWWCM at 3 pm"; Art. 5.1: the first
    Players' Meeting is "on the day of the venue inspection"; Art. 15.2(a): "exact dates for the event between 11
    and 31 October 2015"."""
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    found = _findings(app, client, bid_id, date(2015, 10, 11), date(2015, 10, 29))
    inspection = found["pre_match.accommodation_inspection"]
    assert inspection["outcome"] == "fail" and inspection["article"] == "3.1"
    assert inspection["message"] == (
        "the players may inspect their accommodation at the venue 3 days before game 1, so on 9 October 2015; "
        "under Art. 15.2(a) the dates of the event lie between 11 October 2015 and 31 October 2015, so this day "
        "must too (an opening ceremony on 13 October 2015 meets every dated rule).")
    assert found["pre_match.hall_inspection"]["outcome"] == "fail"
    assert "on 10 October 2015 at 15:00" in found["pre_match.hall_inspection"]["message"]
    assert found["pre_match.players_meeting"]["outcome"] == "fail"

    found = _findings(app, client, bid_id, date(2015, 10, 13), date(2015, 10, 31))
    keys = ("pre_match.accommodation_inspection", "pre_match.hall_inspection", "pre_match.players_meeting",
            "closing.end_of_event", "2.2.closing")
    assert {found[k]["outcome"] for k in keys} == {"pass"}


def test_a_closing_date_allowed_by_2_2_but_not_by_10_3_fails_and_says_which_rule_decides(
        app, runner, tmp_path, reg, make, event, client):
    """Art. 2.2: the closing ceremony "shall take place on the day after the FWWCM has been decided or one day
    thereafter"; Art. 10.3: "The Closing Ceremony shall take place not later than one day after the end of the
    event"."""
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    # opening on 12 October: the tie-break day is 29 October; 31 October is "one day thereafter" (2.2) but two
    # days after the end of the event (10.3)
    found = _findings(app, client, bid_id, date(2015, 10, 12), date(2015, 10, 31))
    assert found["2.2.closing"]["outcome"] == "pass"
    closing = found["closing.end_of_event"]
    assert closing["outcome"] == "fail" and closing["article"] == "10.3"
    assert closing["message"].startswith(
        "the closing ceremony takes place not later than 1 day after the end of the event (the last day of the "
        "schedule, 29 October 2015), so by 30 October 2015. Art. 2.2 allows")
    assert "where they disagree, the stricter rule of Art. 10.3 decides." in closing["message"]
    assert closing["value"] == "31 October 2015, 2 days after the last day"


def test_the_public_page_states_how_a_player_who_refuses_is_replaced(client, event):
    """Art. 3.6.2: "If a player refuses to participate in the World Championship Match, she will be replaced as
    follows: The runner up finalist of the Women's World Championship 2014 replaces the Women's World Champion and
    the next player in the overall standings of the Women's Grand-Prix 2013-2014 replaces the challenger." """
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "<dt>Replacement of a player (Art. 3.6.2)</dt>" in html
    assert "the rating list of January 2015 decides" in html
