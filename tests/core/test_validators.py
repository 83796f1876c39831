"""The shared validators of core/validators.py: one reader of YYYY-MM-DD days, amounts, countries, e-mail."""

from datetime import date
from decimal import Decimal

import pytest

from core.validators import (
    NoSuchDayError,
    NotADateError,
    country_name,
    is_country_code,
    is_email,
    parse_amount,
    parse_day,
)


def test_parse_day_reads_a_day_written_yyyy_mm_dd():
    assert parse_day("2015-10-13") == date(2015, 10, 13)


@pytest.mark.parametrize("value", ["20151013", "2015-W41-1", "2015-10-13T00:00", " 2015-10-13", "13/10/2015",
                                   "2015-1-3", "２０１５-10-13", "", None, 20151013])
def test_parse_day_refuses_every_other_shape(value):
    with pytest.raises(NotADateError, match="is not a date written YYYY-MM-DD") as exc:
        parse_day(value)
    assert not isinstance(exc.value, NoSuchDayError)


@pytest.mark.parametrize("value", ["2015-02-30", "2015-13-01", "2015-00-10"])
def test_parse_day_tells_a_day_that_does_not_exist_apart(value):
    with pytest.raises(NoSuchDayError, match=f"'{value}' is not a real date"):
        parse_day(value)


def test_parse_day_quotes_a_long_value_shortly():
    with pytest.raises(NotADateError) as exc:
        parse_day("x" * 500)
    assert len(str(exc.value)) < 120


def test_parse_amount_limits_and_example_are_parameters():
    assert parse_amount("95") == Decimal("95.00")
    with pytest.raises(ValueError, match="at most 3 digits"):
        parse_amount("1000", max_integer_digits=3)
    with pytest.raises(ValueError, match="for example 95.00"):
        parse_amount("", example="95.00")
    with pytest.raises(ValueError, match="as text"):
        parse_amount(95.0)  # a float is never read as an amount


def test_country_codes_are_iso_alpha_2_countries_not_groupings():
    assert is_country_code("UA") and country_name("UA") == "Ukraine"
    assert not is_country_code("EU") and not is_country_code("ua") and not is_country_code(None)
    assert country_name("ZZ") == "ZZ"


def test_is_email_checks_the_syntax_and_the_length():
    assert is_email("name@example.org")
    assert not is_email("name@") and not is_email("  ") and not is_email(None)
    assert not is_email("a@example.org", max_chars=5)
