"""Art. 11.1.2, 13 and 14: what an organizer commits to pay, line by line, read from the regulation."""

import dataclasses
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.regulation import default_event_file, load_regulation_file, parse_regulation
from finance.rules import (
    BidTerms,
    ObligationLine,
    PartyKind,
    contract_article,
    is_home_match,
    minimum_fide_contribution,
    obligations,
)

D = Decimal
REG = load_regulation_file(default_event_file())
TOML = default_event_file().read_text(encoding="utf-8")
HOU, MUZYCHUK = REG.players  # CHN/CN and UKR/UA in the 2015 file


def edited(*changes: tuple[str, str]):
    """The 2015 regulation with some lines of its TOML changed: a made-up call with other figures."""
    text = TOML
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    return parse_regulation(text)


def terms(prize_fund="200000.00", fide=None, *, guarantee=True, venue="CH", blocker=True, reg=REG):
    pf = D(prize_fund)
    return BidTerms(prize_fund=pf, fide_contribution=D(fide) if fide else minimum_fide_contribution(reg, pf),
                    guarantee_offered=guarantee, venue_country=venue, signal_blocker_required=blocker)


def by_key(ob):
    return {ln.key: ln for ln in ob.lines}


# -------------------------------------------------------------------------------------- worked examples


def test_worked_example_for_a_prize_fund_of_200000():
    ob = obligations(REG, terms("200000"))
    lines = by_key(ob)
    assert minimum_fide_contribution(REG, D("200000")) == D("40000.00")
    assert lines["prize_fund"].amount == D("200000.00")
    assert lines["fide_contribution"].amount == D("40000.00")
    assert lines["commercial_rights"].amount == D("10000.00")
    assert lines["wcoc_budget"].amount == D("15000.00")
    assert lines["signal_blocker"].amount == D("8000.00")
    assert sum(ln.amount for ln in ob.lines if ln.article == "14.5") == D("32500.00")
    assert [lines[k].amount for k in ("travel_1", "travel_2")] == [D("3000.00"), D("3000.00")]


def test_totals_separate_fide_players_and_up_to_items():
    ob = obligations(REG, terms("200000", venue="CH"))
    assert ob.total_to_fide == D("297500.00")  # 200,000 + 40,000 + 10,000 + 15,000 + 32,500
    assert ob.total_to_players == D("6000.00")
    assert ob.total_fixed == D("303500.00")
    assert ob.total_caps == D("8000.00")
    assert ob.total_up_to == D("311500.00")


def test_lines_come_in_the_order_of_the_articles_the_issue_lists():
    keys = [ln.key for ln in obligations(REG, terms(venue="CN")).lines]
    assert keys == ["prize_fund", "fide_contribution", "commercial_rights", "wcoc_budget", "signal_blocker",
                    "home_compensation", *(f"stipend_{i}" for i in range(1, 8)), "travel_1", "travel_2"]


# ---------------------------------------------------------------------------------------------- lines


def test_obligations_use_the_fide_contribution_the_bid_offers():
    ob = obligations(REG, terms("200000", fide="55000.50"))
    assert ob.line("fide_contribution").amount == D("55000.50")
    assert ob.total_to_fide == D("312500.50")


def test_a_contribution_below_the_minimum_is_shown_as_offered_for_compliance_to_report():
    assert obligations(REG, terms("200000", fide="1000")).line("fide_contribution").amount == D("1000.00")


def test_every_line_cites_an_article_read_from_the_regulation():
    ob = obligations(REG, terms(venue="UA"))
    o = REG.obligations
    expected = {
        "prize_fund": REG.prize_fund.article, "fide_contribution": REG.fide_contribution.article,
        "commercial_rights": o.commercial_rights_article, "wcoc_budget": o.wcoc_budget_article,
        "signal_blocker": o.signal_blocker_article, "home_compensation": o.home_compensation_article,
        "stipend_1": o.stipends_article, "travel_1": o.travel_article,
    }
    for key, article in expected.items():
        assert ob.line(key).article == article
    assert {ln.article for ln in ob.lines} == {"13.1", "13.2", "14.1", "14.2", "14.3", "14.4", "14.5", "11.1.2"}


def test_the_organizer_pays_every_line_and_money_is_decimal_in_cents():
    for ln in obligations(REG, terms("250000.01", venue="CN")).lines:
        assert isinstance(ln, ObligationLine)
        assert ln.payer.kind is PartyKind.ORGANIZER
        assert isinstance(ln.amount, Decimal) and ln.amount.as_tuple().exponent == -2
        assert ln.description and ln.due_rule


