"""The secretariat's way through the Board's step: the Board page links to the ranking on the web and says who has
still to vote; the decision says what became of the notices in plain words (mail delivery off is not a failure)
and leads to the next step, the contract."""

from __future__ import annotations

import re
from html import unescape

import pytest

from board.rules import not_voted_sentence
from core.db import utcnow
from operations import outbox
from tests.conftest import login

CALL = "/board/fwwcm-2015"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


@pytest.mark.no_db
@pytest.mark.parametrize(("not_voted", "eligible", "sentence"), [
    (["Ana Ruiz", "Ole Berg"], 5, "2 of 5 members have not voted: Ana Ruiz, Ole Berg."),
    (["Ana Ruiz"], 3, "1 of 3 members has not voted: Ana Ruiz."),
    ([], 4, "Every one of the 4 members who may vote has voted."),
    ([], 1, "The only member who may vote has voted."),
    ([], 0, "No member of the Presidential Board may vote on this call: none has an account, or every one is "
            "recused."),
])
def test_the_board_is_told_how_many_members_have_not_voted(not_voted, eligible, sentence):
    assert not_voted_sentence(not_voted, eligible) == sentence


@pytest.mark.no_db
@pytest.mark.parametrize(("counts", "mail", "sentence"), [
    ({"queued": 3}, False, "3 notices to the bidders are in the outbox. Mail delivery is off on this server, so they "
                           "wait there and go out once delivery is turned on."),
    ({"queued": 1}, False, "1 notice to the bidders is in the outbox. Mail delivery is off on this server, so it "
                           "waits there and goes out once delivery is turned on."),
    ({"queued": 2}, True, "2 notices to the bidders are in the outbox and being sent now; the outbox shows each "
                          "one's delivery."),
    ({"queued": 1, "sent": 1, "failed": 1}, True, "3 notices to the bidders are in the outbox and being sent now "
                                                  "(1 sent so far); 1 could not be delivered; the outbox shows each "
                                                  "one's delivery."),
    ({"sent": 2}, True, "2 notices to the bidders are in the outbox and were sent."),
    ({}, False, "No notice to the bidders was written: there was no one to write to."),
])
def test_what_became_of_the_messages_a_change_wrote_in_plain_words(counts, mail, sentence):
    assert outbox.written_sentence(counts, what="notices to the bidders", mail_enabled=mail) == sentence


def test_the_board_page_links_to_the_ranking_and_says_who_has_not_voted(app, scored, make):
    make.user(email="fra-board@example.org", roles=("board",), federation="FRA", name="Fanny Roux")
    make.user(email="esp-board@example.org", roles=("board",), federation="ESP", name="Elena Sanz")
    make.user(email="ger-board@example.org", roles=("board",), federation="GER", name="Georg Meier")
    voter = app.test_client()
    login(voter, "fra-board@example.org")
    page = voter.get(CALL).get_data(as_text=True)
    assert 'href="/events/fwwcm-2015/scoring/ranking">on the web</a>' in page
    # Elena Sanz is recused (her federation hosts Madrid): she is not counted among those who may vote.
    assert "2 of 2 members have not voted: Fanny Roux, Georg Meier." in _text(page)
    voter.post(f"{CALL}/vote", data={"choice": str(scored["lviv"])})
    assert "1 of 2 members has not voted: Georg Meier." in _text(voter.get(CALL).get_data(as_text=True))


def test_with_mail_off_the_decision_says_the_notices_wait_in_the_outbox_and_leads_to_the_contract(
        app, scored, make):
    assert not app.config["MAIL_ENABLED"]
    make.user(email="fra-board@example.org", roles=("board",), federation="FRA")
    board_client = app.test_client()
    login(board_client, "fra-board@example.org")
    board_client.post(f"{CALL}/vote", data={"choice": str(scored["lviv"])})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post(f"{CALL}/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
        "rationale": ""}, follow_redirects=True)
    page = _text(response.get_data(as_text=True))
    assert ("The decision is recorded; the call is decided. 3 notices to the bidders are in the outbox. Mail "
            "delivery is off on this server, so they wait there and go out once delivery is turned on.") in page
    assert "notice(s)" not in page
    html = response.get_data(as_text=True)
    assert f'href="/bids/{scored["lviv"]}/contract">prepare the contract with ' in html
    assert "Next step: prepare the contract with Ukrainian Chess Federation" in page
    # The link leads the secretariat to the contract's first page.
    assert admin.get(f"/bids/{scored['lviv']}/contract").headers["Location"].endswith(
        f"/bids/{scored['lviv']}/contract/new")
