"""The lifecycle of a bid: the TRANSITIONS table, refusals with a reason, state groups and the bid deadline."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from bids.lifecycle import (
    DEADLINE_BOUND_ACTIONS,
    TRANSITIONS,
    BidAction,
    BidSituation,
    BidStatus,
    TransitionError,
    allowed_actions,
    check_transition,
    draft_refusal,
    late_admission_refusal,
    next_status,
    offered_actions,
)
from events.lifecycle import EventStatus
from tests.bids.factories import regulation

S, A, E = BidStatus, BidAction, EventStatus
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
    # a correction of the decision moves the selection between decided bids
    (S.SELECTED, A.NOT_SELECT, S.NOT_SELECTED),
    (S.NOT_SELECTED, A.SELECT, S.SELECTED),
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
    (S.NOT_SELECTED, A.REOPEN, "a bid that was not selected cannot be reopened"),
])
def test_refusal_says_why(current, action, message):
    with pytest.raises(TransitionError) as exc:
        next_status(current, action)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_unknown_status_or_action_is_refused_by_name():
    with pytest.raises(TransitionError, match="unknown bid action 'approve'"):
        next_status(S.SUBMITTED, "approve")
    with pytest.raises(TransitionError, match="unknown bid status 'archived'"):
        next_status("archived", A.SUBMIT)


def test_final_states_have_no_way_out():
    for status in S:
        assert status.is_final == (allowed_actions(status) == [])
    assert {s for s in S if s.is_final} == {S.WITHDRAWN, S.REJECTED}


def test_state_groups():
    assert [s for s in S if s.is_editable] == [S.DRAFT]
    assert [s for s in S if not s.is_submitted] == [S.DRAFT]
    assert {s for s in S if s.in_contest} == {S.SUBMITTED, S.SHORTLISTED}
    assert {s for s in S if s.visible_to_reviewers} == {S.SUBMITTED, S.SHORTLISTED, S.SELECTED, S.NOT_SELECTED}
    assert S.NOT_SELECTED.label == "Not selected"
    assert allowed_actions(S.SUBMITTED) == [A.WITHDRAW, A.REOPEN, A.REJECT, A.SHORTLIST, A.SELECT, A.NOT_SELECT]


def sit(status=E.OPEN, *, now=DEADLINE, owner=True, admin=False, paper=False, late=False,
        decision=False) -> BidSituation:
    return BidSituation(event_status=status, deadline=DEADLINE, now=now, by_owner=owner, by_admin=admin, paper=paper,
                        late_admitted=late, by_decision=decision)


AFTER = DEADLINE + timedelta(seconds=1)
SECRETARIAT = {"owner": False, "admin": True}


@pytest.mark.parametrize(("current", "action"), [(S.DRAFT, A.SUBMIT), (S.SUBMITTED, A.WITHDRAW),
                                                 (S.SUBMITTED, A.REOPEN)])
def test_bidder_actions_are_refused_after_the_deadline(current, action):
    assert action in DEADLINE_BOUND_ACTIONS
    assert check_transition(current, action, sit()) is TRANSITIONS[(current, action)]  # at the deadline's instant
    with pytest.raises(TransitionError) as exc:
        check_transition(current, action, sit(now=AFTER))
    hint = " The secretariat can admit a late bid, with its reason, until scoring opens." if action is A.SUBMIT else ""
    done = {A.SUBMIT: "submitted", A.WITHDRAW: "withdrawn", A.REOPEN: "reopened"}[action]
    assert str(exc.value) == (f"The bid deadline (31 May 2015, 23:59 UTC) has passed: a bid can no longer be "
                              f"{done}.{hint}")


def test_naive_time_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        sit(now=datetime(2015, 5, 1))


# (call state, deadline passed, late admitted) -> may a draft be submitted? Nothing enters once scoring opens.
SUBMIT_WINDOW = [
    (E.OPEN, False, False, True), (E.OPEN, True, False, False), (E.OPEN, True, True, True),
    (E.CLOSED, False, False, False), (E.CLOSED, True, False, False), (E.CLOSED, True, True, True),
    (E.SCORING, False, False, False), (E.SCORING, True, True, False),
    (E.DELIBERATION, True, True, False), (E.DECIDED, False, False, False), (E.DECIDED, True, True, False),
]


@pytest.mark.parametrize(("status", "passed", "late", "allowed"), SUBMIT_WINDOW)
@pytest.mark.parametrize("paper", [False, True])
def test_submission_window_is_the_same_for_online_and_paper_bids(status, passed, late, allowed, paper):
    who = SECRETARIAT if paper else {}
    situation = sit(status, now=AFTER if passed else DEADLINE, paper=paper, late=late, **who)
    if allowed:
        assert check_transition(S.DRAFT, A.SUBMIT, situation) is S.SUBMITTED
    else:
        with pytest.raises(TransitionError):
            check_transition(S.DRAFT, A.SUBMIT, situation)
    assert (A.SUBMIT in offered_actions(S.DRAFT, situation)) is allowed


@pytest.mark.parametrize("status", [E.SCORING, E.DELIBERATION, E.DECIDED])
def test_nothing_enters_a_call_once_scoring_has_opened(status):
    with pytest.raises(TransitionError) as exc:
        check_transition(S.DRAFT, A.SUBMIT, sit(status, paper=True, late=True, **SECRETARIAT))
    assert str(exc.value) == (f"The call is '{status.label}': no bid can be submitted any more (nothing enters or "
                              "leaves a call once scoring has opened).")


def test_a_paper_bid_is_submitted_by_the_secretariat_not_the_bidder():
    with pytest.raises(TransitionError) as exc:
        check_transition(S.DRAFT, A.SUBMIT, sit(paper=True))
    assert str(exc.value) == ("This bid was entered on paper by the FIDE secretariat: the secretariat submits it on "
                              "your behalf.")
    assert check_transition(S.DRAFT, A.SUBMIT, sit(paper=True, **SECRETARIAT)) is S.SUBMITTED


def test_the_secretariat_does_not_submit_an_online_bid():
    with pytest.raises(TransitionError, match="Only the bidder can submit an online bid"):
        check_transition(S.DRAFT, A.SUBMIT, sit(**SECRETARIAT))


@pytest.mark.parametrize("action", [A.REOPEN, A.WITHDRAW])
@pytest.mark.parametrize("status", [E.CLOSED, E.SCORING, E.DELIBERATION])
def test_reopening_and_withdrawing_end_when_the_call_closes(action, status):
    with pytest.raises(TransitionError) as exc:
        check_transition(S.SUBMITTED, action, sit(status))
    assert str(exc.value).startswith(f"The call is '{status.label}': a submitted bid can no longer be")


@pytest.mark.parametrize("action", [A.REOPEN, A.WITHDRAW])
def test_a_late_admission_lifts_the_deadline_but_not_the_calls_close_for_withdrawing_and_reopening(action):
    done = {A.WITHDRAW: "withdrawn", A.REOPEN: "reopened"}[action]
    assert check_transition(S.SUBMITTED, action, sit(now=AFTER, late=True)) is TRANSITIONS[(S.SUBMITTED, action)]
    with pytest.raises(TransitionError) as exc:
        check_transition(S.SUBMITTED, action, sit(E.CLOSED, now=AFTER, late=True))
    assert str(exc.value) == f"The call is 'Closed for bids': a submitted bid can no longer be {done}."


def test_the_secretariat_rejects_until_the_decision():
    assert check_transition(S.SUBMITTED, A.REJECT, sit(E.SCORING, now=AFTER, **SECRETARIAT)) is S.REJECTED
    with pytest.raises(TransitionError, match="Only the FIDE secretariat rejects a bid"):
        check_transition(S.SUBMITTED, A.REJECT, sit(E.SCORING))
    with pytest.raises(TransitionError, match="The decision is recorded"):
        check_transition(S.SUBMITTED, A.REJECT, sit(E.DECIDED, **SECRETARIAT))


@pytest.mark.parametrize("action", [A.SELECT, A.NOT_SELECT])
def test_selection_only_once_scoring_has_closed(action):
    assert check_transition(S.SUBMITTED, action, sit(E.DELIBERATION, now=AFTER, decision=True))
    with pytest.raises(TransitionError, match="bids are selected only once scoring has closed"):
        check_transition(S.SUBMITTED, action, sit(E.SCORING, decision=True))
    with pytest.raises(TransitionError, match="Bids are selected only by recording the decision."):
        check_transition(S.SUBMITTED, action, sit(E.DELIBERATION, **SECRETARIAT))
    assert action not in offered_actions(S.SUBMITTED, sit(E.DELIBERATION, **SECRETARIAT))


def test_a_decided_bid_changes_only_by_a_correction():
    assert check_transition(S.SELECTED, A.NOT_SELECT, sit(E.DECIDED, decision=True)) is S.NOT_SELECTED
    with pytest.raises(TransitionError, match="Only a correction of the recorded decision"):
        check_transition(S.SELECTED, A.NOT_SELECT, sit(E.DELIBERATION, decision=True))


@pytest.mark.parametrize(("status", "passed", "paper", "late", "refused"), [
    (E.OPEN, False, False, False, None),
    (E.OPEN, True, False, False, "The bid deadline (31 May 2015, 23:59 UTC) has passed: a draft can no longer be "
                                 "changed."),
    (E.OPEN, True, True, False, None),
    (E.CLOSED, True, True, False, None),
    (E.CLOSED, True, False, True, None),
    (E.CLOSED, False, False, False, "The call is 'Closed for bids': a draft can no longer be changed."),
    (E.SCORING, True, True, True, "The call is 'Scoring by the WCOC': a draft can no longer be changed."),
    (E.DECIDED, False, True, False, "The call is 'Decided': a draft can no longer be changed."),
])
def test_when_a_draft_can_change(status, passed, paper, late, refused):
    who = SECRETARIAT if paper else {}
    got = draft_refusal(sit(status, now=AFTER if passed else DEADLINE, paper=paper, late=late, **who))
    assert (got or "").split(" The secretariat")[0] == (refused or "")


def test_late_admission_only_for_a_draft_after_the_deadline_before_scoring():
    assert late_admission_refusal(S.DRAFT, sit(now=AFTER, **SECRETARIAT)) is None
    assert late_admission_refusal(S.DRAFT, sit(E.CLOSED, **SECRETARIAT)) is None
    assert late_admission_refusal(S.DRAFT, sit(now=AFTER)) == "Only the FIDE secretariat admits a late bid."
    assert late_admission_refusal(S.DRAFT, sit(**SECRETARIAT)).startswith(
        "The bid deadline (31 May 2015, 23:59 UTC) has not passed")
    assert late_admission_refusal(S.DRAFT, sit(E.SCORING, now=AFTER, **SECRETARIAT)) == (
        "The call is 'Scoring by the WCOC': no bid can be admitted once scoring has opened.")
    assert late_admission_refusal(S.DRAFT, sit(now=AFTER, late=True, **SECRETARIAT)) == (
        "This bid was admitted late already.")
    assert late_admission_refusal(S.SUBMITTED, sit(now=AFTER, **SECRETARIAT)).startswith("Only a draft")


def test_a_refused_move_is_refused_before_the_deadline_is_considered():
    with pytest.raises(TransitionError, match="a withdrawn bid cannot be submitted"):
        check_transition(S.WITHDRAWN, A.SUBMIT, sit(now=AFTER))