def test_fide_holds_the_prize_fund_for_the_players_and_the_stipends_for_the_principals():
    ob = obligations(REG, terms())
    prize = ob.line("prize_fund")
    assert prize.payee.kind is PartyKind.FIDE
    assert prize.beneficiary.kind is PartyKind.PLAYERS
    assert HOU.name in prize.beneficiary.name and MUZYCHUK.name in prize.beneficiary.name
    stipends = [ln for ln in ob.lines if ln.key.startswith("stipend_")]
    assert [ln.beneficiary.name for ln in stipends] == [s.principal for s in REG.obligations.stipends]
    assert all(ln.payee.kind is PartyKind.FIDE and ln.beneficiary.kind is PartyKind.PRINCIPAL for ln in stipends)
    assert [ln.amount for ln in stipends] == [s.amount for s in REG.obligations.stipends]


def test_travel_contribution_is_paid_to_each_player_for_the_team():
    ob = obligations(REG, terms())
    assert [(ln.payee.kind, ln.payee.federation) for ln in (ob.line("travel_1"), ob.line("travel_2"))] == [
        (PartyKind.PLAYER, "CHN"), (PartyKind.PLAYER, "UKR")]


def test_signal_blocker_is_an_up_to_item_paid_at_cost_not_to_fide():
    line = obligations(REG, terms()).line("signal_blocker")
    assert line.is_cap
    assert line.payee.kind is PartyKind.SUPPLIER
    assert line.due is None
    assert "at cost" in line.due_rule


def test_no_signal_blocker_line_when_fide_does_not_require_one():
    ob = obligations(REG, terms(blocker=False))
    assert not ob.has("signal_blocker")
    assert ob.total_caps == 0
    assert ob.total_up_to == ob.total_fixed


# ------------------------------------------------------------------------------------------ home match


@pytest.mark.parametrize(("venue", "home", "opponent"), [("CN", "CHN", "UKR"), ("ua", "UKR", "CHN")])
def test_home_match_pays_the_compensation_to_the_opponent(venue, home, opponent):
    ob = obligations(REG, terms(venue=venue))
    assert ob.home_player.federation == home
    line = ob.line("home_compensation")
    assert line.amount == REG.obligations.home_compensation == D("3000.00")
    assert line.payee.kind is PartyKind.PLAYER and line.payee.federation == opponent
    assert ob.total_to_players == D("9000.00")


def test_no_home_compensation_in_a_third_country():
    ob = obligations(REG, terms(venue="CH"))
    assert ob.home_player is None and ob.opponent is None
    assert not ob.has("home_compensation")
    with pytest.raises(KeyError):
        ob.line("home_compensation")


def test_is_home_match_names_the_home_player():
    assert is_home_match(REG, "CN") == HOU
    assert is_home_match(REG, " ua ") == MUZYCHUK
    assert is_home_match(REG, "RU") is None


def test_a_venue_in_the_country_of_both_players_is_no_home_match():
    same = dataclasses.replace(REG, players=(HOU, dataclasses.replace(MUZYCHUK, country="CN")))
    assert is_home_match(same, "CN") is None


@pytest.mark.parametrize("bad", ["CHN", "C", "", "1A", "ÇN"])
def test_is_home_match_refuses_a_code_that_is_not_two_letters(bad):
    with pytest.raises(ValueError):
        is_home_match(REG, bad)


# ------------------------------------------------------------------------------------------------ dates


def test_with_a_guarantee_every_fixed_line_is_due_by_the_last_deadline():
    ob = obligations(REG, terms(venue="CN"))
    for ln in ob.fixed_lines:
        assert ln.due == date(2015, 8, 31), ln.key
    assert "30 June 2015" in ob.line("prize_fund").due_rule
    assert "directly" in ob.line("travel_1").due_rule


def test_without_a_guarantee_no_line_has_a_date_and_the_contract_sets_it():
    ob = obligations(REG, terms(guarantee=False))
    assert all(ln.due is None for ln in ob.lines)
    for ln in ob.fixed_lines:
        assert f"Art. {contract_article(REG)}" in ln.due_rule


# ----------------------------------------------------------------------------------------------- terms


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"prize_fund": D("-1")}, ValueError),
    ({"fide_contribution": D("-0.01")}, ValueError),
    ({"prize_fund": D("200000.001")}, ValueError),
    ({"prize_fund": 200000.0}, TypeError),
    ({"venue_country": "CHE"}, ValueError),
    ({"venue_country": None}, TypeError),
    ({"guarantee_offered": "yes"}, TypeError),
    ({"signal_blocker_required": 1}, TypeError),
])
def test_bid_terms_refuse_negative_float_and_malformed_values(kwargs, error):
    base = {"prize_fund": D("200000"), "fide_contribution": D("40000"), "guarantee_offered": True,
            "venue_country": "CH", "signal_blocker_required": False}
    with pytest.raises(error):
        BidTerms(**(base | kwargs))


