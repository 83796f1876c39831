"""Issue 36: a decided call's public page names the bid selected (who, from which federation, where) and the day of
the decision; once the deadline has passed, "How to bid … submit before the deadline" gives way to what happens
next. The long page folds: a contents list at the top, each part a <details>."""

from sqlalchemy import select

from board.models import Decision
from core.db import db, utcnow
from core.money import format_day
from tests.conftest import login


def _decide(app, make, bid_id: int) -> None:
    board = app.test_client()
    make.user(email="board-member@example.org", roles=("board",), federation="FRA")
    login(board, "board-member@example.org")
    board.post("/board/fwwcm-2015/vote", data={"choice": str(bid_id)})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(bid_id), "decided_on": utcnow().date().isoformat(), "rationale": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]


def test_the_public_page_of_a_decided_call_names_the_bid_selected_and_what_happens_next(app, client, make, scored):
    before = client.get("/events/fwwcm-2015").get_data(as_text=True)
    # Past the deadline, before the decision: what happens next, not how to bid.
    assert "How to bid" not in before and "submit before the deadline" not in before
    assert "<h2>What happens next</h2>" in before
    assert ("The secretariat checks each submitted bid against the requirements below, and may reject one that does "
            "not meet them (Art. 15.3).") in before
    assert "The decision" not in before
    _decide(app, make, scored["lviv"])
    with app.app_context():
        decided_on = format_day(db.session.scalars(select(Decision)).one().decided_on)
    page = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert (f"On <strong>{decided_on}</strong> FIDE selected the bid of <strong>Ukrainian Chess Federation</strong> "
            "(Ukraine): the match is held in <strong>Lviv, Ukraine</strong>.") in page
    assert '<p class="source">Source: Art. 15.5</p>' in page
    assert "The call is decided: FIDE and the organizer sign the contract" in page
    assert "How to bid" not in page and "submit before the deadline" not in page
    assert '<li><a href="#decision">The decision</a></li>' in page


def test_an_open_call_still_says_how_to_bid_and_its_long_parts_fold(client, practice):
    page = client.get("/events/fwwcm-practice").get_data(as_text=True)
    assert "<h2>How to bid</h2>" in page and "submit before the deadline" in page
    assert "What happens next" not in page and "The decision" not in page
    assert '<nav class="contents" aria-labelledby="contents-heading">' in page
    for part in ("requirements", "published-schedule", "judging", "signed-documents"):
        assert f'<details id="{part}" class="fold">' in page, part
        assert f'<a href="#{part}">' in page, part


def test_headings_keep_their_words_and_the_source_stands_beside_in_small_print(app, make, scored):
    """Issue 36: "Ranking of the bids (Bidding procedure: evaluation method)" read the citation as part of the
    heading; and a bid's title named its country by code ("Lviv, UA")."""
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    page = admin.get("/events/fwwcm-2015/scoring/ranking").get_data(as_text=True)
    assert ('<h1>Ranking of the bids</h1>\n<p class="source">Source: Bidding procedure: evaluation method</p>'
            in page)
    assert "Ukrainian Chess Federation — Lviv, Ukraine" in page and "Lviv, UA" not in page
    board = admin.get("/board/fwwcm-2015").get_data(as_text=True)
    assert '<h2>Record the decision</h2>\n    <p class="source">Source: Art. 15.5</p>' in board
    assert "Record the decision (Art. 15.5)" not in board
    bids = admin.get("/bids/").get_data(as_text=True)
    assert "Lviv (Ukraine)" in bids and "(UA)" not in bids
