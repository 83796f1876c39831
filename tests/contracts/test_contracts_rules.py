"""contracts/rules.py without the app: the lifecycle, the milestones a contract provides for, the status of a
milestone across a run of dates, the overpayment rule, the bank guarantee's warnings and the match result."""

import dataclasses
from datetime import date, timedelta
from decimal import Decimal

import pytest

from contracts.lifecycle import TRANSITIONS, ContractStatus, allowed_actions, may_view_contract, next_status
from contracts.rules.reminders import ReminderKind, reminder_kind
from contracts.rules.result import MatchOutcome, check_result, result_milestones
from contracts.rules.terms import (
    ContractInputs,
    ContractRuleError,
    DueSetBy,
    MilestoneKind,
    advance_due,
    contract_terms,
    missing_due_dates,
    plan_milestones,
    with_due_dates,
)
from contracts.rules.tracker import (
    MilestoneState,
    PaymentRefused,
    check_payment,
    guarantee_warnings,
    milestone_status,
    totals,
)
from core.validators import parse_as_of
from events.regulation import default_event_file, load_regulation_file

D = Decimal
REG = load_regulation_file(default_event_file())
DUE = date(2015, 6, 30)
N = 14


def inputs(**kw) -> ContractInputs:
    """A selected bid's facts: Lviv, Ukraine (a home match for Mariya Muzychuk), the minimum figures."""
    base = dict(bid_id=7, applicant_name="Chess Federation of Ukraine", applicant_type="federation",
                host_federation="UKR", signatory_name="Viktor Kapustin", signatory_position="President",
                contact_name="Olena Kovalenko", contact_email="secretary@example.org", venue_name="Potocki Palace",
                venue_city="Lviv", venue_country="UA", opening_date=date(2015, 10, 11),
                closing_date=date(2015, 10, 30), prize_fund=D("200000.00"), fide_contribution=D("40000.00"),
                guarantee_offered=True, guarantee_bank="PrivatBank", guarantee_amount=D("240000.00"),
                guarantee_valid_until=date(2015, 9, 1), signal_blocker_required=True)
    return ContractInputs(**(base | kw))


def by_key(milestones):
    return {m.key: m for m in milestones}


# ------------------------------------------------------------------------------------------- lifecycle


@pytest.mark.parametrize("status, action, expected", [
    ("draft", "issue", "issued"), ("draft", "discard", "discarded"), ("issued", "sign", "signed"),
    ("issued", "supersede", "superseded"), ("signed", "supersede", "superseded")])
def test_the_transitions_table_allows_the_contracts_life(status, action, expected):
    assert next_status(status, action) is ContractStatus(expected)


@pytest.mark.parametrize("status, action", [
    ("issued", "issue"), ("signed", "issue"), ("signed", "sign"), ("draft", "sign"), ("superseded", "sign"),
    ("discarded", "issue"), ("issued", "discard"), ("draft", "supersede")])
def test_every_other_move_is_refused_with_a_sentence(status, action):
    with pytest.raises(ContractRuleError, match="cannot be"):
        next_status(status, action)


def test_every_transition_leads_from_a_known_state_and_a_frozen_contract_never_returns_to_draft():
    assert {s for s, _ in TRANSITIONS} | set(TRANSITIONS.values()) <= set(ContractStatus)
    assert all(not (s.is_frozen and t is ContractStatus.DRAFT) for (s, _), t in TRANSITIONS.items())
    assert allowed_actions("superseded") == [] and allowed_actions("discarded") == []


@pytest.mark.parametrize("is_admin, is_owner, status, visible", [
    (True, False, "draft", True), (False, True, "draft", False), (False, True, "discarded", False),
    (False, True, "issued", True), (False, True, "signed", True), (False, True, "superseded", True),
    (False, False, "signed", False)])
def test_the_organizer_sees_what_fide_issued_to_it_and_nobody_else_sees_anything(is_admin, is_owner, status,
                                                                                 visible):
    assert may_view_contract(is_admin=is_admin, is_owner=is_owner, status=status) is visible


# ------------------------------------------------------------------------------------------ milestones


def test_with_a_guarantee_the_2015_deadlines_become_two_instalments_into_fides_account():
    ms = by_key(plan_milestones(REG, inputs()))
    first, second = ms["instalment_1"], ms["instalment_2"]
    assert (first.due, first.amount, first.article) == (date(2015, 6, 30), D("100000.00"), "15.6.2")
    # the balance of the prize fund + 13.2 + 14.1 (5%) + 14.2 + the stipends of 14.5
    assert second.due == date(2015, 8, 31)
    assert second.amount == D("100000.00") + D("40000.00") + D("10000.00") + D("15000.00") + D("32500.00")
    assert first.payer.name == "Chess Federation of Ukraine" and first.payee.name == REG.event.organiser
    assert all(m.due_set_by is DueSetBy.REGULATION for m in (first, second))


