"""The ranking and its sensitivity give exactly what the Fraction-based code before issue 15 gave: stored digests of
seeded cases (ties, recusals, missing scores and scorecards, one member, one bid, weights of 0), and a property test
against a plain reference implementation of Art. 15.5's arithmetic kept here."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events.regulation import Criterion
from scoring.rules import _allocate, rank_bids, round_half_up
from scoring.sensitivity import TIE_TOLERANCE, assess_sensitivity, swap_delta
from tests.scoring.golden_cases_scoring import GOLDEN_CASES, REG, golden
from tests.scoring.reference_stats import criterion_stats

# Pure arithmetic: no application, no database session.
pytestmark = pytest.mark.no_db

GOLDEN = json.loads((Path(__file__).parent / "golden_arithmetic_scoring.json").read_text())


def test_seeded_cases_give_the_outputs_stored_from_the_code_before():
    assert set(GOLDEN) == set(GOLDEN_CASES)
    now = golden(rank_bids, assess_sensitivity)
    for name in GOLDEN_CASES:
        assert now[name] == GOLDEN[name], name


# ------------------------------------------------------------------------------ the reference implementation
#
# Art. 15.5 from its definitions, in Fractions and without shortcuts: the per-criterion statistics are the
# Decimal-based `criterion_stats`, the totals sum w_k * s_k / sum(w), leave-one-out drops a member's scorecard and
# ranks again, the swaps come from `swap_delta` one at a time, the shares from one unblocked product.


def _ref_value(values: list[Fraction], statistic: str) -> Fraction:
    if statistic == "mean":
        return sum(values, Fraction(0)) / len(values)
    ordered, mid = sorted(values), len(values) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _ref_cells(reg, cards) -> dict:
    return {b: [[Fraction(card[c.key]) for card in by_member.values() if card.get(c.key) is not None]
                for c in reg.criteria] for b, by_member in cards.items()}


def _ref_totals(reg, cards, weights, statistic="mean") -> dict:
    ws = [Fraction(weights[c.key]) for c in reg.criteria]
    out = {}
    for b, cells in _ref_cells(reg, cards).items():
        if not cards[b] or any(w and not cell for w, cell in zip(ws, cells, strict=True)):
            out[b] = None
        else:
            out[b] = sum((w * _ref_value(cell, statistic) for w, cell in zip(ws, cells, strict=True) if w),
                         Fraction(0)) / sum(ws)
    return out


def _ref_leaders(totals: dict) -> tuple:
    scored = [t for t in totals.values() if t is not None]
    return tuple(b for b, t in totals.items() if scored and t == max(scored))


def _ref_ranking(reg, cards, weights, statistic):
    totals = _ref_totals(reg, cards, weights, statistic)
    ws = [Fraction(weights[c.key]) for c in reg.criteria]
    rows = {}
    for b, by_member in cards.items():
        stats = [criterion_stats(reg, c.key, {m: card.get(c.key) for m, card in by_member.items()})
                 for c in reg.criteria]
        t = totals[b]
        if t is not None:
            exact = [w / sum(ws) * (s.mean_exact if statistic == "mean" else s.median_exact) if w else Fraction(0)
                     for w, s in zip(ws, stats, strict=True)]
            parts = _allocate(exact, int(round_half_up(t).scaleb(2)))
            stats = [replace(s, contribution=p if w else None) for s, w, p in zip(stats, ws, parts, strict=True)]
        rank = None if t is None else 1 + sum(1 for x in totals.values() if x is not None and x > t)
        tied = t is not None and sum(1 for x in totals.values() if x == t) > 1
        rows[b] = (t, rank, tied, len(by_member), stats)
    order = sorted(cards, key=lambda b: (totals[b] is None, -(totals[b] or 0)))
    return order, rows, _ref_leaders(totals)


def _ref_variations(reg, cards, weights) -> list[tuple]:
    out = []
    members = list(dict.fromkeys(m for by_member in cards.values() for m in by_member))
    for m in members:
        without = {b: {k: v for k, v in by_member.items() if k != m} for b, by_member in cards.items()}
        out.append(("member", m, _ref_leaders(_ref_totals(reg, without, weights))))
    positive = [c.key for c in reg.criteria if weights[c.key] > 0]
    if len(positive) > 1:
        for key in positive:
            out.append(("criterion", key, _ref_leaders(_ref_totals(reg, cards, {**weights, key: Decimal(0)}))))
    out.append(("median", None, _ref_leaders(_ref_totals(reg, cards, weights, "median"))))
    return out


def _ref_swaps(reg, cards, weights) -> list[tuple]:
    totals = _ref_totals(reg, cards, weights)
    leaders = _ref_leaders(totals)
    if len(leaders) != 1:
        return []
    ws = [Fraction(weights[c.key]) for c in reg.criteria]
    norm = [w / sum(ws) for w in ws]
    means = {b: [_ref_value(cell, "mean") if cell else None for cell in cells]
             for b, cells in _ref_cells(reg, cards).items()}
    lead = means[leaders[0]]
    found = []
    for rival in sorted((b for b in cards if totals[b] is not None), key=lambda b: -totals[b]):
        if rival == leaders[0]:
            continue
        riv = means[rival]
        both = [(a, r) if a is not None and r is not None else (0, 0) for a, r in zip(lead, riv, strict=True)]
        for k, c in enumerate(reg.criteria):
            if lead[k] is None or riv[k] is None:
                continue
            delta = swap_delta(norm, [a for a, _ in both], [r for _, r in both], k)
            if delta:
                found.append((rival, c.key, delta, round_half_up((norm[k] + delta) * 100)))
    return sorted(found, key=lambda s: abs(s[2]))


def _ref_shares(reg, cards, weights) -> list[tuple]:
    totals = _ref_totals(reg, cards, weights)
    bids = sorted((b for b in cards if totals[b] is not None), key=lambda b: -totals[b])
    if not bids:
        return []
    ws = np.array([float(Fraction(weights[c.key]) / sum(Fraction(weights[k]) for k in weights))
                   for c in reg.criteria])
    cells = _ref_cells(reg, cards)
    values = np.array([[float(_ref_value(cell, "mean")) if cell else 0.0 for cell in cells[b]] for b in bids]).T
    sc = reg.scoring
    draws = np.random.default_rng(sc.dirichlet_seed).dirichlet(float(sc.dirichlet_concentration) * ws[ws > 0],
                                                                size=sc.dirichlet_samples)
    sums = draws @ values[ws > 0]
    top = sums >= sums.max(axis=1, keepdims=True) - TIE_TOLERANCE
    shares = (top / top.sum(axis=1, keepdims=True)).sum(axis=0) / sc.dirichlet_samples
    return [(b, round_half_up(Fraction(float(s)), 4)) for b, s in zip(bids, shares, strict=True)]


SCALE = [Decimal(x) / 2 for x in range(11)]  # the 2015 scale, 0 to 5 in steps of 0.5


@st.composite
def scored_calls(draw):
    """Up to 4 criteria with weights of 0 to 4 (halves too), 1 to 5 bids, 1 to 4 members; a member may have no
    scorecard on a bid (recused), a score may be missing; a small scale, so ties are common."""
    n = draw(st.integers(1, 4))
    weights = draw(st.lists(st.sampled_from([Decimal(0), Decimal(1), Decimal("1.5"), Decimal(2), Decimal(4)]),
                            min_size=n, max_size=n).filter(lambda ws: sum(ws) > 0))
    crits = tuple(Criterion(c.key, c.article, c.label, w) for c, w in zip(REG.criteria[:n], weights, strict=True))
    reg = dataclasses.replace(REG, criteria=crits, scoring=dataclasses.replace(
        REG.scoring, red_flag_criteria=tuple(c.key for c in crits[1:3]), dirichlet_samples=2000))
    bids, members = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    score = st.one_of(st.none(), st.sampled_from(SCALE)) if draw(st.booleans()) else st.sampled_from(SCALE)
    cards = {}
    for b in range(bids):
        cards[f"B{b}"] = {f"m{m}": {c.key: draw(score) for c in crits}
                          for m in range(members) if draw(st.integers(0, 5))}
    if bids > 1 and draw(st.booleans()):  # an exact copy: a tie
        cards["B1"] = dict(cards["B0"])
    return reg, cards, {c.key: c.weight for c in crits}


@settings(max_examples=50, deadline=None)
@given(scored_calls(), st.sampled_from(["mean", "median"]))
def test_ranking_and_sensitivity_agree_with_the_reference_implementation(call, statistic):
    reg, cards, weights = call
    ranking = rank_bids(reg, cards, weights, statistic=statistic)
    order, rows, leaders = _ref_ranking(reg, cards, weights, statistic)
    assert [b.bid_id for b in ranking.bids] == order
    assert ranking.leaders == leaders
    for b in ranking.bids:
        total, rank, tied, scorecards, stats = rows[b.bid_id]
        assert (b.total_exact, b.rank, b.tied, b.scorecards) == (total, rank, tied, scorecards)
        assert b.total == (None if total is None else round_half_up(total))
        assert list(b.criteria) == stats  # every statistic, sentence and exact value, and the contributions

    s = assess_sensitivity(reg, cards, weights)
    assert s.leaders == _ref_leaders(_ref_totals(reg, cards, weights))
    if any(t is not None for t in _ref_totals(reg, cards, weights).values()):
        assert [(v.kind, v.subject, v.leaders) for v in s.variations] == _ref_variations(reg, cards, weights)
        assert [(b, share) for b, share in s.first_places.shares] == _ref_shares(reg, cards, weights)
    assert [(w.rival, w.criterion, w.delta, w.weight_after) for w in s.swaps] == _ref_swaps(reg, cards, weights)
