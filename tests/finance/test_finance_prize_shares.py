"""Art. 13.1, 13.3 and 13.4: the prize fund divided for an outcome of the match."""

import dataclasses
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.regulation import default_event_file, load_regulation_file, parse_regulation
from finance.rules import prize_shares

D = Decimal
REG = load_regulation_file(default_event_file())
TOML = default_event_file().read_text(encoding="utf-8")
PRIZE_FUND = D("200000")


def shares(winner="CHN", decided_in="regular", venue="CH", prize_fund=PRIZE_FUND, reg=REG, completed_on=None):
    return prize_shares(reg, prize_fund=prize_fund, winner_federation=winner, decided_in=decided_in,
                        venue_country=venue, completed_on=completed_on)


def test_regular_games_split_sixty_forty_and_the_advances_are_deducted():
    ps = shares(decided_in="regular")
    assert (ps.winner.total, ps.loser.total) == (D("120000.00"), D("80000.00"))
    assert (ps.winner.advance, ps.loser.advance) == (D("50000.00"), D("50000.00"))
    assert (ps.winner.balance, ps.loser.balance) == (D("70000.00"), D("30000.00"))
    assert (ps.winner.share, ps.loser.share) == (D("0.60"), D("0.40"))
    assert ps.home_player is None and ps.home_share == 0


def test_tiebreak_splits_fifty_five_forty_five():
    ps = shares(decided_in="tiebreak")
    assert (ps.winner.total, ps.loser.total) == (D("110000.00"), D("90000.00"))
    assert (ps.winner.balance, ps.loser.balance) == (D("60000.00"), D("40000.00"))


def test_home_match_opponent_gets_five_percent_first():
    ps = shares(winner="CHN", venue="CN")  # Hou Yifan at home, wins in the regular games
    assert ps.home_player.federation == "CHN"
    assert ps.home_share == D("10000.00")
    assert ps.shared_balance == D("190000.00")
    assert ps.winner.player.federation == "CHN"
    assert ps.winner.total == D("114000.00") and ps.winner.home_compensation == 0
    assert (ps.loser.home_compensation, ps.loser.share_amount, ps.loser.total) == (
        D("10000.00"), D("76000.00"), D("86000.00"))


def test_home_match_won_by_the_opponent_gives_her_the_five_percent_and_the_larger_share():
    ps = shares(winner="UKR", venue="CN")
    assert ps.winner.player.federation == "UKR"
    assert ps.winner.total == D("10000.00") + D("114000.00")
    assert ps.loser.total == D("76000.00")


def test_each_line_of_a_prize_cites_its_article():
    ps = shares(venue="UA", winner="UKR")
    assert [(ln.key, ln.article) for ln in ps.loser.lines] == [
        ("home_share", REG.prize_split.home_article), ("share", REG.prize_split.article),
        ("advance", REG.prize_split.advance_article)]
    assert [ln.article for ln in ps.winner.lines] == ["13.1", "13.4"]
    advance = ps.winner.lines[-1]
    assert advance.deducted and advance.amount == D("50000.00")


def test_balance_falls_due_ten_days_after_completion():
    ps = shares(completed_on=date(2015, 10, 29))
    assert ps.balance_due == ps.winner.balance_due == ps.loser.balance_due == date(2015, 11, 8)
    assert "10 days" in ps.balance_rule and "8 November 2015" in ps.balance_rule and "13.4" in ps.balance_rule


def test_balance_due_date_is_unknown_until_the_match_is_completed():
    ps = shares()
    assert ps.balance_due is None and ps.winner.balance_due is None
    assert "10 days" in ps.balance_rule


def test_winner_federation_is_case_insensitive_and_for_player_finds_either():
    ps = shares(winner=" ukr ")
    assert ps.for_player("ukr").won and not ps.for_player("CHN").won
    with pytest.raises(KeyError):
        ps.for_player("RUS")


