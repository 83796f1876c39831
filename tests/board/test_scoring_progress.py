"""Issue 14, item 8: closing scoring with scorecards missing. Whoever closes it is told how many are in and who has
not scored; the ranking and the board pack say "1 of 4 members scored"; the stability section reads as English."""

from __future__ import annotations

import io
import re
from html import unescape

import pytest
from pypdf import PdfReader

from tests.board.conftest import complete
from tests.conftest import login

LVIV, TBILISI = "Ukrainian Chess Federation — Lviv", "Georgian Chess Federation — Tbilisi"


def _call_with_one_scorer(app, event, sf) -> dict:
    lviv = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Chess Federation")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO", name="Georgian Chess Federation")
    complete(app, lviv, venue_country="UA")
    complete(app, tbilisi, venue_country="GE")
    sf.status(event, "scoring")
    members = [sf.member(name=n, federation=f) for n, f in
               (("Anna Aalto", "FIN"), ("Bo Berg", "SWE"), ("Carla Cruz", "FRA"), ("Dan Dal", "ITA"))]
    for m in members:
        sf.declare(event, m)
    sf.score(lviv, members[0], "4")
    sf.score(tbilisi, members[0], "3")
    sf.score(tbilisi, members[1], "3", submit=False)  # a draft is not in
    return {"lviv": lviv, "tbilisi": tbilisi}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


@pytest.mark.pdf_layout_once("dossier.html")
def test_closing_scoring_says_how_many_scorecards_are_in_and_who_has_not_scored(app, event, sf, make):
    ids = _call_with_one_scorer(app, event, sf)
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    with app.app_context():
        from bids.models import Bid
        from core.db import db

        titles = {k: db.session.get(Bid, v).title for k, v in ids.items()}
    page = admin.get("/events/fwwcm-2015").get_data(as_text=True)
    both = f"{titles['tbilisi']} and {titles['lviv']}"
    expected = (f"2 of 8 scorecards are in. Not scored yet — Bo Berg: {both}; Carla Cruz: {both}; "
                f"Dan Dal: {both}. Once scoring is closed, no scorecard can be submitted or changed.")
    assert expected in unescape(page)
    assert f'data-confirm="Close scoring? {expected}' in unescape(page)

    assert admin.post("/events/fwwcm-2015/status", data={"action": "close_scoring"}).status_code == 302
    ranking = _text(admin.get("/events/fwwcm-2015/scoring/ranking").get_data(as_text=True))
    assert "Members who scored" in ranking
    assert (f"Not every WCOC member scored: {titles['lviv']}, 1 of 4 members scored; {titles['tbilisi']}, "
            "1 of 4 members scored. The totals rest on the scorecards that are in.") in ranking
    assert "no bid has a total changes the lead" not in ranking
    assert "Without the scorecards of Anna Aalto, no bid has a total. The lead changes." in ranking

    board = app.test_client()
    make.user(email="board@example.org", roles=("board",), federation="ESP")
    login(board, "board@example.org")
    response = board.get("/board/fwwcm-2015/pack.pdf")
    assert response.status_code == 200
    text = re.sub(r"\s+", " ", "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(response.data)).pages))
    response.close()
    assert "1 of 4 members scored" in text and "Not every WCOC member scored" in text
