"""The public page of a call follows its file; `flask events load` versions a changed file."""

import re

from sqlalchemy import select

from core.db import db
from events.models import Event, RegulationVersion
from events.regulation import default_event_file
from tests.events.callfiles import write_call

MADE_UP = (default_event_file().read_text()
           .replace('slug = "fwwcm-2015"', 'slug = "made-up-2031"')
           .replace('title = "FIDE Women\'s World Championship Match 2015"', 'title = "Made-up Match 2031"')
           .replace("window_start = 2015-10-11", "window_start = 2015-09-01")
           .replace("window_end = 2015-10-31", "window_end = 2015-09-25")
           .replace('minimum = "200000.00"', 'minimum = "350000.00"')
           .replace('min_stars = 4', 'min_stars = 5')
           .replace('label = "Prize fund"\nweight = "20"', 'label = "Prize fund"\nweight = "45"'))


def test_public_page_shows_the_2015_figures_without_login(client, event):
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "€200,000.00" in html and "net of any applicable local taxes" in html
    assert "at least <strong>20%</strong> of the prize fund" in html
    assert "at least <strong>4 stars</strong>" in html
    assert "11 October, 12 October or 13 October" in html
    assert "IBAN CH54 0024 3243 3420 8763 Y" in html
    assert "Game 10, 15:00" in html
    assert "31 May 2015" in html  # the bid deadline
    assert re.search(r"31 May 2015</strong>, 23:59 UTC\s*\(passed\)", html)  # events.rules.bid_deadline_passed
    assert "15.5(a)" in html and "<td class=\"num\">20%</td>" in html


def test_the_public_page_of_an_open_call_does_not_say_its_deadline_passed(client, practice):
    html = client.get("/events/fwwcm-practice").get_data(as_text=True)
    assert "Bids due" in html and "(passed)" not in html


def test_a_made_up_call_shows_its_own_figures(client, runner, tmp_path):
    path = write_call(tmp_path, "made-up.toml", MADE_UP)
    result = runner.invoke(args=["events", "load", str(path)])
    assert result.exit_code == 0, result.output
    html = client.get("/events/made-up-2031").get_data(as_text=True)
    assert "Made-up Match 2031" in html
    assert "€350,000.00" in html and "€200,000.00" not in html
    assert "at least <strong>5 stars</strong>" in html
    assert "1 September, 2 September, 3 September, 4 September, 5 September, 6 September or 7 September" in html
    # weight 45 of 125 in all
    assert "<td class=\"num\">36%</td>" in html


def test_loading_a_changed_file_makes_a_new_version_and_changes_the_page(client, runner, tmp_path, app):
    path = write_call(tmp_path, "fwwcm-2015.toml", default_event_file().read_text())
    assert runner.invoke(args=["events", "load", str(path)]).exit_code == 0
    again = runner.invoke(args=["events", "load", str(path)])
    assert "unchanged" in again.output
    path.write_text(default_event_file().read_text().replace('minimum = "200000.00"', 'minimum = "220000.00"'))
    # a changed file is an amendment: who decided it, when, under which reference and why (issue 13)
    result = runner.invoke(args=["events", "load", str(path), "--authority", "board", "--decided-on",
                                 "2015-04-01", "--reference", "PB-2015-04", "--reason", "The currency fell.",
                                 "--recommended-by", "WCOC", "--recommended-on", "2015-03-30",
                                 "--recommendation", "Raise the minimum."])
    assert result.exit_code == 0 and "regulation v2" in result.output
    with app.app_context():
        event = db.session.scalars(select(Event).where(Event.slug == "fwwcm-2015")).one()
        numbers = db.session.scalars(select(RegulationVersion.number).where(
            RegulationVersion.event_id == event.id)).all()
        assert sorted(numbers) == [1, 2]
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "€220,000.00" in html and "version 2" in html


def test_events_load_refuses_a_bad_file_with_the_key_and_no_traceback(runner, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(default_event_file().read_text().replace("min_inspectors = 2", "min_inspectors = two"))
    result = runner.invoke(args=["events", "load", str(path)])
    assert result.exit_code == 1
    assert "not valid TOML" in result.output
    path.write_text(default_event_file().read_text().replace("min_inspectors = 2", "min_inspectors = 2.5"))
    result = runner.invoke(args=["events", "load", str(path)])
    assert result.exit_code == 1
    assert "inspection.min_inspectors: expected a whole number, got 2.5" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(args=["events", "load", str(tmp_path / "missing.toml")])
    assert result.exit_code == 1 and "cannot read" in result.output


def test_admin_closes_the_call_and_the_audit_log_records_it(client, login_as, event, app):
    login_as("admin")
    response = client.post("/events/fwwcm-2015/status", data={"action": "close"})
    assert response.status_code == 302
    assert "Closed for bids" in client.get("/events/fwwcm-2015").get_data(as_text=True)
    response = client.post("/events/fwwcm-2015/status", data={"action": "decide"}, follow_redirects=True)
    assert "is not an action the call" in response.get_data(as_text=True)


def test_seed_demo_is_idempotent_and_opens_a_practice_call(runner, app):
    first = runner.invoke(args=["seed", "--demo"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(args=["seed", "--demo"])
    assert second.exit_code == 0 and "demo account" not in second.output
    with app.app_context():
        practice = db.session.scalars(select(Event).where(Event.slug == "fwwcm-practice")).one()
        assert practice.regulation.event.practice
        assert practice.state.accepts_bids


def test_public_page_shows_the_weights_in_force(client, app, event, make):
    from decimal import Decimal

    from accounts.models import User
    from core.db import utcnow
    from scoring.services import change_weights

    admin = make.user(roles=("admin",))
    with app.app_context():
        ev = db.session.get(Event, event)
        weights = {c.key: c.weight for c in ev.regulation.criteria}
        weights["a"] = Decimal("45")  # 45 of 125
        change_weights(ev, weights, reason="The prize fund matters more", actor=db.session.get(User, admin),
                       now=utcnow())
        db.session.commit()
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert "<td class=\"num\">36%</td>" in html and "<td class=\"num\">20%</td>" not in html
