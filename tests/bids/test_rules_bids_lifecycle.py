"""The lifecycle of a bid: the TRANSITIONS table, refusals with a reason, state groups and the bid deadline."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from bids.rules import (
    DEADLINE_BOUND_ACTIONS,
    TRANSITIONS,
    BidAction,
    BidStatus,
    TransitionError,
    allowed_actions,
    can_change_before_deadline,
    check_transition,
    next_status,
)
from tests.bids.factories import regulation

S, A = BidStatus, BidAction
REG = regulation()
DEADLINE = REG.event.bid_deadline

ALLOWED = [
    (S.DRAFT, A.SUBMIT, S.SUBMITTED),
    (S.SUBMITTED, A.WITHDRAW, S.WITHDRAWN),
    (S.SUBMITTED, A.REOPEN, S.DRAFT),
    (S.SUBMITTED, A.REJECT, S.REJECTED),
    (S.SHORTLISTED, A.REJECT, S.REJECTED),
    (S.SUBMITTED, A.SHORTLIST, S.SHORTLISTED),
    (S.SUBMITTED, A.SELECT, S.SELECTED),
    (S.SHORTLISTED, A.SELECT, S.SELECTED),
    (S.SUBMITTED, A.NOT_SELECT, S.NOT_SELECTED),
    (S.SHORTLISTED, A.NOT_SELECT, S.NOT_SELECTED),
    (S.NOT_SELECTED, A.SELECT, S.SELECTED),  # a correction of the decision
    (S.SELECTED, A.NOT_SELECT, S.NOT_SELECTED),
]


@pytest.mark.parametrize(("current", "action", "new"), ALLOWED)
def test_allowed_transition(current, action, new):
    assert next_status(current, action) is new
    assert next_status(current.value, action.value) is new  # as stored in a column or posted by a form


def test_the_table_is_exactly_the_allowed_list():
    assert TRANSITIONS == {(c, a): n for c, a, n in ALLOWED}


REFUSED = [(c, a) for c in S for a in A if (c, a) not in TRANSITIONS]


@pytest.mark.parametrize(("current", "action"), REFUSED)
def test_every_other_transition_is_refused(current, action):
    with pytest.raises(TransitionError):
        next_status(current, action)


@pytest.mark.parametrize(("current", "action", "message"), [
    (S.WITHDRAWN, A.SUBMIT, "a withdrawn bid cannot be submitted"),
    (S.DRAFT, A.REJECT, "a draft bid cannot be rejected"),
    (S.DRAFT, A.WITHDRAW, "a draft bid cannot be withdrawn"),
    (S.SUBMITTED, A.SUBMIT, "a submitted bid cannot be submitted"),
    (S.SHORTLISTED, A.REOPEN, "a shortlisted bid cannot be reopened"),
    (S.REJECTED, A.REOPEN, "a rejected bid cannot be reopened"),
    (S.SELECTED, A.SELECT, "a selected bid cannot be selected"),
    (S.NOT_SELECTED, A.NOT_SELECT, "a bid that was not selected cannot be marked as not selected"),
])
def test_refusal_says_why(current, action, message):
    with pytest.raises(TransitionError) as exc:
        next_status(current, action)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_unknown_status_or_action_is_refused_by_name():
    with pytest.raises(TransitionError, match="unknown action 'approve'"):
        next_status(S.SUBMITTED, "approve")
    with pytest.raises(TransitionError, match="unknown status 'archived'"):
        next_status("archived", A.SUBMIT)


def test_final_states_have_no_way_out():
    for status in S:
        assert status.is_final == (allowed_actions(status) == [])
    # A selected bid and one not selected change places only by a correction of the decision (board/).
    assert {s for s in S if s.is_final} == {S.WITHDRAWN, S.REJECTED}
    assert allowed_actions(S.SELECTED) == [A.NOT_SELECT] and allowed_actions(S.NOT_SELECTED) == [A.SELECT]


def test_state_groups():
    assert [s for s in S if s.is_editable] == [S.DRAFT]
    assert [s for s in S if not s.is_submitted] == [S.DRAFT]
    assert {s for s in S if s.in_contest} == {S.SUBMITTED, S.SHORTLISTED}
    assert {s for s in S if s.visible_to_reviewers} == {S.SUBMITTED, S.SHORTLISTED, S.SELECTED, S.NOT_SELECTED}
    assert S.NOT_SELECTED.label == "Not selected"
    assert allowed_actions(S.SUBMITTED) == [A.WITHDRAW, A.REOPEN, A.REJECT, A.SHORTLIST, A.SELECT, A.NOT_SELECT]


def test_bidder_may_change_until_the_deadline_inclusive():
    assert can_change_before_deadline(DEADLINE - timedelta(days=1), REG)
    assert can_change_before_deadline(DEADLINE, REG)
    assert not can_change_before_deadline(DEADLINE + timedelta(seconds=1), REG)


def test_naive_time_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        can_change_before_deadline(datetime(2015, 5, 1), REG)


@pytest.mark.parametrize(("current", "action"), [(S.DRAFT, A.SUBMIT), (S.SUBMITTED, A.WITHDRAW),
                                                 (S.SUBMITTED, A.REOPEN)])
def test_bidder_actions_are_refused_after_the_deadline(current, action):
    assert action in DEADLINE_BOUND_ACTIONS
    assert check_transition(current, action, now=DEADLINE, reg=REG) is TRANSITIONS[(current, action)]
    with pytest.raises(TransitionError) as exc:
        check_transition(current, action, now=DEADLINE + timedelta(seconds=1), reg=REG)
    assert str(exc.value).startswith("the bid deadline (31 May 2015, 23:59 UTC) has passed: a bid can no longer be")


@pytest.mark.parametrize("action", [A.REJECT, A.SHORTLIST, A.SELECT, A.NOT_SELECT])
def test_fide_decides_after_the_deadline(action):
    after = DEADLINE + timedelta(days=30)
    assert check_transition(S.SUBMITTED, action, now=after, reg=REG) is TRANSITIONS[(S.SUBMITTED, action)]


def test_a_refused_move_is_refused_before_the_deadline_is_considered():
    with pytest.raises(TransitionError, match="a withdrawn bid cannot be submitted"):
        check_transition(S.WITHDRAWN, A.SUBMIT, now=DEADLINE + timedelta(days=1), reg=REG)
