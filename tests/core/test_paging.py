"""The one pager of every list that can grow (core.paging, templates/_macros/paging.html): what ?page=&sort=&dir=
may hold without failing the page, the count's words, and links that keep the query string's other parameters.
Driven through the outbox, whose rows are the cheapest to write."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from core.db import db
from core.paging import Page, PageRequest, list_page, page_request
from operations import outbox
from tests.conftest import login

WRITTEN = datetime(2015, 6, 1, 9, 0, tzinfo=UTC)


# ------------------------------------------------------------------------------------------ pure


@pytest.mark.parametrize(("args", "expected"), [
    ({}, (1, "created", "desc")),
    ({"page": "3", "sort": "subject", "dir": "desc"}, (3, "subject", "desc")),
    ({"page": "abc"}, (1, "created", "desc")),
    ({"page": "-2"}, (1, "created", "desc")),
    ({"page": "0"}, (1, "created", "desc")),
    ({"page": "2.5"}, (1, "created", "desc")),
    ({"page": "١٢"}, (1, "created", "desc")),  # Arabic-Indic digits: isdigit() but no page of ours
    ({"page": "9" * 40}, (1, "created", "desc")),
    ({"sort": "password"}, (1, "created", "desc")),
    ({"sort": "subject"}, (1, "subject", "asc")),
    ({"sort": "subject", "dir": "sideways"}, (1, "subject", "asc")),
    ({"dir": "asc"}, (1, "created", "asc")),
])
def test_a_page_request_reads_what_it_can_and_falls_back_on_the_rest(args, expected):
    ask = page_request(args, ["created", "subject"], default_sort="created", default_dirs={"created": "desc"},
                       size=10)
    assert (ask.page, ask.sort, ask.dir) == expected


def test_a_page_beyond_the_last_is_the_last_and_an_empty_list_has_one_page():
    rows = list(range(23))
    page = list_page(rows, PageRequest(page=9, sort="x", dir="asc", size=10))
    assert (page.page, page.pages, page.items, page.first, page.last) == (3, 3, [20, 21, 22], 21, 23)
    empty = list_page([], PageRequest(page=4, sort="x", dir="asc", size=10))
    assert (empty.page, empty.pages, empty.first, empty.last, empty.previous, empty.next) == (1, 1, 0, 0, None, None)


def test_the_numbered_links_are_the_ends_and_two_either_side_with_gaps_between():
    def numbers(at: int, total: int = 200):
        return Page(items=[1], total=total, page=at, size=10, sort="x", dir="asc").numbers()

    assert numbers(1) == [1, 2, 3, None, 20]
    assert numbers(10) == [1, None, 8, 9, 10, 11, 12, None, 20]
    assert numbers(20) == [1, None, 18, 19, 20]
    assert numbers(2, total=50) == [1, 2, 3, 4, 5]


# ------------------------------------------------------------------------------------------ through a page


@pytest.fixture
def messages(app):
    """Writes `n` queued messages, the k-th with subject "Message k" (written k minutes after the first)."""

    def write(n: int) -> None:
        with app.app_context():
            for k in range(n):
                db.session.add(outbox.OutboxMessage(
                    message_id=f"<paging-{k}@example.org>", created_at=WRITTEN + timedelta(minutes=k),
                    kind="test", recipients=f"to{k % 3}@example.org", subject=f"Message {k:03d}", body="Hello",
                    next_attempt_at=WRITTEN, attempts=k % 4))
            db.session.commit()

    return write


@pytest.fixture
def admin(client, make, app):
    app.config["PAGE_SIZE"] = 10
    make.user(email="paging-admin@example.org", roles=("admin",))
    assert login(client, "paging-admin@example.org").status_code == 302
    return client


def subjects(text: str) -> list[str]:
    return re.findall(r">(Message \d{3})</a>", text)


def test_the_count_says_which_rows_of_how_many_and_the_pages_link_each_other(admin, messages):
    messages(23)
    text = admin.get("/admin/outbox/").get_data(as_text=True)
    assert '<p class="page-count">Messages 1–10 of 23.</p>' in text
    assert subjects(text) == [f"Message {k:03d}" for k in range(22, 12, -1)]  # newest first
    nav = text[text.index('<nav class="pager" aria-label="Pages of messages">'):]
    nav = nav[:nav.index("</nav>")]
    assert '<a href="/admin/outbox/?page=1" aria-current="page"><span class="visually-hidden">Page </span>1</a>' in nav
    assert '<a href="/admin/outbox/?page=2" rel="next">Next<span class="visually-hidden"> page</span></a>' in nav
    assert '<a href="/admin/outbox/?page=3">Last<span class="visually-hidden"> page (3)</span></a>' in nav
    assert '<span class="disabled">Previous<span class="visually-hidden"> page</span></span>' in nav
    last = admin.get("/admin/outbox/?page=3").get_data(as_text=True)
    assert '<p class="page-count">Messages 21–23 of 23.</p>' in last
    assert subjects(last) == ["Message 002", "Message 001", "Message 000"]
    assert 'href="/admin/outbox/?page=2" rel="prev"' in last


@pytest.mark.parametrize("asked", ["abc", "-1", "0", "", "1e3", "99999999999999999999999"])
def test_a_page_that_is_no_number_shows_the_first(admin, messages, asked):
    messages(12)
    response = admin.get(f"/admin/outbox/?page={asked}")
    assert response.status_code == 200
    assert '<p class="page-count">Messages 1–10 of 12.</p>' in response.get_data(as_text=True)


def test_a_page_beyond_the_last_shows_the_last(admin, messages):
    messages(12)
    response = admin.get("/admin/outbox/?page=40")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert '<p class="page-count">Messages 11–12 of 12.</p>' in text
    assert subjects(text) == ["Message 001", "Message 000"]


def test_an_unknown_sort_key_or_direction_is_the_default_order(admin, messages):
    messages(12)
    default = subjects(admin.get("/admin/outbox/").get_data(as_text=True))
    for query in ("sort=body", "sort=__class__&dir=up", "dir=sideways"):
        response = admin.get(f"/admin/outbox/?{query}")
        assert response.status_code == 200
        assert subjects(response.get_data(as_text=True)) == default, query


def test_sorting_is_done_before_paging_in_either_direction(admin, messages):
    messages(23)
    ascending = admin.get("/admin/outbox/?sort=subject&dir=asc&page=2").get_data(as_text=True)
    assert subjects(ascending) == [f"Message {k:03d}" for k in range(10, 20)]
    assert ('<th scope="col" aria-sort="ascending">\n    <a href="/admin/outbox/?sort=subject&amp;dir=desc">'
            'Subject ▲</a>') in ascending
    descending = admin.get("/admin/outbox/?sort=subject&dir=desc&page=2").get_data(as_text=True)
    assert subjects(descending) == [f"Message {k:03d}" for k in range(12, 2, -1)]


def test_the_page_links_keep_the_filter_and_the_order_and_a_new_order_starts_at_page_one(admin, messages):
    messages(23)
    text = admin.get("/admin/outbox/?status=queued&sort=subject&dir=asc&page=2").get_data(as_text=True)
    assert '<p class="page-count">Messages 11–20 of 23.</p>' in text
    assert ('<a href="/admin/outbox/?status=queued&amp;sort=subject&amp;dir=asc&amp;page=3" rel="next">'
            in text)
    # Another order from the column's header: the same filter, from the first page.
    assert '<a href="/admin/outbox/?status=queued&amp;sort=attempts&amp;dir=asc">' in text


def test_many_pages_link_the_ends_and_the_neighbours_and_a_form_reaches_any_page(admin, messages):
    messages(95)
    text = admin.get("/admin/outbox/?status=queued&page=5").get_data(as_text=True)
    nav = text[text.index('<nav class="pager"'):text.index("</nav>", text.index('<nav class="pager"'))]
    linked = re.findall(r'<span class="visually-hidden">Page </span>(\d+)</a>', nav)
    assert linked == ["1", "3", "4", "5", "6", "7", "10"]
    assert nav.count('<span class="gap">…</span>') == 2
    # The form keeps the filter in a hidden field and sends the page asked for.
    assert '<input type="hidden" name="status" value="queued">' in nav
    assert ('<input type="number" inputmode="numeric" min="1" max="10" name="page" id="page-messages" value="5">'
            in nav)
    assert '<p class="page-count">Messages 91–95 of 95.</p>' in admin.get(
        "/admin/outbox/?status=queued&page=10").get_data(as_text=True)
