"""The rounding policy of finance.money: cents, half up, and splits that never lose or invent a cent."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finance.money import as_amount, round_cents, share_of, split

D = Decimal


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (D("0.005"), D("0.01")),
        (D("0.0049"), D("0.00")),
        (D("2.675"), D("2.68")),  # the classic float trap: float 2.675 rounds to 2.67
        (D("-0.005"), D("-0.01")),  # half up means away from zero
        (D("10000.004"), D("10000.00")),
        (7, D("7.00")),
    ],
)
def test_round_cents_rounds_half_up_to_the_cent(value, expected):
    result = round_cents(value)
    assert result == expected
    assert result.as_tuple().exponent == -2


@pytest.mark.parametrize("bad", [0.1, 2.675, "1.00", None, True])
def test_round_cents_refuses_anything_but_decimal_or_int(bad):
    with pytest.raises(TypeError):
        round_cents(bad)


def test_round_cents_refuses_nan_and_infinity():
    for bad in (D("NaN"), D("Infinity")):
        with pytest.raises(ValueError):
            round_cents(bad)


def test_as_amount_writes_two_decimals():
    assert str(as_amount(200000)) == "200000.00"
    assert str(as_amount(D("3000.5"))) == "3000.50"


@pytest.mark.parametrize(("bad", "error"), [
    (D("-0.01"), ValueError), (D("1.001"), ValueError), (D("NaN"), ValueError),
    (1.5, TypeError), (False, TypeError), ("100", TypeError),
])
def test_as_amount_refuses_negative_sub_cent_and_non_decimal_amounts(bad, error):
    with pytest.raises(error):
        as_amount(bad, "prize_fund")


def test_share_of_rounds_half_up():
    assert share_of(D("200000.10"), D("0.05")) == D("10000.01")  # 10000.005
    assert share_of(D("200000.00"), D("0.20")) == D("40000.00")


def test_share_of_refuses_a_share_above_one():
    with pytest.raises(ValueError):
        share_of(D("100.00"), D("1.5"))


def test_split_200000_01_sixty_forty_gives_the_odd_cent_to_the_larger_fraction():
    assert split(D("200000.01"), [D("0.60"), D("0.40")]) == [D("120000.01"), D("80000.00")]


def test_split_gives_the_cent_to_the_second_part_when_its_fraction_is_larger():
    # 0.04 * 0.6 = 0.024 (0.4 of a cent cut), 0.04 * 0.4 = 0.016 (0.6 of a cent cut)
    assert split(D("0.04"), [D("0.60"), D("0.40")]) == [D("0.02"), D("0.02")]


def test_split_gives_the_odd_cent_to_the_first_part_on_a_tie():
    assert split(D("0.01"), [D("0.5"), D("0.5")]) == [D("0.01"), D("0.00")]
    assert split(D("100000.01"), [D("0.5"), D("0.5")]) == [D("50000.01"), D("50000.00")]


def test_split_of_many_parts_gives_each_within_a_cent_of_its_exact_value():
    parts = split(D("0.10"), [D("0.34"), D("0.33"), D("0.33")])
    assert parts == [D("0.04"), D("0.03"), D("0.03")]


@pytest.mark.parametrize(("total", "shares", "error"), [
    (D("100.00"), [D("0.6"), D("0.5")], ValueError),
    (D("100.00"), [D("0.6")], ValueError),
    (D("100.00"), [], ValueError),
    (D("100.00"), [D("1.2"), D("-0.2")], ValueError),
    (D("-100.00"), [D("1")], ValueError),
    (D("100.001"), [D("1")], ValueError),
    (100.0, [D("1")], TypeError),
    (D("100.00"), [0.6, 0.4], TypeError),
])
def test_split_refuses_bad_totals_and_shares(total, shares, error):
    with pytest.raises(error):
        split(total, shares)


amounts = st.decimals(min_value=D("0.00"), max_value=D("100000000.00"), places=2)


@st.composite
def share_lists(draw):
    """Between one and six shares with up to four decimals that add up to exactly 1."""
    n = draw(st.integers(min_value=1, max_value=6))
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=10000), min_size=n - 1, max_size=n - 1)))
    bounds = [0, *cuts, 10000]
    return [D(b - a) / 10000 for a, b in zip(bounds, bounds[1:], strict=False)]


@given(total=amounts, shares=share_lists())
def test_split_parts_always_add_up_exactly_to_the_whole(total, shares):
    parts = split(total, shares)
    assert sum(parts) == total
    assert len(parts) == len(shares)
    for part, share in zip(parts, shares, strict=True):
        assert part >= 0
        assert part.as_tuple().exponent == -2
        assert abs(part - total * share) < D("0.01")


@given(total=amounts, winner=st.decimals(min_value=D("0.50"), max_value=D("1.00"), places=2))
def test_split_in_two_matches_half_up_rounding_of_each_part_except_on_an_exact_tie(total, winner):
    first, second = split(total, [winner, 1 - winner])
    exact_first = total * winner
    if (exact_first * 100) % 1 != D("0.5"):
        assert first == round_cents(exact_first)
        assert second == round_cents(total * (1 - winner))
    else:
        assert first == round_cents(exact_first)
        assert first + second == total
