"""contracts/rules without the app, as the secretariat and the organizer read them: the exact sentences of the match
result's refusals, of a deduction and its return, of a milestone's status and of the bank guarantee's warnings, the
prize balances' parts, the totals and the schedule's glance, and the boundaries between them (a match completed
today, a cent of a payment, a guarantee lapsing on the last due day, a payment taken back and made again the same
day); and the contract's own: what a bid lacks for a contract, the dates a contract issued late cannot keep (a
correction keeping those already in force), the dates that cannot make a contract, the schedule of days it states,
and why a fully paid milestone takes no payment."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from decimal import Decimal

import pytest

from contracts.rules.reminders import ReminderKind, reminder_kind, reminder_message
from contracts.rules.result import (
    MatchOutcome,
    check_deduction,
    check_deduction_return,
    check_result,
    result_milestones,
)
from contracts.rules.terms import (
    ContractRuleError,
    DueSetBy,
    MilestoneKind,
    MilestonePart,
    contract_terms,
    missing_bid_facts,
    past_due_dates,
    plan_milestones,
    with_due_dates,
)
from contracts.rules.tracker import (
    ZERO,
    MilestoneState,
    PaymentRefused,
    check_payment,
    guarantee_warnings,
    milestone_status,
    no_payment_taken,
    outstanding_on_record,
    schedule_glance,
    totals,
)
from events.regulation import deduction_rule
from tests.contracts.test_contracts_rules import REG, inputs

D = Decimal
OPENING = date(2015, 10, 11)  # game 1 on 12 October, game 6 on the 19th, the last game on the 26th, tie-breaks 28
DUE = date(2015, 6, 30)
BOOKKEEPING = "Sanity check: bookkeeping"  # contracts.rules.result.BOOKKEEPING, the label without the call's own


# ----------------------------------------------------------------------------------------------- contract


def test_a_bid_without_the_facts_a_contract_needs_is_told_which_with_their_articles():
    # An empty answer is missing as much as one never given (the bid form sends "" for a field left blank).
    values = {"applicant_name": "Chess Federation of Ukraine", "opening_date": "", "closing_date": None,
              "venue_city": "Lviv", "venue_country": "", "prize_fund_eur": "200000.00"}
    assert missing_bid_facts(values, REG) == [
        "the opening date (Art. 15.2(a))", "the closing date (Art. 15.2(a))", "the venue's country (Art. 15.2(b))",
        "the contribution to FIDE (Art. 15.2(d))"]
    assert missing_bid_facts(values | {"opening_date": "2015-10-11", "closing_date": "2015-10-29",
                                       "venue_country": "UA", "fide_contribution_eur": "40000.00"}, REG) == []


def test_a_contract_issued_late_replaces_the_passed_dates_but_a_correction_keeps_those_already_in_force():
    # Issued on 10 September 2015: the 31 August dates of Art. 15.6.2 have passed. The version it corrects had
    # instalment 1 on 30 June and the first stipend on 1 September: those stay (their payments are carried over);
    # the second stipend's 2 September is new, and before the day of issue.
    ms = with_due_dates(plan_milestones(REG, inputs()), {"stipend_payout_1": date(2015, 9, 1),
                                                         "stipend_payout_2": date(2015, 9, 2)})
    kept = {"instalment_1": date(2015, 6, 30), "stipend_payout_1": date(2015, 9, 1)}
    problems = past_due_dates(REG, ms, today=date(2015, 9, 10), kept=kept)
    assert sorted(problems) == ["home_compensation", "instalment_2", "stipend_payout_2", "travel_1", "travel_2"]
    assert problems["instalment_2"] == (
        "Art. 15.6.2: the regulations fix 31 August 2015 for instalment 2, which is already past on 10 September "
        "2015, the day the contract is issued; the payment would be overdue from the start. The contract sets a new "
        "date in its place (Art. 15.6.1): enter the date by which it is due, from 10 September 2015 on.")
    assert problems["travel_1"].startswith(
        "Art. 11.1.2: the regulations fix 31 August 2015 for contribution towards the travel costs of Hou Yifan's "
        "team, which is already past on 10 September 2015,")
    assert problems["stipend_payout_2"] == (
        "Sanity check: the stipend of the Member of the Appeals Committee (first) cannot be due on 2 September 2015 "
        "(you entered 2015-09-02): that is before 10 September 2015, the day the contract is issued, so it would be "
        "overdue from the start. Enter a date from 10 September 2015 on.")
    assert sorted(past_due_dates(REG, ms, today=date(2015, 9, 10))) == sorted(
        [*problems, "instalment_1", "stipend_payout_1"])


def test_a_closing_ceremony_on_the_opening_day_or_figures_finance_refuses_cannot_make_a_contract():
    with pytest.raises(ContractRuleError) as same_day:
        contract_terms(REG, inputs(closing_date=date(2015, 10, 11)))
    assert str(same_day.value) == ("Art. 2.2: the closing date (11 October 2015) must come after the opening date "
                                   "(11 October 2015).")
    with pytest.raises(ContractRuleError) as reversed_:
        contract_terms(REG, inputs(closing_date=date(2015, 10, 10)))
    assert str(reversed_.value) == ("Art. 2.2: the closing date (10 October 2015) must come after the opening date "
                                    "(11 October 2015).")
    with pytest.raises(ContractRuleError) as no_prize:
        contract_terms(REG, inputs(prize_fund=D("0.00")))
    assert str(no_prize.value) == (
        "The bid's figures cannot make a contract: Art. 13.4: Hou Yifan's prize of €0.00 would not cover the advance "
        "of €50,000.00 paid before the start (prize fund €0.00).")


@pytest.mark.parametrize("closing", [date(2015, 10, 29), date(2015, 10, 30)])
def test_the_contract_states_the_days_of_the_match_up_to_the_bids_closing_ceremony(closing):
    # Art. 2.2 allows the closing ceremony on the day after the tie-break day or the day after that (10.3 keeps
    # the first for a bid of the 2015 call); the contract states the day the bid gives.
    days = contract_terms(REG, inputs(closing_date=closing)).schedule_days
    assert [(d.on, d.kind) for d in days if d.kind != "pre_match"][:3] == [
        (date(2015, 10, 11), "opening"), (date(2015, 10, 12), "game"), (date(2015, 10, 13), "game")]
    assert [(d.on, d.kind, d.label) for d in days[-2:]] == [
        (date(2015, 10, 28), "tiebreak", "Tie-break games, if needed, 15:00"),
        (closing, "closing", "Closing ceremony")]
    assert sum(d.kind == "game" for d in days) == 10


def test_a_fully_paid_milestone_says_why_it_takes_no_payment_and_a_cent_outstanding_still_takes_one():
    assert no_payment_taken(title="instalment 1, due 30 June 2015", outstanding=ZERO) == (
        "Instalment 1, due 30 June 2015 is fully paid: nothing is outstanding, so no further payment can be "
        "recorded against it. To correct an entry, reverse it above.")
    assert no_payment_taken(title="the signal blocker", outstanding=ZERO, is_cap=True) == (
        "Nothing remains under the cap on the signal blocker: no further payment can be recorded against it. To "
        "correct an entry, reverse it above.")
    assert no_payment_taken(title="instalment 1, due 30 June 2015", outstanding=D("0.01")) is None


# ------------------------------------------------------------------------------------------- match result


def test_a_match_completed_today_is_accepted_and_tomorrow_is_refused_naming_both_days():
    tiebreak = MatchOutcome("CHN", "tiebreak", date(2015, 10, 28))
    assert check_result(REG, tiebreak, opening_date=OPENING, today=date(2015, 10, 28)) == {}
    assert check_result(REG, tiebreak, opening_date=OPENING, today=date(2015, 10, 27)) == {"completed_on": (
        "The match cannot have been completed in the future (28 October 2015 is after today, 27 October 2015).")}


def test_a_day_outside_the_schedule_is_refused_with_the_schedules_days():
    today = date(2015, 11, 1)
    assert check_result(REG, MatchOutcome("CHN", "regular", date(2015, 10, 25)), opening_date=OPENING,
                        today=today) == {"completed_on": (
                            "Art. 2.2: a match decided in the regular games ends on a game day of the schedule, "
                            "between 12 October 2015 and 26 October 2015; 25 October 2015 is not a game day.")}
    assert check_result(REG, MatchOutcome("CHN", "tiebreak", date(2015, 10, 27)), opening_date=OPENING,
                        today=today) == {"completed_on": (
                            "Art. 2.2: the tie-break games are played on 28 October 2015; 27 October 2015 is not "
                            "that day.")}
    # The last game day decides a match as well as game 6 does.
    assert check_result(REG, MatchOutcome("UKR", "regular", date(2015, 10, 26)), opening_date=OPENING,
                        today=today) == {}


def test_each_players_balance_is_her_prize_less_her_advance_part_by_part():
    chn, ukr = result_milestones(REG, inputs(), MatchOutcome("CHN", "regular", date(2015, 10, 26)))
    due_rule = "The balance within 10 days after the completion of the match, by 5 November 2015 (Art. 13.4)."
    assert (chn.key, chn.description, chn.amount, chn.due, chn.due_rule, chn.due_set_by, chn.payee.name) == (
        "prize_balance_CHN", "Balance of the prize of Hou Yifan (winner): €124,000.00 less the advance of €50,000.00",
        D("74000.00"), date(2015, 11, 5), due_rule, DueSetBy.RESULT, "Hou Yifan")
    assert chn.parts == (
        MilestonePart("13.3", "5% of the prize fund to the opponent of the home player, before the split",
                      D("10000.00")),
        MilestonePart("13.1", "60% of the balance of the prize fund as the winner, decided in the regular games",
                      D("114000.00")),
        MilestonePart("13.4", "Advance paid before the start of the match", D("-50000.00")))
    assert (ukr.description, ukr.amount, ukr.due_rule) == (
        "Balance of the prize of Mariya Muzychuk (loser): €76,000.00 less the advance of €50,000.00", D("26000.00"),
        due_rule)
    assert sum(p.amount for p in ukr.parts) == ukr.amount
    for m, name in ((chn, "Hou Yifan"), (ukr, "Mariya Muzychuk")):
        assert (m.title, m.article, m.payer.name, m.is_cap, m.kind) == (
            f"the prize balance of {name}", "13.4", "World Chess Federation (FIDE)", False, MilestoneKind.DISBURSEMENT)


def test_without_a_guarantee_a_payment_the_regulations_give_no_day_says_the_contract_sets_it():
    prize_fund = next(m for m in plan_milestones(REG, inputs(guarantee_offered=False)) if m.key == "prize_fund")
    assert (prize_fund.due, prize_fund.due_set_by, prize_fund.due_rule) == (
        None, DueSetBy.CONTRACT,
        "The regulations set no deadline for this payment; the contract sets it (Art. 15.6.1).")


# ---------------------------------------------------------------------------------------------- deductions


def test_a_deduction_under_no_rule_or_of_a_fixed_fine_other_than_its_amount_is_refused_by_field():
    assert check_deduction(None, amount=D("1.00"), prize=D("0"), balance_left=D("0"), reason="x") == {
        "rule": "Choose what the deduction is for."}
    fine = deduction_rule(REG, "fine_score_sheet")
    assert check_deduction(fine, amount=None, prize=D("124000.00"), balance_left=D("74000.00"), reason=None) == {
        "reason": (f"{BOOKKEEPING}: say why the deduction (fine for refusing to sign the score sheets, Art. 4(b)) is "
                   "made (the decision and its date)."),
        "amount": f"{BOOKKEEPING}: enter the amount deducted, above zero."}
    assert check_deduction(fine, amount=D("999.99"), prize=D("124000.00"), balance_left=D("74000.00"),
                           reason="Refused to sign.") == {
        "amount": "Art. 4(b): fine for refusing to sign the score sheets is €1,000.00 (you entered €999.99)."}
    assert check_deduction(fine, amount=D("1000.00"), prize=D("124000.00"), balance_left=D("999.99"),
                           reason="Refused to sign.") == {"amount": (
                               f"{BOOKKEEPING}: the deductions cannot exceed the prize balance still due, €999.99 (you "
                               "entered €1,000.00).")}


def test_a_fine_above_its_cap_is_refused_for_the_cap_even_when_the_balance_is_smaller():
    fine = deduction_rule(REG, "fine_playing_conditions")
    assert check_deduction(fine, amount=D("5000.01"), prize=D("124000.00"), balance_left=D("100.00"),
                           reason="Phone.") == {"amount": (
                               "Art. 3.8.4: fine for an infringement of the playing conditions is at most €5,000.00 "
                               "(you entered €5,000.01).")}


def test_a_forfeit_is_each_recipients_share_of_the_prize_and_nothing_else():
    forfeit = deduction_rule(REG, "forfeit_absence_conduct")
    left = D("74000.00")
    assert check_deduction(forfeit, amount=D("12400.00"), prize=D("124000.00"), balance_left=left, reason="Absent.") \
        == {}
    assert check_deduction(forfeit, amount=D("12400.01"), prize=D("124000.00"), balance_left=left,
                           reason="Absent.") == {"amount": (
                               "Art. 5.2: of the prize money (€124,000.00), 5% to the Organizer (€6,200.00) and 5% to "
                               "FIDE (€6,200.00): €12,400.00 for each breach; record one breach at a time (you "
                               "entered €12,400.01).")}


def test_a_share_of_the_prize_without_recipients_is_that_share_for_each_breach():
    """A call may forfeit a share of the prize money without saying who receives it (its file gives `share` and
    no recipients): one breach a record, that share of the player's prize."""
    share_only = dataclasses.replace(deduction_rule(REG, "forfeit_absence_conduct"), share=D("0.10"), recipients=())
    left = D("74000.00")
    assert check_deduction(share_only, amount=D("12400.00"), prize=D("124000.00"), balance_left=left,
                           reason="Absent.") == {}
    assert check_deduction(share_only, amount=D("6200.00"), prize=D("124000.00"), balance_left=left,
                           reason="Absent.") == {"amount": (
                               "Art. 5.2: 10% of the prize money (€124,000.00) is €12,400.00 for each breach; record "
                               "one breach at a time (you entered €6,200.00).")}
    assert check_deduction(share_only, amount=D("12400.00"), prize=D("124000.00"), balance_left=D("12399.99"),
                           reason="Absent.") == {"amount": (
                               f"{BOOKKEEPING}: the deductions cannot exceed the prize balance still due, €12,399.99 "
                               "(you entered €12,400.00).")}


