"""The schedule: the event runs from the opening to the closing ceremony, which lie in the 15.2(a) window; game 1
follows the opening ceremony as Art. 2.2 says; the days before game 1 (Art. 3.1, 3.2, 5.1) are dated from game 1
and shown as days the organizer hosts, never a failure. A bid that copies Art. 2.2's published schedule passes —
on the bid form, on import and through the API — and the dates a call offers are exactly the dates it accepts."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bids.models import Bid
from bids.rules import check_bid, failures
from core.db import db, utcnow
from core.money import format_day
from events.models import Event
from events.regulation import (
    default_event_file,
    parse_regulation,
    pre_match_schedule,
    published_schedule,
)
from tests.api.test_bids_api import _imported_bid
from tests.bids.factories import valid_bid
from tests.bids.web import fill_section, section_posts, start_bid
from tests.conftest import login

DATE_CODES = ("15.2a.opening_date", "15.2a.closing_date", "15.2a.order", "2.2.closing", "closing.end_of_event")


def _other_call_text() -> str:
    """A second call file with other dates: a spring window of its own, a shorter programme (eight games, no
    tie-break day), a published schedule of its own, and pre-match days further from game 1."""
    text = default_event_file().read_text(encoding="utf-8")
    days = ('days = [\n  "opening", "game", "game", "rest", "game", "game", "rest", "game", "game", "rest", "game", '
            '"game",\n]')
    for old, new in [("window_start = 2015-10-11", "window_start = 2016-03-05"),
                     ("window_end = 2015-10-31", "window_end = 2016-03-24"),
                     ("published_first_game = 2015-10-13", "published_first_game = 2016-03-08"),
                     ("days_before_first_game = 3", "days_before_first_game = 5")]:
        assert old in text
        text = text.replace(old, new)
    start = text.index("days = [\n")
    end = text.index("]\n", start) + 2
    return text[:start] + days + "\n" + text[end:]


OTHER_TEXT = _other_call_text()


def _calls():
    from tests.bids.factories import regulation

    return [pytest.param(regulation(), id="fwwcm-2015"), pytest.param(parse_regulation(OTHER_TEXT), id="other-call")]


def _date_failures(reg, opening, closing) -> list:
    bid = valid_bid(reg, opening_date=opening, closing_date=closing)
    return [f for f in failures(check_bid(reg, bid, today=reg.event.bid_deadline.date()))]


# ------------------------------------------------------------------------------------ offered == accepted


@pytest.mark.parametrize("reg", _calls())
def test_every_offered_opening_passes_and_every_other_date_fails_citing_the_window(reg):
    """Every day from a month before the window to a month after it: an opening the call offers passes with its
    earliest allowed closing ceremony, with no finding failed at all; any other opening fails 15.2(a)."""
    s = reg.schedule
    offered = set(reg.possible_opening_dates())
    assert offered, "the call offers no opening date"
    earliest = min(reg.allowed_closing_offsets())
    day = s.window_start - timedelta(days=30)
    while day <= s.window_end + timedelta(days=30):
        failed = _date_failures(reg, day, day + timedelta(days=earliest))
        if day in offered:
            assert failed == [], (day, [f.message for f in failed])
        else:
            assert s.window_article in {f.article for f in failed}, day
            assert "15.2a.opening_date" in {f.code for f in failed}, day
        day += timedelta(days=1)


@pytest.mark.parametrize("reg", _calls())
@settings(max_examples=120, deadline=None)
@given(opening_shift=st.integers(-40, 40), closing_shift=st.integers(-5, 25))
def test_a_bid_s_dates_pass_exactly_when_the_call_offers_them(reg, opening_shift, closing_shift):
    """Any pair of dates: the bid's date findings all pass if and only if the opening is one the call offers and
    the closing ceremony is a distance every closing rule allows; each failure cites the rule it breaks."""
    s = reg.schedule
    opening = s.window_start + timedelta(days=opening_shift)
    closing = opening + timedelta(days=closing_shift)
    failed = _date_failures(reg, opening, closing)
    accepted = (opening in reg.possible_opening_dates() and closing_shift in reg.allowed_closing_offsets()
                and closing <= s.window_end)
    assert (failed == []) is accepted, (opening, closing, [f.message for f in failed])
    assert {f.code for f in failed} <= set(DATE_CODES)
    sr = reg.schedule_rules
    articles = {s.window_article, s.closing_article} | ({sr.closing_end_article} if sr else set())
    assert {f.article for f in failed} <= articles


@pytest.mark.parametrize("reg", _calls())
def test_the_published_schedule_and_the_window_s_extremes_pass_whatever_the_pre_match_days(reg):
    """Art. 2.2's own dates pass, and so does the same schedule moved to the first and the last opening the window
    allows — although the days before game 1 then fall before the window."""
    published = published_schedule(reg)
    opening, closing = published[0].on, published[-1].on
    assert _date_failures(reg, opening, closing) == []
    earliest = min(reg.allowed_closing_offsets())
    for first in (reg.possible_opening_dates()[0], reg.possible_opening_dates()[-1]):
        assert _date_failures(reg, first, first + timedelta(days=earliest)) == []
    before = pre_match_schedule(reg, reg.possible_opening_dates()[0])
    assert before and before[0].on < reg.schedule.window_start


def test_the_2015_call_offers_11_12_and_13_october_on_its_page_its_form_and_its_api(client, app, event, practice,
                                                                                     login_as):
    """Art. 15.2(a): "exact dates for the event between 11 and 31 October 2015"; Art. 2.2: game 1 on 13-10-2015
    with the opening ceremony one day prior, tie-breaks on the 18th day; Art. 10.3: the closing ceremony not later
    than one day after the end of the event. The opening can be on 11, 12 or 13 October."""
    page = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "11 October, 12 October or 13 October" in page
    login_as("bidder")
    api = client.get("/api/v1/events/fwwcm-2015").get_json()
    assert api["possible_opening_dates"] == ["2015-10-11", "2015-10-12", "2015-10-13"]
    bid_id = start_bid(client)
    with app.app_context():
        preg = db.session.get(Event, practice).regulation
    form = client.get(f"/bids/{bid_id}/edit/dates_venue").get_data(as_text=True)
    offered = ", ".join(format_day(d, "d MMMM") for d in preg.possible_opening_dates())
    assert f"the opening ceremony can be on {offered}." in form


# ------------------------------------------------------------------------------ Art. 2.2's own schedule


def test_the_public_page_shows_the_schedule_as_art_2_2_publishes_it(client, event):
    """Art. 2.2: "| …(2nd day) ………13-10-2015 | GAME 1 |" ... "| …(18th day) ……29-10-2015 | TIE-BREAK GAMES |" """
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    section = html[html.index('id="published-schedule"'):]
    section = section[:section.index("</details>")]  # a part of the page that folds (issue 36)
    assert '<time datetime="2015-10-13">Tue 13 Oct</time></span> Game 1, 15:00' in section
    assert '<time datetime="2015-10-29">Thu 29 Oct</time></span> Tie-break games, if needed, 15:00' in section
    assert '<time datetime="2015-10-12">Mon 12 Oct</time></span> Opening ceremony' in section
    assert "Game 1, 15:00" not in section.split("2015-10-13")[0]  # no game before 13 October


def test_the_public_page_dates_the_pre_match_days_as_days_the_organizer_hosts_and_refuses_none(client, event):
    """Art. 3.1: inspection of the accommodation "three (3) days before the first game"; Art. 3.2: the playing
    hall "two (2) days before the first game of the FWWCM at 3 pm"; Art. 5.1: the first Players' Meeting "on the day
    of the venue inspection". With game 1 on 13 October those are 10 and 11 October."""
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    days = html[html.index('id="pre-match-days"'):]
    days = days[:days.index("</ul>")]
    assert ('<time datetime="2015-10-10">Sat 10 Oct</time>: The players may inspect their accommodation at the '
            "venue (Art. 3.1).") in days
    assert ('<time datetime="2015-10-11">Sun 11 Oct</time>: The players inspect the playing hall with the Chief '
            "Arbiter, FIDE and the organizer at 15:00 (Art. 3.2).") in days
    assert "a bid may copy the published schedule exactly." in html
    assert "is refused" not in html


