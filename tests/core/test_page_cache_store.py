"""What the copies kept in one process (operations.page_cache) promise beyond their key: the least recently used copy is
the one let go when the store is full; the instants a page changes at (every call's bid deadline) are read again once
the audit head moves, so a call added or moved changes the pages at its own deadline; and with PAGE_CACHE_WATCH_WRITES
off (the walk of every state change, tests/test_page_versions.py) a copy follows the audit head alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask_login import login_user

from accounts.models import User
from bids.models import Bid
from core.db import db, utcnow
from events.regulation import default_event_file, load_regulation_file
from events.services import load_event
from operations.page_cache import page_key, store
from tests.conftest import login
from tests.scoring.factories_scoring import ScoringFactory


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


@pytest.fixture
def secretariat(client, make):
    make.user(email="store-admin@example.org", roles=("admin",))
    assert login(client, "store-admin@example.org").status_code == 302
    client.get("/")  # the welcome message is shown: the next pages carry none
    return client


def _kept_names(app) -> list[str]:
    """The cities of the bid pages kept, least recently used first."""
    out = []
    for body, _ in store(app).pages.values():
        text = body.decode()
        out += [city for city in ("Aachen", "Bergen", "Cadiz") if f"City of {city}" in text]
    return out


def test_a_full_store_lets_go_of_the_copy_least_recently_used(app, sf, event, secretariat, monkeypatch):
    kept = store(app)
    monkeypatch.setattr(kept, "entries", 2)
    kept.clear()
    aachen, bergen, cadiz = (sf.bid(event, city=city, name=f"City of {city}") for city in ("Aachen", "Bergen", "Cadiz"))
    for bid in (aachen, bergen):
        assert secretariat.get(f"/bids/{bid}").status_code == 200
    assert _kept_names(app) == ["Aachen", "Bergen"]
    assert secretariat.get(f"/bids/{aachen}").status_code == 200  # read again: now the most recently used
    assert _kept_names(app) == ["Bergen", "Aachen"]
    assert secretariat.get(f"/bids/{cadiz}").status_code == 200
    assert _kept_names(app) == ["Aachen", "Cadiz"], "the copy read last was let go instead of the oldest"


def test_a_call_added_after_pages_were_keyed_changes_them_at_its_own_deadline(app, event, make):
    """The instants are kept per audit head: loading a second call (an audited change) must bring its deadline into
    the key, so a page kept a second before that deadline is not answered a moment after it."""
    user_id = make.user(roles=("admin",))

    def etag(now):
        with app.test_request_context("/bids/"):
            login_user(db.session.get(User, user_id))
            return page_key(now).etag

    reg = load_regulation_file(default_event_file())
    later = reg.shifted(years=1, slug="fwwcm-second", title="Second call", practice=False)
    deadline = later.event.bid_deadline
    before, after = deadline - timedelta(seconds=1), deadline + timedelta(microseconds=1)
    assert etag(before) == etag(after), "no call has a deadline there yet"
    with app.app_context():
        load_event(later, actor=None, now=utcnow(), source="test")
        db.session.commit()
    assert etag(before) != etag(after), "the second call's deadline did not change the pages"


def test_with_writes_not_watched_a_copy_follows_the_audit_head_alone(app, sf, event, secretariat, monkeypatch):
    """The mirror of test_page_cache's write outside the services: with PAGE_CACHE_WATCH_WRITES off, such a write
    (not audited) is not seen in the copy kept, which is what lets the walk of every state change prove each one
    moves the audit head."""
    monkeypatch.setitem(app.config, "PAGE_CACHE_WATCH_WRITES", False)
    bid = sf.bid(event, name="Federation of Lviv")
    assert "Federation of Lviv" in secretariat.get(f"/bids/{bid}").get_data(as_text=True)
    with app.app_context():
        db.session.get(Bid, bid).applicant_name = "Federation of Odesa"
        db.session.commit()
    page = secretariat.get(f"/bids/{bid}").get_data(as_text=True)
    assert "Federation of Lviv" in page and "Federation of Odesa" not in page
    monkeypatch.setitem(app.config, "PAGE_CACHE_WATCH_WRITES", True)
    assert "Federation of Odesa" in secretariat.get(f"/bids/{bid}").get_data(as_text=True)


def test_each_app_keeps_as_many_copies_as_its_setting_says_at_least_one_under_a_token_of_its_own(another_app):
    """PAGE_CACHE_ENTRIES bounds the copies a process keeps (never below one); each app made (a restart, new code or
    settings) keys its copies and ETags under a token of its own, so none of another's matches."""
    two, none, default = another_app(PAGE_CACHE_ENTRIES=2), another_app(PAGE_CACHE_ENTRIES=0), another_app()
    assert (store(two).entries, store(none).entries, store(default).entries) == (2, 1, 512)
    tokens = {store(a).token for a in (two, none, default)}
    assert len(tokens) == 3 and all(tokens)
