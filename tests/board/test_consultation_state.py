"""Where the consultation of the host federation stands, as an enum the pages read (never a string)."""

from __future__ import annotations

import pytest

from board.rules import ConsultationState, DecisionError, check_consultation, consultation_state

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

CS = ConsultationState


@pytest.mark.parametrize("state", list(ConsultationState))
def test_only_a_pending_consultation_awaits_an_answer(state):
    assert state.awaiting_answer is (state is CS.PENDING)


@pytest.mark.parametrize(("applicant_type", "consultation", "reason", "state"), [
    ("federation", "pending", None, CS.NOT_NEEDED),
    (None, "pending", None, CS.NOT_NEEDED),
    ("sponsor", "agreed", None, CS.RECORDED),
    ("sponsor", "refused", "", CS.RECORDED),
    ("sponsor", "pending", "The federation cannot be reached.", CS.SET_ASIDE),
    ("sponsor", "pending", "   ", CS.PENDING),
    ("sponsor", "pending", None, CS.PENDING),
])
def test_where_the_consultation_stands(applicant_type, consultation, reason, state):
    assert consultation_state(applicant_type=applicant_type, consultation=consultation,
                              set_aside_reason=reason) is state


@pytest.mark.parametrize("state", list(ConsultationState))
def test_the_decision_is_refused_only_while_the_consultation_awaits_an_answer(state):
    if state.awaiting_answer:
        with pytest.raises(DecisionError, match="Art. 15.1: FIDE shall consult"):
            check_consultation(state, "Sponsor — Lviv", article="15.1")
    else:
        check_consultation(state, "Sponsor — Lviv", article="15.1")