def test_payments_to_players_are_direct_milestones_due_with_the_last_instalment():
    ms = by_key(plan_milestones(REG, inputs()))
    for key in ("travel_1", "travel_2", "home_compensation"):
        assert ms[key].kind is MilestoneKind.DIRECT and ms[key].due == date(2015, 8, 31)
    assert ms["home_compensation"].payee.name == "Hou Yifan"  # the opponent of the home player (14.4)


def test_the_signal_blocker_is_tracked_at_cost_with_its_cap_and_can_be_left_out():
    blocker = by_key(plan_milestones(REG, inputs()))["signal_blocker"]
    assert blocker.kind is MilestoneKind.AT_COST and blocker.is_cap and blocker.amount == D("8000.00")
    assert blocker.due is None and blocker.due_set_by is DueSetBy.OPTIONAL
    assert "signal_blocker" not in by_key(plan_milestones(REG, inputs(signal_blocker_required=False)))


def test_fide_pays_each_advance_the_day_before_the_opening_ceremony_and_each_stipend_on_a_date_the_contract_sets():
    ms = by_key(plan_milestones(REG, inputs()))
    for p in REG.players:
        advance = ms[f"advance_{p.federation}"]
        assert advance.kind is MilestoneKind.DISBURSEMENT and advance.payer.name == REG.event.organiser
        assert advance.amount == D("50000.00") and advance.due == date(2015, 10, 10) == advance_due(inputs())
    stipends = [m for m in ms.values() if m.key.startswith("stipend_payout_")]
    assert sum(m.amount for m in stipends) == D("32500.00") and len(stipends) == len(REG.obligations.stipends)
    assert all(m.needs_due_date and m.default_due == date(2015, 10, 30) for m in stipends)


def test_without_a_guarantee_every_payment_needs_a_date_and_the_message_cites_15_6_1():
    ms = plan_milestones(REG, inputs(guarantee_offered=False))
    organizer = [m for m in ms if m.kind in (MilestoneKind.TO_FIDE, MilestoneKind.DIRECT)]
    assert {m.key for m in organizer} >= {"prize_fund", "fide_contribution", "commercial_rights", "wcoc_budget",
                                          "travel_1", "travel_2", "home_compensation"}
    assert all(m.due is None and m.needs_due_date for m in organizer)
    missing = missing_due_dates(REG, ms, guarantee_offered=False)
    assert missing["prize_fund"].startswith("Art. 15.6.1: the regulations set no deadline for prize fund")
    assert "no bank guarantee is offered, so the deadlines of Art. 15.6.2 do not apply" in missing["prize_fund"]
    dated = with_due_dates(ms, dict.fromkeys(missing, date(2015, 7, 15)))
    assert missing_due_dates(REG, dated, guarantee_offered=False) == {}
    assert by_key(dated)["prize_fund"].due == date(2015, 7, 15)


def test_a_date_the_regulations_fix_is_not_overridden_by_the_contract():
    ms = with_due_dates(plan_milestones(REG, inputs()), {"instalment_1": date(2015, 12, 1)})
    assert by_key(ms)["instalment_1"].due == date(2015, 6, 30)


def test_the_terms_hold_every_outcome_and_the_snapshot_names_the_regulation():
    terms = contract_terms(REG, inputs(), {"stipend_payout_1": date(2015, 10, 30)})
    assert [s.title for s in terms.scenarios] == [
        "If Hou Yifan (CHN) wins in the regular games", "If Hou Yifan (CHN) wins in the tie-break games",
        "If Mariya Muzychuk (UKR) wins in the regular games", "If Mariya Muzychuk (UKR) wins in the tie-break games"]
    snap = terms.as_dict()
    assert snap["regulation"] == {"title": REG.event.regulations_title, "sha256": REG.sha256,
                                  "text_sha256": REG.regulations_text.sha256}
    assert snap["due_dates"] == {"stipend_payout_1": "2015-10-30"}
    assert ContractInputs.from_dict(snap["inputs"]) == inputs()
    assert terms.venue_country_name == "Ukraine"


def test_reversed_dates_cannot_make_a_contract():
    with pytest.raises(ContractRuleError, match="Art. 2.2: the closing date"):
        contract_terms(REG, inputs(closing_date=date(2015, 10, 1)))


