"""Art. 15.5 as arithmetic: scorecard checks, the prize-fund reference score, per-criterion statistics, the
weighted total, the ranking and its red flags.

Pure functions on plain data (no Flask, no database). The input of the ranking is the submitted scorecards
of the unconflicted WCOC members, ``{bid_id: {member_id: {criterion_key: Decimal score}}}``, and a weights
version ``{criterion_key: Decimal}`` (relative weights; `default_weights` reads them from the regulation).
Every threshold, scale, anchor and weight comes from ``reg.scoring`` and ``reg.criteria``.

Arithmetic and rounding, stated once:

* Scores and weights are `Decimal`. Means, medians, variances, totals and contributions are computed exactly:
  a score is an integer count of the scale's smallest decimal and a weight an integer of its own, so each is a
  ratio of integers, compared over common denominators and returned as `fractions.Fraction` where a result keeps
  its exact value. "Tied" means tied exactly, and every comparison with a threshold (red flags, disagreement,
  ranking) is made on the exact value, never on a rounded one.
* What is displayed is a `Decimal` with two decimals (`DISPLAY_PLACES`), rounded half up (half away from
  zero, as `decimal.ROUND_HALF_UP`): means, medians, minimum, maximum, range, standard deviation, totals,
  contributions, weight percentages.
* A bid's contributions are allocated by largest remainder so that the displayed contributions add up
  exactly to the displayed total; the weight percentages are allocated the same way to add up to 100.00.
* The standard deviation is the population one (divide by n): the members who scored a bid are the whole
  panel, not a sample of it, and one member gives 0. It never exceeds half the range, so with the 2015
  thresholds (range 2, standard deviation 1) the standard-deviation test only fires together with the range
  test; it matters for data whose `disagreement_stdev` is below half its `disagreement_range`.
* The prize-fund reference score is a score the scale can take: the straight line's value rounded to the
  nearest step of the scale (half up), so the members are never shown a score they could not give. The line's
  value itself is kept beside it, to two decimals, and shown as what it is.
"""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Literal, TypeGuard, cast

from core.money import format_instant
from events.lifecycle import EventStatus
from events.regulation import Criterion, Regulation, Scoring

DISPLAY_PLACES = 2

BidId = Hashable
MemberId = Hashable
Scorecard = Mapping[str, "Decimal | int | None"]
Scorecards = Mapping[BidId, Mapping[MemberId, Scorecard]]
Weights = Mapping[str, "Decimal | int"]
Statistic = Literal["mean", "median"]
STATISTICS: tuple[str, ...] = ("mean", "median")


# --------------------------------------------------------------------------------------------- helpers


def round_half_up(value: Fraction | Decimal | int, places: int = DISPLAY_PLACES) -> Decimal:
    """`value` rounded half away from zero to `places` decimals, exactly (no binary float). Raises nothing."""
    if isinstance(value, Decimal):
        q = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        return q.copy_abs() if q.is_zero() else q  # never "-0.00"
    f = value if isinstance(value, Fraction) else Fraction(value)
    num, den = abs(f.numerator) * 10**places, f.denominator
    units = (2 * num + den) // (2 * den)  # floor(|x| * 10^places + 1/2) in integers
    return Decimal(-units if f < 0 else units).scaleb(-places)


@functools.lru_cache(maxsize=64)
def _exact(value: Decimal) -> Fraction:
    """A threshold of the regulation as an exact Fraction, converted once."""
    return Fraction(value)


def _num(value: Decimal | int) -> str:
    """5, 0.5, 2.5: a score or threshold as people write it (no trailing zeros, no exponent)."""
    return f"{Decimal(value).normalize():f}"


def _jsonable_id(value: Hashable) -> str | int:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else str(value)


