from datetime import date
from decimal import Decimal

import pytest

from core.money import amount_str, format_day, format_eur, format_share


@pytest.mark.parametrize("amount, shown", [
    (Decimal("200000"), "€200,000.00"),
    (Decimal("199999.99"), "€199,999.99"),
    (Decimal("0.5"), "€0.50"),
    ("40000.00", "€40,000.00"),
    (None, ""),
])
def test_euros_are_shown_with_two_decimals_and_grouping(amount, shown):
    assert format_eur(amount) == shown


def test_format_eur_refuses_a_non_number():
    with pytest.raises(ValueError, match="not an amount"):
        format_eur("lots")


def test_shares_and_days():
    assert format_share(Decimal("0.20")) == "20%"
    assert format_share(Decimal("0.055")) == "5.5%"
    assert format_day(date(2015, 6, 30)) == "30 June 2015"


def test_amounts_travel_as_strings_with_two_decimals():
    assert amount_str(Decimal("40000")) == "40000.00"
    assert amount_str(Decimal("0.1")) == "0.10"
