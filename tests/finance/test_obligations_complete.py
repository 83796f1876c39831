"""Issue 13, part 1: the organizer's obligations complete — the prize fund's 30 June half where it is due, the signal
blocker only when FIDE requires it, obligations in kind with their articles, and totals that say what they hold.
Through the routes: the bid page, the JSON API, the call's settings."""

from __future__ import annotations

from tests.conftest import login
from tests.obligations_written import WRITTEN, missing_from

# The app's modules are imported in the tests, not here: the other tests of tests/finance are pure and start
# without them.


def _imported_bid(app, runner, tmp_path, reg, make):
    from tests.api.test_bids_api import _imported_bid

    return _imported_bid(app, runner, tmp_path, reg, make)


def _obligations(client, bid_id):
    body = client.get(f"/api/v1/bids/{bid_id}/obligations").get_json()
    return {ln["key"]: ln for ln in body["obligations"]["lines"]}, body


def test_the_prize_fund_line_shows_the_30_june_half_where_it_is_due(app, runner, tmp_path, reg, make, event, client):
    """Art. 15.6.2: "50% of the Prize Fund to be paid into the FIDE account by 30 June 2015; the balance of the
    Prize Fund and all other financial obligations must be paid by 31 August 2015." """
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    lines, _ = _obligations(client, bid_id)
    prize = lines["prize_fund"]
    assert prize["first_due"] == "2015-06-30"
    assert prize["due_parts"] == [{"due": "2015-06-30", "amount": "100000.00", "share": "0.50"},
                                  {"due": "2015-08-31", "amount": "100000.00", "share": "0.50"}]
    html = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    row = html[html.index('id="obligation-prize_fund"'):]
    row = row[:row.index("</tr>")]
    assert '€100,000.00 by <time datetime="2015-06-30">30 June 2015</time>' in row
    assert '€100,000.00 by <time datetime="2015-08-31">31 August 2015</time>' in row


def test_the_signal_blocker_counts_only_when_the_secretariat_records_that_fide_requires_it(
        app, runner, tmp_path, reg, make, event, client):
    """Art. 14.3: "If required by FIDE, the organizer will provide an electronic device to block all mobile
    signals around the playing area ... will not exceed the amount of 8,000 (eight thousand) euros." """
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    lines, body = _obligations(client, bid_id)
    assert "signal_blocker" not in lines  # by default FIDE has not required it
    without = body["obligations"]["total_up_to"]
    assert without == body["obligations"]["total_fixed"]

    make.user(email="sec2@example.org", roles=("admin",))
    login(client, "sec2@example.org")
    public = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert f"Signal blocker: if required by FIDE (Art. {reg.obligations.signal_blocker_article})" in public
    assert "Not required by FIDE for this call" in public
    assert client.post("/events/fwwcm-2015/settings", data={"signal_blocker_required": "y"}).status_code == 302
    from sqlalchemy import select

    from core.db import db
    from events.models import Event
    from evidence.audit import AuditEntry

    with app.app_context():
        ev = db.session.get(Event, event)
        assert ev.signal_blocker_required is True
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "event.signal_blocker")).one()
        assert entry.object_id == str(event) and "\"to\": true" in entry.data
    assert "Required by FIDE for this call" in client.get("/events/fwwcm-2015").get_data(as_text=True)

    login(client, "owner@example.org")
    lines, body = _obligations(client, bid_id)
    blocker = lines["signal_blocker"]
    assert blocker["amount"] == "8000.00" and blocker["is_cap"] is True
    assert f"if required by FIDE (Art. {reg.obligations.signal_blocker_article})" in blocker["description"]
    assert body["obligations"]["total_fixed"] == without
    assert body["obligations"]["total_caps"] == "8000.00"


def test_obligations_in_kind_are_shown_before_submitting_and_the_totals_say_they_come_on_top(
        app, runner, tmp_path, reg, make, event, client):
    """Art. 11.2.3: "The organizer shall provide the players with free full board and lodging in a two-room junior
    suite in the official hotel of at least 4-stars." Art. 10.3: "The Organizer shall provide a victory garland, a
    trophy and a gold medal for the winner and a silver medal for the loser." Art. 7.4.2: the FIDE Supervisor "can
    request from the organizer and at their expense, any additional security arrangement". """
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    html = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    section = html[html.index('id="in-kind"'):]
    for art in ("11.1.1", "11.2.1", "11.2.2", "11.2.3", "11.3", "11.4", "11.5", "8.5", "9.1(d)", "10.3", "12.4.1",
                "7.4.2"):
        assert f"<strong>Art. {art}, " in section, art
    assert "two-room junior suite" in section and "a trophy and a gold medal" in section
    assert "obligations in kind come on top" in html
    _, body = _obligations(client, bid_id)
    note = body["obligations"]["totals_include"]
    assert note.startswith("The totals count the payments in money of the lines above (Art. 11.1.2, 13.1, 13.2, 14.1")
    assert "They leave out the obligations in kind (Art. 11.1.1, 11.2.1" in note
    assert {i["article"] for i in body["obligations"]["in_kind"]} >= {"11.4", "12.4.1", "7.4.2"}


def test_the_bidder_sees_every_obligation_of_the_regulations_before_submitting(app, runner, tmp_path, reg, make, event,
                                                                              client):
    """Art. 4 (score sheets), 8.2 (flags), 8.3 (the official hotel), 10.2 (the opening ceremony), 12.1 (commercial
    rights), 12.4.2 (the official domain), 12.4.3 (the press centre) and 7.4.3 (the FIDE Supervisor's decisions): a
    bid accepts them without reservation (Art. 15.2(h)), so the bidder sees them on the draft's page, and the API
    gives them with the obligations."""
    from bids.models import Bid
    from core.db import db

    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login(client, "owner@example.org")
    html = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, bid_id).status == "draft"  # not submitted
    shown = html[html.index('id="in-kind"'):]
    assert missing_from(shown, escaped=True) == []
    assert "What the organiser undertakes (before you submit)" in shown
    _, body = _obligations(client, bid_id)
    given = {i["article"] for i in body["obligations"]["in_kind"] + body["obligations"]["undertakings"]}
    assert given >= set(WRITTEN)
