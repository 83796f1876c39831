"""Gambit's rounding policy, written once: every amount is a `Decimal` in whole euro cents.

* A single amount computed from a share (5% of a prize fund) is rounded to the cent, half up
  (`round_cents`, `share_of`): 0.005 becomes 0.01.
* A whole cut into parts (a prize fund split 60/40, a prize fund paid in instalments) is cut by `split`,
  whose parts always add up to the whole, to the cent: no cent is created or lost. Each part is first
  rounded down to the cent; the cents left over go one each to the parts with the largest fraction of a
  cent cut off, so every part is within one cent of its exact value. For two parts this is the same as
  rounding each part half up, except when both parts end in exactly half a cent: then the *first* part
  gets the cent. Callers list the part that should get it first: the winner of a match, the earlier
  instalment (FIDE receives the odd cent sooner rather than later).

  Example: €200,000.01 split 60/40 gives €120,000.01 and €80,000.00 (the first part had 0.6 of a cent
  cut off, the second 0.4). €0.01 split 50/50 gives €0.01 and €0.00.

Binary floats are refused everywhere (`TypeError`): 0.1 + 0.2 is not 0.3, and money must add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext

CENT = Decimal("0.01")
ROUNDING = ROUND_HALF_UP
# Enough digits for any amount times any share of the regulations without the context rounding silently.
_PRECISION = 64


def _decimal(value, name: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise TypeError(f"{name} must be a Decimal (or an int), got {type(value).__name__} {value!r}")
    d = Decimal(value)
    if not d.is_finite():
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return d


def round_cents(x: Decimal | int) -> Decimal:
    """`x` rounded to the cent, half up: round_cents(Decimal("0.005")) == Decimal("0.01").

    Raises TypeError for a float or a non-number, ValueError for an infinite or NaN Decimal.
    """
    d = _decimal(x, "amount")
    with localcontext(prec=_PRECISION):
        return d.quantize(CENT, rounding=ROUNDING)


def as_amount(value: Decimal | int, name: str = "amount") -> Decimal:
    """An amount of money as given by a caller, checked and written with two decimals.

    Raises TypeError for a float or a non-number; ValueError when it is negative, not finite, or has a
    fraction of a cent (an amount is never rounded silently on the way in).
    """
    d = _decimal(value, name)
    if d < 0:
        raise ValueError(f"{name} cannot be negative, got {d}")
    with localcontext(prec=_PRECISION):
        q = d.quantize(CENT, rounding=ROUNDING)
    if q != d:
        raise ValueError(f"{name} must be in whole cents, got {d}")
    return q


def share_of(amount: Decimal | int, share: Decimal) -> Decimal:
    """`share` of `amount`, rounded to the cent half up (5% of €200,000.10 is €10,000.01).

    Raises TypeError for a float, ValueError for a negative or sub-cent amount or a share outside 0..1.
    """
    total = as_amount(amount)
    s = _share(share, "share")
    with localcontext(prec=_PRECISION):
        return round_cents(total * s)


def _share(value, name: str) -> Decimal:
    d = _decimal(value, name)
    if not (0 <= d <= 1):
        raise ValueError(f"{name} must lie between 0 and 1, got {d}")
    return d


def split(total: Decimal | int, shares: Sequence[Decimal]) -> list[Decimal]:
    """Cut `total` into parts proportional to `shares`, in the same order, adding up exactly to `total`.

    The shares must add up to exactly 1. See the module docstring for who gets a left-over cent: the
    parts with the largest fraction of a cent cut off, the earlier part on a tie.

    Raises TypeError for a float; ValueError when `total` is negative or has a fraction of a cent, when
    there are no shares, a share lies outside 0..1, or the shares do not add up to 1.
    """
    whole = as_amount(total, "total")
    parts = [_share(s, f"shares[{i}]") for i, s in enumerate(shares)]
    if not parts:
        raise ValueError("split needs at least one share")
    with localcontext(prec=_PRECISION):
        if sum(parts, Decimal(0)) != 1:
            raise ValueError(f"the shares must add up to 1, they add up to {sum(parts, Decimal(0))}")
        cents = int(whole / CENT)
        exact = [cents * s for s in parts]
        floors = [int(e.to_integral_value(rounding=ROUND_FLOOR)) for e in exact]
        left_over = cents - sum(floors)
        # Largest fraction first; on a tie the earlier part (sorted() is stable).
        order = sorted(range(len(parts)), key=lambda i: exact[i] - floors[i], reverse=True)
        for i in order[:left_over]:
            floors[i] += 1
        return [(Decimal(c) * CENT).quantize(CENT) for c in floors]
