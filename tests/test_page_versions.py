"""Versioned pages (operations.page_cache): no state change is missed.

The stateful flow's machine (tests/test_flow_stateful.py) drives the call through every kind of state change, by
random actors, from each stage of the flow; here, after every step it takes, each versioned page is asked as each of
its people would ask it: by a browser holding the version it saw last (If-None-Match), and by a browser holding
none (the copy this process kept). Whatever the answer, it must be the page as computed afresh (the cache off):
a 304 only while the page is what the browser holds, a kept copy only while it is the page computed now.

The copies are keyed here as another process would key them, on the audit head alone
(PAGE_CACHE_WATCH_WRITES off: this process's own writes do not start new keys), so a service that changed what a
page shows without writing the audit log fails this test.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import evidence.pdf
from core.db import db
from events.models import Event
from operations.page_cache import store
from tests.test_flow_stateful import PASSWORD, REACHED, SETTINGS, FlowMachine, fast_pdf

# Examples and steps from three stages: every kind of step is taken along the way (initialize walks the flow up to
# the stage through the same steps: from "decided", the whole flow to the decision), then random steps of the call
# open, in scoring and decided (contracts, payments, corrections), at a cost the suite can carry (each step asks
# every page twice, computed).
BUDGET = {"open": (1, 8), "scoring": (1, 8), "decided": (1, 10)}
# What the pages answered across the run: "304" (after a step, the version held), "copy" (then the kept copy), "new"
# (a new version computed), "revisit 304" (asked again at once with the new version's ETag).
ANSWERS: Counter = Counter()
# The steps after which some page showed something new, across the run.
SHOWN: Counter = Counter()

_CSRF = re.compile(r'(name="csrf_token"[^>]*value=")[^"]*(")')


def normal(body: bytes) -> str:
    """The page, its CSRF tokens (signed anew on each render) left out."""
    return _CSRF.sub(r"\1\2", body.decode())


class PagesFollow(FlowMachine):
    """The flow's machine, asking every versioned page after every step."""

    def __init__(self):
        super().__init__()
        self.clients: dict[str, object] = {}
        self.held: dict[tuple[str, str], tuple[str | None, str]] = {}   # (who, url) -> (ETag, page) held
        store(self.app).clear()

    def step(self, what, work):
        result = super().step(what, work)
        self.pages_follow(what)
        return result

    def viewers(self) -> dict[str, tuple[str, list[str]]]:
        """{who: (their email, the versioned pages they open)}: the secretariat (the bid list, each bid, the ranking),
        a bidder (the list and their bids), a WCOC member (the list; their ranking is left to the machine, whose
        first showing of scores is a step of its own), a Board member and the President (the Board's page)."""
        from accounts.models import User

        slug = db.session.get(Event, self.event_id).slug
        bids = [(b.id, b.owner_id) for b in (self.bid(i) for i in range(len(self.bid_ids)))]
        email = {u: db.session.get(User, u).email for u in (self.admin, self.bidders[0], self.wcoc[0], self.board[0],
                                                            self.president)}
        db.session.remove()
        owner = self.bidders[0]
        return {
            "secretariat": (email[self.admin], ["/bids/", *(f"/bids/{b}" for b, _ in bids[:2]),
                                         f"/events/{slug}/scoring/ranking"]),
            "bidder": (email[owner], ["/bids/", *(f"/bids/{b}" for b, o in bids if o == owner)]),
            "wcoc": (email[self.wcoc[0]], ["/bids/"]),
            "board": (email[self.board[0]], [f"/board/{slug}"]),
            "president": (email[self.president], [f"/board/{slug}"]),
        }

    def client_of(self, who: str, email: str):
        client = self.clients.get(who)
        if client is None:
            client = self.app.test_client()
            assert client.post("/login", data={"email": email, "password": PASSWORD}).status_code == 302
            client.get("/")  # the welcome message is shown (a page with a message is never a kept version)
            self.clients[who] = client
        return client

    def pages_follow(self, what: str) -> None:
        if self.event_id is None or not hasattr(self, "president"):
            return
        changed = False
        viewers = self.viewers()
        # Each request in its own application context (its own `g` and session), as a server gives it: the machine's
        # contexts are set aside meanwhile.
        self._req.pop()
        self._ctx.pop()
        try:
            for who, (email, urls) in viewers.items():
                client = self.client_of(who, email)
                for url in urls:
                    changed |= self.page_follows(what, who, client, url)
        finally:
            self._ctx.push()
            self._req.push()
        if changed:
            SHOWN[what] += 1

    def page_follows(self, what: str, who: str, client, url: str) -> bool:
        """Ask `url` as `who`, then afresh; True when the page changed since `who` last saw it."""
        held = self.held.get((who, url))
        asked = client.get(url, headers={"If-None-Match": held[0]} if held and held[0] else {})
        self.app.config["PAGE_CACHE"] = False
        try:
            fresh = client.get(url)
        finally:
            self.app.config["PAGE_CACHE"] = True
        now = normal(fresh.data)
        where = f"after {what}, {url} as the {who}"
        if asked.status_code == 304:
            ANSWERS["304"] += 1
            assert held is not None and now == held[1], f"{where}: answered 304 Not Modified, yet the page changed"
            copy = client.get(url)  # a browser holding no version: the copy this process kept
            assert copy.status_code == 200 and normal(copy.data) == now, (
                f"{where}: the kept copy is not the page as it is now")
            ANSWERS["copy"] += 1
            return False
        assert asked.status_code == fresh.status_code, f"{where}: {asked.status_code}, afresh {fresh.status_code}"
        assert normal(asked.data) == now, f"{where}: answered with a page kept from before the change"
        if asked.status_code == 200:
            ANSWERS["new"] += 1
            etag = asked.headers.get("ETag")
            assert etag and asked.headers["Cache-Control"] == "private, no-cache", (
                f"{where}: a versioned page without its ETag, or one the browser would not ask again")
            self.held[(who, url)] = (etag, now)
            # Nothing changed since: the browser that holds it is told so, and one that holds nothing gets the copy.
            assert client.get(url, headers={"If-None-Match": etag}).status_code == 304, f"{where}: revisit not 304"
            copy = client.get(url)
            assert copy.status_code == 200 and normal(copy.data) == now and copy.headers["ETag"] == etag, (
                f"{where}: the kept copy is not the page just computed")
            ANSWERS["revisit 304"] += 1
        return held is None or held[1] != now