def _findings(app, client, bid_id, opening, closing):
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.opening_date, bid.closing_date = opening, closing
        db.session.commit()
    body = client.get(f"/api/v1/bids/{bid_id}").get_json()
    return {f["code"]: f for f in body["compliance"]["findings"]}


def test_a_bid_imported_with_art_2_2_s_dates_passes_every_date_rule_through_the_api(app, runner, tmp_path, reg,
                                                                                     make, event, client):
    """The paper bid keyed in with the opening ceremony on 12 October and the closing ceremony on 30 October 2015
    (the day after the tie-break day of 29 October) meets every dated rule; no finding names 3.1, 3.2 or 5.1."""
    from tests.bids.factories import valid_bid_json as _json

    make.user(email="owner@example.org")
    make.user(email="sec@example.org", roles=("admin",))
    path = tmp_path / "bid.json"
    path.write_text(json.dumps(_json(reg, opening_date="2015-10-12", closing_date="2015-10-30")))
    result = runner.invoke(args=["bids", "import", str(path), "--event", "fwwcm-2015", "--owner",
                                 "owner@example.org"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        bid_id = db.session.query(Bid).one().id
    login(client, "owner@example.org")
    body = client.get(f"/api/v1/bids/{bid_id}").get_json()
    assert body["opening_date"] == "2015-10-12"
    found = {f["code"]: f for f in body["compliance"]["findings"]}
    assert {found[k]["outcome"] for k in DATE_CODES} == {"pass"}
    assert not any(f["article"] in ("3.1", "3.2", "5.1") for f in body["compliance"]["findings"])
    assert [f["article"] for f in body["compliance"]["findings"] if f["outcome"] == "fail"] == [
        "15.2(j)", "15.2(k)"]  # only the documents, not attached to a paper bid yet


def test_the_bid_form_takes_the_published_schedule_and_lists_the_days_the_organizer_hosts(client, app, practice,
                                                                                          login_as):
    """On the form of a call open for bids (the practice call, the 2015 rules moved on): the published dates are
    saved without a date rule failing, and the bid's schedule starts with the days before game 1."""
    with app.app_context():
        preg = db.session.get(Event, practice).regulation
    published = published_schedule(preg)
    login_as("bidder")
    bid_id = start_bid(client)
    data = valid_bid(preg, opening_date=published[0].on, closing_date=published[-1].on, signed_on=utcnow().date())
    response = fill_section(client, bid_id, "dates_venue", section_posts(data)["dates_venue"])
    assert response.status_code == 302, response.get_data(as_text=True)[:1000]
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    for code in ("3.1", "3.2", "5.1"):
        assert not re.search(rf'class="[^"]*fail[^"]*"[^>]*>\s*Art\. {re.escape(code)}\b', view)
    inspection = published[1].on - timedelta(days=3)
    assert (f'<span class="date">{format_day(inspection, "EEE d MMM")}</span> The players may inspect their '
            "accommodation at the venue (Art. 3.1)") in view
    assert "are not a condition of the dates of the event (Art. 15.2(a))" in view
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        found = {f.code: f for f in check_bid(preg, bid.to_data(), today=utcnow().date())}
    assert {found[k].outcome.value for k in DATE_CODES} == {"pass"}


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


def test_an_opening_the_window_cannot_hold_fails_15_2_a_with_the_offered_dates(app, runner, tmp_path, reg, make,
                                                                                 event, client):
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    found = _findings(app, client, bid_id, date(2015, 10, 14), date(2015, 11, 1))
    opening = found["15.2a.opening_date"]
    assert opening["outcome"] == "fail" and opening["article"] == "15.2(a)"
    assert opening["message"] == (
        "the opening ceremony must be on 11, 12 or 13 October 2015, so that the programme of Art. 2.2 and the "
        "closing ceremony fit between 11 October 2015 and 31 October 2015.")
    assert opening["value"] == "14 October 2015"


def test_a_stored_snapshot_with_the_withdrawn_window_keys_still_loads_with_its_hash():
    """Versions stored before the pre-match days stopped being a condition of the window keep their snapshot and
    hash (a bid records the version that judged it)."""
    import hashlib

    from events.regulation import regulation_from_snapshot
    from evidence.hashing import canonical_json
    from tests.bids.factories import regulation

    data = json.loads(regulation().snapshot)
    data["schedule_rules"].update(pre_match_window_article="15.2(a)", pre_match_within_window=True)
    stored = canonical_json(data)
    reg = regulation_from_snapshot(stored)
    assert reg.snapshot == stored and reg.sha256 == hashlib.sha256(stored.encode()).hexdigest()
    assert reg.possible_opening_dates()[0] == date(2015, 10, 11)


def test_the_public_page_states_how_a_player_who_refuses_is_replaced(client, event):
    """Art. 3.6.2: "If a player refuses to participate in the World Championship Match, she will be replaced as
    follows: The runner up finalist of the Women's World Championship 2014 replaces the Women's World Champion and
    the next player in the overall standings of the Women's Grand-Prix 2013-2014 replaces the challenger." """
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "<dt>Replacement of a player (Art. 3.6.2)</dt>" in html
    assert "the rating list of January 2015 decides" in html