def test_only_a_deduction_its_rule_returns_is_returned_on_a_day_with_a_reason():
    day = date(2015, 10, 30)
    assert check_deduction_return(None, returned=False, deducted_on=day, decided_on=day, reason="x") == {
        "deduction": "This deduction is not returned to the player under the regulations."}
    assert check_deduction_return(deduction_rule(REG, "fine_score_sheet"), returned=False, deducted_on=day,
                                  decided_on=day, reason="x") == {"deduction": (
                                      "Art. 4(b): fine for refusing to sign the score sheets is not returned to the "
                                      "player under the regulations.")}
    fee = deduction_rule(REG, "protest_fee")
    assert check_deduction_return(fee, returned=False, deducted_on=day, decided_on=None, reason=" ") == {
        "decided_on": f"{BOOKKEEPING}: enter the day of the decision (the protest is accepted).",
        "reason": ("Art. 7.3.1: the amount is returned if the protest is accepted; say so (the decision and its "
                   "date).")}
    assert check_deduction_return(fee, returned=False, deducted_on=day, decided_on=day, reason="Accepted.") == {}
    assert check_deduction_return(fee, returned=False, deducted_on=day, decided_on=day, reason=None) == {
        "reason": ("Art. 7.3.1: the amount is returned if the protest is accepted; say so (the decision and its "
                   "date).")}


