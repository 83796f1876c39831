"""On a 390 px phone the pages lead with the answer: the bid's compliance table, the contract's payments and the
ranking show each row as a card whose result or status is on screen without scrolling sideways, the ranking's
charts keep their text at 12 px or more, a table that still scrolls says that more lies to the right, the document
never widens, and axe finds nothing. At a desktop's width the same tables are tables."""

from __future__ import annotations

import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.findings import Outcome
from tests.e2e.test_accessibility import FAILING_IMPACTS, document_overflow, run_axe
from tests.e2e.test_ranking_page import PASSWORD, _scored_call

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
ADMIN = "secretariat@fide.example.org"


def _page(browser, live, viewport):
    # axe is injected as a script of the page, which the app's Content-Security-Policy rightly refuses
    context = browser.new_context(base_url=live.url, viewport=viewport, bypass_csp=True)
    page = context.new_page()
    page.goto("/login")
    page.fill("#email", ADMIN)
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/$"))
    return context, page


def _cell(table, row, column: str):
    """The cell of `row` under the column headed `column` (found by its place in the header row, as a screen
    reader pairs them, whatever the cell's markup)."""
    headers = [t.strip() for t in table.locator("thead th").all_inner_texts()]
    index = next(i for i, h in enumerate(headers) if h.startswith(column))
    return row.locator(":scope > td, :scope > th").nth(index)


def _on_screen(page, cell, what: str) -> None:
    """`cell` lies inside the phone's screen once the page is scrolled down to it: a person sees it without
    scrolling sideways (a cell of a table that scrolls in its own box would lie beyond the screen's right edge)."""
    # Down the page to the cell's row, never sideways: Playwright's own scrolling would also scroll a table's box.
    cell.evaluate("c => window.scrollTo(0, c.parentElement.getBoundingClientRect().top + window.scrollY - 80)")
    assert page.evaluate("[...document.querySelectorAll('.table-box')].every((b) => b.scrollLeft === 0)")
    box = cell.bounding_box()
    assert box is not None, what
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (what, box)
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (what, box)


def _leads(row, cell, what: str) -> None:
    """`cell` is on the first line of its row's card: no other cell of the row is drawn above it."""
    top = cell.bounding_box()["y"]
    others = row.evaluate("r => [...r.children].filter((c) => c.getClientRects().length)"
                          ".map((c) => c.getBoundingClientRect().top)")
    assert top <= min(others) + 0.5, (what, top, others)


def _clean(page, what: str) -> None:
    assert document_overflow(page)[0] == 0, (what, document_overflow(page))
    problems = [v for v in run_axe(page) if v["impact"] in FAILING_IMPACTS]
    assert not problems, (what, problems)


def _bid_id(live) -> int:
    from sqlalchemy import select

    from bids.models import Bid
    from core.db import db

    with live.app.app_context():
        bid = db.session.scalars(select(Bid.id).order_by(Bid.id)).first()
        db.session.remove()
    return bid


def test_on_a_phone_the_compliance_table_and_the_ranking_lead_with_the_answer(browser, live_server, artifacts):
    _scored_call(live_server)
    bid = _bid_id(live_server)
    context, page = _page(browser, live_server, PHONE)
    try:
        page.goto(f"/bids/{bid}")
        table = page.locator("table.compliance")
        row = table.locator("tbody tr:not(.section-row)").first
        result = _cell(table, row, "Result")
        assert result.inner_text().strip() in {o.label for o in Outcome}, result.inner_text()
        _on_screen(page, result, "the first requirement's result")
        _leads(row, result, "the first requirement's result")
        page.screenshot(path=str(artifacts / "phone-compliance.png"))
        _clean(page, "bid page")

        page.goto("/events/fwwcm-2015/scoring/ranking")
        table = page.locator("table.ranking")
        row = table.locator("tbody tr").first
        for column in ("Rank", "Bid", "Weighted total", "Members who scored", "Red flags"):
            _on_screen(page, _cell(table, row, column), f"the leader's {column}")
        assert _cell(table, row, "Members who scored").inner_text().strip().endswith("3 of 3 members scored")
        _leads(row, _cell(table, row, "Rank"), "the leader's rank")

        # Every text of the charts as drawn: its font size times the scale its SVG is drawn at.
        sizes = page.evaluate("""() => [...document.querySelectorAll('.chart svg text')]
            .filter((t) => t.getClientRects().length)
            .map((t) => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
                         t.getBoundingClientRect().right])""")
        charts = page.locator(".chart svg[role=img]:visible")
        assert charts.count() == 4  # one per bid and the share of first places, one layout of each shown
        assert len(sizes) > 40
        small = [(text, round(px, 1)) for text, px, _ in sizes if px < 12]
        assert not small, f"{len(small)} chart texts under 12 px: {small[:5]}"
        assert max(right for *_, right in sizes) <= PHONE["width"]
        page.screenshot(path=str(artifacts / "phone-ranking.png"), full_page=True)
        _clean(page, "ranking")
    finally:
        context.close()

    context, page = _page(browser, live_server, DESKTOP)
    try:  # a desktop keeps the tables and the wide charts, labels beside the bars
        page.goto(f"/bids/{bid}")
        table = page.locator("table.compliance")
        row = table.locator("tbody tr:not(.section-row)").first
        assert table.locator("thead").is_visible()
        tops = {round(_cell(table, row, c).bounding_box()["y"]) for c in ("Source", "Requirement", "Result")}
        assert len(tops) == 1, tops
        page.goto("/events/fwwcm-2015/scoring/ranking")
        assert page.locator(".chart svg[role=img]:visible").count() == 4
        assert page.locator(".chart svg.narrow:visible").count() == 0
    finally:
        context.close()


