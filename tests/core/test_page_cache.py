"""Versioned pages (operations.page_cache): the ETag and 304, the copy kept per process, and what the version is made
of. That no state change of the flow is missed is tests/test_page_versions.py's."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from flask_login import login_user
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Engine

from accounts.models import User
from bids.models import Bid
from core.db import db, utcnow
from events.models import Event
from operations.page_cache import CACHE_CONTROL, page_key, store
from tests.conftest import login
from tests.scoring.factories_scoring import ScoringFactory

VERSIONED = {"bids.index", "bids.view", "scoring.ranking", "board.call"}


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)


@pytest.fixture
def secretariat(client, make):
    make.user(email="cache-admin@example.org", roles=("admin",))
    assert login(client, "cache-admin@example.org").status_code == 302
    client.get("/")  # the welcome message is shown: the next pages carry none
    return client


def statements_of(client, url: str, **headers) -> tuple[list[str], object]:
    seen: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    sa_event.listen(Engine, "before_cursor_execute", note)
    try:
        response = client.get(url, headers=headers)
    finally:
        sa_event.remove(Engine, "before_cursor_execute", note)
    return seen, response


def reject(app, bid_id: int, admin_email: str = "cache-admin@example.org") -> None:
    from bids.services import reject_bid

    with app.app_context():
        admin = db.session.scalars(db.select(User).filter_by(email=admin_email)).one()
        reject_bid(db.session.get(Bid, bid_id), reason="Incomplete: no guarantee.", actor=admin, now=utcnow())
        db.session.commit()


def test_the_versioned_pages_are_the_four_expensive_ones(app):
    """The ranking, a bid's page (its compliance report), the bid list and the Board's page of a call: the pages the
    walk of tests/test_page_versions.py asks after every step."""
    marked = {endpoint for endpoint, view in app.view_functions.items() if getattr(view, "versioned_page", False)}
    assert marked == VERSIONED


def test_a_revisit_of_an_unchanged_page_is_answered_304_reading_the_audit_head_and_the_access_only(app, sf, event,
                                                                                                   secretariat):
    bid = sf.bid(event)
    first = secretariat.get(f"/bids/{bid}")
    assert first.status_code == 200
    etag = first.headers["ETag"]
    assert etag.startswith('W/"') and first.headers["Cache-Control"] == CACHE_CONTROL == "private, no-cache"
    assert first.headers["Vary"] == "Cookie"
    statements, again = statements_of(secretariat, f"/bids/{bid}", **{"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    reads = [s for s in statements if s.lstrip().startswith("SELECT")]
    # A read of no table (a connection's liveness ping, pool_pre_ping's "SELECT 1") is not counted.
    tables = [m.group(1) for s in reads if (m := re.search(r'\bFROM\s+"?(\w+)', s))]
    # Who is asking (the session's user and their roles), the version, and whether the bid is there and theirs to see
    # (its page's access step: the bid with its call, one statement); nothing of the page itself (its versions).
    assert tables == ["user", "user_role", "audit_entry", "bid"], statements
    # A list of ETags, one of them this page's: 304 as well; "*" or another tag: the page.
    assert secretariat.get(f"/bids/{bid}", headers={"If-None-Match": f'"x", {etag}'}).status_code == 304
    star = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": "*"})
    assert star.status_code == 200 and star.headers["ETag"] == etag
    other = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": 'W/"0"'})
    assert other.status_code == 200 and other.headers["ETag"] == etag


def test_a_browser_holding_nothing_gets_the_copy_kept_and_head_asks_the_same(app, sf, event, secretariat):
    bid = sf.bid(event)
    first = secretariat.get(f"/bids/{bid}")
    statements, copy = statements_of(secretariat, f"/bids/{bid}")
    assert copy.status_code == 200 and copy.data == first.data and copy.headers["ETag"] == first.headers["ETag"]
    # The access step reads the bid; the page's own reads (its versions, the audit entries it lists) are not made.
    tables = [m.group(1) for s in statements if (m := re.search(r'\bFROM\s+"?(\w+)', s))]
    assert tables == ["user", "user_role", "audit_entry", "bid"], "the kept copy was computed again"
    head = secretariat.head(f"/bids/{bid}")
    assert head.status_code == 200 and head.headers["ETag"] == first.headers["ETag"] and head.data == b""
    assert secretariat.head(f"/bids/{bid}", headers={"If-None-Match": first.headers["ETag"]}).status_code == 304


def test_a_change_through_a_service_is_shown_at_once_with_a_new_version(app, sf, event, secretariat):
    bid = sf.bid(event, name="Federation of Lviv")
    before = secretariat.get(f"/bids/{bid}")
    listed = secretariat.get("/bids/")
    assert "Incomplete: no guarantee." not in before.get_data(as_text=True)
    reject(app, bid)
    after = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    assert "Incomplete: no guarantee." in after.get_data(as_text=True)
    relisted = secretariat.get("/bids/", headers={"If-None-Match": listed.headers["ETag"]})
    assert relisted.status_code == 200 and relisted.data != listed.data


def test_each_person_has_their_own_version(app, sf, event, make, client):
    owner = make.user(email="cache-owner@example.org", roles=("bidder",), federation="UKR")
    make.user(email="cache-other@example.org", roles=("bidder",), federation="GEO")
    bid = sf.bid(event, owner_id=owner)
    assert login(client, "cache-owner@example.org").status_code == 302
    client.get("/")
    mine = client.get(f"/bids/{bid}")
    assert mine.status_code == 200
    other = app.test_client()
    assert login(other, "cache-other@example.org").status_code == 302
    other.get("/")
    # The other bidder's browser sending the owner's version gets no 304 and no copy of the owner's page.
    refused = other.get(f"/bids/{bid}", headers={"If-None-Match": mine.headers["ETag"]})
    assert refused.status_code in (403, 404)
    theirs, own = other.get("/bids/"), client.get("/bids/")
    assert theirs.headers["ETag"] != own.headers["ETag"]
    assert other.get("/bids/", headers={"If-None-Match": own.headers["ETag"]}).status_code == 200


def test_a_page_showing_a_message_is_neither_answered_304_nor_kept(app, sf, event, secretariat):
    bid = sf.bid(event)
    first = secretariat.get(f"/bids/{bid}")
    with secretariat.session_transaction() as session:
        session["_flashes"] = [("info", "The bid was saved.")]
    shown = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": first.headers["ETag"]})
    assert shown.status_code == 200 and "The bid was saved." in shown.get_data(as_text=True)
    assert "ETag" not in shown.headers and shown.headers["Cache-Control"] == "no-store"
    copy = secretariat.get(f"/bids/{bid}")
    assert "The bid was saved." not in copy.get_data(as_text=True) and copy.headers["ETag"] == first.headers["ETag"]


def test_a_write_outside_the_services_or_one_rolled_back_is_not_served_from_a_copy(app, sf, event, secretariat):
    """The ETag follows the audit head, which only the services move; the copy kept in this process also follows
    this process's own writes, so a row changed outside the services (or changed and then rolled back) shows."""
    bid = sf.bid(event, name="Federation of Lviv")
    assert "Federation of Lviv" in secretariat.get(f"/bids/{bid}").get_data(as_text=True)
    with app.app_context():
        row = db.session.get(Bid, bid)
        row.applicant_name = "Federation of Odesa"
        db.session.flush()
        assert "Federation of Odesa" in secretariat.get(f"/bids/{bid}").get_data(as_text=True)
        db.session.rollback()
    assert "Federation of Lviv" in secretariat.get(f"/bids/{bid}").get_data(as_text=True)