# ------------------------------------------------------------------------------------------------ tracker


def test_a_milestone_without_a_due_date_says_what_was_received():
    assert (milestone_status(D("100.00"), [], None, DUE, 14).state,
            milestone_status(D("100.00"), [], None, DUE, 14).label) == (MilestoneState.NOT_YET_DUE, "No due date set")
    part = milestone_status(D("100.00"), [(D("40.00"), date(2015, 6, 1))], None, DUE, 14)
    assert (part.state, part.label, part.days) == (
        MilestoneState.PART_PAID, "No due date set; €40.00 of €100.00 received", None)


def test_a_milestone_of_nothing_is_paid_with_nothing_to_pay():
    for payments in ([], [(D("5.00"), date(2015, 6, 1)), (D("-5.00"), date(2015, 6, 1))]):
        st = milestone_status(D("0.00"), payments, DUE, DUE + timedelta(days=3), 14)
        assert (st.state, st.label, st.completed_on, st.overdue) == (MilestoneState.PAID, "Nothing to pay", None, False)
    half = milestone_status(D("0.50"), [(D("0.50"), DUE)], DUE, DUE, 14)  # less than a euro is still something to pay
    assert (half.state, half.label, half.completed_on) == (MilestoneState.PAID, "Paid on 30 June 2015", DUE)


