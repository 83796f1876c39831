"""Exports of the tracker: the CSV of milestones and of payments, and the iCalendar feed a calendar program
subscribes to with the contract's token (parsed back with the icalendar library)."""

import csv
import io
import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from icalendar import Calendar

from accounts.models import User
from contracts import payments as contract_payments
from contracts import services
from contracts.models import Contract
from core.db import db
from tests.conftest import login
from tests.contracts.factories_contracts import ISSUED_AT, fake_render, milestone


@pytest.fixture
def setup(app, cf, event):
    """An issued contract with a payment, a reversed one and a formula-looking reference; returns ids."""
    admin_id, owner_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=owner_id, admin_id=admin_id)
    with app.app_context():
        admin = db.session.get(User, admin_id)
        m = milestone(db.session.get(Contract, contract_id), "instalment_1")
        now = ISSUED_AT + timedelta(days=20)
        contract_payments.record_payment(m, amount=Decimal("60000.00"), received_on=date(2015, 6, 20),
                                         reference="=HYPERLINK(\"x\")", note="first part", idempotency_key="a",
                                         actor=admin, now=now)
        wrong, _ = contract_payments.record_payment(m, amount=Decimal("500.00"), received_on=date(2015, 6, 21),
                                                    reference="typo", note="", idempotency_key="b", actor=admin,
                                                    now=now)
        contract_payments.reverse_payment(wrong, reason="keyed twice", idempotency_key="c", actor=admin, now=now)
        db.session.commit()
    return {"admin": admin_id, "owner": owner_id, "contract": contract_id}


def client_for(app, user_id):
    client = app.test_client()
    with app.app_context():
        assert login(client, db.session.get(User, user_id).email).status_code == 302
    return client


def read(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    data, mimetype, headers = response.data, response.mimetype, dict(response.headers)
    response.close()
    return data, mimetype, headers


def test_the_milestones_csv_has_each_milestone_with_its_status_on_the_day(app, setup):
    client = client_for(app, setup["owner"])
    data, mimetype, headers = read(client, f"/contracts/{setup['contract']}/milestones.csv?as_of=2015-07-02")
    assert mimetype == "text/csv" and "milestones-2015-07-02.csv" in headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    first = rows[0]
    assert (first["key"], first["article"], first["amount"], first["due"], first["paid"], first["outstanding"],
            first["status"]) == ("instalment_1", "15.6.2", "100000.00", "2015-06-30", "60000.00", "40000.00",
                                 "overdue")
    assert first["status_label"] == "Overdue by 2 days; part-paid, €60,000.00 of €100,000.00 received"
    assert [r["key"] for r in rows][:2] == ["instalment_1", "instalment_2"]
    blocker = next(r for r in rows if r["key"] == "signal_blocker")
    assert blocker["is_cap"] == "yes" and blocker["due"] == "" and blocker["status"] == "at_cost"
    assert {r["payer"] for r in rows} == {"Chess Federation of Ukraine", "World Chess Federation (FIDE)"}
    read(client, f"/contracts/{setup['contract']}/milestones.csv?as_of=soon", status=400)


def test_the_payments_csv_adds_up_to_what_was_received_and_defuses_formulas(app, setup):
    client = client_for(app, setup["admin"])
    data, _, _ = read(client, f"/contracts/{setup['contract']}/payments.csv")
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert [(r["kind"], r["amount"], r["received_on"]) for r in rows] == [
        ("payment", "60000.00", "2015-06-20"), ("payment", "500.00", "2015-06-21"),
        ("reversal", "-500.00", "2015-06-21")]
    assert sum(Decimal(r["amount"]) for r in rows) == Decimal("60000.00")
    assert rows[0]["reference"] == "'=HYPERLINK(\"x\")" and rows[2]["reason"] == "keyed twice"
    assert rows[2]["reverses_payment_id"] == rows[1]["payment_id"]


def _feed_url(app, client, contract_id) -> str:
    response = client.post(f"/contracts/{contract_id}/calendar-link")
    assert response.status_code == 200
    url = re.search(r'<code class="token">([^<]+)</code>', response.get_data(as_text=True)).group(1)
    response.close()
    return url.replace("&amp;", "&").replace("http://gambit.test", "")


def test_the_calendar_feed_opens_with_its_token_and_lists_every_deadline(app, setup):
    owner = client_for(app, setup["owner"])
    url = _feed_url(app, owner, setup["contract"])
    assert re.fullmatch(rf"/contracts/{setup['contract']}/calendar.ics\?token=[\w-]{{40,}}", url)
    anonymous = app.test_client()
    data, mimetype, _ = read(anonymous, url)
    assert mimetype == "text/calendar"
    cal = Calendar.from_ical(data)
    events = {str(e["uid"]): e for e in cal.walk("VEVENT")}
    with app.app_context():
        contract = db.session.get(Contract, setup["contract"])
        dated = [m for m in contract.milestones if m.due]
        bid_id = contract.bid_id
    assert len(events) == len(dated)
    first = events[f"contract-{bid_id}-instalment_1@gambit"]
    assert first.decoded("dtstart") == date(2015, 6, 30)
    assert first.decoded("dtend") == date(2015, 7, 1)
    assert str(first["summary"]) == "Due: €100,000.00 — instalment 1, due 30 June 2015 (Art. 15.6.2)"
    assert "Chess Federation of Ukraine pays World Chess Federation (FIDE)" in str(first["description"])
    assert events[f"contract-{bid_id}-instalment_2@gambit"].decoded("dtstart") == date(2015, 8, 31)
    assert events[f"contract-{bid_id}-advance_CHN@gambit"].decoded("dtstart") == date(2015, 10, 10)
    assert str(cal["x-wr-calname"]).startswith("FWWCM 2015: payment deadlines")


def test_a_wrong_or_old_token_gets_404_and_a_new_link_turns_off_the_old_one(app, setup):
    admin = client_for(app, setup["admin"])
    old = _feed_url(app, admin, setup["contract"])
    anonymous = app.test_client()
    read(anonymous, old)
    read(anonymous, old[:-3] + "xyz", status=404)
    read(anonymous, old.split("?")[0], status=404)
    read(anonymous, old.replace(f"/contracts/{setup['contract']}/", "/contracts/999999/"), status=404)
    new = _feed_url(app, admin, setup["contract"])
    assert new != old
    read(anonymous, old, status=404)
    read(anonymous, new)


def test_a_subscription_follows_the_contract_through_a_correction(app, setup):
    owner = client_for(app, setup["owner"])
    url = _feed_url(app, owner, setup["contract"])
    with app.app_context():
        contract = db.session.get(Contract, setup["contract"])
        admin = db.session.get(User, setup["admin"])
        contract.bid.event.signal_blocker_required = False  # the call's answer changes (Art. 14.3)
        draft = services.prepare_correction(contract, reason="FIDE drops the signal blocker", actor=admin,
                                            now=ISSUED_AT + timedelta(days=21))
        dates = {k: v for k, v in contract.due_dates.items()}
        dates["stipend_payout_1"] = date(2015, 10, 28)
        services.issue_contract(draft, due_dates=dates, actor=admin, now=ISSUED_AT + timedelta(days=21),
                                upload_dir=app.config["UPLOAD_DIR"], render=fake_render)
        db.session.commit()
        bid_id = contract.bid_id
    cal = Calendar.from_ical(read(app.test_client(), url)[0])
    events = {str(e["uid"]): e for e in cal.walk("VEVENT")}
    assert events[f"contract-{bid_id}-stipend_payout_1@gambit"].decoded("dtstart") == date(2015, 10, 28)
    assert "-v2" in str(cal["x-wr-calname"])
