"""How stable the ranking of Art. 15.5 is: what would have to change for another bid to lead.

Four views of the ranking in force (weighted means under a weights version), each pure:

* `weight_swaps`: for the leader against each other bid and each criterion k, the smallest change of k's
  weight that brings the other bid level with the leader, in closed form (`swap_delta`). Weights are
  normalised to add up to 1; k's weight goes from w_k to w_k + delta and every other weight w_j to
  w_j * (1 - w_k - delta) / (1 - w_k), so the weights still add up to 1 and keep their proportions. The
  difference of the two totals, D(delta) = D(0) + delta * (d_k - (D(0) - w_k d_k) / (1 - w_k)) with
  d_j = leader's score - rival's score on j, is linear in delta; it reaches 0 at delta = -D(0) / slope, kept
  only when the new w_k stays within [0, 1]. Exact (`Fraction`); shown in percentage points of the total.
  The critical swap is the one with the smallest |delta| over all rivals and criteria.
* `dirichlet_first_place_shares`: `dirichlet_samples` weight vectors drawn from
  Dirichlet(concentration x normalised weights) with numpy's `default_rng(dirichlet_seed)`, so the same
  data give the same shares; each bid's share of first places. A sample whose top totals tie (within
  `TIE_TOLERANCE`) gives each tied bid an equal part of that first place, so shares add up to 1.
* `leave_one_out`: the ranking without each member's scorecards in turn, without each criterion of positive
  weight in turn (the others renormalised), and with medians instead of means; which of them change the
  leader.
* `assess_sensitivity`: all of the above and a one-line verdict. The ranking is *robust* when there is a
  single leader, its first-place share is at least `scoring.robust_share` of the regulation (0.90 in 2015), no
  leave-one-out or median variation changes the leader, and no single-criterion weight change smaller than
  `scoring.robust_shift_points` (5 percentage points of the total weight in 2015) lets another bid draw
  level. Otherwise it is *sensitive*, and the verdict names every reason.

Floating point (numpy float64) is used only inside the Dirichlet sampling: a first-place share is a
statistic, not money and not a score. Everything else is exact, as in `scoring.rules`, and in integers: the
leave-one-out totals come from each cell's sum and count less one member's score, the swaps from the closed form
on integer weights and means. The draws depend only on the seed, the weights, the concentration and the number
of samples, so a process makes them once for the weights in force and keeps them.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import cast

import numpy as np

from events.regulation import Regulation
from scoring.rules import (
    BidId,
    MemberId,
    Scorecards,
    ScoreTable,
    Weights,
    _comparable,
    _exact_totals,
    _half_up_ratio,
    _integer_weights,
    _jsonable_id,
    check_weights,
    lead_can_change,
    leaders_of,
    round_half_up,
    score_table,
    weight_shares,
)

# Two float64 totals on a 0-5 scale closer than this are the same total: rounding of the matrix product
# is about 1e-15, while two different exact totals differ by far more in all but a vanishing share of draws.
TIE_TOLERANCE = 1e-9
SHARE_PLACES = 4
_BLAS_ONE_THREAD = 200_000  # multiply-adds per block of the Dirichlet product (`first_place_shares`)


# ------------------------------------------------------------------------------------------- context


@dataclass(frozen=True)
class _Context:
    """The ranking in force as integers: `means[b][k]` is bid b's mean on criterion k as a count of
    1 / (`mean_den` * 10 ** table.places) (None when nobody scored it), `wint` the weights as integers of their
    smallest decimal, `keys` the totals over one common denominator (they compare and tie exactly as `totals`)."""

    reg: Regulation
    table: ScoreTable
    weights: tuple[Decimal, ...]
    wint: tuple[int, ...]
    totals: dict[BidId, Fraction | None]
    keys: dict[BidId, int | None]
    leaders: tuple[BidId, ...]
    scored: tuple[BidId, ...]  # bids with a total, in ranking order (ties in the order given)
    means: dict[BidId, list[int | None]]
    mean_den: int
    names: Mapping[BidId, str]
    member_names: Mapping[MemberId, str]
    percents: tuple[Decimal, ...]  # the weight percentages as the ranking shows them (adding up to 100.00)
    criteria: tuple[str, ...]  # "(a) Prize fund": how a sentence names each criterion

    def name(self, bid: BidId) -> str:
        return self.names.get(bid, str(bid))

    def member(self, member: MemberId) -> str:
        return self.member_names.get(member, str(member))

    def criterion(self, key: str) -> str:
        return self.criteria[self.table.keys.index(key)]


def _context(reg: Regulation, scorecards: Scorecards | ScoreTable, weights: Weights | None,
             names: Mapping[BidId, str] | None = None,
             member_names: Mapping[MemberId, str] | None = None) -> _Context:
    ws = check_weights(reg, weights)
    table = score_table(reg, scorecards)
    wint = _integer_weights(ws)
    exact = _exact_totals(table, wint)
    keys = _comparable(exact)
    totals = {b: None if t is None else Fraction(*t) for b, t in exact.items()}
    scored = tuple(sorted((b for b in table.bids if keys[b] is not None), key=lambda b: -(keys[b] or 0)))
    mean_den = math.lcm(*(n for sums in table.sums.values() for _, n in sums if n))
    means = {b: [s * (mean_den // n) if n else None for s, n in sums] for b, sums in table.sums.items()}
    percents = tuple(w.percent for w in weight_shares(reg, dict(zip((c.key for c in reg.criteria), ws, strict=True))))
    return _Context(reg, table, ws, wint, totals, keys, leaders_of(keys), scored, means, mean_den, names or {},
                    member_names or {}, percents, tuple(f"({c.key}) {c.label}" for c in reg.criteria))


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _leaders_text(ctx: _Context, leaders: Sequence[BidId], *, still: bool = False) -> str:
    if not leaders:
        return "no bid has a total"
    if len(leaders) == 1:
        return f"{ctx.name(leaders[0])} {'still leads' if still else 'leads'}"
    return f"{_and([ctx.name(b) for b in leaders])} tie for the lead"


# -------------------------------------------------------------------------------------- weight swaps


def swap_delta(weights: Sequence[Fraction | Decimal | int], leader: Sequence[Fraction | Decimal | int],
               rival: Sequence[Fraction | Decimal | int], k: int) -> Fraction | None:
    """The smallest change delta of criterion k's normalised weight that makes the rival's total at least
    the leader's, the other weights rescaled by (1 - w_k - delta) / (1 - w_k) (see the module docstring).

    `weights` are normalised (adding up to exactly 1); `leader` and `rival` the scores used on each
    criterion. Returns 0 when the rival is already level or ahead; None when no change of w_k within [0, 1]
    brings it level (the two totals move in parallel, the crossing lies beyond 0 or 1, or w_k is already 1
    so there is nothing to rescale). Raises ValueError when the weights do not add up to 1 or the lengths
    differ, IndexError for a k out of range.
    """
    w = [Fraction(x) for x in weights]
    if len(w) != len(leader) or len(w) != len(rival):
        raise ValueError("weights, leader and rival need one value per criterion")
    if sum(w) != 1:
        raise ValueError(f"the weights must be normalised to add up to 1, they add up to {sum(w)}")
    d = [Fraction(a) - Fraction(b) for a, b in zip(leader, rival, strict=True)]
    return _deltas(w, d, [k])[0]


def _deltas(w: Sequence[Fraction], d: Sequence[Fraction], ks: Sequence[int]) -> list[Fraction | None]:
    """`swap_delta` for several k at once, with d = leader - rival: the gap is computed once."""
    gap = sum(wj * dj for wj, dj in zip(w, d, strict=True) if wj)
    if gap <= 0:
        return [Fraction(0)] * len(ks)
    out: list[Fraction | None] = []
    for k in ks:
        wk = w[k]
        slope = None if wk == 1 else d[k] - (gap - wk * d[k]) / (1 - wk)
        delta = None if not slope else -gap / slope
        out.append(delta if delta is not None and 0 <= wk + delta <= 1 else None)
    return out


@dataclass(frozen=True)
class WeightSwap:
    """A change of one criterion's weight that brings `rival` level with `leader`.

    `weight_before` and `weight_after` are percentages of the total weight (two decimals), `shift` is their
    difference in percentage points (signed), `delta` the exact change as a share of the total weight.
    `sentence` says it in words.
    """

    leader: BidId
    rival: BidId
    criterion: str
    label: str
    weight_before: Decimal
    weight_after: Decimal
    shift: Decimal
    sentence: str
    delta: Fraction = field(repr=False)

    def as_dict(self) -> dict:
        return {"leader": _jsonable_id(self.leader), "rival": _jsonable_id(self.rival),
                "criterion": self.criterion, "label": self.label, "weight_before": str(self.weight_before),
                "weight_after": str(self.weight_after), "shift": str(self.shift), "sentence": self.sentence}


def _swaps(ctx: _Context) -> tuple[WeightSwap, ...]:
    """`_deltas` for the leader against every rival, in integers. With W the integer weights (sum Ws) and D_k the
    difference of the two means over one common denominator, the gap is G = sum W_k D_k; for k the slope is
    proportional to (D_k Ws - G) / (Ws - W_k), so delta = -G (Ws - W_k) / (Ws (D_k Ws - G)) and the new weight
    w_k + delta = (W_k D_k - G) / (D_k Ws - G): exact, and a Fraction only for each swap kept."""
    if len(ctx.leaders) != 1:
        return ()
    leader = ctx.leaders[0]
    lead = ctx.means[leader]
    wint = ctx.wint
    wsum = sum(wint)
    out: list[tuple[float, int, WeightSwap]] = []
    for rival in ctx.scored:
        if rival == leader:
            continue
        riv = ctx.means[rival]
        # A criterion of weight 0 that one of the two has no score on: raising its weight is undefined.
        usable = [i for i, (a, b) in enumerate(zip(lead, riv, strict=True)) if a is not None and b is not None]
        d = [0] * len(wint)
        for i in usable:
            d[i] = cast(int, lead[i]) - cast(int, riv[i])
        gap = sum(w * x for w, x in zip(wint, d, strict=True))
        if gap <= 0:  # the rival is level or ahead already: no change needed (never for the single leader)
            continue
        for i in usable:
            wk = wint[i]
            slope = d[i] * wsum - gap
            if wk == wsum or slope == 0:  # nothing left to rescale, or the two totals move in parallel
                continue
            new_num, new_den = (wk * d[i] - gap, slope) if slope > 0 else (gap - wk * d[i], -slope)
            if not 0 <= new_num <= new_den:  # the crossing lies beyond a weight of 0 or 1
                continue
            num, den = -gap * (wsum - wk), wsum * slope
            if den < 0:
                num, den = -num, -den
            c = ctx.reg.criteria[i]
            before = ctx.percents[i]
            after = _half_up_ratio(100 * new_num, new_den)
            shift = after - before
            verb, rest = ("raising", "down") if num > 0 else ("lowering", "up")
            sentence = (f"{verb} the weight of {ctx.criteria[i]} from {before}% to {after}% of the total "
                        f"({shift:+} percentage points of the total weight, the other weights scaled {rest} in "
                        f"proportion) brings "
                        f"{ctx.name(rival)} level with {ctx.name(leader)}")
            out.append((abs(num) / den, len(out), WeightSwap(leader, rival, c.key, c.label, before, after, shift,
                                                             sentence, Fraction(num, den))))
    # Smallest |delta| first, ties in the order found. A float is monotonic in the exact value, so distinct floats
    # order as the exact deltas do; only equal floats need the exact comparison.
    if len({key for key, _, _ in out}) == len(out):
        out.sort(key=lambda t: t[0])
    else:
        out.sort(key=lambda t: (t[0], abs(t[2].delta), t[1]))
    return tuple(s for _, _, s in out)


def weight_swaps(reg: Regulation, scorecards: Scorecards, weights: Weights | None = None, *,
                 names: Mapping[BidId, str] | None = None) -> tuple[WeightSwap, ...]:
    """Every single-criterion weight change that brings another bid level with the leader, smallest |delta|
    first (the first is the critical one). Empty when there is no single leader or no such change exists.
    Raises as `scoring.rules.rank_bids`."""
    return _swaps(_context(reg, scorecards, weights, names))


# ---------------------------------------------------------------------------------- Dirichlet shares


def first_place_shares(values: np.ndarray, weights: np.ndarray, *, concentration: float, samples: int,
                       seed: int) -> np.ndarray:
    """Each bid's share of first places over `samples` weight vectors drawn from
    Dirichlet(concentration x weights), vectorised: (samples x criteria) @ (criteria x bids).

    `values` is (criteria x bids), `weights` (criteria,) normalised; a criterion of weight 0 keeps weight 0
    in every draw. Ties within `TIE_TOLERANCE` split the first place evenly. Raises ValueError when no
    weight is positive, the shapes disagree, or samples < 1.
    """
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if values.ndim != 2 or weights.shape != (values.shape[0],):
        raise ValueError(f"values must be (criteria x bids) and weights (criteria,), got {values.shape}, "
                         f"{weights.shape}")
    if samples < 1:
        raise ValueError("at least one sample")
    positive = weights > 0
    if not positive.any():
        raise ValueError("no criterion has a positive weight")
    draws = _dirichlet_draws(seed, float(concentration), tuple(weights[positive].tolist()), samples)
    kept = values[positive]
    bids = kept.shape[1]
    # Fresh arrays of this size cost more than the arithmetic (the pages of every new megabyte are faulted in and
    # zeroed on each call): this thread's buffers are reused instead.
    totals, by_bid, best, firsts = _scratch(samples, bids)
    # The product in blocks small enough that OpenBLAS computes each on one thread (it goes multithreaded above
    # about 2.6e5 multiply-adds, and its threads then wait for busy cores: 10+ ms instead of 0.1); each block's
    # rows are the same dot products, so the totals are the same to the bit.
    rows = max(1, _BLAS_ONE_THREAD // max(1, kept.shape[0] * bids))
    for start in range(0, samples, rows):
        np.matmul(draws[start:start + rows], kept, out=totals[start:start + rows])
    # Bid by bid (one contiguous row per bid) the maxima, the first places and their counts cost a tenth of the
    # same reductions along rows of 20; without a tied sample every first place counts 1, so the counts are the
    # sums below to the bit.
    np.copyto(by_bid, totals.T)
    np.max(by_bid, axis=0, out=best)
    best -= TIE_TOLERANCE
    np.greater_equal(by_bid, best, out=firsts)
    if firsts.sum(axis=0).max() == 1:
        return np.count_nonzero(firsts, axis=1) / samples
    top = totals >= totals.max(axis=1, keepdims=True) - TIE_TOLERANCE
    return (top / top.sum(axis=1, keepdims=True)).sum(axis=0) / samples


_SCRATCH = threading.local()


def _scratch(samples: int, bids: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """This thread's work arrays for `first_place_shares` (totals by sample, totals by bid, each sample's best
    total, first places), made again only when the shape changes. Raises nothing."""
    buffers = getattr(_SCRATCH, "buffers", None)
    if buffers is None or buffers[0].shape != (samples, bids):
        buffers = (np.empty((samples, bids)), np.empty((bids, samples)), np.empty(samples),
                   np.empty((bids, samples), dtype=bool))
        _SCRATCH.buffers = buffers
    return buffers


@functools.lru_cache(maxsize=8)
def _dirichlet_draws(seed: int, concentration: float, weights: tuple[float, ...], samples: int) -> np.ndarray:
    """`samples` draws of Dirichlet(concentration x weights) from `default_rng(seed)`, read-only. They depend on
    nothing else, so the draws for the weights in force are made once per process, not on every ranking."""
    draws = np.random.default_rng(seed).dirichlet(concentration * np.array(weights), size=samples)
    draws.flags.writeable = False
    return draws


@dataclass(frozen=True)
class FirstPlaceShares:
    """How often each bid comes first when the weights are drawn around the published ones.

    `shares` are (bid_id, share) in ranking order for the bids with a total; a share is a fraction of 1 with
    four decimals (half up). Same seed, same data: same shares.
    """

    samples: int
    concentration: Decimal
    seed: int
    shares: tuple[tuple[BidId, Decimal], ...]
    ties: str = "a tied first place is split evenly between the tied bids"

    @property
    def leaders(self) -> tuple[tuple[BidId, Decimal], ...]:
        """(bid_id, share) of the bids whose share is above 0 (to its four decimals), in ranking order: the bids a
        reader is shown; the others (`others`) came first in no sampled weighting, or in too few to show."""
        return tuple((b, s) for b, s in self.shares if s > 0)

    @property
    def others(self) -> int:
        """How many bids with a total have a share of 0 (to its four decimals)."""
        return len(self.shares) - len(self.leaders)

    def share(self, bid_id: BidId) -> Decimal:
        """The share of one bid; 0 for a bid without a total."""
        return dict(self.shares).get(bid_id, Decimal(0).scaleb(-SHARE_PLACES))

    def as_dict(self) -> dict:
        return {"samples": self.samples, "concentration": str(self.concentration), "seed": self.seed,
                "ties": self.ties,
                "shares": [{"bid_id": _jsonable_id(b), "share": str(s)} for b, s in self.shares]}


def _shares(ctx: _Context, samples: int | None, concentration: Decimal | None,
            seed: int | None) -> FirstPlaceShares | None:
    sc = ctx.reg.scoring
    samples = sc.dirichlet_samples if samples is None else samples
    concentration = sc.dirichlet_concentration if concentration is None else Decimal(concentration)
    seed = sc.dirichlet_seed if seed is None else seed
    bids = ctx.scored
    if not bids:
        return None
    # A scored bid has a score on every criterion of positive weight; those of weight 0 never count. Each mean
    # and weight is its exact ratio divided once (correctly rounded, as float() of the Fraction).
    scale = 10**ctx.table.places
    values = np.array([[s / (n * scale) if n else 0.0 for s, n in ctx.table.sums[b]] for b in bids]).T
    wsum = sum(ctx.wint)
    weights = np.array([w / wsum for w in ctx.wint])
    shares = first_place_shares(values, weights, concentration=float(concentration), samples=samples, seed=seed)
    return FirstPlaceShares(samples, concentration, seed, tuple(
        (b, _half_up_ratio(*float(s).as_integer_ratio(), SHARE_PLACES)) for b, s in zip(bids, shares, strict=True)))


def dirichlet_first_place_shares(reg: Regulation, scorecards: Scorecards, weights: Weights | None = None, *,
                                 samples: int | None = None, concentration: Decimal | None = None,
                                 seed: int | None = None) -> FirstPlaceShares | None:
    """Each bid's share of first places under `samples` Dirichlet draws around the weights (parameters from
    ``reg.scoring`` unless given). None when no bid has a total. Raises as `scoring.rules.rank_bids`."""
    return _shares(_context(reg, scorecards, weights), samples, concentration, seed)


# --------------------------------------------------------------------------------------- leave one out


@dataclass(frozen=True)
class Variation:
    """The ranking recomputed with one thing changed: `kind` "member" (without that member's scorecards),
    "criterion" (without that criterion, the other weights renormalised) or "median" (medians instead of
    means); `subject` is the member id or criterion key (None for the median)."""

    kind: str
    subject: MemberId | str | None
    leaders: tuple[BidId, ...]
    changes_leader: bool
    description: str

    def as_dict(self) -> dict:
        return {"kind": self.kind, "subject": None if self.subject is None else _jsonable_id(self.subject),
                "leaders": [_jsonable_id(b) for b in self.leaders], "changes_leader": self.changes_leader,
                "description": self.description}


def _totals_without_each_member(ctx: _Context, den: int,
                                terms: Mapping[BidId, list[int] | None]) -> dict[BidId, dict[MemberId, int | None]]:
    """For each bid with a total, its weighted means without each of its members' scores, over the common
    denominator den * sum(w) * 10 ** places (den a multiple of every count and every count less one); `terms`
    holds each complete bid's weighted means over it (None for a bid without a total: leaving a member out fills
    no cell). One pass over the scores: a member's total is the bid's less, on each cell they scored, the
    difference their score makes to that cell's mean."""
    table, wint = ctx.table, ctx.wint
    out: dict[BidId, dict[MemberId, int | None]] = {}
    for b in table.bids:
        base = terms[b]
        if base is None:
            continue
        full = sum(base)
        members = table.members[b]
        totals: dict[MemberId, int] = dict.fromkeys(members, full)
        alone: set[MemberId] = set()
        for w, cell, (s, n), term in zip(wint, table.cells[b], table.sums[b], base, strict=True):
            if w == 0:
                continue
            if n == 1:  # the only member to score a criterion that counts: without them, no total
                alone.update(cell)
                continue
            f = w * (den // (n - 1))
            for m, u in cell.items():
                totals[m] += f * (s - u) - term
        if len(members) == 1:
            alone.add(members[0])
        out[b] = {m: None if m in alone else t for m, t in totals.items()}
    return out


def _variations(ctx: _Context) -> tuple[Variation, ...]:
    """The leave-one-out and median variations, each total an integer over a denominator common to all bids
    of that variation (only who leads is kept), from the cells' sums and counts: no Fraction, and no pass over
    the members beyond the one left out."""
    base = set(ctx.leaders)
    table, wint = ctx.table, ctx.wint
    out = []
    contested = lead_can_change(len(ctx.scored))

    def add(kind: str, subject, leaders: tuple[BidId, ...], prefix: str) -> None:
        changes = contested and set(leaders) != base
        out.append(Variation(kind, subject, leaders, changes,
                             f"{prefix}, {_leaders_text(ctx, leaders, still=not changes)}"))

    counts = {n for sums in table.sums.values() for _, n in sums if n}
    den = math.lcm(*counts, *(n - 1 for n in counts if n > 1))
    # Each bid's weighted means as integers over `den` (None for a bid without a total in some variation:
    # rebuilt below when a cell of positive weight is empty).
    terms = {b: [w * s * (den // n) if w and n else 0 for w, (s, n) in zip(wint, table.sums[b], strict=True)]
             for b in table.bids}
    complete = {b: bool(table.members[b]) and all(n for w, (_, n) in zip(wint, table.sums[b], strict=True) if w)
                for b in table.bids}
    without = _totals_without_each_member(ctx, den, {b: terms[b] if complete[b] else None for b in table.bids})
    for m in table.all_members:
        keys = {b: None if b not in without else without[b].get(m, sum(terms[b])) for b in table.bids}
        add("member", m, leaders_of(keys), f"without the scorecards of {ctx.member(m)}")
    positive = [i for i, w in enumerate(wint) if w > 0]
    if len(positive) > 1:
        # the criteria of positive weight nobody scored, per bid with a scorecard: without criterion i, a bid has a
        # total when i is the only one
        empty = {b: [k for k, (w, (_, n)) in enumerate(zip(wint, table.sums[b], strict=True)) if w and not n]
                 for b in table.bids if table.members[b]}
        sums = {b: sum(terms[b]) for b in table.bids}
        for i in positive:
            keys = {b: sums[b] - terms[b][i] if b in empty and empty[b] in ([], [i]) else None for b in table.bids}
            key = ctx.reg.criteria[i].key
            add("criterion", key, leaders_of(keys), f"without {ctx.criterion(key)}")
    medians: dict[BidId, int | None] = {}
    for b in table.bids:
        if not complete[b]:
            medians[b] = None
            continue
        total = 0
        for w, vals in zip(wint, table.ordered[b], strict=True):
            if w:
                mid = len(vals) // 2
                total += w * (2 * vals[mid] if len(vals) % 2 else vals[mid - 1] + vals[mid])
        medians[b] = total
    add("median", None, leaders_of(medians), "with medians instead of means")
    return tuple(out)


def leave_one_out(reg: Regulation, scorecards: Scorecards, weights: Weights | None = None, *,
                  names: Mapping[BidId, str] | None = None,
                  member_names: Mapping[MemberId, str] | None = None) -> tuple[Variation, ...]:
    """The ranking without each member in turn, without each criterion of positive weight in turn (when
    there are at least two), and with medians instead of means; each says whether the leader changes
    (a new leader, a tie for the lead, or no leader at all; never when fewer than two bids have a total, as
    `scoring.rules.lead_can_change` says). Raises as `scoring.rules.rank_bids`."""
    return _variations(_context(reg, scorecards, weights, names, member_names))


# ------------------------------------------------------------------------------------------- verdict


@dataclass(frozen=True)
class Sensitivity:
    """How stable the ranking in force is, with a verdict.

    `robust` is True or False by the rule of the module docstring, None when fewer than two bids have a
    total (nothing to compare). `summary` is one line ("robust: ..." or "sensitive: ..."); `reasons` the
    sentences that make it sensitive. `critical` is the smallest weight swap (None when there is none).
    """

    leaders: tuple[BidId, ...]
    robust: bool | None
    summary: str
    reasons: tuple[str, ...]
    critical: WeightSwap | None
    swaps: tuple[WeightSwap, ...]
    first_places: FirstPlaceShares | None
    variations: tuple[Variation, ...]
    robust_share: Decimal
    robust_shift: Decimal

    def as_dict(self) -> dict:
        return {"leaders": [_jsonable_id(b) for b in self.leaders], "robust": self.robust, "summary": self.summary,
                "reasons": list(self.reasons), "critical": self.critical.as_dict() if self.critical else None,
                "swaps": [s.as_dict() for s in self.swaps],
                "first_places": self.first_places.as_dict() if self.first_places else None,
                "variations": [v.as_dict() for v in self.variations],
                "rule": {"robust_share": str(self.robust_share), "robust_shift_points": str(self.robust_shift)}}


def _or(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _grouped_changes(ctx: _Context, variations: Sequence[Variation]) -> list[str]:
    """The variations that change the leader, one sentence per kind and outcome: "without the scorecards
    of m1 or m4, B leads"."""
    groups: dict[tuple[str, tuple[BidId, ...]], list[Variation]] = {}
    for v in variations:
        if v.changes_leader:
            groups.setdefault((v.kind, v.leaders), []).append(v)
    out = []
    for (kind, leaders), vs in groups.items():
        if kind == "member":
            what = f"without the scorecards of {_or([ctx.member(v.subject) for v in vs])}"
        elif kind == "criterion" and len(vs) == 1:
            what = f"without {ctx.criterion(str(vs[0].subject))}"
        elif kind == "criterion":
            what = f"without criterion {_or([f'({v.subject})' for v in vs])}"
        else:
            what = "with medians instead of means"
        out.append(f"{what}, {_leaders_text(ctx, leaders)}")
    return out


def _pct(share: Decimal) -> str:
    return f"{(share * 100).normalize():f}%"


def assess_sensitivity(reg: Regulation, scorecards: Scorecards | ScoreTable, weights: Weights | None = None, *,
                       names: Mapping[BidId, str] | None = None,
                       member_names: Mapping[MemberId, str] | None = None,
                       robust_share: Decimal | None = None,
                       robust_shift: Decimal | None = None) -> Sensitivity:
    """Weight swaps, Dirichlet first-place shares and leave-one-out variations of the ranking in force
    (weighted means), and a one-line verdict naming the leader, the rivals and the criteria concerned.

    `scorecards` as `scoring.rules.rank_bids` takes them (or their score table); `names` and `member_names` give
    the words used for bids and members (their ids otherwise). `robust_share` (a fraction of 1) and `robust_shift`
    (percentage points) are the thresholds of the rule, ``reg.scoring.robust_share`` and
    ``reg.scoring.robust_shift_points`` unless given.
    Raises as `scoring.rules.rank_bids`.
    """
    robust_share = reg.scoring.robust_share if robust_share is None else Decimal(robust_share)
    robust_shift = reg.scoring.robust_shift_points if robust_shift is None else Decimal(robust_shift)
    ctx = _context(reg, scorecards, weights, names, member_names)
    scored = ctx.scored
    shares = _shares(ctx, None, None, None)
    variations = _variations(ctx) if scored else ()
    swaps = _swaps(ctx)
    critical = swaps[0] if swaps else None

    def result(robust, summary, reasons=()):
        return Sensitivity(ctx.leaders, robust, summary, tuple(reasons), critical, swaps, shares, variations,
                           robust_share, robust_shift)

    if not scored:
        return result(None, "no ranking yet: no bid has a total.")
    if len(scored) == 1:
        return result(None, f"uncontested: only {ctx.name(scored[0])} has a total, so there is nothing to compare.")
    assert shares is not None  # made for the scored bids

    reasons = []
    if len(ctx.leaders) > 1:
        total = round_half_up(cast(Fraction, ctx.totals[ctx.leaders[0]]))  # a leader has a total
        reasons.append(f"{_and([ctx.name(b) for b in ctx.leaders])} are tied for first place at {total}")
    else:
        leader = ctx.leaders[0]
        share = shares.share(leader)
        if share < robust_share:
            reasons.append(f"{ctx.name(leader)} comes first in only {_pct(share)} of {shares.samples:,} sampled "
                           f"weightings")
        if critical is not None and abs(critical.delta) * 100 < robust_shift:
            rise = "rise" if critical.delta > 0 else "cut"
            reasons.append(f"a {abs(critical.shift)}-percentage-point {rise} in the weight "
                           f"of {ctx.criterion(critical.criterion)} "
                           f"(from {critical.weight_before}% to {critical.weight_after}%) brings "
                           f"{ctx.name(critical.rival)} level")
    reasons.extend(_grouped_changes(ctx, variations))
    if reasons:
        return result(False, "sensitive: " + "; ".join(reasons) + ".", reasons)

    leader = ctx.leaders[0]
    share = shares.share(leader)
    wins = (f"in all {shares.samples:,} sampled weightings" if share == 1
            else f"in {_pct(share)} of {shares.samples:,} sampled weightings")
    kept = ["without any one member"]
    if any(v.kind == "criterion" for v in variations):
        kept.append("without any one criterion")
    kept.append("with medians instead of means")
    if critical is None:
        swap = "no change of a single criterion's weight lets another bid draw level"
    else:
        swap = (f"the smallest single-weight change that lets another bid draw level is {abs(critical.shift)} "
                f"percentage points of the total weight ({critical.sentence})")
    return result(True, f"robust: {ctx.name(leader)} comes first {wins}, keeps the lead {_and(kept)}; {swap}.")


__all__ = [
    "TIE_TOLERANCE", "FirstPlaceShares", "Sensitivity",
    "Variation", "WeightSwap", "assess_sensitivity", "dirichlet_first_place_shares", "first_place_shares",
    "leave_one_out", "swap_delta", "weight_swaps",
]