def test_the_labels_before_the_due_day_give_the_days_left():
    later = milestone_status(D("100.00"), [], DUE, DUE - timedelta(days=15), 14)
    assert (later.state, later.label, later.days, later.due_soon) == (
        MilestoneState.NOT_YET_DUE, "Not yet due: due 30 June 2015, in 15 days", 15, False)
    part = milestone_status(D("100.00"), [(D("0.01"), date(2015, 6, 1))], DUE, DUE - timedelta(days=3), 14)
    assert (part.state, part.label, part.days, part.due_soon) == (
        MilestoneState.PART_PAID, "Part-paid: €0.01 of €100.00; €99.99 due in 3 days, by 30 June 2015", 3, True)
    overdue = milestone_status(D("100.00"), [(D("0.01"), date(2015, 6, 1))], DUE, DUE + timedelta(days=2), 14)
    assert (overdue.label, overdue.days) == ("Overdue by 2 days; part-paid, €0.01 of €100.00 received", 2)
    assert milestone_status(D("100.00"), [], DUE, DUE, 0).state is MilestoneState.DUE_SOON  # a window of 0 days
    with pytest.raises(ValueError, match=r"^due_soon_days cannot be negative, got -1$"):
        milestone_status(D("100.00"), [], DUE, DUE, -1)


