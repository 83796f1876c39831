"""Issue 25, finding 3: every form that changes the decision names the version it read. One correction sent twice
(a double click, or two secretaries with the same page) records one correction; the second is refused saying when
and by whom the decision was corrected."""

import re

import pytest
from sqlalchemy import select

from board.models import Decision
from core.db import db
from tests.board.test_board import vote
from tests.conftest import login, utcnow

pytestmark = pytest.mark.pdf_layout_once


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'<input[^>]*name="{name}"[^>]*value="([^"]*)"', page)
    assert found, f"the form carries no {name}"
    return found.group(1)


def test_one_correction_sent_twice_records_one_correction(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    make.user(email="sec@example.org", roles=("admin",), name="Sam Secretary")
    admin = app.test_client()
    login(admin, "sec@example.org")
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-20"})
    assert response.status_code == 302, response.get_data(as_text=True)[-2000:]
    page = admin.get("/board/fwwcm-2015/decision").get_data(as_text=True)
    with app.app_context():
        first = db.session.scalars(select(Decision)).one().id
    assert _hidden(page, "corrects") == str(first)  # the form names the decision it corrects
    form = {"method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-22",
            "correction_reason": "The date of the meeting was 22 June.", "corrects": _hidden(page, "corrects"),
            "votes_seen": _hidden(page, "votes_seen")}
    assert admin.post("/board/fwwcm-2015/decision/correct", data=form).status_code == 302
    again = admin.post("/board/fwwcm-2015/decision/correct", data=form)  # the same page, sent again
    assert again.status_code == 422
    with app.app_context():
        decisions = db.session.scalars(select(Decision).order_by(Decision.id)).all()
        assert [(d.status, d.corrects_id) for d in decisions] == [("superseded", None), ("in_force", first)]
        at = decisions[1].recorded_at
    html = again.get_data(as_text=True)
    assert (f"This decision was already corrected at {at:%H:%M} UTC on {at:%-d %B %Y} by Sam Secretary (decision "
            f"{decisions[1].id}); nothing was recorded by this correction. Reload the page to see the correction."
            ) in html
    assert "The date of the meeting was 22 June." in html  # what was typed is kept


def test_a_correction_that_does_not_name_the_decision_it_corrects_is_refused(app, scored, make):
    vote(app, scored["event"], make.user(roles=("board",), federation="FRA"), scored["lviv"])
    make.user(email="sec@example.org", roles=("admin",))
    admin = app.test_client()
    login(admin, "sec@example.org")
    admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat()})
    response = admin.post("/board/fwwcm-2015/decision/correct", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": "2015-06-22",
        "correction_reason": "The date of the meeting was 22 June."})
    assert response.status_code == 409
    assert ("The form does not say which decision it corrects (the page is out of date); nothing was recorded. "
            "Reload the page and enter the correction again.") in response.get_data(as_text=True)
    with app.app_context():
        assert len(db.session.scalars(select(Decision)).all()) == 1
