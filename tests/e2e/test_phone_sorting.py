"""Issue 36: on a phone a .stack table hides its header row (each row a card), which took the sort links with it —
no visible way to sort, and the hidden links still took the focus off-screen. Every sortable list has a visible
"Sort by" control at a phone's width (a GET form: it works without JavaScript), and every element the keyboard
reaches is drawn where it is: none is hidden, clipped to a pixel, or off the screen."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.test_phone_layouts import DESKTOP, PHONE, _page
from tests.e2e.test_ranking_page import _scored_call

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

# The sortable lists the secretariat sees in a scored call.
LISTS = ("/bids/", "/events/fwwcm-2015/scoring/ranking", "/admin/audit/", "/admin/outbox/", "/admin/users")

# Whether the element that has the focus is drawn where it is: it has a box, it is on the screen once the browser has
# scrolled to it, and what is painted at its centre is the element itself (not a clip of a visually hidden box).
FOCUS_DRAWN = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const name = el.tagName + (el.id ? '#' + el.id : '') + ' ' + (el.textContent || el.value || '').trim().slice(0, 40);
  // A link that wraps is several boxes, and a button at the edge of a table that scrolls sideways may be cut: the
  // element is drawn if, at some point of one of its boxes on the screen, what is painted is the element itself.
  const ok = [...el.getClientRects()].some((r) => {
    const left = Math.max(r.left, 0), right = Math.min(r.right, innerWidth);
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
    if (r.width <= 1 || r.height <= 1 || right - left < 2 || bottom - top < 2) return false;
    const y = (top + bottom) / 2;
    return [0.1, 0.3, 0.5, 0.7, 0.9].some((f) => {
      const hit = document.elementFromPoint(left + (right - left) * f, y);
      return hit !== null && (hit === el || el.contains(hit));
    });
  });
  return {name, ok};
}"""


def _walk_focus(page, limit: int = 120) -> list[str]:
    """Tab through the page from its top; the elements that took the focus without being drawn where they are."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    hidden, seen = [], []
    for _ in range(limit):
        page.keyboard.press("Tab")
        drawn = page.evaluate(FOCUS_DRAWN)
        if drawn is None or (seen and drawn["name"] == seen[0] and len(seen) > 3):
            break
        seen.append(drawn["name"])
        if not drawn["ok"]:
            hidden.append(drawn["name"])
    assert len(seen) > 5, seen
    return hidden


def test_every_sortable_list_has_a_visible_sort_control_on_a_phone_and_no_focus_off_screen(browser, live_server):
    _scored_call(live_server)
    context, page = _page(browser, live_server, PHONE)
    try:
        for url in LISTS:
            page.goto(url)
            control = page.get_by_label("Sort by")
            assert control.is_visible(), url
            assert page.get_by_role("button", name="Sort", exact=True).is_visible(), url
            hidden = _walk_focus(page)
            assert hidden == [], (url, hidden)
        # The control sorts, keeping the page's place in the flow (back to the first page).
        page.goto("/bids/")
        page.get_by_label("Sort by").select_option(label="City")
        page.get_by_label("Order").select_option(label="descending ▼")
        page.get_by_role("button", name="Sort", exact=True).click()
        asked = parse_qs(urlparse(page.url).query)
        assert asked["sort"] == ["city"] and asked["dir"] == ["desc"], page.url
        cities = [c.strip() for c in page.locator("table.stack tbody td[data-label='City']").all_inner_texts()]
        assert cities == sorted(cities, reverse=True) and len(cities) == 3, cities
        assert page.get_by_label("Sort by").input_value() == "city"
    finally:
        context.close()
    context, page = _page(browser, live_server, DESKTOP)
    try:  # a desktop sorts by the header row's links; the form is not drawn and takes no focus
        page.goto("/bids/")
        assert not page.get_by_label("Sort by").is_visible()
        assert page.locator("thead a", has_text="City").is_visible()
        assert _walk_focus(page) == []
    finally:
        context.close()