def test_a_payment_recorded_and_reversed_on_a_later_day_does_not_move_the_day_it_was_paid():
    """€20.00 recorded as received on 3 July, then reversed (a reversal is dated like its payment); the €100.00
    received on 29 June recorded afterwards: paid on 29 June, on time."""
    payments = [(D("20.00"), DUE + timedelta(days=3)), (D("-20.00"), DUE + timedelta(days=3)),
                (D("100.00"), DUE - timedelta(days=1))]
    st = milestone_status(D("100.00"), payments, DUE, DUE + timedelta(days=5), 14)
    assert (st.state, st.completed_on, st.label) == (MilestoneState.PAID, DUE - timedelta(days=1),
                                                     "Paid on 29 June 2015")
    assert st.as_dict() == {"state": "paid", "label": "Paid on 29 June 2015", "paid": "100.00",
                            "outstanding": "0.00", "completed_on": "2015-06-29", "days": None, "due_soon": False,
                            "overdue": False}
    assert milestone_status(D("100.00"), [], DUE, DUE + timedelta(days=1), 14).as_dict() == {
        "state": "overdue", "label": "Overdue by 1 day", "paid": "0.00", "outstanding": "100.00",
        "completed_on": None, "days": 1, "due_soon": False, "overdue": True}


def test_what_may_still_be_recorded_is_what_is_owed_less_what_was_recorded_never_below_zero():
    assert outstanding_on_record(D("100.00"), D("30.00")) == D("70.00")
    assert outstanding_on_record(D("100.00"), D("130.00")) == D("0.00")


def test_a_payment_of_a_cent_or_of_less_than_a_euro_is_a_payment():
    check_payment(article="15.6.2", title="instalment 1", amount=D("0.50"), outstanding=D("0.50"))
    with pytest.raises(PaymentRefused) as refused:
        check_payment(article="15.6.2", title="instalment 1", amount=D("0.51"), outstanding=D("0.50"))
    assert str(refused.value) == ("Art. 15.6.2: €0.50 is outstanding on instalment 1; a payment of €0.51 would "
                                  "exceed it.")
    with pytest.raises(PaymentRefused) as refused:
        check_payment(article="14.3", title="the signal blocker", amount=D("0.51"), outstanding=D("0.50"),
                      is_cap=True, cap=D("8000.00"))
    assert str(refused.value) == ("Art. 14.3: €0.50 remains under the cap of €8,000.00 on the signal blocker; a "
                                  "payment of €0.51 would exceed it.")


def test_the_totals_add_every_at_cost_item_and_every_overdue_milestone():
    overdue = milestone_status(D("100.00"), [], DUE, DUE + timedelta(days=1), 14)
    also = milestone_status(D("50.00"), [(D("20.00"), DUE)], DUE, DUE + timedelta(days=1), 14)
    blocker = milestone_status(D("8000.00"), [(D("100.00"), DUE)], None, DUE, 14, at_cost=True)
    cables = milestone_status(D("500.00"), [(D("50.00"), DUE)], None, DUE, 14, at_cost=True)
    t = totals([(MilestoneKind.TO_FIDE, overdue), (MilestoneKind.TO_FIDE, also),
                (MilestoneKind.AT_COST, blocker), (MilestoneKind.AT_COST, cables)])
    assert (t.organizer_amount, t.organizer_overdue, t.at_cost_cap, t.at_cost_paid) == (
        D("150.00"), D("130.00"), D("8500.00"), D("150.00"))


