"""Money and date formatting (Babel). Amounts are Decimal everywhere; this module only shows them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from babel.dates import format_date as _format_date
from babel.numbers import format_currency, format_decimal

LOCALE = "en_GB"
CENTS = Decimal("0.01")


def format_eur(amount: Decimal | int | str | None, *, currency: str = "EUR") -> str:
    """€200,000.00 for Decimal("200000"); "" for None. Raises ValueError for a non-number."""
    if amount is None or amount == "":
        return ""
    try:
        value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    except InvalidOperation:
        raise ValueError(f"not an amount: {amount!r}") from None
    return _currency(value, currency)


# Babel's formatting is the slowest part of a page full of amounts and dates; the same value always gives the
# same text, so it is kept (equal Decimals print alike: two decimals always).
@lru_cache(maxsize=4096)
def _currency(value: Decimal, currency: str) -> str:
    return format_currency(value, currency, locale=LOCALE, format="¤#,##0.00", currency_digits=False)


# Kept like the amounts: the call's few shares are written into every bid's obligations and compliance report.
@lru_cache(maxsize=1024)
def format_share(share: Decimal) -> str:
    """20% for Decimal("0.20"), 5.5% for Decimal("0.055")."""
    pct = (share * 100).normalize()
    return f"{format_decimal(pct, locale=LOCALE)}%"


def format_day(value: date | datetime | None, fmt: str = "d MMMM y") -> str:
    """30 June 2015."""
    if value is None:
        return ""
    return _day(value, fmt)


@lru_cache(maxsize=4096)
def _day(value: date | datetime, fmt: str) -> str:
    return _format_date(value, format=fmt, locale=LOCALE)


def format_count(n: int) -> str:
    """4,110 for 4110: a whole number as people read it (Babel, the app's locale)."""
    return format_decimal(n, locale=LOCALE)


def format_instant(value: datetime) -> str:
    """30 June 2015 at 14:05 UTC: an instant as the pages show one (instants are kept in UTC). Raises nothing."""
    # An instant read in another zone is still named as UTC, so it is shown in UTC rather than mislabelled.
    value = value.astimezone(UTC) if value.tzinfo is not None else value
    return f"{format_day(value)} at {value:%H:%M} UTC"


def format_since(value: datetime, now: datetime) -> str:
    """How long before `now` an instant was, in words: "just now", "5 minutes ago", "3 hours ago", "2 days ago"
    (the exact instant goes beside it, in a <time> element). Raises nothing."""
    seconds = max(0, int((now - value).total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "just now"


def amount_str(amount: Decimal) -> str:
    """The JSON form of an amount: a string with two decimals ("40000.00"), never a float."""
    return str(Decimal(amount).quantize(CENTS))
