"""Conditional GET on the versioned pages (operations.page_cache): a 304 is given only where the same request without
`If-None-Match` would answer 200, and only to the person whose current ETag it is.

Every versioned page is asked, by every kind of person (logged out, the bid's owner, a rival bidder, a WCOC member
with and without a declaration, a Board member, the President, the secretariat), as a browser holding nothing, then
holding `*`, another person's ETag, and its own: the answer must be the plain answer's status, except 304 for one's
own ETag of a page answered 200. Pages and objects that do not exist are among them (`/bids/99999`)."""

from __future__ import annotations

import pytest

from bids.models import Bid
from core.db import db
from events.models import Event
from tests.conftest import login
from tests.scoring.factories_scoring import ScoringFactory


def ask(client, url: str, etag: str | None = None):
    """GET `url`, holding `etag` (If-None-Match) or nothing. A message the page flashed (a WCOC member sent to the
    declaration first) is dropped afterwards, as a browser showing it would: a page with a message pending is never
    a versioned one, and the next request must be a plain one again."""
    response = client.get(url, headers={"If-None-Match": etag} if etag else {})
    with client.session_transaction() as session:
        session.pop("_flashes", None)
    return response


@pytest.fixture
def scene(app, make, event):
    """A call in scoring with one submitted bid, and a browser logged in for each kind of person."""
    sf = ScoringFactory(app, make)
    kinds = {
        "owner": {"roles": ("bidder",), "federation": "UKR"},
        "rival": {"roles": ("bidder",), "federation": "GEO"},
        "wcoc": {"roles": ("wcoc",)},
        "wcoc-undeclared": {"roles": ("wcoc",)},
        "board": {"roles": ("board",)},
        "president": {"roles": ("board",), "is_president": True},
        "secretariat": {"roles": ("admin",)},
    }
    people = {who: make.user(email=f"cond-{who}@example.org", **kind) for who, kind in kinds.items()}
    bid = sf.bid(event, owner_id=people["owner"])
    sf.status(event, "scoring")
    sf.declare(event, people["wcoc"])
    with app.app_context():
        slug = db.session.get(Event, event).slug
    clients = {"anonymous": app.test_client()}
    for who in people:
        client = app.test_client()
        assert login(client, f"cond-{who}@example.org").status_code == 302
        ask(client, "/")  # the welcome message is shown
        clients[who] = client
    urls = ["/bids/", f"/bids/{bid}", "/bids/99999", f"/events/{slug}/scoring/ranking",
            "/events/no-such-call/scoring/ranking", f"/board/{slug}", "/board/no-such-call"]
    return {"clients": clients, "urls": urls, "bid": bid, "slug": slug, "people": people, "sf": sf, "event": event}


def plain_answers(scene) -> dict[tuple[str, str], tuple[int, str | None]]:
    """{(who, url): (status, ETag)} of every person's plain request (holding nothing) of every page."""
    out = {}
    for who, client in scene["clients"].items():
        for url in scene["urls"]:
            response = ask(client, url)
            assert response.status_code != 304
            out[(who, url)] = (response.status_code, response.headers.get("ETag"))
    return out


def test_the_scene_has_pages_answered_200_and_refused(scene):
    """The matrix below means something: each page is 200 to someone and refused (or missing) to someone else."""
    plain = plain_answers(scene)
    for url in scene["urls"]:
        statuses = {plain[(who, url)][0] for who in scene["clients"]}
        assert statuses - {200}, f"{url}: nobody is refused"
        if "99999" not in url and "no-such-call" not in url:
            assert 200 in statuses, f"{url}: nobody sees it"
            assert all(etag for status, etag in (plain[(who, url)] for who in scene["clients"]) if status == 200)
    assert plain[("rival", f"/bids/{scene['bid']}")][0] == 404
    assert plain[("wcoc-undeclared", f"/bids/{scene['bid']}")][0] == 302