def test_the_glance_sums_what_is_overdue_by_who_pays_and_names_the_next_payment():
    as_of = DUE + timedelta(days=1)
    late = milestone_status(D("100.00"), [], DUE, as_of, 14)
    late_too = milestone_status(D("40.00"), [(D("10.00"), DUE)], DUE, as_of, 14)
    fide_late = milestone_status(D("7.00"), [], DUE, as_of, 14)
    paid = milestone_status(D("5.00"), [(D("5.00"), DUE)], DUE, as_of, 14)
    first = milestone_status(D("60.00"), [], DUE + timedelta(days=10), as_of, 14)
    same_day = milestone_status(D("70.00"), [], DUE + timedelta(days=10), as_of, 14)
    later = milestone_status(D("80.00"), [], DUE + timedelta(days=3), as_of, 14)
    undated = milestone_status(D("90.00"), [], None, as_of, 14)
    at_cost = milestone_status(D("8000.00"), [], DUE, as_of, 14, at_cost=True)
    glance = schedule_glance([
        ("instalment 1", MilestoneKind.TO_FIDE, late), ("instalment 2", MilestoneKind.TO_FIDE, late_too),
        ("stipend", MilestoneKind.DISBURSEMENT, fide_late), ("settled", MilestoneKind.TO_FIDE, paid),
        ("signal blocker", MilestoneKind.AT_COST, at_cost), ("undated", MilestoneKind.TO_FIDE, undated),
        ("the advance", MilestoneKind.DISBURSEMENT, first), ("same day", MilestoneKind.TO_FIDE, same_day),
        ("the guarantee fee", MilestoneKind.TO_FIDE, later)])
    assert (glance.organizer_overdue, glance.fide_overdue, glance.overdue_count) == (D("130.00"), D("7.00"), 3)
    assert glance.next_due.title == "the guarantee fee" and glance.next_due.due == DUE + timedelta(days=3)
    assert (glance.next_due.outstanding, glance.next_due.fide_pays) == (D("80.00"), False)
    sooner = schedule_glance([("the advance", MilestoneKind.DISBURSEMENT, first),
                              ("same day", MilestoneKind.TO_FIDE, same_day)])
    assert (sooner.next_due.title, sooner.next_due.fide_pays, sooner.overdue_count) == ("the advance", True, 0)
    assert schedule_glance([]).next_due is None
    half = milestone_status(D("100.00"), [(D("99.50"), DUE)], DUE + timedelta(days=2), as_of, 14)
    assert schedule_glance([("the last half euro", MilestoneKind.TO_FIDE, half)]).next_due.outstanding == D("0.50")


def test_the_guarantee_warns_while_a_cent_is_owed_and_not_when_it_lapses_on_the_last_due_day():
    until = date(2015, 9, 1)
    warn = dict(source="Bidding procedure, 4.2", valid_until=until, as_of=date(2015, 7, 1), warn_days=30)
    assert guarantee_warnings(**warn, outstanding=D("0.50"), last_due=date(2015, 9, 2)) == [
        "Bidding procedure, 4.2: the bank guarantee lapses on 1 September 2015, before the last unpaid milestone "
        "falls due on 2 September 2015. Ask the organizer for an extension."]
    assert guarantee_warnings(**warn, outstanding=D("0.50"), last_due=until) == []
    assert guarantee_warnings(**warn, outstanding=D("0.00"), last_due=date(2015, 9, 2)) == []


# ---------------------------------------------------------------------------------------------- reminders


def test_a_reminder_goes_while_a_cent_is_outstanding_and_greets_the_organizer_without_a_contact_name():
    st = milestone_status(D("100.00"), [(D("99.50"), DUE)], DUE, DUE + timedelta(days=1), 14)
    assert reminder_kind(MilestoneKind.TO_FIDE, st) is ReminderKind.OVERDUE
    settled = milestone_status(D("100.00"), [(D("100.00"), DUE)], DUE, DUE + timedelta(days=1), 14)
    assert reminder_kind(MilestoneKind.TO_FIDE, settled) is None
    small = milestone_status(D("100.00"), [(D("0.50"), DUE)], DUE, DUE + timedelta(days=1), 14)
    _, body = reminder_message(kind=ReminderKind.OVERDUE, event_title="FWWCM 2015", reference="FWWCM-2015-1-v1",
                               title="instalment 1", article="15.6.2", status=small, payee="FIDE", bank=None,
                               contact_name="", url="http://gambit.test/contracts/1")
    assert body.split("\n")[:4] == [
        "Dear organizer,", "",
        "the payment of instalment 1 (Art. 15.6.2) fell due on 30 June 2015 and is overdue by 1 day. €99.50 is "
        "outstanding.", "FIDE has recorded €0.50 of €100.00 so far."]