def _dec(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _scale_text(sc: Scoring) -> str:
    return f"from {_num(sc.scale_min)} to {_num(sc.scale_max)} in steps of {_num(sc.step)}"


def _anchor_label(sc: Scoring, score: Decimal) -> str | None:
    for anchor in sc.anchors:
        if anchor.score == score:
            return anchor.label
    return None


def _is_number(value: object) -> TypeGuard[Decimal | int]:
    return isinstance(value, Decimal | int) and not isinstance(value, bool)


def on_scale(reg: Regulation, score: Decimal | int) -> bool:
    """True when `score` is a finite number on the scale of Art. 15.5 (scale_min..scale_max in steps of
    `step`). Raises TypeError when `score` is not a Decimal or an int."""
    if not _is_number(score):
        raise TypeError(f"a score is a Decimal or an int, got {score!r}")
    d = Decimal(score)
    sc = reg.scoring
    return d.is_finite() and sc.scale_min <= d <= sc.scale_max and (d - sc.scale_min) % sc.step == 0


def _allocate(exact: Sequence[Fraction], target_units: int, places: int = DISPLAY_PLACES) -> list[Decimal]:
    """Round each exact value to `places` decimals so that the rounded values add up to `target_units`
    (largest remainder; ties go to the earlier item). The target must lie between the sum of the floors and
    the sum of the ceilings, which holds when it is the rounded sum of the exact values."""
    scale = 10**places
    scaled = [x * scale for x in exact]
    floors = [math.floor(x) for x in scaled]
    need = target_units - sum(floors)
    order = sorted((i for i, x in enumerate(scaled) if x != floors[i]), key=lambda i: (floors[i] - scaled[i], i))
    if not 0 <= need <= len(order):
        raise ValueError(f"cannot allocate {target_units} units over {exact}")  # a bug, not bad input
    for i in order[:need]:
        floors[i] += 1
    return [Decimal(u).scaleb(-places) for u in floors]


# ----------------------------------------------------------------------------------------- the weights


@dataclass(frozen=True)
class WeightShare:
    """One criterion's weight in a weights version: as given (relative) and as a share of the whole."""

    key: str
    label: str
    article: str
    weight: Decimal
    percent: Decimal  # two decimals; the percentages of a version add up to exactly 100.00

    def as_dict(self) -> dict:
        return {"key": self.key, "label": self.label, "article": self.article,
                "weight": str(self.weight), "percent": str(self.percent)}


def default_weights(reg: Regulation) -> dict[str, Decimal]:
    """The published weights of Art. 15.5 a-j, ``{criterion_key: weight}``, in the regulation's order."""
    return {c.key: c.weight for c in reg.criteria}


def check_weights(reg: Regulation, weights: Weights | None) -> tuple[Decimal, ...]:
    """The weights in the order of ``reg.criteria`` (the published ones when `weights` is None).

    Raises ValueError when a criterion is missing or unknown, a weight is negative or not finite, or the
    weights add up to zero; TypeError when a weight is not a Decimal or an int.
    """
    if weights is None:
        return tuple(c.weight for c in reg.criteria)
    keys = [c.key for c in reg.criteria]
    unknown = sorted(set(weights) - set(keys))
    missing = [k for k in keys if k not in weights]
    if unknown:
        raise ValueError(f"{reg.citation('weights')}: no criterion {', '.join(map(repr, unknown))} in this call")
    if missing:
        raise ValueError(f"{reg.citation('weights')}: no weight for {', '.join(map(repr, missing))}")
    out = []
    for k in keys:
        w = weights[k]
        if not _is_number(w):
            raise TypeError(f"the weight of ({k}) is a Decimal or an int, got {w!r}")
        w = Decimal(w)
        if not w.is_finite() or w < 0:
            raise ValueError(f"the weight of ({k}) must be a number of at least 0, got {w}")
        out.append(w)
    if sum(out) <= 0:
        raise ValueError("the weights add up to zero")
    return tuple(out)


def normalised_weights(weights: Sequence[Decimal]) -> tuple[Fraction, ...]:
    """The weights as exact shares of their sum (they add up to exactly 1). Raises ZeroDivisionError when
    they add up to zero (`check_weights` refuses that first)."""
    fr = [Fraction(w) for w in weights]
    total = sum(fr)
    return tuple(w / total for w in fr)


def weight_shares(reg: Regulation, weights: Weights | None = None) -> tuple[WeightShare, ...]:
    """Each criterion's weight and its percentage of the total (adding up to 100.00). Raises as
    `check_weights`."""
    ws = check_weights(reg, weights)
    norm = normalised_weights(ws)
    pct = _allocate([w * 100 for w in norm], 100 * 10**DISPLAY_PLACES)
    return tuple(WeightShare(c.key, c.label, c.article, w, p) for c, w, p in zip(reg.criteria, ws, pct, strict=True))


# ------------------------------------------------------------------------------------ scorecard checks


def score_problems(reg: Regulation, scores: Mapping[str, Decimal | int | None], comments: Mapping[str, str | None],
                   *, final: bool) -> dict[str, str]:
    """What is wrong with one member's scorecard for one bid, ``{criterion_key: message}`` (empty when fine).

    Always: a score lies on the scale of Art. 15.5 (scale_min..scale_max in steps of `step`); a key that is
    not a criterion of the call is reported under that key. When `final` (the member submits): every
    criterion has a score, and a score listed in `comment_required_for` has a non-blank comment. A draft is
    saved without the last two checks. Messages cite the evaluation method, the criterion's article and the
    anchor's label, e.g. "Bidding procedure: evaluation method (criterion 15.5(c)): a score of 5 (Excellent)
    needs a comment saying why."

    Raises TypeError when a score is neither None, a Decimal nor an int (a form gives Decimals).
    """
    sc = reg.scoring
    # The scale, the comments and the need for every score are the bidding procedure's evaluation method;
    # Art. 15.5 names the criteria only (cited beside it).
    method = reg.citation("evaluation_method")
    problems: dict[str, str] = {}
    keys = {c.key for c in reg.criteria}
    for key in scores:
        if key not in keys:
            problems[key] = f"{method}: there is no criterion ({key}) in this call."
    for c in reg.criteria:
        art = f"{method} (criterion {c.article})"
        value = scores.get(c.key)
        if value is None:
            if final:
                problems[c.key] = f"{art}: a score is needed before the scorecard is submitted."
            continue
        if not on_scale(reg, value):
            problems[c.key] = f"{art}: a score runs {_scale_text(sc)} (you entered {value})."
            continue
        d = Decimal(value)
        if final and d in sc.comment_required_for and not (comments.get(c.key) or "").strip():
            label = _anchor_label(sc, d)
            named = f"{_num(d)} ({label})" if label else _num(d)
            problems[c.key] = f"{art}: a score of {named} needs a comment saying why."
    return problems


# ------------------------------------------------------------------------------- prize-fund reference


def _prize_fund_line(reg: Regulation, prize_fund: Decimal | int) -> Fraction:
    if not _is_number(prize_fund):
        raise TypeError(f"a prize fund is a Decimal or an int, got {prize_fund!r}")
    if not Decimal(prize_fund).is_finite():
        raise ValueError(f"a prize fund is a finite amount, got {prize_fund}")
    sc, pf = reg.scoring, reg.prize_fund
    low, high = Fraction(sc.prize_fund_reference_at_minimum), Fraction(sc.scale_max)
    slope = (high - low) / (Fraction(pf.target) - Fraction(pf.minimum))
    ref = low + (Fraction(prize_fund) - Fraction(pf.minimum)) * slope
    return min(max(ref, Fraction(sc.scale_min)), Fraction(sc.scale_max))


def nearest_on_scale(reg: Regulation, value: Fraction | Decimal | int) -> Decimal:
    """The score of the scale nearest to `value` (a tie goes up), clamped to scale_min..scale_max: a value the
    members can give. Raises nothing for a finite number."""
    sc = reg.scoring
    lo, step = Fraction(sc.scale_min), Fraction(sc.step)
    steps = (Fraction(value) - lo) / step
    n = (2 * steps.numerator + steps.denominator) // (2 * steps.denominator)  # floor(steps + 1/2)
    score = min(max(lo + n * step, lo), Fraction(sc.scale_max))
    return Decimal(score.numerator) / Decimal(score.denominator)


def prize_fund_line_value(reg: Regulation, prize_fund: Decimal | int) -> Decimal:
    """The straight line's value for a bid's prize fund, two decimals, half up: `prize_fund_reference_at_minimum`
    at the call's minimum prize fund, `scale_max` at `prize_fund.target`, clamped to scale_min..scale_max (below
    the minimum it keeps falling and stops at scale_min; above the target it stays at scale_max). Not a score the
    scale need take (2.75 on a scale in steps of 0.5). Raises TypeError for a non-number and ValueError for a
    non-finite one."""
    return round_half_up(_prize_fund_line(reg, prize_fund))


def prize_fund_reference(reg: Regulation, prize_fund: Decimal | int) -> Decimal:
    """The reference score for the prize-fund criterion of a bid's prize fund: the line's value
    (`prize_fund_line_value`, taken exactly) at the nearest score on the scale, a tie going up. Raises as
    `prize_fund_line_value`."""
    return nearest_on_scale(reg, _prize_fund_line(reg, prize_fund))


@dataclass(frozen=True)
class PrizeFundHint:
    """The scorecard's hint for the criterion scored on the prize fund: the bid's prize fund, the reference score
    (on the scale) and the line's value it was rounded from."""

    criterion: str
    prize_fund: Decimal
    score: Decimal
    line_value: Decimal

    @property
    def rounded(self) -> bool:
        """True when the line's value is not itself a score of the scale."""
        return self.line_value != self.score

    def text(self, reg: Regulation, prize_fund_text: str) -> str:
        """"Reference score from the prize fund of €250,000.00: 3 (the straight line from …)": the hint as
        shown, the prize fund written by the caller (`prize_fund_text`, a formatted amount). Raises nothing."""
        sc = reg.scoring
        how = (f"{_num(self.line_value)} on the straight line from {_num(sc.prize_fund_reference_at_minimum)} at the "
               f"minimum prize fund to {_num(sc.scale_max)} at the target, rounded to the nearest step of "
               f"{_num(sc.step)} on the scale" if self.rounded else
               f"on the straight line from {_num(sc.prize_fund_reference_at_minimum)} at the minimum prize fund "
               f"to {_num(sc.scale_max)} at the target")
        return (f"Reference score from the prize fund of {prize_fund_text}: {_num(self.score)} ({how}) — a "
                f"suggestion only; the score is yours.")


def prize_fund_hint(reg: Regulation, criterion: str, prize_fund: str | None) -> PrizeFundHint | None:
    """The scorecard's hint for `criterion` (the one scored on the prize fund), or None when the bid states no
    prize fund or the call has no such criterion. Raises decimal.InvalidOperation for a prize fund that is not a
    number."""
    if not prize_fund or not any(c.key == criterion for c in reg.criteria):
        return None
    amount = Decimal(prize_fund)
    return PrizeFundHint(criterion, amount, prize_fund_reference(reg, amount), prize_fund_line_value(reg, amount))


# ------------------------------------------------------------------------------ per-criterion statistics


@dataclass(frozen=True)
class CriterionStats:
    """The members' scores of one bid on one criterion.

    Displayed values have two decimals (None when nobody scored it). `stdev` is the population standard
    deviation. `disagreement` is set when range >= `disagreement_range` or stdev > `disagreement_stdev`, and
    `disagreement_reason` says which, in a sentence citing the article. `contribution` is filled in by the
    ranking: this criterion's share of the bid's displayed total (weight share x score used).
    """

    key: str
    label: str
    article: str
    count: int
    mean: Decimal | None
    median: Decimal | None
    minimum: Decimal | None
    maximum: Decimal | None
    range: Decimal | None
    stdev: Decimal | None
    disagreement: bool
    disagreement_reason: str
    contribution: Decimal | None = None
    mean_exact: Fraction | None = field(default=None, repr=False)
    median_exact: Fraction | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {"key": self.key, "label": self.label, "article": self.article, "count": self.count,
                "mean": _dec(self.mean), "median": _dec(self.median), "min": _dec(self.minimum),
                "max": _dec(self.maximum), "range": _dec(self.range), "stdev": _dec(self.stdev),
                "disagreement": self.disagreement, "disagreement_reason": self.disagreement_reason,
                "contribution": _dec(self.contribution)}


class _StatsRule:
    """The disagreement thresholds of one regulation, ready for integer comparisons (`_unit_stats`), and the
    scores of its scale as they are shown and written, made once per ranking instead of once per cell."""

    def __init__(self, reg: Regulation, places: int):
        sc = reg.scoring
        self.places, self.scale = places, 10**places
        self.range = sc.disagreement_range
        self.range_text, self.stdev_text = _num(sc.disagreement_range), _num(sc.disagreement_stdev)
        threshold = Fraction(sc.disagreement_stdev)
        self.stdev_num2, self.stdev_den2 = threshold.numerator ** 2, threshold.denominator ** 2
        self.stdev_negative = threshold < 0
        self.method = reg.citation("evaluation_method")
        self._units: dict[int, tuple[Decimal, Decimal, str]] = {}
        self._ratios: dict[tuple[int, int], tuple[Fraction, Decimal]] = {}

    def ratio(self, num: int, den: int) -> tuple[Fraction, Decimal]:
        """num / den (den > 0) exactly and rounded half up for display; many cells share a mean or a median."""
        got = self._ratios.get((num, den))
        if got is None:
            got = self._ratios[num, den] = (Fraction(num, den), _half_up_ratio(num, den))
        return got

    def units(self, u: int) -> tuple[Decimal, Decimal, str]:
        """u units of the scale as a Decimal, rounded half up for display, and as people write it."""
        got = self._units.get(u)
        if got is None:
            d = Decimal(u).scaleb(-self.places)
            got = self._units[u] = (d, round_half_up(d), _num(d))
        return got


def _unit_stats(rule: _StatsRule, c: Criterion, ordered: Sequence[int], total: int,
                contribution: Decimal | None = None) -> CriterionStats:
    """The statistics of one cell (one bid, one criterion): mean, median, min, max, range, population standard
    deviation and count, with the disagreement flag of Art. 15.5, from the cell's scores as integer units of
    10 ** -rule.places (`ordered`: increasing; `total`: their sum), without a Decimal or Fraction operation per
    score. tests/scoring/reference_stats.py computes the same from the definitions, in Decimals and Fractions, and
    the tests compare the two."""
    n = len(ordered)
    if n == 0:
        return CriterionStats(c.key, c.label, c.article, 0, None, None, None, None, None, None, False, "",
                              contribution)
    scale = rule.scale
    squares = sum([u * u for u in ordered])
    mid = n // 2
    med_num, med_den = (ordered[mid], scale) if n % 2 else (ordered[mid - 1] + ordered[mid], 2 * scale)
    lo, lo_shown, lo_text = rule.units(ordered[0])
    hi, hi_shown, hi_text = rule.units(ordered[-1])
    spread, spread_shown, spread_text = rule.units(ordered[-1] - ordered[0])
    # variance = (n * squares - total^2) / (n^2 * scale^2); the stdev shown is sqrt of it, rounded half up
    var_num, var_den = n * squares - total * total, n * n * scale * scale
    stdev = Decimal((math.isqrt(4 * var_num * 10 ** (2 * DISPLAY_PLACES) // var_den) + 1) // 2).scaleb(
        -DISPLAY_PLACES)
    reasons = []
    if spread >= rule.range:
        reasons.append(f"the scores run from {lo_text} to {hi_text}, a range of {spread_text} "
                       f"(flagged from {rule.range_text})")
    if var_num * rule.stdev_den2 > rule.stdev_num2 * var_den or rule.stdev_negative:
        reasons.append(f"the standard deviation is {stdev}, above {rule.stdev_text}")
    reason = (f"{rule.method} (criterion {c.article}): members disagree: {'; '.join(reasons)}." if reasons else "")
    mean_exact, mean = rule.ratio(total, n * scale)
    median_exact, median = rule.ratio(med_num, med_den)
    return CriterionStats(c.key, c.label, c.article, n, mean, median, lo_shown, hi_shown, spread_shown, stdev,
                          bool(reasons), reason, contribution, mean_exact=mean_exact, median_exact=median_exact)


# ------------------------------------------------------------------------------------- the score table


def _checked_score(reg: Regulation, s: object, where: str) -> Decimal:
    if not _is_number(s):
        raise TypeError(f"{where}: a score is a Decimal or an int, got {s!r}")
    if not on_scale(reg, s):
        raise ValueError(f"{reg.citation('evaluation_method')}: {where}: a score runs {_scale_text(reg.scoring)}, "
                         f"got {s}")
    return Decimal(s)


def _exponent(value: Decimal) -> int:
    # A finite Decimal's exponent is an int (only NaN and infinities have a letter), and scales and weights are finite.
    return cast(int, value.as_tuple().exponent)


@functools.lru_cache(maxsize=16)
def _scale_units(scale_min: Decimal, scale_max: Decimal, step: Decimal) -> tuple[int, dict[Decimal, int]]:
    """The places of the smallest decimal of the scale, and every score on the scale mapped to its count of
    that unit (10 ** -places)."""
    places = max(0, -min(_exponent(step), _exponent(scale_min), _exponent(scale_max)))
    units: dict[Decimal, int] = {}
    value = scale_min
    while value <= scale_max:
        units[value] = int(value.scaleb(places))
        value += step
    return places, units


def _half_up_ratio(num: int, den: int, places: int = DISPLAY_PLACES) -> Decimal:
    """num / den (den > 0) rounded half away from zero to `places` decimals: `round_half_up` on integers."""
    units = (2 * abs(num) * 10**places + den) // (2 * den)
    return Decimal(-units if num < 0 else units).scaleb(-places)


@dataclass(frozen=True)
class ScoreTable:
    """The validated scorecards, criterion by criterion; shared by the ranking and the sensitivity analysis.

    `cells[b][k]` maps each member who scored bid `b` on criterion `k` to the score as an integer count of
    `unit` (10 ** -`places`, the smallest decimal of the scale), so sums, means, medians and leave-one-out
    values are exact integer arithmetic; `sums[b][k]` is that cell's (sum, count) of units.
    """

    keys: tuple[str, ...]
    bids: tuple[BidId, ...]
    members: Mapping[BidId, tuple[MemberId, ...]]
    cells: Mapping[BidId, tuple[Mapping[MemberId, int], ...]]
    places: int
    sums: Mapping[BidId, tuple[tuple[int, int], ...]] = field(repr=False)

    @property
    def unit(self) -> Decimal:
        return Decimal(1).scaleb(-self.places)

    @functools.cached_property
    def ordered(self) -> Mapping[BidId, tuple[list[int], ...]]:
        """Each cell's units in increasing order (medians, minimum, maximum)."""
        return {b: tuple(sorted(cell.values()) for cell in cells) for b, cells in self.cells.items()}

    @functools.cached_property
    def all_members(self) -> tuple[MemberId, ...]:
        """Every member who has a scorecard for some bid, in order of first appearance."""
        seen: dict[MemberId, None] = {}
        for b in self.bids:
            for m in self.members[b]:
                seen.setdefault(m, None)
        return tuple(seen)


def score_table(reg: Regulation, scorecards: Scorecards | ScoreTable) -> ScoreTable:
    """Validate ``{bid_id: {member_id: {criterion_key: score}}}`` (a None score is not counted). A ScoreTable is
    returned as it is: the ranking and its sensitivity, given the table once made (scoring.queries), share it.

    Raises ValueError for an unknown criterion or a score off the scale, TypeError for a score that is not a
    Decimal or an int; both name the bid, the member and the criterion.
    """
    if isinstance(scorecards, ScoreTable):
        return scorecards
    sc = reg.scoring
    keys = tuple(c.key for c in reg.criteria)
    index = {k: i for i, k in enumerate(keys)}
    places, on_scale_units = _scale_units(sc.scale_min, sc.scale_max, sc.step)
    members: dict[BidId, tuple[MemberId, ...]] = {}
    cells: dict[BidId, tuple[dict[MemberId, int], ...]] = {}
    sums: dict[BidId, tuple[tuple[int, int], ...]] = {}
    for bid, cards in scorecards.items():
        per_key: tuple[dict[MemberId, int], ...] = tuple({} for _ in keys)
        for member, card in cards.items():
            for key, s in card.items():
                i = index.get(key)
                if i is None:
                    raise ValueError(f"{reg.citation('evaluation_method')}: bid {bid!r}, member {member!r}, "
                                     f"criterion ({key}): there is no such criterion in this call")
                if s is None:
                    continue
                u = on_scale_units.get(s) if isinstance(s, Decimal) and s.is_finite() else None
                if u is None:  # the slow path only for what is not a plain score on the scale
                    u = on_scale_units[_checked_score(reg, s, f"bid {bid!r}, member {member!r}, criterion ({key})")]
                per_key[i][member] = u
        members[bid] = tuple(cards)
        cells[bid] = per_key
        sums[bid] = tuple((sum(cell.values()), len(cell)) for cell in per_key)
    return ScoreTable(keys, tuple(scorecards), members, cells, places, sums)


def _integer_weights(weights: Sequence[Decimal]) -> tuple[int, ...]:
    places = max(0, -min(_exponent(w) for w in weights))
    return tuple(int(w.scaleb(places)) for w in weights)


def _cell_value(units: Mapping[MemberId, int], ordered: Sequence[int], total: tuple[int, int], statistic: str,
                skip: MemberId | None = None) -> tuple[int, int] | None:
    """The score used for one criterion as an exact ratio (numerator, denominator) in table units; `ordered`
    holds the cell's units in increasing order."""
    left_out = skip is not None and skip in units
    if statistic == "mean":
        s, n = total
        if left_out:
            s, n = s - units[skip], n - 1
        return (s, n) if n else None
    vals: Sequence[int] = ordered
    if left_out:
        vals = list(ordered)
        vals.remove(units[skip])
    n = len(vals)
    if n == 0:
        return None
    mid = n // 2
    return (vals[mid], 1) if n % 2 else (vals[mid - 1] + vals[mid], 2)


def _exact_totals(table: ScoreTable, wint: Sequence[int], statistic: str = "mean",
                  skip_member: MemberId | None = None) -> dict[BidId, tuple[int, int] | None]:
    """Each bid's weighted total as an exact ratio (numerator, denominator) of integers, on the scale (see
    `bid_totals`); the denominator is positive."""
    wsum = sum(wint)
    scale = 10**table.places
    out: dict[BidId, tuple[int, int] | None] = {}
    for b in table.bids:
        members = table.members[b]
        if not members or (skip_member is not None and len(members) == 1 and members[0] == skip_member):
            out[b] = None
            continue
        pairs: list[tuple[int, tuple[int, int]]] = []
        plain = statistic == "mean" and skip_member is None
        for w, units, ordered, total in zip(wint, table.cells[b], table.ordered[b], table.sums[b], strict=True):
            if w == 0:
                continue
            value = (total if total[1] else None) if plain else _cell_value(units, ordered, total, statistic,
                                                                             skip_member)
            if value is None:  # a criterion that counts has no score: no total
                out[b] = None
                break
            pairs.append((w, value))
        else:
            lcm = math.lcm(*(den for _, (_, den) in pairs))
            out[b] = (sum(w * a * (lcm // den) for w, (a, den) in pairs), lcm * wsum * scale)
    return out


def _comparable(totals: Mapping[BidId, tuple[int, int] | None]) -> dict[BidId, int | None]:
    """Exact totals given as (numerator, positive denominator) brought over one common denominator: integers
    that compare (and tie) exactly as the totals do. Raises nothing."""
    dens = [t[1] for t in totals.values() if t is not None]
    common = math.lcm(*dens) if dens else 1
    return {b: None if t is None else t[0] * (common // t[1]) for b, t in totals.items()}


def bid_totals(table: ScoreTable, weights: Sequence[Decimal], statistic: str = "mean", *,
               skip_member: MemberId | None = None) -> dict[BidId, Fraction | None]:
    """Each bid's exact weighted total on the scale: sum of w_k * s_k over sum of w_k, s_k the mean (or
    median) of the members' scores on criterion k. None when the bid has no scorecard, or a criterion of
    positive weight has no score. `skip_member` recomputes without that member's scores (leave one out).

    Exact: scores are integers of `table.unit` and weights integers of their smallest decimal, so each total
    is one integer fraction. Raises ValueError for an unknown statistic.
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic is one of {', '.join(STATISTICS)}, got {statistic!r}")
    totals = _exact_totals(table, _integer_weights(weights), statistic, skip_member)
    return {b: None if t is None else Fraction(*t) for b, t in totals.items()}


def leaders_of(totals: Mapping[BidId, Fraction | int | None]) -> tuple[BidId, ...]:
    """The bids with the highest total (several when tied; none when no bid has a total)."""
    scored = [t for t in totals.values() if t is not None]
    if not scored:
        return ()
    best = max(scored)
    return tuple(b for b, t in totals.items() if t == best)


def competition_ranks(totals: Mapping[BidId, Fraction | int | None]) -> dict[BidId, int | None]:
    """Standard competition ranking ("1224"): one plus the number of bids with a strictly higher total;
    equal totals share a rank. None for a bid without a total."""
    first: dict[Fraction | int, int] = {}
    for i, t in enumerate(sorted((t for t in totals.values() if t is not None), reverse=True)):
        first.setdefault(t, i + 1)
    return {b: None if t is None else first[t] for b, t in totals.items()}


# ------------------------------------------------------------------------------------------ red flags


@dataclass(frozen=True)
class RedFlag:
    """A low score shown to the Board beside the bid. It never excludes a bid.

    `code` is "criterion_below_threshold" or "total_below_threshold"; `criterion` is the key (None for the
    total); `value` is the displayed score, `threshold` the regulation's.
    """

    code: str
    article: str
    criterion: str | None
    value: Decimal
    threshold: Decimal
    message: str
    # "Bidding procedure: red flags (criterion 15.5(b))": red flags are the procedure's, not an article's.
    source: str = ""

    def as_text(self) -> str:
        return f"{self.source or 'Art. ' + self.article}: {self.message}"

    def as_dict(self) -> dict:
        return {"code": self.code, "article": self.article, "source": self.source, "criterion": self.criterion,
                "value": str(self.value),
                "threshold": str(self.threshold), "message": self.message, "text": self.as_text()}


_NOT_EXCLUSION = "Shown to the Board; it does not exclude the bid."


def red_flags(reg: Regulation, criteria: Sequence[CriterionStats], total_exact: Fraction | None,
              statistic: str = "mean") -> tuple[RedFlag, ...]:
    """The red flags of one bid: each criterion of `red_flag_criteria` whose mean (or median, when the
    ranking uses medians) lies strictly below `red_flag_threshold`, then a total strictly below
    `overall_threshold`. Compared on exact values. Raises nothing."""
    sc = reg.scoring
    flags = []
    for cs in criteria:
        if cs.key not in sc.red_flag_criteria:
            continue
        exact = cs.mean_exact if statistic == "mean" else cs.median_exact
        if exact is None or exact >= _exact(sc.red_flag_threshold):
            continue
        shown = cs.mean if statistic == "mean" else cs.median
        assert shown is not None  # a statistic with an exact value shows it
        label = _anchor_label(sc, sc.red_flag_threshold)
        named = f"{_num(sc.red_flag_threshold)} ({label})" if label else _num(sc.red_flag_threshold)
        flags.append(RedFlag(
            "criterion_below_threshold", cs.article, cs.key, shown, sc.red_flag_threshold,
            f"the {statistic} score for {cs.label.lower()} is {shown}, below {named}. {_NOT_EXCLUSION}",
            f"{reg.citation('red_flags')} (criterion {cs.article})"))
    if total_exact is not None and total_exact < _exact(sc.overall_threshold):
        shown = round_half_up(total_exact)
        flags.append(RedFlag(
            "total_below_threshold", "", None, shown, sc.overall_threshold,
            f"the weighted total is {shown}, below {_num(sc.overall_threshold)}. {_NOT_EXCLUSION}",
            str(reg.citation("red_flags"))))
    return tuple(flags)


# ---------------------------------------------------------------------------------------- the ranking


@dataclass(frozen=True)
class BidResult:
    """One bid in the ranking.

    `rank` follows standard competition ranking (tied bids share a number, the next one skips: 1, 1, 3) and
    `rank_label` shows a tie as "1="; a bid without a total has rank None, label "unranked", and `note` says
    why it is listed last. `total` is displayed to two decimals; `total_exact` is what the ranking compares.
    `criteria` is one `CriterionStats` per criterion in the regulation's order, with its contribution.
    """

    bid_id: BidId
    rank: int | None
    rank_label: str
    tied: bool
    scorecards: int
    total: Decimal | None
    criteria: tuple[CriterionStats, ...]
    red_flags: tuple[RedFlag, ...]
    note: str
    total_exact: Fraction | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {"bid_id": _jsonable_id(self.bid_id), "rank": self.rank, "rank_label": self.rank_label,
                "tied": self.tied, "scorecards": self.scorecards, "total": _dec(self.total), "note": self.note,
                "criteria": [c.as_dict() for c in self.criteria],
                "red_flags": [f.as_dict() for f in self.red_flags]}


# A statement about how far the members agree compares scores: it needs at least two members' scorecards. A lead
# that changes needs a rival: at least two bids with a total in the ranking in force. Gambit's reading of the
# ranking, not a rule of the regulations.
MIN_SCORECARDS_FOR_AGREEMENT = 2
MIN_BIDS_FOR_A_LEAD = 2


def agreement_sentence(result: BidResult, due: int) -> str | None:
    """What the ranking page says of the members' agreement on one bid, or None when it says nothing here: the
    criteria the members disagree on are listed instead, or the bid has no total.

    With fewer than MIN_SCORECARDS_FOR_AGREEMENT counted scorecards nothing can be said of agreement
    ("Only 1 of 2 members has scored this bid: agreement cannot be judged yet."); `due` is how many members are to
    score the bid (those not recused). Raises nothing."""
    if any(c.disagreement for c in result.criteria):
        return None
    n = result.scorecards
    if n < MIN_SCORECARDS_FOR_AGREEMENT:
        if due < MIN_SCORECARDS_FOR_AGREEMENT:
            return (f"Only {due} member {'is' if due == 1 else 'are'} due to score this bid: agreement cannot be "
                    f"judged.")
        if n == 0:
            return f"None of the {due} members has scored this bid: agreement cannot be judged yet."
        return f"Only {n} of {due} members has scored this bid: agreement cannot be judged yet."
    if result.total is None:
        return None
    return (f"The {n} members who scored this bid broadly agree on every criterion (no disagreement flagged)."
            if n < due else "The members broadly agree on every criterion (no disagreement flagged).")


def lead_can_change(bids_with_a_total: int) -> bool:
    """True when a variation of the ranking can change the lead: at least MIN_BIDS_FOR_A_LEAD bids have a total
    in the ranking in force (with one there is no rival to take the lead). Raises nothing."""
    return bids_with_a_total >= MIN_BIDS_FOR_A_LEAD


@dataclass(frozen=True)
class Ranking:
    """The ranking of the bids on the weighted total of Art. 15.5 under one weights version.

    `bids` are in ranking order: by exact total, highest first; tied bids keep the order in which they were
    given (pass them sorted by name); bids without a total come last, in the order given. `leaders` are the
    bids ranked first (several when tied, none when no bid has a total). `notes` are sentences on the whole
    ranking (a page of it gives its own bids', `notes_about`): unranked bids, and bids that show the same two-decimal
    total but are not tied.
    """

    statistic: str
    weights: tuple[WeightShare, ...]
    bids: tuple[BidResult, ...]
    leaders: tuple[BidId, ...]
    notes: tuple[str, ...]

    @property
    def leader(self) -> BidId | None:
        """The single leader, or None when no bid has a total or first place is tied."""
        return self.leaders[0] if len(self.leaders) == 1 else None

    def bid(self, bid_id: BidId) -> BidResult:
        """The result of one bid; raises KeyError for a bid that is not in the ranking."""
        for b in self.bids:
            if b.bid_id == bid_id:
                return b
        raise KeyError(bid_id)

    def notes_about(self, bid_ids: Collection[BidId], names: Mapping[BidId, str]) -> list[str]:
        """The notes on the bids `bid_ids` alone (one page of the ranking): each pair that shows the same total but
        is not tied with one of them in it, and those of them without a total; `names` as rank_bids takes them.
        The notes of a ranking on one page are its `notes`. Raises nothing."""
        return _ranking_notes(self.bids, names, about=frozenset(bid_ids))

    def as_dict(self) -> dict:
        return {"statistic": self.statistic,
                "rounding": f"half up to {DISPLAY_PLACES} decimals; contributions add up to the total; "
                            "ranks compare exact totals",
                "weights": [w.as_dict() for w in self.weights],
                "leaders": [_jsonable_id(b) for b in self.leaders],
                "bids": [b.as_dict() for b in self.bids], "notes": list(self.notes)}


def _distinguishing(a: Fraction, b: Fraction) -> tuple[Decimal, Decimal]:
    """The two values with just enough decimals to tell them apart (a != b)."""
    places = DISPLAY_PLACES + 1
    while round_half_up(a, places) == round_half_up(b, places) and places < 40:
        places += 1
    return round_half_up(a, places), round_half_up(b, places)


def rank_bids(reg: Regulation, scorecards: Scorecards | ScoreTable, weights: Weights | None = None, *,
              statistic: Statistic = "mean", names: Mapping[BidId, str] | None = None) -> Ranking:
    """Aggregate the scorecards, total each bid and rank them (Art. 15.5).

    `scorecards` is ``{bid_id: {member_id: {criterion_key: score}}}`` for every bid to rank (a bid with no
    scorecard maps to ``{}``), or their `score_table`; `weights` a weights version (the published weights when
    None); `statistic` the per-criterion score used in the total, "mean" (in force) or "median" (a sensitivity
    variation);
    `names` the words used for bids in `notes` (their ids otherwise).

    Raises ValueError for an unknown criterion, a score off the scale, bad weights or an unknown statistic;
    TypeError for a score or weight that is not a Decimal or an int.
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic is one of {', '.join(STATISTICS)}, got {statistic!r}")
    ws = check_weights(reg, weights)
    shares = weight_shares(reg, dict(zip((c.key for c in reg.criteria), ws, strict=True)))
    table = score_table(reg, scorecards)
    wint = _integer_weights(ws)
    exact = _exact_totals(table, wint, statistic)
    keys = _comparable(exact)  # integers that order and tie exactly as the totals
    totals = {b: None if t is None else Fraction(*t) for b, t in exact.items()}
    ranks = competition_ranks(keys)
    leaders = leaders_of(keys)
    counts = collections.Counter(k for k in keys.values() if k is not None)
    rule = _StatsRule(reg, table.places)

    results: dict[BidId, BidResult] = {}
    for b in table.bids:
        ordered, sums = table.ordered[b], table.sums[b]
        total = totals[b]
        if total is None:
            results[b] = _unranked_result(reg, table, ws, rule, b)
            continue
        exact_total = cast(tuple[int, int], exact[b])  # a bid listed as ranked has a total
        floors, target = _contribution_units(wint, ordered, sums, statistic, exact_total, rule.scale)
        stats = [_unit_stats(rule, c, vals, s, None if w == 0 else Decimal(f).scaleb(-DISPLAY_PLACES))
                 for c, w, vals, (s, _), f in zip(reg.criteria, wint, ordered, sums, floors, strict=True)]
        shown = Decimal(target).scaleb(-DISPLAY_PLACES)
        tied = counts[cast(int, keys[b])] > 1
        rank = ranks[b]
        results[b] = BidResult(
            b, rank, f"{rank}=" if tied else str(rank), tied, len(table.members[b]), shown, tuple(stats),
            red_flags(reg, stats, total, statistic), "", total_exact=total)

    order = sorted(table.bids, key=lambda b: (keys[b] is None, -(keys[b] or 0)))
    notes = _ranking_notes([results[b] for b in order], names or {})
    return Ranking(statistic, shares, tuple(results[b] for b in order), leaders, tuple(notes))


def _unranked_result(reg: Regulation, table: ScoreTable, ws: Sequence[Decimal], rule: _StatsRule,
                     b: BidId) -> BidResult:
    """The result of a bid without a total: unranked, with a note saying whether no scorecard was submitted or
    which weighted criteria nobody has scored yet."""
    ordered, sums = table.ordered[b], table.sums[b]
    stats = [_unit_stats(rule, c, vals, s) for c, vals, (s, _) in zip(reg.criteria, ordered, sums, strict=True)]
    if not table.members[b]:
        note = "No scorecard submitted yet: no total, listed after the ranked bids."
    else:
        missing = [c for c, w, s in zip(reg.criteria, ws, stats, strict=True) if w > 0 and s.count == 0]
        unscored = ", ".join(f"{c.article} {c.label.lower()}" for c in missing)
        note = f"No score yet for {unscored}: no total, listed after the ranked bids."
    return BidResult(b, None, "unranked", False, len(table.members[b]), None, tuple(stats), (), note)


def _contribution_units(wint: Sequence[int], ordered: Sequence[list[int]], sums: Sequence[tuple[int, int]],
                        statistic: str, exact_total: tuple[int, int], scale: int) -> tuple[list[int], int]:
    """Each criterion's contribution to a bid's total and the total, in units of 10 ** -DISPLAY_PLACES.

    Contributions w_k * s_k / sum(w) over the total's own denominator, allocated by largest remainder
    (`_allocate`, in integers): their two-decimal values add up to the two-decimal total. `exact_total` is the
    bid's (numerator, denominator); `scale` the rule's scale (_StatsRule.scale)."""
    scale_units = 10**DISPLAY_PLACES
    num, den = exact_total
    lcm = den // (sum(wint) * scale)
    scaled = []
    for w, vals, (s, n) in zip(wint, ordered, sums, strict=True):
        if w == 0:
            scaled.append(0)
            continue
        if statistic == "mean":
            a, d = s, n
        else:
            mid = n // 2
            a, d = (vals[mid], 1) if n % 2 else (vals[mid - 1] + vals[mid], 2)
        scaled.append(scale_units * w * a * (lcm // d))
    floors = [x // den for x in scaled]
    shown_units = (2 * abs(num) * scale_units + den) // (2 * den)
    target = -shown_units if num < 0 else shown_units
    need = target - sum(floors)
    by_remainder = sorted((i for i, x in enumerate(scaled) if x % den), key=lambda i: (-(scaled[i] % den), i))
    if not 0 <= need <= len(by_remainder):
        raise ValueError(f"cannot allocate {target} units over {scaled} / {den}")  # a bug, not bad input
    for i in by_remainder[:need]:
        floors[i] += 1
    return floors, target


def _ranking_notes(in_order: Sequence[BidResult], names: Mapping[BidId, str],
                   about: frozenset[BidId] | None = None) -> list[str]:
    """The ranking's notes on its results in ranking order: bids that show the same two-decimal total but are not
    tied, then the bids without a total (named by `names`, their ids otherwise); with `about`, only the notes that
    name one of those bids."""

    def name(b: BidId) -> str:
        return names.get(b, str(b))

    def concerned(*results: BidResult) -> bool:
        return about is None or any(r.bid_id in about for r in results)

    notes = []
    ranked = [r for r in in_order if r.total_exact is not None]
    for x, y in zip(ranked, ranked[1:], strict=False):
        if x.total == y.total and x.total_exact != y.total_exact and concerned(x, y):
            assert x.total_exact is not None and y.total_exact is not None  # ranked: both have a total
            ex, ey = _distinguishing(x.total_exact, y.total_exact)
            notes.append(f"{name(x.bid_id)} and {name(y.bid_id)} both show {x.total} but are not tied: the ranking "
                         f"compares exact totals ({ex} and {ey}).")
    unranked = [name(r.bid_id) for r in in_order if r.total_exact is None and concerned(r)]
    if unranked:
        notes.append(f"Without a total, listed last and unranked: {', '.join(unranked)}.")
    return notes


# ------------------------------------------------------------------------ who scores what, and when
#
# When the weights may change, which bids are scored, and who is recused: pure predicates that the services
# and the pages share, so that a page never decides a rule of its own (a scorecard's own states and moves are
# scoring.lifecycle).


def weights_change_needs_reason(status: EventStatus) -> bool:
    """Before scoring opens (the call open or closed) the weights may change freely; from then on a change
    needs a written reason, so that a ranking can always be traced to weights published beforehand."""
    return not status.before_scoring


def weights_may_change(status: EventStatus) -> bool:
    """No change of weights once the decision is recorded."""
    return not status.is_decided


def admission_open(status: EventStatus) -> bool:
    """A bid that failed the compliance gate may be admitted to scoring until scoring closes."""
    return not status.scoring_over


def passes_gate(*, compliant: bool | None, admitted: bool) -> bool:
    """The compliance gate of the call's bidding procedure (procedure.rules.scoring_admission): the bid's last
    submitted version is compliant, or the secretariat admitted it anyway with a recorded reason."""
    return bool(compliant) or admitted


def is_scored(*, in_contest: bool, compliant: bool | None, admitted: bool) -> bool:
    """Scorecards are filled in for a bid still in the contest that passes the gate (`passes_gate`)."""
    return in_contest and passes_gate(compliant=compliant, admitted=admitted)


def conflicted_by_federation(member_federation: str | None, host_federation: str | None) -> bool:
    """A member of the host federation is conflicted on that bid, whatever they declared."""
    return bool(member_federation) and bool(host_federation) and member_federation == host_federation


# Gambit's rule for independent scoring (not an article of the regulations): each WCOC member scores every bid
# before reading anyone else's scores, and recusal is decided before, never after, reading them.
INDEPENDENCE = "Gambit's rule for independent scoring"


def declaration_change_refused(*, first_shown_at: datetime | None, before: Mapping[int, bool],
                               after: Mapping[int, bool], titles: Mapping[int, str]) -> str | None:
    """Why a member may not change their declaration of conflicts, or None.

    `before` and `after` map each bid the old declaration covered to whether it named a conflict with it, as
    stored and as asked. Once the member was first shown other members' scores (`first_shown_at`), a conflict
    can be neither added nor withdrawn on a bid the old declaration covered: recusal is decided before reading
    the scores, never after. A bid listed for the first time may still be declared either way. Raises nothing.
    """
    if first_shown_at is None:
        return None
    changed = sorted(b for b in before if before[b] != after.get(b, False))
    if not changed:
        return None
    names = ", ".join(titles.get(b, f"bid {b}") for b in changed)
    return (f"{INDEPENDENCE}: you were shown the other members' scores on "
            f"{format_instant(first_shown_at)}, so your declaration of conflicts of interest can no "
            f"longer change (you asked to change it for {names}). Ask the secretariat if it is wrong.")


def declaration_gate_message(*, has_declaration: bool) -> str:
    """What a WCOC member is told when a page showing a bid sends them to declare their conflicts first."""
    if not has_declaration:
        return "Before you see any bid, declare your conflicts of interest for this call."
    return "A bid was added since your declaration: confirm your declaration again before you see any bid."
