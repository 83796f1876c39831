from datetime import UTC, datetime

from bids.models import Bid
from core.db import db
from events.models import Event
from tests.bids.factories import valid_bid_json


def _imported_bid(app, runner, tmp_path, reg, make, email="owner@example.org"):
    import json

    owner = make.user(email=email)
    make.user(email="sec@example.org", roles=("admin",))  # the secretariat keys the paper bid in
    path = tmp_path / "bid.json"
    data = valid_bid_json(reg)
    path.write_text(json.dumps(data))
    result = runner.invoke(args=["bids", "import", str(path), "--event", "fwwcm-2015", "--owner", email])
    assert result.exit_code == 0, result.output
    with app.app_context():
        return db.session.query(Bid).one().id, owner, data


def test_bid_json_has_the_import_shape_plus_status_version_and_compliance(app, runner, tmp_path, reg, make, event,
                                                                          login_as, client):
    bid_id, _, data = _imported_bid(app, runner, tmp_path, reg, make)
    login_as("admin")
    body = client.get(f"/api/v1/bids/{bid_id}").get_json()
    for key, value in data.items():
        if key != "evaluation":
            assert body[key] == value, key
    assert body["status"] == "draft" and body["version"] == 0
    assert body["compliance"]["compliant"] is False  # the documents are not attached yet
    pending = [f for f in body["compliance"]["findings"] if f["outcome"] == "fail"]
    assert {f["article"] for f in pending} == {"15.2(j)", "15.2(k)"}


def test_obligations_json_has_amounts_as_strings_and_iso_dates(app, runner, tmp_path, reg, make, event, client):
    bid_id, owner, _ = _imported_bid(app, runner, tmp_path, reg, make)
    from tests.conftest import login

    login(client, "owner@example.org")
    body = client.get(f"/api/v1/bids/{bid_id}/obligations").get_json()
    lines = {ln["key"]: ln for ln in body["obligations"]["lines"]}
    assert lines["fide_contribution"]["amount"] == "40000.00"
    assert lines["commercial_rights"]["amount"] == "10000.00"
    assert lines["wcoc_budget"]["amount"] == "15000.00"
    assert body["schedule"]["instalments"][0] == {**body["schedule"]["instalments"][0], "due": "2015-06-30",
                                                  "amount": "100000.00"}
    assert body["schedule"]["instalments"][1]["due"] == "2015-08-31"


def test_event_bids_lists_only_what_the_caller_may_see(app, runner, tmp_path, reg, make, event, client, login_as):
    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    login_as("wcoc")
    assert client.get("/api/v1/events/fwwcm-2015/bids").get_json()["bids"] == []  # a draft
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.status, bid.first_submitted_at = "submitted", datetime(2015, 5, 20, tzinfo=UTC)
        db.session.commit()
    listed = client.get("/api/v1/events/fwwcm-2015/bids").get_json()["bids"]
    assert [b["id"] for b in listed] == [bid_id] and listed[0]["prize_fund_eur"] == "200000.00"
    with app.app_context():
        assert db.session.query(Event).count() == 1