def test_the_version_changes_when_a_deadline_passes_and_with_the_day(app, event, make):
    """The bid deadline (the call's bidding procedure) changes what pages offer at its instant: the version changes
    there, and at midnight (UTC) for what counts days; not in between."""
    user_id = make.user(roles=("admin",))
    with app.app_context():
        deadline = db.session.get(Event, event).regulation.event.bid_deadline

    def etag(now):
        with app.test_request_context("/bids/"):
            login_user(db.session.get(User, user_id))
            return page_key(now).etag

    at = etag(deadline)
    assert etag(deadline - timedelta(seconds=1)) == at
    assert etag(deadline + timedelta(microseconds=1)) != at
    midnight = deadline.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    assert etag(midnight - timedelta(microseconds=1)) == etag(deadline + timedelta(microseconds=1))
    assert etag(midnight) != etag(midnight - timedelta(microseconds=1))


def test_the_copies_kept_are_bounded(app, sf, event, secretariat, monkeypatch):
    kept = store(app)
    monkeypatch.setattr(kept, "entries", 2)
    kept.clear()
    bids = [sf.bid(event, city=f"City {i}") for i in range(3)]
    for bid in bids:
        assert secretariat.get(f"/bids/{bid}").status_code == 200
    assert len(kept.pages) == 2


