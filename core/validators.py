"""The validators every package shares: one-line text, country codes, e-mail addresses, amounts in euros, YYYY-MM-DD
days.

Pure functions of what a person or a file gave; no domain here. A predicate answers True or False; a parser
returns the value or raises ValueError with a sentence for the person, so a form, a file import and a query
string refuse the same text alike. Where callers word a refusal their own way, the error's class says which
problem it is (`NotADateError`, `NoSuchDayError`) and limits and examples are parameters.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import TypeGuard

from babel import Locale
from email_validator import EmailNotValidError, validate_email

from core.money import CENTS, format_day

# --------------------------------------------------------------------------------------------- one line

# Unicode's own line and paragraph separators break a line as \r and \n do, though they are not control characters.
_LINE_SEPARATORS = frozenset("\u2028\u2029")
QUOTED_MAX_CHARS = 80  # what a refusal quotes of a long entry


def breaks_the_line(char: str) -> bool:
    """Whether `char` has no place in a one-line text (a name, a title): a control character (Unicode category Cc:
    \r, \n, tab, escape, NUL, ...) or a line or paragraph separator (U+2028, U+2029). Raises nothing."""
    return unicodedata.category(char) == "Cc" or char in _LINE_SEPARATORS


def shown_typed(value: str) -> str:
    """`value` as a refusal quotes it: each character that breaks the line written as its escape (\r, \n, \t,
    \x1b, \u2028), so the quote shows what was typed on one line; cut at QUOTED_MAX_CHARS. Raises nothing."""
    named = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}
    out = "".join(named.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                  if breaks_the_line(c) else c for c in value)
    return out if len(out) <= QUOTED_MAX_CHARS else out[:QUOTED_MAX_CHARS] + "…"


def one_line_problem(value: object, *, what: str = "") -> str | None:
    """Why `value` cannot be a one-line text (a name, a title, any single-line field), or None when it can; the
    sentence starts with `what` ("Name") when given, for a refusal read away from its field (the command line).
    A line break in a name would otherwise reach the header or the body of a message (a "Bcc:" line) and every
    document that prints it. Raises nothing."""
    if not isinstance(value, str) or not any(breaks_the_line(c) for c in value):
        return None
    write = f"{what}: write it" if what else "Write this"
    return f"{write} on one line, without line breaks or control characters (you entered “{shown_typed(value)}”)."


# ---------------------------------------------------------------------------------------------- countries

# Two-letter CLDR territories that are groupings or pseudo-regions, not countries.
_NOT_COUNTRIES = frozenset({"EU", "EZ", "QO", "UN", "XA", "XB", "ZZ"})
_TERRITORIES = Locale.parse("en").territories
_COUNTRIES = frozenset(k for k in _TERRITORIES
                       if isinstance(k, str) and len(k) == 2 and k.isalpha() and k not in _NOT_COUNTRIES)


def is_country_code(value: object) -> TypeGuard[str]:
    """An ISO 3166-1 alpha-2 country code in capitals ("UA"). Raises nothing."""
    return isinstance(value, str) and value in _COUNTRIES


def country_name(code: str) -> str:
    """"Ukraine" for "UA"; the code itself if it is unknown. Raises nothing."""
    return _TERRITORIES.get(code, code) if is_country_code(code) else code


# ------------------------------------------------------------------------------------------------ e-mail

EMAIL_MAX_CHARS = 254  # the longest address SMTP carries (RFC 5321 path, less the brackets)


def is_email(value: object, *, max_chars: int = EMAIL_MAX_CHARS) -> bool:
    """A syntactically valid e-mail address of at most `max_chars` characters (no DNS look-up). Raises nothing."""
    if not isinstance(value, str) or not value.strip() or len(value) > max_chars:
        return False
    return _valid_syntax(value.strip())


# Every compliance check of a bid (the bid's page, each draft on the list) asks again about the same few addresses;
# the answer depends on the text alone.
@lru_cache(maxsize=4096)
def _valid_syntax(address: str) -> bool:
    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


# ----------------------------------------------------------------------------------------------- amounts

AMOUNT_MAX_INTEGER_DIGITS = 12  # money is stored as Numeric(14, 2)
_PLAIN_AMOUNT = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def parse_amount(text: str, *, max_integer_digits: int = AMOUNT_MAX_INTEGER_DIGITS,
                 example: str = "200000.00") -> Decimal:
    """Read an amount in euros as a person types it: digits, then at most two decimals after a point.

    Returns the amount with two decimals (Decimal("200000.00") for "200000"). Raises ValueError with a
    sentence for the person (which quotes `example`): thousand separators and commas are refused (a comma could
    be a decimal comma), as are negative numbers, NaN, infinities, exponents, more than `max_integer_digits`
    digits before the point, and anything that is not a string.
    """
    for_example = f"for example {example}"
    if not isinstance(text, str):
        raise ValueError(f"Enter the amount in euros as text, {for_example}.")
    s = text.strip()
    if not s:
        raise ValueError(f"Enter the amount in euros, {for_example}.")
    if _PLAIN_AMOUNT.fullmatch(s):
        whole, _, cents = s.partition(".")
        if len(cents) > 2:
            raise ValueError(f"Enter at most two decimals, whole cents, {for_example} (you entered '{s}').")
        if len(whole.lstrip("0")) > max_integer_digits:
            raise ValueError(f"The amount is too large: at most {max_integer_digits} digits before the "
                             f"decimal point (you entered '{s}').")
        return Decimal(s).quantize(CENTS)
    if s.startswith("-") and _PLAIN_AMOUNT.fullmatch(s[1:].strip()):
        raise ValueError(f"The amount cannot be negative (you entered '{s}').")
    if any(c in s for c in ",' \u00a0\u202f") or s.count(".") > 1:
        raise ValueError(
            "Enter the amount in euros as digits only, with at most two decimals after a point, "
            f"{for_example}: do not use thousand separators, and use a point, not a comma, before the "
            f"cents, as a comma could be read either way (you entered '{s}').")
    raise ValueError(
        f"Enter the amount in euros as digits only, with at most two decimals after a point, {for_example} "
        f"(you entered '{s}').")


# -------------------------------------------------------------------------------------------------- days

_DAY_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class NotADateError(ValueError):
    """The value is not written YYYY-MM-DD (ASCII digits, dashes, nothing before or after)."""


class NoSuchDayError(NotADateError):
    """The value is written YYYY-MM-DD but names no day of the calendar ("2015-02-30")."""


def parse_day(value: object) -> date:
    """The day written YYYY-MM-DD in `value`, exactly: no spaces, no other ISO 8601 form ("20151012",
    "2015-W41-1"), no time. Callers strip what people type first where they allow that.

    Raises NotADateError when `value` is not a string of that shape, NoSuchDayError (a NotADateError) when it
    has the shape but no such day exists; each message quotes the value. Callers with their own wording catch
    the class.
    """
    if not isinstance(value, str) or not _DAY_SHAPE.fullmatch(value):
        raise NotADateError(f"{value!r:.80} is not a date written YYYY-MM-DD")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise NoSuchDayError(f"{value!r} is not a real date") from None


def parse_as_of(raw: str | None, today: date) -> date:
    """The `as_of` day of a page or an API call (the day a tracker is read as of): `today` when absent or blank.
    Raises ValueError with a sentence for the person when it is not a date written YYYY-MM-DD."""
    if raw is None or raw.strip() == "":
        return today
    text = raw.strip()
    try:
        return parse_day(text)
    except NotADateError:
        raise ValueError(f"as_of must be a date written YYYY-MM-DD, for example 2015-06-30 (you gave "
                         f"'{text[:40]}').") from None


def implausible_day(day: date, *, what: str, earliest: date, earliest_is: str, today: date, days_ahead: int
                    ) -> str | None:
    """Gambit's sanity check of a day given for a record (a payment, a deduction, a signature): not before
    `earliest` (the call existed; `earliest_is` says what that day is), and not more than `days_ahead` days after
    `today` (the SANE_DATE_DAYS_AHEAD setting). Not a rule of the regulations, so the sentence says it is a sanity
    check and cites no article. Returns the refusal, quoting the day as entered, or None. Raises nothing."""
    if day < earliest:
        return (f"Sanity check: {what} cannot be {format_day(day)} (you entered {day.isoformat()}): that is before "
                f"{earliest_is} ({format_day(earliest)}). Check the date.")
    if day > today + timedelta(days=days_ahead):
        return (f"Sanity check: {what} cannot be {format_day(day)} (you entered {day.isoformat()}): that is more "
                f"than {days_ahead} days after today ({format_day(today)}). Check the date.")
    return None
