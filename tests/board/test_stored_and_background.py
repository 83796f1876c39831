"""A stored dossier or pack is found by its key (a few statements, the same whatever the number of bids; nothing
ranked, nothing rendered), and without Redis a pack needing many PDFs is made outside the request while the page
shows the progress."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from board.models import Dossier
from core.db import db
from scoring.queries import arithmetic_slot
from tests.board.conftest import complete
from tests.conftest import login

pytestmark = pytest.mark.pdf_layout_once

SLUG = "fwwcm-2015"


def statements(client, url: str) -> tuple[int, bytes]:
    count = [0]

    def on_execute(*args):
        count[0] += 1

    sa_event.listen(Engine, "before_cursor_execute", on_execute)
    try:
        response = client.get(url)
    finally:
        sa_event.remove(Engine, "before_cursor_execute", on_execute)
    assert response.status_code == 200, response.status_code
    data = response.data
    response.close()
    return count[0], data


def stored_rows(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count(Dossier.id)))


@pytest.fixture
def board_client(app, make):
    client = app.test_client()
    make.user(email="lookup-board@example.org", roles=("board",), federation="FRA")
    login(client, "lookup-board@example.org")
    return client


def test_a_second_download_is_a_lookup_of_a_few_statements_whatever_the_number_of_bids(app, event, sf, scored,
                                                                                      board_client):
    app.config["PDF_INLINE_LIMIT"] = 100
    try:
        dossier_url, pack_url = f"/board/{SLUG}/bids/{scored['lviv']}/dossier.pdf", f"/board/{SLUG}/pack.pdf"
        statements(board_client, dossier_url)
        statements(board_client, pack_url)
        made = stored_rows(app)
        arithmetic_slot.cache_clear()  # a ranking computed again would fill it
        few_dossier, first = statements(board_client, dossier_url)
        few_pack, _ = statements(board_client, pack_url)
        assert stored_rows(app) == made and not arithmetic_slot.cache_info().currsize  # nothing rendered or ranked
        # The viewer, the call, the scoring rows, the stored row, the view noted (and the test's savepoint); the
        # decision in force (after it, the reviewed documents are the call's); the documents whose signatures are an
        # input (the bid's own for a dossier; every bid's, in one query, for the pack).
        assert few_dossier <= 19 and few_pack <= 23, (few_dossier, few_pack)
        # One more bid before the Board: its dossier and a new pack are made once, then looked up.
        complete(app, sf.bid(event, city="Oslo", host="NOR"), venue_country="UA")
        statements(board_client, pack_url)
        arithmetic_slot.cache_clear()
        more_dossier, again = statements(board_client, dossier_url)
        more_pack, _ = statements(board_client, pack_url)
        assert (more_dossier, more_pack) == (few_dossier, few_pack)
        assert again == first and not arithmetic_slot.cache_info().currsize
    finally:
        app.config["PDF_INLINE_LIMIT"] = 4


@pytest.mark.no_db
def test_without_redis_a_large_pack_is_made_in_the_background_with_its_progress(live):
    from accounts.models import User
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.board.conftest import scored_call
    from tests.conftest import Factory, utcnow
    from tests.scoring.factories_scoring import ScoringFactory

    app = live
    app.config.update(PDF_INLINE_LIMIT=1, WTF_CSRF_ENABLED=False)
    with app.app_context():
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=utcnow())
        db.session.commit()
        event_id = event.id
    make = Factory(app)
    scored_call(app, event_id, ScoringFactory(app, make))
    make.user(roles=("board",), federation="FRA", email="bg-thread@example.org")
    client = app.test_client()
    login(client, "bg-thread@example.org")
    first = client.get(f"/board/{SLUG}/pack.pdf")
    assert first.status_code == 202
    html = first.get_data(as_text=True)
    assert "Preparing the board pack" in html and 'http-equiv="refresh"' in html
    assert "of 4 documents ready" in html  # three dossiers, then the pack
    deadline = time.monotonic() + 120
    while True:
        response = client.get(f"/board/{SLUG}/pack.pdf")
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        assert response.status_code == 202 and "Try again" not in response.get_data(as_text=True)
        time.sleep(0.3)
    assert response.status_code == 200 and response.data.startswith(b"%PDF-")
    response.close()
    with app.app_context():
        kinds = sorted(db.session.scalars(select(Dossier.kind)))
        assert kinds == ["bid", "bid", "bid", "pack"]
        assert db.session.scalar(select(func.count(User.id))) >= 1