def test_without_the_cache_the_pages_are_not_stored_by_the_browser(app, sf, event, secretariat, monkeypatch):
    monkeypatch.setitem(app.config, "PAGE_CACHE", False)
    page = secretariat.get(f"/bids/{sf.bid(event)}")
    assert page.status_code == 200 and "ETag" not in page.headers and page.headers["Cache-Control"] == "no-store"


def test_a_change_a_page_does_not_show_keeps_its_version_and_one_it_shows_changes_it(app, sf, event, secretariat,
                                                                                    monkeypatch):
    """Each versioned page names the audit families it shows nothing of (a bid's page: the contract and its
    payments, the result and deductions, mail): an entry of one of those leaves its ETag as it was (304); a change of
    the trust list (which re-judges the signatures of the bid's documents, shown on its page) and a change of the bid
    itself each give a new one. Writes of this process are left out of the comparison (PAGE_CACHE_WATCH_WRITES off),
    as in another process; monkeypatch takes the setting away again after the test (the app is the session's: a setting
    left behind, even True, would hide from every later test what the code does when it is not set)."""
    from evidence import audit

    monkeypatch.setitem(app.config, "PAGE_CACHE_WATCH_WRITES", False)
    bid = sf.bid(event)
    first = secretariat.get(f"/bids/{bid}")
    assert first.status_code == 200
    with app.app_context():
        for action in ("payment.record", "contract.issue", "mail.resent", "match.result", "prize.deduction"):
            audit.record(action, None, actor=None, now=utcnow(), object_type="contract", object_id="1")
        db.session.commit()
    kept = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": first.headers["ETag"]})
    assert kept.status_code == 304
    with app.app_context():
        audit.record("trust.add", None, actor=None, now=utcnow(), object_type="trusted_certificate", object_id="1")
        db.session.commit()
    trusted = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": first.headers["ETag"]})
    assert trusted.status_code == 200 and trusted.headers["ETag"] != first.headers["ETag"]
    reject(app, bid)
    changed = secretariat.get(f"/bids/{bid}", headers={"If-None-Match": trusted.headers["ETag"]})
    assert changed.status_code == 200 and changed.headers["ETag"] != trusted.headers["ETag"]
    assert "Rejected" in changed.get_data(as_text=True)


def test_pages_leaving_out_other_families_visited_in_turn_each_read_the_instants_once(app, sf, event, secretariat):
    """The instants (every call's bid deadline) are kept per set of families left out, each with its own head: a bid
    page and the ranking (which also leaves out the dossiers), whose heads differ once a dossier entry is the newest,
    visited in turn, do not take each other's place. A revisit of the bid page after the ranking is still answered
    304 from who asks, the bid page's head and its access step, without reading the calls again."""
    from evidence import audit

    with app.app_context():
        slug = db.session.get(Event, event).slug
    bid = sf.bid(event)
    assert secretariat.get(f"/events/{slug}/scoring/ranking").status_code == 200  # a first showing may write
    with app.app_context():
        audit.record("dossier.generated", None, actor=None, now=utcnow(), object_type="bid", object_id=str(bid))
        db.session.commit()
    first = secretariat.get(f"/bids/{bid}")
    assert first.status_code == 200
    assert secretariat.get(f"/events/{slug}/scoring/ranking").status_code == 200
    statements, again = statements_of(secretariat, f"/bids/{bid}", **{"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    tables = [m.group(1) for s in statements if (m := re.search(r'\bFROM\s+"?(\w+)', s))]
    assert tables == ["user", "user_role", "audit_entry", "bid"], "the ranking's visit made the bid page read the calls"


def test_a_page_cannot_leave_out_the_changes_of_its_call():
    from operations.page_cache import versioned_page

    with pytest.raises(ValueError, match="a page cannot leave out event: every page depends on its call"):
        versioned_page(access=None, not_shown=("payment", "event"))