def test_the_prize_balances_follow_the_result_with_the_home_match_rule():
    # Lviv: Muzychuk plays at home, so Hou Yifan first receives 5% of the prize fund (13.3).
    ms = by_key(result_milestones(REG, inputs(), MatchOutcome("UKR", "regular", date(2015, 10, 24))))
    winner, loser = ms["prize_balance_UKR"], ms["prize_balance_CHN"]
    # 190,000 split 60/40: 114,000 and 76,000; Hou Yifan adds the home share of 10,000; each less the advance.
    assert winner.amount == D("64000.00") and loser.amount == D("36000.00")
    assert winner.due == loser.due == date(2015, 11, 3)  # within ten days after completion (13.4)
    assert winner.kind is MilestoneKind.DISBURSEMENT and winner.payee.federation == "UKR"


# ------------------------------------------------------------------------------------- milestone status

A = D("100000.00")


@pytest.mark.parametrize("as_of, state, label", [
    (date(2015, 5, 1), MilestoneState.NOT_YET_DUE, "Not yet due: due 30 June 2015, in 60 days"),
    (date(2015, 6, 15), MilestoneState.NOT_YET_DUE, "Not yet due: due 30 June 2015, in 15 days"),
    (date(2015, 6, 16), MilestoneState.DUE_SOON, "Due in 14 days, by 30 June 2015"),
    (date(2015, 6, 29), MilestoneState.DUE_SOON, "Due in 1 day, by 30 June 2015"),
    (date(2015, 6, 30), MilestoneState.DUE_SOON, "Due today, by 30 June 2015"),
    (date(2015, 7, 1), MilestoneState.OVERDUE, "Overdue by 1 day"),
    (date(2015, 7, 31), MilestoneState.OVERDUE, "Overdue by 31 days"),
])
def test_an_unpaid_milestone_across_a_run_of_dates(as_of, state, label):
    st = milestone_status(A, [], DUE, as_of, N)
    assert (st.state, st.label) == (state, label)
    assert st.outstanding == A and st.paid == 0
    assert st.overdue is (state is MilestoneState.OVERDUE)
    assert st.due_soon is (state is MilestoneState.DUE_SOON)


def test_a_milestone_paid_in_full_before_the_due_date_is_paid_and_stays_paid():
    payments = [(A, date(2015, 6, 20))]
    assert milestone_status(A, payments, DUE, date(2015, 6, 19), N).state is MilestoneState.DUE_SOON
    for day in (date(2015, 6, 20), DUE, date(2015, 9, 1)):
        st = milestone_status(A, payments, DUE, day, N)
        assert st.state is MilestoneState.PAID and st.label == "Paid on 20 June 2015"
        assert st.outstanding == 0 and st.completed_on == date(2015, 6, 20)


def test_paid_on_the_due_date_is_on_time():
    assert milestone_status(A, [(A, DUE)], DUE, DUE, N).state is MilestoneState.PAID


@pytest.mark.parametrize("as_of, state, label", [
    (date(2015, 6, 10), MilestoneState.NOT_YET_DUE, "Not yet due: due 30 June 2015, in 20 days"),
    (date(2015, 6, 20), MilestoneState.PART_PAID,
     "Part-paid: €40,000.00 of €100,000.00; €60,000.00 due in 10 days, by 30 June 2015"),
    (date(2015, 7, 3), MilestoneState.OVERDUE, "Overdue by 3 days; part-paid, €40,000.00 of €100,000.00 received"),
    (date(2015, 7, 5), MilestoneState.PAID_LATE, "Paid late, on 5 July 2015: 5 days after the due date"),
    (date(2015, 12, 31), MilestoneState.PAID_LATE, "Paid late, on 5 July 2015: 5 days after the due date"),
])
def test_a_part_payment_then_the_balance_after_the_due_date(as_of, state, label):
    payments = [(D("40000.00"), date(2015, 6, 20)), (D("60000.00"), date(2015, 7, 5))]
    st = milestone_status(A, payments, DUE, as_of, N)
    assert (st.state, st.label) == (state, label)


def test_a_part_paid_milestone_within_the_window_is_still_due_soon_for_reminders():
    st = milestone_status(A, [(D("1.00"), date(2015, 6, 1))], DUE, date(2015, 6, 25), N)
    assert st.state is MilestoneState.PART_PAID and st.due_soon and st.outstanding == D("99999.00")
    assert reminder_kind(MilestoneKind.TO_FIDE, st) is ReminderKind.DUE_SOON