def _contract(live) -> int:
    from datetime import UTC, datetime

    from core.db import db
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.conftest import Factory
    from tests.contracts.factories_contracts import ContractFactory

    app = live.app
    with app.app_context():
        ev, _ = load_event(load_regulation_file(default_event_file()), actor=None,
                           now=datetime(2015, 3, 1, tzinfo=UTC), source="test")
        db.session.commit()
        event = ev.id
    make = Factory(app)
    admin = make.user(email=ADMIN, name="Secretariat", roles=("admin",), password=PASSWORD)
    return ContractFactory(app, make).contract(event, admin_id=admin)


def test_on_a_phone_the_payments_lead_with_their_status(browser, live_server, artifacts):
    # Issuing signs the PDF with pyHanko, which runs an event loop of its own: not in this thread, where
    # Playwright's runs.
    with ThreadPoolExecutor(1) as pool:
        contract = pool.submit(_contract, live_server).result()
    context, page = _page(browser, live_server, PHONE)
    try:
        page.goto(f"/contracts/{contract}")
        table = page.locator("table.milestones")
        row = table.locator("tbody tr").first
        status = _cell(table, row, "Status")
        assert status.inner_text().strip().startswith("Overdue by"), status.inner_text()
        for column in ("Status", "Payment", "Amount", "Due", "Outstanding"):
            _on_screen(page, _cell(table, row, column), f"the first payment's {column}")
        _leads(row, status, "the first payment's status")
        # Still a table to a screen reader: its header row, each cell under its column, the card's labels unread.
        snapshot = table.aria_snapshot()
        assert '- columnheader "Status"' in snapshot and '- columnheader "Amount"' in snapshot, snapshot[:400]
        assert f'- cell "{status.inner_text().strip()}"' in snapshot, snapshot[:800]
        cdp = context.new_cdp_session(page)  # and in Chromium's own accessibility tree
        roles = Counter(n.get("role", {}).get("value") for n in cdp.send("Accessibility.getFullAXTree")["nodes"])
        assert roles["table"] == 1 and roles["columnheader"] == 8 and roles["cell"] >= 8 * 10, roles
        page.screenshot(path=str(artifacts / "phone-payments.png"))
        _clean(page, "contract page")
    finally:
        context.close()


def test_a_table_that_still_scrolls_on_a_phone_says_more_lies_to_the_right(browser, live_server):
    """The users table keeps its columns on a phone; a line above it says there is more to the right, and goes
    once the table is scrolled to its end."""
    from tests.conftest import Factory

    Factory(live_server.app).user(email=ADMIN, name="Secretariat", roles=("admin",), password=PASSWORD)
    context, page = _page(browser, live_server, PHONE)
    try:
        page.goto("/admin/users")
        box = page.locator(".table-box").first
        cue = page.get_by_text("More columns to the right: scroll the table sideways →")
        assert box.evaluate("b => b.scrollWidth > b.clientWidth")
        assert cue.is_visible()
        cue_box = cue.bounding_box()
        assert cue_box["y"] + cue_box["height"] <= box.bounding_box()["y"] + 1  # above the table, where one reads
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        page.wait_for_function("() => !document.querySelector('.table-frame').classList.contains('more-right')")
        assert not cue.is_visible()
        _clean(page, "users")
    finally:
        context.close()
