"""What the contract pages are given instead of comparing strings: the groups of the contract's states, the
milestone's kind, the contract's inputs, a payment's kind, and the issue form's "one date for every blank"."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from contracts.lifecycle import ContractStatus
from contracts.models import MatchResult, Payment
from contracts.rules.terms import DueSetBy, MilestoneKind, contract_terms, fill_blank_due_dates
from tests.contracts.test_contracts_rules import REG, inputs

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

C = ContractStatus

# status -> (frozen, in force, takes reversals, draft, has a PDF, seen by the organizer)
TABLE = {
    C.DRAFT: (False, False, False, True, True, False),
    C.ISSUED: (True, True, True, False, True, True),
    C.SIGNED: (True, True, True, False, True, True),
    C.SUPERSEDED: (True, False, False, False, True, True),
    C.DISCARDED: (False, False, False, False, False, False),
    C.CLOSED: (True, False, True, False, True, True),
}


def test_the_table_covers_every_status():
    assert set(TABLE) == set(ContractStatus)


@pytest.mark.parametrize("status", list(ContractStatus))
def test_what_each_status_of_a_contract_allows(status):
    assert (status.is_frozen, status.in_force, status.takes_reversals, status.is_draft, status.has_pdf,
            status.visible_to_organizer) == TABLE[status]


@pytest.mark.parametrize("kind", list(MilestoneKind))
def test_only_a_payment_into_fides_account_is_paid_into_fide(kind):
    assert kind.paid_into_fide is (kind is MilestoneKind.TO_FIDE)
    assert kind.organizer_pays is (kind is not MilestoneKind.DISBURSEMENT)


@pytest.mark.parametrize(("applicant_type", "by_federation"), [("federation", True), ("sponsor", False)])
def test_the_contract_names_a_federation_or_a_sponsor(applicant_type, by_federation):
    assert inputs(applicant_type=applicant_type).by_federation is by_federation


@pytest.mark.parametrize(("selected_by", "president", "board"), [
    ("president", True, False), ("board_vote", False, True), ("", False, False)])
def test_the_contract_says_who_selected_the_bid(selected_by, president, board):
    i = inputs(selected_by=selected_by)
    assert (i.selected_by_president, i.selected_by_board_vote) == (president, board)


@pytest.mark.parametrize(("kind", "reversed_", "reversal", "carried", "reversible"), [
    ("payment", False, False, False, True),
    ("payment", True, False, False, False),
    ("carried_over", False, False, True, True),
    ("carried_over", True, False, True, False),
    ("reversal", False, True, False, False),
])
def test_a_payment_is_reversible_once_and_a_reversal_never(kind, reversed_, reversal, carried, reversible):
    p = Payment(kind=kind, amount=Decimal("-1" if kind == "reversal" else "1"))
    if reversed_:
        p.reversed_by = Payment(kind="reversal", amount=Decimal("-1"))
    assert (p.is_reversal, p.is_carried_over, p.reversible) == (reversal, carried, reversible)


@pytest.mark.parametrize(("decided_in", "words"), [("regular", "the regular games"),
                                                    ("tiebreak", "the tie-break games")])
def test_the_result_says_how_the_match_was_decided(decided_in, words):
    assert MatchResult(decided_in=decided_in).decided_in_words == words


def test_one_date_fills_each_blank_payment_date_the_contract_sets_and_nothing_else():
    milestones = contract_terms(REG, inputs(guarantee_offered=False)).milestones
    contract_set = [m.key for m in milestones if m.due_set_by is DueSetBy.CONTRACT]
    optional = [m.key for m in milestones if m.due_set_by is DueSetBy.OPTIONAL]
    assert len(contract_set) >= 2 and optional
    given, same = date(2015, 9, 1), date(2015, 9, 15)
    dates = {key: None for key in contract_set + optional} | {contract_set[0]: given}
    filled = fill_blank_due_dates(milestones, dates, same)
    assert filled[contract_set[0]] == given
    assert all(filled[key] == same for key in contract_set[1:])
    assert all(filled[key] is None for key in optional)
    assert fill_blank_due_dates(milestones, dates, None) == dates
    assert dates[contract_set[1]] is None  # the form's dates are not changed in place


def test_for_a_contract_issued_late_one_date_also_fills_each_blank_date_the_regulations_fixed_that_has_passed():
    # Issued on 10 September 2015 with a guarantee: instalment 1 (30 June), instalment 2 and the payments to the
    # players (31 August) have passed, so the contract sets them; the advances (10 October) have not, and keep the
    # regulations' date; the signal blocker's date stays optional; a date given is kept.
    milestones = contract_terms(REG, inputs()).milestones
    given, same = date(2015, 9, 20), date(2015, 9, 15)
    dates = {"instalment_2": given, "signal_blocker": None, "travel_1": None}
    filled = fill_blank_due_dates(milestones, dates, same, today=date(2015, 9, 10))
    stipends = [m.key for m in milestones if m.due_set_by is DueSetBy.CONTRACT]
    assert len(stipends) == 7
    assert filled == {"instalment_2": given, "signal_blocker": None} | dict.fromkeys(
        ["instalment_1", "home_compensation", "travel_1", "travel_2", *stipends], same)
    # The day before the first of them, nothing has passed: only the dates the contract sets are filled.
    assert fill_blank_due_dates(milestones, {}, same, today=date(2015, 6, 30)) == dict.fromkeys(stipends, same)
