"""The per-criterion statistics of Art. 15.5 from their definitions, in Decimals and Fractions: the reference the
tests hold scoring.rules' integer arithmetic (`_unit_stats`, inside `rank_bids`) to. Test code, not the product's:
the ranking never calls it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction

from events.regulation import Criterion, Regulation
from scoring.rules import DISPLAY_PLACES, CriterionStats, MemberId, _checked_score, _num, round_half_up


def _sqrt_half_up(value: Fraction, places: int = DISPLAY_PLACES) -> Decimal:
    """sqrt(value) rounded half up to `places` decimals, exactly: u = floor(sqrt(v) + 1/2) with
    v = value * 100^places equals (floor(2 sqrt(v)) + 1) // 2, and floor(2 sqrt(v)) = isqrt(floor(4v))."""
    v = value * 10 ** (2 * places)
    units = (math.isqrt(math.floor(4 * v)) + 1) // 2
    return Decimal(units).scaleb(-places)


def _stats(reg: Regulation, c: Criterion, values: Sequence[Decimal]) -> CriterionStats:
    sc = reg.scoring
    n = len(values)
    if n == 0:
        return CriterionStats(c.key, c.label, c.article, 0, None, None, None, None, None, None, False, "")
    ordered = sorted(values)
    total = sum(ordered, Decimal(0))
    squares = sum((v * v for v in ordered), Decimal(0))
    mean = Fraction(total) / n
    mid = n // 2
    median = Fraction(ordered[mid]) if n % 2 else Fraction(ordered[mid - 1] + ordered[mid]) / 2
    variance = Fraction(n * squares - total * total) / (n * n)
    lo, hi = ordered[0], ordered[-1]
    spread = hi - lo
    stdev = _sqrt_half_up(variance)
    reasons = []
    if spread >= sc.disagreement_range:
        reasons.append(f"the scores run from {_num(lo)} to {_num(hi)}, a range of {_num(spread)} "
                       f"(flagged from {_num(sc.disagreement_range)})")
    threshold = Fraction(sc.disagreement_stdev)
    if variance > threshold * threshold or threshold < 0:
        reasons.append(f"the standard deviation is {stdev}, above {_num(sc.disagreement_stdev)}")
    reason = (f"{reg.citation('evaluation_method')} (criterion {c.article}): members disagree: "
              f"{'; '.join(reasons)}." if reasons else "")
    return CriterionStats(
        c.key, c.label, c.article, n, round_half_up(mean), round_half_up(median), round_half_up(lo),
        round_half_up(hi), round_half_up(spread), stdev, bool(reasons), reason,
        mean_exact=mean, median_exact=median)


def criterion_stats(reg: Regulation, key: str, scores: Mapping[MemberId, Decimal | int | None]) -> CriterionStats:
    """Mean, median, min, max, range, population standard deviation and count of the members' scores of one
    bid on criterion `key` (a None score is not counted), with the disagreement flag of Art. 15.5.

    Raises KeyError for an unknown criterion, ValueError for a score off the scale, TypeError for a score
    that is not a Decimal or an int.
    """
    c = reg.criterion(key)
    values = []
    for member, s in scores.items():
        if s is None:
            continue
        values.append(_checked_score(reg, s, f"member {member!r}, criterion ({key})"))
    return _stats(reg, c, values)