def test_a_reversal_takes_the_payment_back_as_of_the_day_it_was_received():
    payments = [(A, date(2015, 6, 20)), (-A, date(2015, 6, 20)), (A, date(2015, 7, 2))]
    assert milestone_status(A, payments, DUE, date(2015, 6, 25), N).state is MilestoneState.DUE_SOON
    st = milestone_status(A, payments, DUE, date(2015, 7, 2), N)
    assert st.state is MilestoneState.PAID_LATE and st.completed_on == date(2015, 7, 2) and st.days == 2


def test_payments_received_after_the_day_asked_about_do_not_count():
    st = milestone_status(A, [(A, date(2015, 7, 1))], DUE, date(2015, 6, 30), N)
    assert st.paid == 0 and st.state is MilestoneState.DUE_SOON


def test_an_at_cost_item_is_never_overdue():
    st = milestone_status(D("8000.00"), [(D("5000.00"), date(2015, 10, 1))], None, date(2016, 1, 1), N,
                          at_cost=True)
    assert st.state is MilestoneState.AT_COST and not st.overdue
    assert st.label == "At cost, up to €8,000.00: €5,000.00 recorded so far"
    assert reminder_kind(MilestoneKind.AT_COST, st) is None


def test_the_due_soon_window_is_a_setting():
    assert milestone_status(A, [], DUE, date(2015, 6, 23), 7).state is MilestoneState.DUE_SOON
    assert milestone_status(A, [], DUE, date(2015, 6, 22), 7).state is MilestoneState.NOT_YET_DUE
    with pytest.raises(ValueError):
        milestone_status(A, [], DUE, DUE, -1)


def test_reminders_go_to_the_organizers_own_payments_only():
    overdue = milestone_status(A, [], DUE, date(2015, 7, 10), N)
    assert reminder_kind(MilestoneKind.TO_FIDE, overdue) is ReminderKind.OVERDUE
    assert reminder_kind(MilestoneKind.DIRECT, overdue) is ReminderKind.OVERDUE
    assert reminder_kind(MilestoneKind.DISBURSEMENT, overdue) is None
    assert reminder_kind(MilestoneKind.TO_FIDE, milestone_status(A, [(A, DUE)], DUE, DUE, N)) is None


def test_totals_split_what_the_organizer_owes_from_what_fide_pays_out():
    day = date(2015, 7, 10)
    rows = [(MilestoneKind.TO_FIDE, milestone_status(A, [(D("30000.00"), DUE)], DUE, day, N)),
            (MilestoneKind.DIRECT, milestone_status(D("3000.00"), [], date(2015, 8, 31), day, N)),
            (MilestoneKind.AT_COST, milestone_status(D("8000.00"), [(D("100.00"), DUE)], None, day, N,
                                                     at_cost=True)),
            (MilestoneKind.DISBURSEMENT, milestone_status(D("50000.00"), [], date(2015, 10, 10), day, N))]
    t = totals(rows)
    assert (t.organizer_amount, t.organizer_paid, t.organizer_outstanding, t.organizer_overdue) == (
        D("103000.00"), D("30000.00"), D("73000.00"), D("70000.00"))
    assert (t.fide_amount, t.fide_outstanding, t.at_cost_cap, t.at_cost_paid) == (
        D("50000.00"), D("50000.00"), D("8000.00"), D("100.00"))
    assert t.as_dict()["organizer_outstanding"] == "73000.00"


# -------------------------------------------------------------------------------------------- payments


def test_a_payment_above_what_is_outstanding_is_refused_with_the_figures():
    with pytest.raises(PaymentRefused) as exc:
        check_payment(article="15.6.2", title="instalment 1, due 30 June 2015", amount=D("60000.00"),
                      outstanding=D("40000.00"))
    assert str(exc.value) == ("Art. 15.6.2: €40,000.00 is outstanding on instalment 1, due 30 June 2015; a payment "
                              "of €60,000.00 would exceed it.")
    check_payment(article="15.6.2", title="x", amount=D("40000.00"), outstanding=D("40000.00"))


@pytest.mark.parametrize("amount", [D("0.00"), D("-5.00")])
def test_a_payment_is_a_positive_amount(amount):
    with pytest.raises(PaymentRefused, match="reverse it"):
        check_payment(article="15.6.2", title="x", amount=amount, outstanding=A)


def test_an_at_cost_item_refuses_what_would_go_over_its_cap():
    with pytest.raises(PaymentRefused, match=r"Art. 14.3: €1,000.00 remains under the cap of €8,000.00"):
        check_payment(article="14.3", title="the signal blocker", amount=D("1000.01"), outstanding=D("1000.00"),
                      is_cap=True, cap=D("8000.00"))


# -------------------------------------------------------------------------------------- bank guarantee