def test_if_none_match_star_is_never_answered_304(scene):
    """RFC 9110 13.1.2: on a GET, `*` asks whether the resource exists at all, which says nothing of the version the
    browser holds. It is ignored: the answer is the plain one, never 304 (a 304 to a rival bidder for a bid they may
    not see, or for a bid that does not exist, would tell them it is there)."""
    plain = plain_answers(scene)
    wrong = []
    for (who, url), (status, _etag) in plain.items():
        for header in ("*", " * "):
            got = ask(scene["clients"][who], url, header).status_code
            if got != status:
                wrong.append(f"{who} {url} If-None-Match {header!r}: {got}, plain {status}")
    assert not wrong, "\n".join(wrong)


def test_another_persons_etag_is_never_answered_304(scene):
    """The version is each person's own (the key holds the user, their roles and a digest of the session's CSRF
    secret): whoever sends another person's current ETag, alone or in a list, gets the plain answer."""
    plain = plain_answers(scene)
    wrong = []
    for url in scene["urls"]:
        tags = {who: plain[(who, url)][1] for who in scene["clients"] if plain[(who, url)][1]}
        for who, client in scene["clients"].items():
            others = [tag for owner, tag in tags.items() if owner != who]
            status = plain[(who, url)][0]
            for header in [*others, ", ".join(others)] if others else []:
                got = ask(client, url, header).status_code
                if got != status:
                    wrong.append(f"{who} {url} with another's ETag {header}: {got}, plain {status}")
    assert not wrong, "\n".join(wrong)
    # The same account in another browser (another session, another CSRF secret) has a version of its own too.
    owner_again = scene["clients"]["owner"].application.test_client()
    assert login(owner_again, "cond-owner@example.org").status_code == 302
    ask(owner_again, "/")
    url = f"/bids/{scene['bid']}"
    again = ask(owner_again, url, plain[("owner", url)][1])
    assert again.status_code == 200 and again.headers["ETag"] != plain[("owner", url)][1]


def test_ones_own_current_etag_is_answered_304_where_the_page_is_200(scene):
    plain = plain_answers(scene)
    wrong = []
    for (who, url), (status, etag) in plain.items():
        if etag is None:
            continue
        assert status == 200
        got = ask(scene["clients"][who], url, etag)
        if got.status_code != 304 or got.headers.get("ETag") != etag:
            wrong.append(f"{who} {url} with their own ETag: {got.status_code}")
    assert not wrong, "\n".join(wrong)
    assert sum(etag is not None for _status, etag in plain.values()) >= 15


def test_ones_own_etag_is_refused_once_the_bid_is_no_longer_theirs_to_see(app, scene):
    """The access is checked before the 304, not inferred from the version: a bid moved to another owner by a row
    changed outside the services (the audit head, hence the ETag, stays the same) is 404 to its former owner, not
    304 — what the same request without If-None-Match answers."""
    client, url = scene["clients"]["owner"], f"/bids/{scene['bid']}"
    held = ask(client, url)
    assert held.status_code == 200
    with app.app_context():
        db.session.get(Bid, scene["bid"]).owner_id = scene["people"]["rival"]
        db.session.commit()
    assert ask(client, url).status_code == 404
    assert ask(client, url, held.headers["ETag"]).status_code == 404


def test_ones_own_etag_is_refused_on_the_board_page_once_one_has_a_stake_in_the_call(app, scene):
    """A Board member who comes to own a bid in the call (a row written outside the services: the version stays)
    reads none of its Board page: 403, as without If-None-Match, not 304."""
    client, url = scene["clients"]["board"], f"/board/{scene['slug']}"
    held = ask(client, url)
    assert held.status_code == 200
    scene["sf"].bid(scene["event"], owner_id=scene["people"]["board"], city="Tbilisi", host="GEO")
    assert ask(client, url).status_code == 403
    assert ask(client, url, held.headers["ETag"]).status_code == 403
