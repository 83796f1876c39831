"""The pure rules of who scores what and when: the scorecard's transitions, the gate, recusal, independence."""

from __future__ import annotations

import pytest

from events.lifecycle import EventStatus
from scoring.lifecycle import (
    SCORECARD_TRANSITIONS,
    ScorecardAction,
    ScorecardStatus,
    ScoringRuleError,
    scorecard_next_status,
    scoring_is_open,
)
from scoring.rules import (
    admission_open,
    conflicted_by_federation,
    is_scored,
    passes_gate,
    weights_change_needs_reason,
    weights_may_change,
)
from scoring.visibility import may_see_scores_on_bid

STATES = ("open", "closed", "scoring", "deliberation", "decided")


@pytest.mark.parametrize("status, action, expected", [
    ("draft", "submit", "submitted"),
    ("submitted", "reopen", "draft"),
])
def test_allowed_scorecard_moves(status, action, expected):
    assert scorecard_next_status(status, action) is ScorecardStatus(expected)


@pytest.mark.parametrize("status, action, message", [
    ("submitted", "submit", "a submitted scorecard cannot be submitted again"),
    ("draft", "reopen", "a draft scorecard cannot be reopened: it is not submitted"),
])
def test_refused_scorecard_moves_say_why(status, action, message):
    with pytest.raises(ScoringRuleError, match=f"^{message}$"):
        scorecard_next_status(status, action)


def test_every_pair_of_the_table_is_a_real_state_and_action():
    assert {s for s, _ in SCORECARD_TRANSITIONS} == set(ScorecardStatus)
    assert {a for _, a in SCORECARD_TRANSITIONS} == set(ScorecardAction)


@pytest.mark.parametrize("state", STATES)
def test_what_each_state_of_the_call_allows(state):
    status = EventStatus(state)
    assert scoring_is_open(status) is (state == "scoring")
    assert weights_change_needs_reason(status) is (state not in ("open", "closed"))
    assert weights_may_change(status) is (state != "decided")
    assert admission_open(status) is (state in ("open", "closed", "scoring"))


@pytest.mark.parametrize("in_contest, compliant, admitted, scored", [
    (True, True, False, True), (True, False, False, False), (True, False, True, True), (True, None, False, False),
    (False, True, False, False), (False, False, True, False),
])
def test_a_bid_is_scored_when_in_the_contest_and_through_the_gate(in_contest, compliant, admitted, scored):
    assert is_scored(in_contest=in_contest, compliant=compliant, admitted=admitted) is scored
    assert passes_gate(compliant=compliant, admitted=admitted) is (bool(compliant) or admitted)


@pytest.mark.parametrize("member, host, conflicted", [
    ("UKR", "UKR", True), ("GER", "UKR", False), (None, "UKR", False), ("UKR", None, False), (None, None, False),
])
def test_a_member_of_the_host_federation_is_conflicted(member, host, conflicted):
    assert conflicted_by_federation(member, host) is conflicted


@pytest.mark.parametrize("reads_all, recused, sees", [
    (False, False, True), (False, True, False), (True, True, True), (True, False, True),
])
def test_a_recused_member_never_sees_the_scores_of_that_bid(reads_all, recused, sees):
    assert may_see_scores_on_bid(reads_all=reads_all, recused=recused) is sees


@pytest.mark.parametrize("state", STATES)
def test_the_call_rules_of_scoring_follow_the_groups_of_the_calls_status(state):
    status = EventStatus(state)
    assert scoring_is_open(status) is status.in_scoring
    assert weights_change_needs_reason(status) is not status.before_scoring
    assert admission_open(status) is not status.scoring_over