@pytest.fixture(scope="module", autouse=True)
def _answers():
    ANSWERS.clear()
    SHOWN.clear()
    yield
    print(f"\nversioned pages: answers {dict(ANSWERS)}; steps shown at once {dict(SHOWN)}")


@pytest.mark.parametrize("stage", list(BUDGET))
def test_every_state_change_shows_at_once_on_every_versioned_page(app, monkeypatch, stage):
    """From each stage of the flow, after every step: 304 only for an unchanged page, a kept copy only while it is
    the page as it is, and the pages do follow (the steps changed what they show, and revisits were answered 304)."""
    monkeypatch.setattr(evidence.pdf, "html_to_pdf", fast_pdf)
    monkeypatch.setitem(app.config, "PAGE_CACHE_WATCH_WRITES", False)
    machine = type(f"PagesFollowFrom{stage.title()}", (PagesFollow,), {"app": app, "stage": stage})
    examples, steps = BUDGET[stage]
    before = ANSWERS.copy()
    REACHED[stage] = set()
    run_state_machine_as_test(machine, settings=settings(SETTINGS, max_examples=examples,
                                                         stateful_step_count=steps))
    seen = ANSWERS - before
    assert seen["new"] > 0 and seen["revisit 304"] > 0, f"from '{stage}': the pages answered only {dict(seen)}"
