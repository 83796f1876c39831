"""Where the consultation of the host federation stands (Art. 15.1), as an enum the pages read (never a string)."""

from __future__ import annotations

import pytest

from bids.consultation import ConsultationState, check_acceptance, consultation_state, consultation_text
from board.rules import DecisionError, check_consultation

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

CS = ConsultationState
CITE = {"consultation": "Art. 15.1", "unforeseen": "Art. 16"}


@pytest.mark.parametrize(("applicant_type", "consultation", "accepts", "grounds", "state"), [
    # a federation's bid has no consultation at all, whatever the column holds
    ("federation", "pending", False, None, CS.NOT_APPLICABLE),
    (None, "pending", False, None, CS.NOT_APPLICABLE),
    ("sponsor", "pending", False, None, CS.PENDING),
    ("sponsor", "agreed", False, None, CS.AGREED),
    ("sponsor", "refused", False, None, CS.DECLINED),
    ("sponsor", "unable", False, None, CS.DECLINED),
    ("sponsor", "refused", True, None, CS.ACCEPTED),
    ("sponsor", "unable", True, None, CS.ACCEPTED),
    ("sponsor", "pending", False, "unforeseen", CS.PRESIDENT),
    ("sponsor", "pending", False, "not_covered", CS.PRESIDENT),
    # once the federation answers, 15.1 covers it, whatever the President decided before
    ("sponsor", "agreed", False, "unforeseen", CS.AGREED),
])
def test_where_the_consultation_stands(applicant_type, consultation, accepts, grounds, state):
    assert consultation_state(applicant_type=applicant_type, consultation=consultation, fide_accepts=accepts,
                              ruling_grounds=grounds) is state


@pytest.mark.parametrize("state", list(ConsultationState))
def test_only_no_answer_or_a_refusal_fide_has_not_overcome_blocks_selection(state):
    assert state.blocks_selection is (state in (CS.PENDING, CS.DECLINED))
    assert state.applies is (state is not CS.NOT_APPLICABLE)
    assert state.may_refer_to_president is (state is CS.PENDING)


@pytest.mark.parametrize("state", list(ConsultationState))
def test_the_decision_is_refused_exactly_while_the_consultation_blocks_selection(state):
    if state is CS.PENDING:
        with pytest.raises(DecisionError, match="^Art. 15.1: FIDE shall consult the federation where the sponsor "):
            check_consultation(state, "Sponsor — Lviv", article="15.1")
    elif state is CS.DECLINED:
        with pytest.raises(DecisionError, match="^Art. 15.1: if the federation refuses or is unable to co-operate, "
                                                "FIDE may still accept a proposal from a potential sponsor"):
            check_consultation(state, "Sponsor — Lviv", article="15.1")
    else:
        check_consultation(state, "Sponsor — Lviv", article="15.1")


def test_fides_acceptance_goes_with_a_refusal_or_an_inability_only():
    assert check_acceptance("refused", True) is None and check_acceptance("unable", True) is None
    assert check_acceptance("agreed", False) is None
    assert check_acceptance("agreed", True) == check_acceptance("pending", True) == (
        "FIDE's acceptance of the sponsor's proposal nonetheless is recorded only when the federation refuses or "
        "is unable to co-operate.")


def test_a_presidents_decision_cites_article_16_and_its_ground_never_15_1():
    text = consultation_text(CS.PRESIDENT, consultation="pending", note="", ruling_grounds="unforeseen",
                             ruling_reason="The federation's offices closed after the flood.", cite=CITE)
    assert text == ("Art. 16: referred to the FIDE President as an unforeseen event; the President's final "
                    "decision, that the bid may be selected without the host federation's answer: The federation's "
                    "offices closed after the flood.")
    assert "15.1" not in text
    assert consultation_text(CS.NOT_APPLICABLE, consultation="pending", note="", ruling_grounds=None,
                             ruling_reason=None, cite=CITE) == ""
