"""scoring.visibility's pure parts: who reads scores by role and by the call's state, and the decision record's
ranking as a reader from whom a bid is withheld sees it."""

from __future__ import annotations

import pytest

from events.lifecycle import EventStatus
from scoring.visibility import NOT_A_REVIEWER, Sight, Withheld, reads_all_scores, scores_withheld_reason


@pytest.mark.parametrize("roles, reads_all", [
    ({"admin"}, True), ({"board"}, True), ({"board", "admin"}, True),
    ({"wcoc"}, False), ({"board", "wcoc"}, False), ({"admin", "wcoc"}, False), ({"bidder"}, False), (set(), False),
])
def test_the_secretariat_and_the_board_read_every_score_unless_they_also_score(roles, reads_all):
    assert reads_all_scores(roles) is reads_all


def _reason(status: str, **facts) -> str | None:
    base = {"reads_all": False, "wcoc": True, "declared": True, "due": ["Lviv"], "outstanding": []}
    return scores_withheld_reason(**{**base, **facts}, status=EventStatus(status))


@pytest.mark.parametrize("status", ["open", "closed", "scoring"])
def test_while_scoring_is_open_a_member_reads_scores_only_once_their_own_are_in(status):
    assert _reason(status) is None
    assert _reason(status, outstanding=["Lviv"]).startswith("The ranking opens to you once you have submitted")
    assert _reason(status, declared=False).startswith("Declare your conflicts of interest first")
    assert _reason(status, due=[]).endswith("stay closed to you until scoring closes.")
    assert _reason(status, wcoc=False) == NOT_A_REVIEWER
    assert _reason(status, reads_all=True, wcoc=False) is None


@pytest.mark.parametrize("status", ["deliberation", "decided"])
def test_once_scoring_is_over_independence_holds_nothing_back(status):
    assert _reason(status, outstanding=["Lviv"], declared=False, due=[]) is None
    assert _reason(status, wcoc=False) == NOT_A_REVIEWER


RECORD = {"weights": "the weights published with the call", "bids": [
    {"bid": 1, "title": "A", "rank": "1", "total": "4.20", "red_flags": 0},
    {"bid": 2, "title": "B", "rank": "2=", "total": "3.00", "red_flags": 0},
    {"bid": 3, "title": "C", "rank": "2=", "total": "3.00", "red_flags": 1},
    {"bid": 4, "title": "D", "rank": "unranked", "total": None, "red_flags": 0}]}


def _withheld(*ids: int) -> Sight:
    return Sight(withheld=tuple(Withheld(i, f"bid {i}", "recused", f"bid {i} is withheld from you.") for i in ids))


@pytest.mark.parametrize("withheld, ranks", [
    ((), [(1, "1"), (2, "2="), (3, "2="), (4, "unranked")]),
    ((1,), [(2, "1="), (3, "1="), (4, "unranked")]),
    ((2,), [(1, "1"), (3, "2"), (4, "unranked")]),
    ((1, 3), [(2, "1"), (4, "unranked")]),
])
def test_the_record_ranks_the_bids_shown_among_themselves(withheld, ranks):
    shown = _withheld(*withheld).record_ranking(RECORD)
    assert [(r["bid"], r["rank"]) for r in shown["bids"]] == ranks
    assert shown["weights"] == RECORD["weights"]
    assert all(r["total"] == next(o["total"] for o in RECORD["bids"] if o["bid"] == r["bid"]) for r in shown["bids"])


def test_a_reader_to_whom_scores_are_closed_gets_no_row_and_the_reason():
    shown = Sight(closed=NOT_A_REVIEWER).record_ranking(RECORD)
    assert shown["bids"] == [] and shown["closed"] == NOT_A_REVIEWER


def test_a_document_is_refused_with_the_sentence_of_each_bid_it_carries_that_is_withheld():
    sight = _withheld(1, 3)
    assert sight.refusal([2]) is None
    assert sight.refusal([1]) == "bid 1 is withheld from you."
    assert sight.refusal(None) == "bid 1 is withheld from you. bid 3 is withheld from you."
    assert Sight.everything().refusal(None) is None and Sight.everything().whole
    assert Sight(closed="closed").refusal([2]) == "closed" and not Sight(closed="closed").shows(2)
