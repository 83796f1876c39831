"""Issue 12's reproductions of hostile input, each refused with a message (never a 500)."""

import re

import pytest
from sqlalchemy import select

from accounts.models import User
from accounts.services import AccountError, create_user, update_roles
from bids.models import Bid
from core.db import db, utcnow
from scoring.models import WeightsVersion
from tests.bids.web import revision, start_bid
from tests.conftest import DEMO_PASSWORD

KEYS = "abcdefghij"


# --------------------------------------------------------------------------------------------- room rates


def _hotel_post(bid_id, rev, rates: int, **extra):
    data = {"revision": rev, "hotel_name": "Grand", "hotel_stars": "4", **extra}
    for i in range(rates):
        data[f"room_rates-{i}-room_type"] = f"Room {i}"
        data[f"room_rates-{i}-eur_per_night"] = "100.00"
    return data


def test_a_21st_room_rate_gets_a_message_not_a_500(client, app, login_as, practice):
    login_as("bidder")
    bid_id = start_bid(client)
    response = client.post(f"/bids/{bid_id}/edit/hotel", data=_hotel_post(bid_id, revision(client, bid_id, "hotel"),
                                                                           20, action="add_rate"))
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert ("A bid lists at most 20 room rates (Gambit&#39;s limit, to keep the bid readable; the regulations set "
            "none): group similar rooms in one line (21 lines were sent).") in page
    assert 'value="Room 19"' in page  # nothing typed is lost


def test_21_posted_room_rates_are_refused_not_cut_short(client, app, login_as, practice):
    login_as("bidder")
    bid_id = start_bid(client)
    response = client.post(f"/bids/{bid_id}/edit/hotel", data=_hotel_post(bid_id, revision(client, bid_id, "hotel"),
                                                                           21))
    assert response.status_code == 422
    assert "(21 lines were sent)" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Bid, bid_id).room_rates == []
    response = client.post(f"/bids/{bid_id}/edit/hotel", data=_hotel_post(bid_id, revision(client, bid_id, "hotel"),
                                                                           20))
    assert response.status_code == 302
    with app.app_context():
        assert len(db.session.get(Bid, bid_id).room_rates) == 20


# ------------------------------------------------------------------------------------------------ weights


@pytest.mark.parametrize("bad", ["sNaN", "NaN", "Infinity", "-Infinity", "1e308", "1E2", "10001", "0x10", "1_000"])
def test_a_weight_that_is_not_a_plain_number_is_refused_with_a_message(client, app, login_as, event, bad):
    login_as("admin")
    form = {f"weight_{k}": "10" for k in KEYS} | {"based_on": "0", "reason": "", "weight_c": bad}
    response = client.post("/events/fwwcm-2015/scoring/weights", data=form)
    assert response.status_code == 422
    assert (f"A weight is a number from 0 to 1000 with at most 4 decimals, like 12.5 (you entered &#39;{bad}&#39;)."
            in response.get_data(as_text=True))
    with app.app_context():
        assert db.session.scalars(select(WeightsVersion)).all() == []


def test_a_negative_weight_is_refused_and_a_plain_one_accepted(client, app, login_as, event):
    login_as("admin")
    form = {f"weight_{k}": "10" for k in KEYS} | {"based_on": "0", "reason": "", "weight_c": "-5"}
    response = client.post("/events/fwwcm-2015/scoring/weights", data=form)
    assert "A weight cannot be negative (you entered &#39;-5&#39;)." in response.get_data(as_text=True)
    form["weight_c"] = "1000"
    assert client.post("/events/fwwcm-2015/scoring/weights", data=form).status_code == 302


# ------------------------------------------------------------------------------------------- one President


def test_the_cli_refuses_a_second_president(runner, make):
    make.user(roles=("board",), email="president@example.org", is_president=True)
    result = runner.invoke(args=["users", "create", "second@example.org", "--role", "board", "--president"])
    assert result.exit_code == 1
    assert ("president@example.org is already the FIDE President, and there is one President at a time. Remove "
            "the title from that account first.") in result.output
    with runner.app.app_context():
        assert db.session.scalars(select(User).where(User.email == "second@example.org")).first() is None


def test_the_role_editor_refuses_a_second_president(client, app, login_as, make):
    make.user(roles=("board",), email="president@example.org", is_president=True)
    other = make.user(roles=("board",), email="member@example.org")
    login_as("admin")
    response = client.post(f"/admin/users/{other}", data={"roles": ["board"], "is_president": "y"})
    assert response.status_code == 422
    assert "president@example.org is already the FIDE President" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(User, other).is_president is False


def test_the_president_can_be_edited_and_the_title_moved(ctx, make):
    president = db.session.get(User, make.user(roles=("board",), email="p@example.org", is_president=True))
    update_roles(president, roles=["board", "wcoc"], is_president=True, federation=None, actor=None, now=utcnow())
    other = db.session.get(User, make.user(roles=("board",), email="o@example.org"))
    with pytest.raises(AccountError, match="p@example.org is already the FIDE President"):
        update_roles(other, roles=["board"], is_president=True, federation=None, actor=None, now=utcnow())
    update_roles(president, roles=["board"], is_president=False, federation=None, actor=None, now=utcnow())
    update_roles(other, roles=["board"], is_president=True, federation=None, actor=None, now=utcnow())
    with pytest.raises(AccountError, match=re.escape("o@example.org is already the FIDE President")):
        create_user(email="third@example.org", password=DEMO_PASSWORD, name="T", roles=["board"],
                    is_president=True, actor=None, now=utcnow())
