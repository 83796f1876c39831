"""The Board's page of a call offers the vote form to a Board member who may vote, and never to one recused from the
vote (the call's recusal policy: their federation hosts a bid before the Board). Read from the rendered page, by
the URL the form posts to: the refusal a recused member meets on posting carries the same sentence as the page's
warning, so a sentence alone would not show that the form is gone."""

from __future__ import annotations

import pytest

from tests.conftest import login
from tests.rendered import forms_posting_to

pytestmark = pytest.mark.pdf_layout_once

CALL = "/board/fwwcm-2015"


def test_the_vote_form_is_offered_to_a_board_member_and_not_to_one_recused_from_the_vote(app, scored, make):
    make.user(email="fra-board@example.org", roles=("board",), federation="FRA")
    make.user(email="ukr-board@example.org", roles=("board",), federation="UKR")
    voter, recused = app.test_client(), app.test_client()
    login(voter, "fra-board@example.org")
    login(recused, "ukr-board@example.org")

    offered = forms_posting_to(voter.get(CALL).get_data(as_text=True), f"{CALL}/vote")
    assert [f["buttons"] for f in offered] == [["Cast my vote"]]

    page = recused.get(CALL).get_data(as_text=True)
    assert forms_posting_to(page, f"{CALL}/vote") == []
    assert "you are recused from this vote: your federation (UKR) hosts Ukrainian Chess Federation" in page
