"""The parts of a bid's page kept rendered per process (core.templating.kept_fragment: its compliance table, what it
costs, its schedule) are what the page renders afresh, whatever filled the store first: every value a part is drawn
from is in its key. Each case changes one such value after the page was shown once, then compares the page with
the page rendered with nothing kept."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from markupsafe import Markup

from accounts.models import User
from bids import judged, services
from bids.models import Bid
from core import templating
from core.db import db, utcnow
from events.models import Event
from tests.bids.factories import valid_bid
from tests.conftest import computed

PARTS = re.compile(r"<h2>Compliance</h2>.*?<h2>Documents</h2>", re.S)


def _parts(client, bid_id: int) -> str:
    page = client.get(f"/bids/{bid_id}")
    assert page.status_code == 200
    return PARTS.search(page.get_data(as_text=True)).group(0)


def _raise_prize(bid: Bid, event: Event) -> None:
    bid.prize_fund_eur += Decimal("50000")


def _raise_contribution(bid: Bid, event: Event) -> None:
    bid.fide_contribution_eur += Decimal("1000")


def _no_guarantee(bid: Bid, event: Event) -> None:
    bid.guarantee_offered = False


def _another_country(bid: Bid, event: Event) -> None:
    bid.venue_country = "GE"


def _blocker_required(bid: Bid, event: Event) -> None:
    event.signal_blocker_required = True


def _later_dates(bid: Bid, event: Event) -> None:
    bid.closing_date += timedelta(days=1)


def _a_rule_failed(bid: Bid, event: Event) -> None:
    bid.prize_fund_eur = Decimal("1000")  # below the minimum: a finding fails, and the cost changes with it


@pytest.mark.parametrize("change", [_raise_prize, _raise_contribution, _no_guarantee, _another_country,
                                    _blocker_required, _later_dates, _a_rule_failed])
def test_a_part_kept_is_the_part_rendered_afresh(app, client, make, practice, login_as, change):
    owner_id = make.user(email="parts@example.org", roles=("bidder",))
    with app.app_context():
        now = utcnow()
        owner, event = db.session.get(User, owner_id), db.session.get(Event, practice)
        bid = services.create_bid(event, owner=owner, actor=owner, now=now)
        services.apply_data(bid, valid_bid(event.regulation, signed_on=now.date()))
        db.session.commit()
        bid_id = bid.id
    login_as("admin")
    with computed(app):  # each request computes the page (no copy of the whole page kept)
        before = _parts(client, bid_id)
        with app.app_context():
            bid = db.session.get(Bid, bid_id)
            change(bid, bid.event)
            db.session.commit()
        shown = _parts(client, bid_id)
        templating.forget_fragments()
        assert shown == _parts(client, bid_id)
    assert shown != before


def test_the_page_shows_the_parts_kept(app, client, make, practice, login_as, monkeypatch):
    """Wiring: a part kept is what the page shows, not rendered again (a part put in the store under the key of the
    bid's compliance table is shown in its place)."""
    owner_id = make.user(email="parts@example.org", roles=("bidder",))
    with app.app_context():
        now = utcnow()
        owner, event = db.session.get(User, owner_id), db.session.get(Event, practice)
        bid = services.create_bid(event, owner=owner, actor=owner, now=now)
        bid_id = bid.id
        key = ("bid compliance", *judged.findings_of(bid, today=now.date()))
        db.session.commit()
    templating.kept_fragment(key, lambda: Markup("<p>THE TABLE KEPT</p>"))
    login_as("admin")
    with computed(app):
        assert "<p>THE TABLE KEPT</p>" in _parts(client, bid_id)


def test_a_fragment_is_rendered_once_per_key(monkeypatch):
    made: list[str] = []

    def render(text: str):
        def make() -> Markup:
            made.append(text)
            return Markup(text)
        return make

    templating.forget_fragments()
    assert templating.kept_fragment(("test", 1), render("one")) == "one"
    assert templating.kept_fragment(("test", 1), render("other")) == "one"  # kept: not rendered again
    assert templating.kept_fragment(("test", 2), render("two")) == "two"
    assert templating.kept_fragment(("test", [1]), render("list")) == "list"  # a key that cannot be hashed:
    assert templating.kept_fragment(("test", [1]), render("list")) == "list"  # rendered every time
    assert made == ["one", "two", "list", "list"]
    monkeypatch.setattr(templating, "FRAGMENTS_KEPT", 2)
    templating.kept_fragment(("test", 3), render("three"))  # the least recently used (1) goes
    assert templating.kept_fragment(("test", 2), render("again")) == "two"
    assert templating.kept_fragment(("test", 1), render("one again")) == "one again"
    assert made[-1] == "one again" and len(made) == 6


def test_nothing_is_kept_while_templates_reload_when_edited(app, monkeypatch):
    made: list[int] = []
    templating.forget_fragments()
    monkeypatch.setattr(app.jinja_env, "auto_reload", True)
    with app.app_context():
        for _ in range(2):
            templating.kept_fragment(("test", "reload"), lambda: made.append(1) or Markup("x"))
    assert made == [1, 1]
