"""The regulation file is data: strictly validated, versioned, and the only source of every figure."""

import dataclasses
from datetime import date
from decimal import Decimal

import pytest

from events.regulation import RegulationError, default_event_file, parse_regulation

TEXT = default_event_file().read_text()


def edited(old: str, new: str) -> str:
    assert old in TEXT, old
    return TEXT.replace(old, new, 1)


def test_the_2015_file_holds_the_figures_of_the_regulations(reg):
    assert reg.prize_fund.minimum == Decimal("200000.00")
    assert reg.fide_contribution.min_share_of_prize_fund == Decimal("0.20")
    assert reg.hotel.min_stars == 4 and reg.inspection.min_inspectors == 2
    assert [i.due for i in reg.payments.with_guarantee] == [date(2015, 6, 30), date(2015, 8, 31)]
    assert sum(s.amount for s in reg.obligations.stipends) == Decimal("32500.00")
    assert [p.federation for p in reg.players] == ["CHN", "UKR"]
    assert [c.key for c in reg.criteria] == list("abcdefghij")
    assert reg.fide_bank.iban == "CH54 0024 3243 3420 8763 Y"


def test_opening_dates_are_derived_from_the_window_and_the_schedule(reg):
    # Art. 15.2(a) window 11-31 October; Art. 2.2: 18 days, closing the day after or one day thereafter.
    assert reg.possible_opening_dates() == [date(2015, 10, 11), date(2015, 10, 12), date(2015, 10, 13)]
    days = reg.schedule_for(date(2015, 10, 12))
    assert days[1].on == date(2015, 10, 13) and days[1].label == "Game 1, 15:00"   # as in Art. 2.2
    assert days[17].on == date(2015, 10, 29) and days[17].kind == "tiebreak"
    assert days[-1].kind == "closing" and days[-1].on == date(2015, 10, 30)
    assert reg.number_of_games == 10


@pytest.mark.parametrize("old, new, message", [
    ('minimum = "200000.00"', 'minimum = 200000', "prize_fund.minimum: expected a decimal number as a string"),
    ('minimum = "200000.00"', 'minimum = "lots"', "prize_fund.minimum: 'lots' is not a decimal number"),
    ('min_stars = 4', 'min_stars = 6', "hotel.min_stars: hotel categories run from 1 to 5 stars, got 6"),
    ('min_stars = 4', 'min_stars = "4"', "hotel.min_stars: expected a whole number, got '4'"),
    ('min_stars = 4', 'min_stars = 4\nstars_colour = "gold"', "hotel.stars_colour: unknown key"),
    ('min_share_of_prize_fund = "0.20"', 'min_share_of_prize_fund = "1.5"',
     "fide_contribution.min_share_of_prize_fund: a share must lie between 0 and 1, got 1.5"),
    ('window_end = 2015-10-31', 'window_end = 2015-10-20',
     "schedule.window_end: the window is too short for the schedule"),
    ('window_end = 2015-10-31', 'window_end = "the end of October"',
     "schedule.window_end: 'the end of October' is not a date (YYYY-MM-DD)"),
    ('"opening", "game", "game", "rest"', '"opening", "game", "game", "party"',
     "schedule.days: unknown kind of day 'party'"),
    ('weight = "20"', 'weight = "-20"', "criteria[0].weight: a weight cannot be negative, got -20"),
    ('red_flag_criteria = ["b", "c", "d", "e"]', 'red_flag_criteria = ["b", "z"]',
     "scoring.red_flag_criteria[1]: no criterion 'z'"),
    # The bidding procedure's tie-break of the Board's vote is one it names (Art. 15.5 sets none).
    ('tie_break = "new_round"', 'tie_break = "coin_toss"', "board_voting.tie_break: use new_round, got 'coin_toss'"),
    ('prize_fund_share = "0.50"\ndescription = "50%', 'prize_fund_share = "0.40"\ndescription = "50%',
     "payments.with_guarantee: the prize fund shares must add up to 1, they add up to 0.90"),
    ('bid_deadline = 2015-05-31T23:59:59Z', 'bid_deadline = 2015-05-31T23:59:59',
     "event.bid_deadline: expected a date and time with a time zone"),
    ('[hotel]', '[hotel\n', "not valid TOML"),
    # A TOML float is never read as a binary float: an amount or a share is a string.
    ('min_share_of_prize_fund = "0.20"', 'min_share_of_prize_fund = 0.20',
     'fide_contribution.min_share_of_prize_fund: expected a decimal number as a string (for example "0.20"), got 0.2'),
    ('net_of_taxes_required = true', 'net_of_taxes_required = 1',
     "prize_fund.net_of_taxes_required: expected true or false, got 1"),
    ('principal = "Chief Arbiter"', 'principal = "Chief Arbiter"\nrank = 1',
     "obligations.stipends[3].rank: unknown key"),
    ('bid_deadline = 2015-05-31T23:59:59Z', 'bid_deadline = 2015-05-31',
     "event.bid_deadline: expected a date and time with a time zone"),
    ('label = "Poor"', 'label = ""', "scoring.anchors[1].label: expected non-empty text, got ''"),
    # Art. 5.2's two recipients: their shares make the rule's share when both are written
    ('key = "organizer"', 'key = "fide"', "deductions[2].recipients: each key once"),
    ('her prize money to the Organizer and a further 5% to FIDE for each breach."\n',
     'her prize money to the Organizer and a further 5% to FIDE for each breach."\nshare = "0.12"\n',
     "deductions[2].share: the recipients' shares add up to 0.10, not to the share 0.12"),
])
def test_loader_refuses_a_bad_file_naming_the_key(old, new, message):
    with pytest.raises(RegulationError) as exc:
        parse_regulation(edited(old, new))
    assert message in str(exc.value)


def test_the_tables_are_frozen(reg):
    with pytest.raises(dataclasses.FrozenInstanceError):
        reg.hotel.min_stars = 5  # type: ignore[misc]


def test_a_missing_key_is_named():
    with pytest.raises(RegulationError, match=r"^hotel.min_stars: missing$"):
        parse_regulation(edited("min_stars = 4\n", ""))


def test_same_content_same_hash_and_a_change_gives_another():
    a = parse_regulation(TEXT)
    b = parse_regulation(TEXT + "\n# a comment changes nothing that matters\n")
    c = parse_regulation(edited('minimum = "200000.00"', 'minimum = "250000.00"'))
    assert a.sha256 == b.sha256 != c.sha256


def test_practice_call_moves_every_date_by_whole_years(reg):
    p = reg.shifted(years=12, slug="practice", title="Practice")
    assert p.schedule.window_start == date(2027, 10, 11)
    assert p.payments.with_guarantee[0].due == date(2027, 6, 30)
    assert p.event.bid_deadline.year == 2027 and p.event.practice
    assert p.event.short_title == "FWWCM 2027"
    assert p.prize_fund == reg.prize_fund
