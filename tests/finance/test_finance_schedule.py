"""Art. 15.6.2: the instalments into FIDE's account, or the plain statement that the contract sets them."""

from datetime import date
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from events.regulation import default_event_file, load_regulation_file, parse_regulation
from finance.rules import BidTerms, minimum_fide_contribution, payment_schedule

D = Decimal
REG = load_regulation_file(default_event_file())
TOML = default_event_file().read_text(encoding="utf-8")


def terms(prize_fund="200000.00", *, guarantee=True, venue="CH", blocker=True, fide=None, reg=REG):
    pf = D(prize_fund)
    return BidTerms(prize_fund=pf, fide_contribution=D(fide) if fide else minimum_fide_contribution(reg, pf),
                    guarantee_offered=guarantee, venue_country=venue, signal_blocker_required=blocker)


def test_with_a_guarantee_half_the_prize_fund_by_30_june_and_the_rest_by_31_august():
    s = payment_schedule(REG, terms("200000"))
    assert s.has_terms
    first, last = s.instalments
    assert (first.due, first.amount) == (date(2015, 6, 30), D("100000.00"))
    assert [p.line.key for p in first.parts] == ["prize_fund"]
    assert last.due == date(2015, 8, 31)
    assert last.parts[0].line.key == "prize_fund" and last.parts[0].amount == D("100000.00")
    # the other 100,000 plus every other obligation to FIDE: 40,000 + 10,000 + 15,000 + 32,500
    assert last.amount == D("100000.00") + D("97500.00")
    assert {p.line.key for p in last.parts[1:]} == {
        "fide_contribution", "commercial_rights", "wcoc_budget", *(f"stipend_{i}" for i in range(1, 8))}
    assert all(i.article == REG.payments.article == "15.6.2" for i in s.instalments)
    assert [i.description for i in s.instalments] == [i.description for i in REG.payments.with_guarantee]


def test_instalments_add_up_to_everything_payable_to_fide():
    s = payment_schedule(REG, terms("200000", venue="CN"))
    assert s.total == s.obligations.total_to_fide == D("297500.00")
    for inst in s.instalments:
        assert inst.amount == sum(p.amount for p in inst.parts)
        assert inst.lines == tuple(p.line for p in inst.parts)


def test_capped_and_player_items_are_outside_the_instalments_and_the_note_says_so():
    s = payment_schedule(REG, terms("200000", venue="CN"))
    assert [ln.key for ln in s.at_cost] == ["signal_blocker"]
    assert [ln.key for ln in s.direct] == ["home_compensation", "travel_1", "travel_2"]
    scheduled = {p.line.key for i in s.instalments for p in i.parts}
    assert not scheduled & {"signal_blocker", "home_compensation", "travel_1", "travel_2"}
    assert "at cost" in s.note and "up to €8,000.00" in s.note and "14.3" in s.note
    assert "directly" in s.note and "€9,000.00" in s.note
    assert REG.fide_bank.iban in s.note


def test_without_a_guarantee_the_regulations_set_no_deadlines_and_the_contract_must():
    s = payment_schedule(REG, terms(guarantee=False))
    assert not s.has_terms
    assert s.instalments == ()
    assert s.total == 0
    assert "no deadlines" in s.note and "contract" in s.note and "Art. 15.6.1" in s.note
    assert s.as_dict()["has_terms"] is False


def test_odd_cent_of_the_prize_fund_goes_to_the_first_instalment():
    s = payment_schedule(REG, terms("200000.01", fide="40000.01", blocker=False))
    first, last = s.instalments
    assert first.amount == D("100000.01")
    assert last.parts[0].amount == D("100000.00")
    assert s.total == s.obligations.total_to_fide


def test_a_regulation_with_a_plan_without_guarantee_uses_it():
    plan = '''
[[payments.without_guarantee]]
due = 2015-06-15
prize_fund_share = "0.30"
description = "30% of the prize fund"

[[payments.without_guarantee]]
due = 2015-07-15
prize_fund_share = "0.30"
description = "Another 30% of the prize fund"

[[payments.without_guarantee]]
due = 2015-08-15
prize_fund_share = "0.40"
rest_of_obligations = true
description = "The balance and the rest"
'''
    reg = parse_regulation(TOML.replace("\n[fide_bank]", plan + "\n[fide_bank]"))
    s = payment_schedule(reg, terms("200000", guarantee=False, reg=reg))
    assert [(i.due, i.amount) for i in s.instalments] == [
        (date(2015, 6, 15), D("60000.00")), (date(2015, 7, 15), D("60000.00")),
        (date(2015, 8, 15), D("80000.00") + D("97500.00"))]
    assert "without a bank guarantee" in s.note
    # the guarantee plan of the same regulation is untouched
    assert [i.due for i in payment_schedule(reg, terms("200000", reg=reg)).instalments] == [
        date(2015, 6, 30), date(2015, 8, 31)]


def test_a_regulation_with_other_dates_and_shares_gives_another_schedule():
    reg = parse_regulation(TOML.replace('due = 2015-06-30\nprize_fund_share = "0.50"',
                                        'due = 2015-07-10\nprize_fund_share = "0.25"')
                           .replace('due = 2015-08-31\nprize_fund_share = "0.50"',
                                    'due = 2015-09-01\nprize_fund_share = "0.75"'))
    first, last = payment_schedule(reg, terms("200000", reg=reg)).instalments
    assert (first.due, first.amount) == (date(2015, 7, 10), D("50000.00"))
    assert (last.due, last.parts[0].amount) == (date(2015, 9, 1), D("150000.00"))


def test_as_dict_lists_each_instalment_with_its_parts():
    data = payment_schedule(REG, terms("200000")).as_dict()
    assert data["total"] == "297500.00"
    assert data["instalments"][0] == {
        "number": 1, "due": "2015-06-30", "article": "15.6.2",
        "description": REG.payments.with_guarantee[0].description, "amount": "100000.00",
        "parts": [{"key": "prize_fund", "article": "13.1", "amount": "100000.00"}]}


prize_funds = st.decimals(min_value=REG.prize_fund.minimum, max_value=REG.prize_fund.maximum, places=2)
extra = st.decimals(min_value=D("0.00"), max_value=D("1000000.00"), places=2)


@given(pf=prize_funds, more=extra, venue=st.sampled_from(["CN", "UA", "CH"]), blocker=st.booleans())
def test_instalments_always_add_up_exactly_to_the_obligations_to_fide(pf, more, venue, blocker):
    fide = minimum_fide_contribution(REG, pf) + more
    s = payment_schedule(REG, terms(str(pf), fide=str(fide), venue=venue, blocker=blocker))
    assert s.total == s.obligations.total_to_fide
    assert sum(p.amount for i in s.instalments for p in i.parts if p.line.key == "prize_fund") == pf
    assert all(i.amount >= 0 for i in s.instalments)
    dues = [i.due for i in s.instalments]
    assert dues == sorted(dues)