def test_odd_cent_goes_to_the_winner():
    ps = shares(prize_fund=D("200000.01"))
    assert (ps.winner.total, ps.loser.total) == (D("120000.01"), D("80000.00"))


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"winner": "RUS"}, ValueError),
    ({"winner": None}, ValueError),
    ({"decided_in": "armageddon"}, ValueError),
    ({"venue": "CHN"}, ValueError),
    ({"prize_fund": D("-200000")}, ValueError),
    ({"prize_fund": D("200000.001")}, ValueError),
    ({"prize_fund": 200000.0}, TypeError),
    ({"completed_on": "2015-10-29"}, TypeError),
])
def test_prize_shares_refuse_an_unknown_winner_outcome_or_bad_amount(kwargs, error):
    with pytest.raises(error):
        shares(**kwargs)


def test_a_prize_fund_too_small_to_cover_the_advance_is_refused():
    with pytest.raises(ValueError, match="13.4"):
        shares(prize_fund=D("100000"))


def test_two_players_of_one_federation_make_the_winner_ambiguous():
    a, b = REG.players
    reg = dataclasses.replace(REG, players=(a, dataclasses.replace(b, federation=a.federation)))
    with pytest.raises(ValueError, match="more than one"):
        shares(reg=reg)


def test_a_made_up_regulation_gives_other_shares():
    text = TOML
    for old, new in [('regular_winner_share = "0.60"', 'regular_winner_share = "0.70"'),
                     ('tiebreak_winner_share = "0.55"', 'tiebreak_winner_share = "0.65"'),
                     ('home_opponent_share = "0.05"', 'home_opponent_share = "0.10"'),
                     ('advance_per_player = "50000.00"', 'advance_per_player = "20000.00"'),
                     ("balance_due_days_after_completion = 10", "balance_due_days_after_completion = 14"),
                     ('home_article = "13.3"', 'home_article = "17.3"')]:
        assert old in text
        text = text.replace(old, new)
    reg = parse_regulation(text)
    ps = shares(reg=reg, completed_on=date(2015, 10, 29))
    assert (ps.winner.total, ps.loser.total) == (D("140000.00"), D("60000.00"))
    assert (ps.winner.balance, ps.loser.balance) == (D("120000.00"), D("40000.00"))
    assert ps.balance_due == date(2015, 11, 12)
    home = shares(reg=reg, venue="CN", decided_in="tiebreak")
    assert home.home_share == D("20000.00")
    assert home.winner.total == D("117000.00")  # 65% of 180,000
    assert home.loser.total == D("20000.00") + D("63000.00")
    assert home.loser.lines[0].article == "17.3"


prize_funds = st.decimals(min_value=REG.prize_fund.minimum, max_value=REG.prize_fund.maximum, places=2)
outcomes = {
    "winner": st.sampled_from([p.federation for p in REG.players]),
    "decided_in": st.sampled_from(["regular", "tiebreak"]),
    "venue": st.sampled_from(["CN", "UA", "CH", "US"]),
}


@given(prize_fund=prize_funds, **outcomes)
def test_shares_always_sum_exactly_to_the_prize_fund_and_nothing_is_negative(prize_fund, winner, decided_in,
                                                                              venue):
    ps = shares(winner, decided_in, venue, prize_fund)
    assert ps.winner.total + ps.loser.total == prize_fund
    assert ps.home_share + ps.shared_balance == prize_fund
    for pp in ps.players:
        assert pp.total == pp.home_compensation + pp.share_amount
        assert pp.balance == pp.total - pp.advance
        for amount in (pp.home_compensation, pp.share_amount, pp.total, pp.advance, pp.balance):
            assert amount >= 0
            assert amount.as_tuple().exponent == -2
    assert ps.winner.total >= ps.loser.total


@given(a=prize_funds, b=prize_funds, **outcomes)
def test_each_prize_grows_with_the_prize_fund(a, b, winner, decided_in, venue):
    low, high = sorted((a, b))
    small, large = shares(winner, decided_in, venue, low), shares(winner, decided_in, venue, high)
    assert small.winner.total <= large.winner.total
    assert small.loser.total <= large.loser.total