VALID = date(2015, 9, 1)
# What the warnings apply: the call's bidding procedure on the guarantee, not Art. 15.2(j).
TERMS = "Bidding procedure: bank guarantee terms"


@pytest.mark.parametrize("as_of, outstanding, last_due, expected", [
    (date(2015, 6, 1), A, date(2015, 8, 31), []),
    (date(2015, 8, 2), A, date(2015, 8, 31), [f"{TERMS}: the bank guarantee lapses in 30 days, on 1 September "
                                              "2015, while €100,000.00 is still outstanding."]),
    (date(2015, 9, 1), A, date(2015, 8, 31), [f"{TERMS}: the bank guarantee lapses today, on 1 September "
                                              "2015, while €100,000.00 is still outstanding."]),
    (date(2015, 9, 2), A, date(2015, 8, 31), [f"{TERMS}: the bank guarantee lapsed on 1 September 2015 while "
                                              "€100,000.00 is still outstanding."]),
    (date(2015, 6, 1), A, date(2015, 9, 15), [f"{TERMS}: the bank guarantee lapses on 1 September 2015, before "
                                              "the last unpaid milestone falls due on 15 September 2015. Ask the "
                                              "organizer for an extension."]),
    (date(2015, 9, 2), D("0.00"), None, []),
])
def test_the_bank_guarantee_is_warned_about_before_it_lapses(as_of, outstanding, last_due, expected):
    assert guarantee_warnings(source=TERMS, valid_until=VALID, as_of=as_of, outstanding=outstanding,
                              last_due=last_due, warn_days=30) == expected


def test_no_guarantee_no_warning():
    assert guarantee_warnings(source=TERMS, valid_until=None, as_of=VALID, outstanding=A, last_due=None,
                              warn_days=30) == []


# ---------------------------------------------------------------------------------------- match result

OPENING = date(2015, 10, 11)  # game 1 on 12 October, game 6 on the 19th, rest days 14, 17, 20..., tie-breaks 28


@pytest.mark.parametrize("outcome, field, fragment", [
    (MatchOutcome("RUS", "regular", date(2015, 10, 20)), "winner", "no player of FWWCM 2015 plays for 'RUS'"),
    (MatchOutcome("CHN", "regular", date(2015, 10, 14)), "completed_on", "14 October 2015 is not a game day"),
    (MatchOutcome("CHN", "regular", date(2015, 10, 25)), "completed_on", "25 October 2015 is not a game day"),
    (MatchOutcome("CHN", "tiebreak", date(2015, 10, 26)), "completed_on",
     "the tie-break games are played on 28 October 2015"),
    (MatchOutcome("CHN", "tiebreak", date(2015, 10, 28)), "completed_on", "cannot have been completed in the future"),
    (MatchOutcome("CHN", "blitz", date(2015, 10, 20)), "decided_in", "regular or tiebreak"),
])
def test_a_result_that_does_not_fit_the_schedule_is_refused(outcome, field, fragment):
    today = date(2015, 10, 27)
    errors = check_result(REG, outcome, opening_date=OPENING, today=today)
    assert fragment in errors[field]


def test_a_result_on_a_game_day_or_the_tiebreak_day_is_accepted():
    today = date(2015, 11, 1)
    assert check_result(REG, MatchOutcome("CHN", "regular", date(2015, 10, 19)), opening_date=OPENING,
                        today=today) == {}
    assert check_result(REG, MatchOutcome("ukr", "tiebreak", date(2015, 10, 28)), opening_date=OPENING,
                        today=today) == {}


# ------------------------------------------------------------------------------------------------ as of


def test_as_of_defaults_to_today_and_refuses_anything_but_an_iso_date():
    today = date(2015, 6, 1)
    assert parse_as_of(None, today) == today and parse_as_of("", today) == today
    assert parse_as_of("2015-06-30", today) == DUE
    for bad in ("2015-13-01", "30.06.2015", "2015-6-3", "tomorrow", "2015-06-30T00:00"):
        with pytest.raises(ValueError, match="YYYY-MM-DD"):
            parse_as_of(bad, today)


def test_inputs_are_frozen_and_round_trip():
    i = inputs()
    with pytest.raises(dataclasses.FrozenInstanceError):
        i.prize_fund = D("1")
    assert ContractInputs.from_dict(i.as_dict()) == i
    assert ContractInputs.from_dict(inputs(guarantee_offered=False, guarantee_amount=None,
                                           guarantee_valid_until=None).as_dict()).guarantee_amount is None
    assert advance_due(i) == i.opening_date - timedelta(days=1)