def test_bid_terms_normalise_amounts_and_country():
    t = BidTerms(prize_fund=200000, fide_contribution=D("40000"), guarantee_offered=False, venue_country="cn",
                 signal_blocker_required=False)
    assert str(t.prize_fund) == "200000.00"
    assert t.venue_country == "CN"
    assert t.signal_blocker_required is False


def test_bid_terms_take_the_calls_answer_on_the_signal_blocker_never_a_default():
    """Art. 14.3: "If required by FIDE, the organizer will provide an electronic device to block all mobile
    signals": whether FIDE requires it is the call's recorded answer, which every caller passes."""
    with pytest.raises(TypeError, match="signal_blocker_required"):
        BidTerms(prize_fund=200000, fide_contribution=D("40000"), guarantee_offered=False,  # type: ignore[call-arg]
                 venue_country="CN")


def test_obligations_refuse_terms_of_the_wrong_type():
    with pytest.raises(TypeError):
        obligations(REG, {"prize_fund": D("200000")})


def test_as_dict_gives_amounts_as_strings():
    data = obligations(REG, terms(venue="CN")).as_dict()
    assert data["total_to_fide"] == "297500.00"
    assert data["total_up_to"] == "314500.00"
    first = data["lines"][0]
    assert first["amount"] == "200000.00" and first["due"] == "2015-08-31" and first["payee"]["kind"] == "fide"


# ------------------------------------------------------------------------------------ other regulations


def test_a_made_up_regulation_gives_other_obligations():
    reg = edited(
        ('commercial_rights_share = "0.05"', 'commercial_rights_share = "0.10"'),
        ('wcoc_budget = "15000.00"', 'wcoc_budget = "25000.00"'),
        ('signal_blocker_cap = "8000.00"', 'signal_blocker_cap = "9500.00"'),
        ('home_compensation = "3000.00"', 'home_compensation = "4000.00"'),
        ('travel_contribution_per_team = "3000.00"', 'travel_contribution_per_team = "3500.00"'),
        ('wcoc_budget_article = "14.2"', 'wcoc_budget_article = "16.2"'),
        ('min_share_of_prize_fund = "0.20"', 'min_share_of_prize_fund = "0.25"'),
        ('amount = "7500.00"', 'amount = "9999.99"'),
    )
    ob = obligations(reg, terms("200000", venue="CN", reg=reg))
    lines = by_key(ob)
    assert lines["fide_contribution"].amount == D("50000.00")
    assert lines["commercial_rights"].amount == D("20000.00")
    assert lines["wcoc_budget"].amount == D("25000.00") and lines["wcoc_budget"].article == "16.2"
    assert lines["signal_blocker"].amount == D("9500.00")
    assert lines["home_compensation"].amount == D("4000.00")
    assert lines["travel_1"].amount == D("3500.00")
    assert lines["stipend_1"].amount == D("9999.99")
    # 200,000 + 50,000 + 20,000 + 25,000 + stipends (32,500 - 7,500 + 9,999.99)
    assert ob.total_to_fide == D("329999.99")


def test_a_regulation_without_stipends_has_no_stipend_lines():
    reg = dataclasses.replace(REG, obligations=dataclasses.replace(REG.obligations, stipends=()))
    assert not [ln for ln in obligations(reg, terms()).lines if ln.key.startswith("stipend_")]


prize_funds = st.decimals(min_value=REG.prize_fund.minimum, max_value=REG.prize_fund.maximum, places=2)


@given(a=prize_funds, b=prize_funds, venue=st.sampled_from(["CN", "UA", "CH"]), blocker=st.booleans())
def test_totals_grow_with_the_prize_fund(a, b, venue, blocker):
    low, high = sorted((a, b))
    ob_low = obligations(REG, terms(str(low), venue=venue, blocker=blocker))
    ob_high = obligations(REG, terms(str(high), venue=venue, blocker=blocker))
    for total in ("total_to_fide", "total_fixed", "total_up_to"):
        assert getattr(ob_low, total) <= getattr(ob_high, total)
        if low < high:
            assert getattr(ob_low, total) < getattr(ob_high, total)
    assert ob_low.total_to_players == ob_high.total_to_players


@given(pf=prize_funds, venue=st.sampled_from(["CN", "UA", "CH", "FR"]), blocker=st.booleans(),
       guarantee=st.booleans())
def test_totals_are_the_sums_of_their_lines_and_nothing_is_negative(pf, venue, blocker, guarantee):
    ob = obligations(REG, terms(str(pf), venue=venue, blocker=blocker, guarantee=guarantee))
    assert all(ln.amount >= 0 for ln in ob.lines)
    assert ob.total_fixed == sum(ln.amount for ln in ob.lines if not ln.is_cap)
    assert ob.total_up_to == sum(ln.amount for ln in ob.lines)
    assert ob.total_fixed == ob.total_to_fide + ob.total_to_players
    assert ob.total_up_to == ob.total_fixed + ob.total_caps
