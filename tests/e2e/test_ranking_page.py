"""Issue 14, item 12 in a browser: the ranking page's verdict, its charts, drawn inside the page at desktop and
phone widths (screenshots kept in test-artifacts/e2e/ for the closing note)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

PASSWORD = "ranking page 2015 passphrase"


def _scored_call(live) -> None:
    from datetime import UTC, datetime

    from core.db import db
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.board.conftest import complete
    from tests.conftest import Factory
    from tests.scoring.factories_scoring import ScoringFactory

    app = live.app
    with app.app_context():
        ev, _ = load_event(load_regulation_file(default_event_file()), actor=None,
                           now=datetime(2015, 3, 1, tzinfo=UTC), source="test")
        db.session.commit()
        event = ev.id
    make = Factory(app)
    sf = ScoringFactory(app, make)
    bids = [sf.bid(event, city=c, host=h, name=n) for c, h, n in (
        ("Lviv", "UKR", "Ukrainian Chess Federation"), ("Tbilisi", "GEO", "Georgian Chess Federation"),
        ("Madrid", "ESP", "Spanish Chess Federation"))]
    for bid, country in zip(bids, ("UA", "GE", "ES"), strict=True):
        complete(app, bid, venue_country=country)
    sf.status(event, "scoring")
    members = [sf.member(name=n, federation=f) for n, f in
               (("Anna Aalto", "FIN"), ("Bo Berg", "SWE"), ("Carla Cruz", "FRA"))]
    for m in members:
        sf.declare(event, m)
    for i, m in enumerate(members):
        sf.score(bids[0], m, "4")
        sf.score(bids[1], m, {**dict.fromkeys("abdefghij", "3.5"), "c": "1" if i == 0 else "4.5"})
        sf.score(bids[2], m, {**dict.fromkeys("abcdefghij", "2.5"), "c": "1"})
    sf.status(event, "deliberation")
    make.user(email="secretariat@fide.example.org", name="Secretariat", roles=("admin",), password=PASSWORD)


def test_the_ranking_page_at_desktop_and_phone_widths(browser, live_server, artifacts):
    _scored_call(live_server)
    for name, viewport in (("desktop", {"width": 1280, "height": 900}), ("phone", {"width": 390, "height": 844})):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        page = context.new_page()
        try:
            page.goto("/login")
            page.fill("#email", "secretariat@fide.example.org")
            page.fill("#password", PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.goto("/events/fwwcm-2015/scoring/ranking")
            page.screenshot(path=str(artifacts / f"ranking-{name}.png"), full_page=True)
            expect(page.locator("#verdict")).to_contain_text("Ukrainian Chess Federation — Lviv, Ukraine leads with a "
                                                             "weighted total of 4.00 out of 5")
            # one per bid, and the share of first places: each drawn twice, the layout for the width shown
            charts = page.locator("svg[role=img]:visible")
            expect(charts).to_have_count(4)
            for i in range(4):  # each scales to its box: a chart never widens the page (a wide table may)
                fits = charts.nth(i).evaluate("svg => svg.getBoundingClientRect().width <= "
                                              "svg.parentElement.parentElement.getBoundingClientRect().width + 0.5")
                assert fits, (name, i)
            if name == "desktop":
                assert charts.first.bounding_box()["width"] <= viewport["width"]
        finally:
            context.close()
