"""Issue 14, item 6: after the decision, the dossiers and pack the Board reviewed stay the call's documents. The
bids' statuses change with the decision (selected / not selected); that used to make a new dossier D2 and pack P2
on the next opening, shown as "current … not opened by you yet", with the reviewed D1 under "Earlier dossiers"."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from board.models import Decision, Dossier
from core.db import db
from tests.conftest import login, utcnow

CALL = "/board/fwwcm-2015"


@pytest.mark.pdf_layout_once
def test_after_the_decision_the_board_sees_the_dossiers_and_pack_it_reviewed(app, scored, make):
    board = app.test_client()
    make.user(email="board-member@example.org", roles=("board",), federation="FRA")
    login(board, "board-member@example.org")
    board.get(f"{CALL}/bids/{scored['lviv']}/dossier.pdf").close()
    board.post(f"{CALL}/vote", data={"choice": str(scored["lviv"])})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post(f"{CALL}/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
        "rationale": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    with app.app_context():
        reviewed = {r["bid"]: r for r in db.session.scalars(select(Decision)).one().loads("reviewed")}
        before = db.session.scalar(select(func.count(Dossier.id)))

    pack = board.get(f"{CALL}/pack.pdf")
    dossier = board.get(f"{CALL}/bids/{scored['lviv']}/dossier.pdf")
    assert pack.status_code == dossier.status_code == 200
    assert pack.headers["ETag"].strip('"') == reviewed[None]["sha256"]
    assert dossier.headers["ETag"].strip('"') == reviewed[scored["lviv"]]["sha256"]
    pack.close()
    dossier.close()
    with app.app_context():
        assert db.session.scalar(select(func.count(Dossier.id))) == before  # nothing new was made
    # Nor through the background job's path (RQ, a thread, `flask board render`): it finds the reviewed pack.
    from board.jobs import render_all

    with app.app_context():
        event_id = db.session.scalars(select(Decision)).one().event_id
        assert render_all(event_id, None, None) == db.session.scalar(
            select(Dossier.id).where(Dossier.identifier == reviewed[None]["identifier"]))
        assert db.session.scalar(select(func.count(Dossier.id))) == before

    page = board.get(CALL).get_data(as_text=True)
    assert "Reviewed for the decision" in page
    assert f"the pack reviewed for the decision {reviewed[None]['identifier']}, opened" in page
    row = re.search(rf'<tr>\s*<td><a href="/bids/{scored["lviv"]}">.*?</tr>', page, re.S).group(0)
    assert f"{reviewed[scored['lviv']]['identifier']}," in row and "you opened it" in row
    assert "not opened by you yet" not in row


@pytest.mark.pdf_layout_once("dossier.html", "board_pack.html")
def test_the_decision_record_names_the_bids_and_gives_the_reasons_the_minutes_give(app, scored, make):
    """Issue 14, item 13: the tally read "bid 1: 0; bid 2: 0; bid 3: 2" and the web record "Reasons —" while the
    minutes gave a sentence."""
    import io
    from html import unescape

    from pypdf import PdfReader

    from bids.models import Bid

    board = app.test_client()
    make.user(email="board-member@example.org", roles=("board",), federation="FRA")
    login(board, "board-member@example.org")
    board.post(f"{CALL}/vote", data={"choice": str(scored["lviv"])})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post(f"{CALL}/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
        "rationale": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    with app.app_context():
        title = {k: db.session.get(Bid, scored[k]).title for k in ("lviv", "tbilisi", "madrid")}
        decision_id = db.session.scalars(select(Decision)).one().id
    page = unescape(board.get(f"{CALL}/decision").get_data(as_text=True))
    tally = re.search(r"<dt>Tally</dt><dd>(.*?)</dd>", page, re.S).group(1)
    assert f"{title['lviv']}: 1" in tally and f"{title['tbilisi']}: 0" in tally
    assert not re.search(r"bid \d+:", tally)
    reasons = "The Board followed the WCOC's ranking."
    assert f"<dt>Reasons</dt><dd>{reasons}</dd>" in page
    minutes = board.get(f"{CALL}/decision/{decision_id}/minutes.pdf")
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(minutes.data)).pages)
    minutes.close()
    assert reasons in text
