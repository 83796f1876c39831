"""scoring.sensitivity: weight swaps (closed form vs brute force), Dirichlet shares, leave-one-out, verdict."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal as D
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from events.regulation import Criterion, default_event_file, load_regulation_file
from scoring.rules import lead_can_change, rank_bids
from scoring.sensitivity import (
    assess_sensitivity,
    dirichlet_first_place_shares,
    first_place_shares,
    leave_one_out,
    swap_delta,
    weight_swaps,
)

# Pure arithmetic: no application, no database session.
pytestmark = pytest.mark.no_db

REG = load_regulation_file(default_event_file())
KEYS = [c.key for c in REG.criteria]


def small_reg(weights=("2", "1", "1"), **scoring):
    crits = tuple(Criterion(c.key, c.article, c.label, D(w)) for c, w in zip(REG.criteria[:3], weights, strict=True))
    return dataclasses.replace(REG, criteria=crits, scoring=dataclasses.replace(REG.scoring, **scoring))


def card(*scores, keys="abc"):
    return {k: D(str(s)) for k, s in zip(keys, scores, strict=True)}


def full_card(value="3", **overrides):
    return {k: D(str(overrides.get(k, value))) for k in KEYS}


# Leader Y (means 3.25, 4.75, 4; total 3.8125) and X (4.5, 3, 2.5; total 3.625), weights 1/2, 1/4, 1/4.
HAND = {
    "X": {"m1": card(4, 3, 2), "m2": card(5, 3, 3)},
    "Y": {"m1": card(3, 5, 4), "m2": card("3.5", "4.5", 4)},
}


# ------------------------------------------------------------------------------------- weight swaps


def _perturbed(weights, k, delta):
    """The weights after moving w_k by delta, the others rescaled in proportion (the definition)."""
    return [w + delta if j == k else w * (1 - weights[k] - delta) / (1 - weights[k]) for j, w in enumerate(weights)]


def _brute_force(weights, leader, rival, k, steps=20000):
    """Scan delta over [-w_k, 1 - w_k] and return the grid point of smallest |delta| at which the rival's
    total reaches the leader's (None if none), with the grid spacing."""
    w = np.array([float(x) for x in weights])
    d = np.array([float(a - b) for a, b in zip(leader, rival, strict=True)])
    deltas = np.linspace(-w[k], 1 - w[k], steps + 1)
    others = np.delete(np.arange(len(w)), k)
    gap = (w[k] + deltas) * d[k] + np.outer((1 - w[k] - deltas) / (1 - w[k]), w[others]) @ d[others]
    hits = deltas[gap <= 1e-12]
    spacing = 1 / steps
    return (None if hits.size == 0 else hits[np.argmin(np.abs(hits))]), spacing


def test_swap_delta_matches_the_hand_computed_case():
    w = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    leader, rival = [Fraction("3.25"), Fraction("4.75"), Fraction(4)], [Fraction("4.5"), Fraction(3), Fraction("2.5")]
    # k = a: gap 3/16, slope d_a - (gap - w_a d_a) / (1 - w_a) = -5/4 - 13/8 = -23/8, delta = 3/46
    assert swap_delta(w, leader, rival, 0) == Fraction(3, 46)
    assert swap_delta(w, leader, rival, 1) == Fraction(-9, 100)
    assert swap_delta(w, leader, rival, 2) == Fraction(-3, 28)
    new = _perturbed(w, 0, Fraction(3, 46))
    assert sum(new) == 1
    assert sum(x * y for x, y in zip(new, leader, strict=True)) == sum(x * y for x, y in zip(new, rival, strict=True))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_swap_delta_agrees_with_a_brute_force_scan_of_delta(data):
    n = data.draw(st.integers(2, 5))
    raw = data.draw(st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda x: sum(x) > 0))
    weights = [Fraction(x, sum(raw)) for x in raw]
    half_points = st.lists(st.integers(0, 10), min_size=n, max_size=n)
    leader = [Fraction(x, 2) for x in data.draw(half_points)]
    rival = [Fraction(x, 2) for x in data.draw(half_points)]
    k = data.draw(st.integers(0, n - 1))
    gap = sum(w * (a - b) for w, a, b in zip(weights, leader, rival, strict=True))
    assume(gap > 0 and weights[k] < 1)

    delta = swap_delta(weights, leader, rival, k)
    found, spacing = _brute_force(weights, leader, rival, k)
    if delta is None:
        assert found is None
    else:
        assert found is not None
        assert abs(found - float(delta)) <= spacing + 1e-9
        assert abs(found) >= abs(float(delta)) - 1e-9  # nothing smaller swaps them
        new = _perturbed(weights, k, delta)  # exactly level at delta, weights still a distribution
        assert sum(new) == 1 and min(new) >= 0
        assert sum(w * (a - b) for w, a, b in zip(new, leader, rival, strict=True)) == 0


def test_swap_delta_edge_cases():
    w = [Fraction(1, 2), Fraction(1, 2)]
    assert swap_delta(w, [3, 3], [4, 3], 0) == 0  # the rival is already ahead
    assert swap_delta(w, [4, 4], [3, 3], 0) is None  # parallel totals: no weight helps
    assert swap_delta([1, 0], [4, 0], [3, 5], 0) is None  # nothing left to rescale
    assert swap_delta([1, 0], [4, 0], [3, 5], 1) == Fraction(1, 6)  # from a weight of 0: 4*5/6 = 3*5/6 + 5/6
    assert swap_delta([Fraction(1, 2)] * 2, [4, 3], [2, 3], 0) == Fraction(-1, 2)  # down to the bound 0
    assert swap_delta([Fraction(1, 2)] * 2, [4, Fraction(7, 2)], [2, 3], 0) is None  # would need w_a < 0
    with pytest.raises(ValueError):
        swap_delta([Fraction(1, 2), Fraction(1, 3)], [1, 1], [0, 0], 0)


def test_weight_swaps_name_the_critical_criterion_in_points_of_total_weight():
    swaps = weight_swaps(small_reg(), HAND)
    assert [(s.criterion, s.shift) for s in swaps] == [("a", D("6.52")), ("b", D("-9.00")), ("c", D("-10.71"))]
    critical = swaps[0]
    assert (critical.leader, critical.rival, critical.weight_before, critical.weight_after, critical.delta) == (
        "Y", "X", D("50.00"), D("56.52"), Fraction(3, 46))
    assert critical.sentence == (
        "raising the weight of (a) Prize fund from 50.00% to 56.52% of the total (+6.52 percentage points of the "
        "total weight, the other weights scaled down in proportion) brings X level with Y")


def test_weight_swaps_agree_with_a_brute_force_scan_on_the_2015_weights():
    cards = {"A": {"m1": full_card("4", c="2", g="1"), "m2": full_card("3.5", a="5")},
             "B": {"m1": full_card("3", c="5"), "m2": full_card("3.5", g="4.5", a="2")},
             "C": {"m1": full_card("2", b="5", d="5")}}
    ranking = rank_bids(REG, cards)
    swaps = weight_swaps(REG, cards)
    assert swaps
    total = Fraction(sum(c.weight for c in REG.criteria))
    weights = [Fraction(c.weight) / total for c in REG.criteria]
    means = {b.bid_id: [c.mean_exact for c in b.criteria] for b in ranking.bids}
    for s in swaps:
        k = KEYS.index(s.criterion)
        found, spacing = _brute_force(weights, means[s.leader], means[s.rival], k)
        assert abs(found - float(s.delta)) <= spacing + 1e-9
    smallest = min(abs(s.delta) for s in swaps)
    assert abs(swaps[0].delta) == smallest


def test_no_weight_swaps_without_a_single_leader():
    cards = {"A": {"m1": card(4, 4, 4)}, "B": {"m1": card(4, 4, 4)}}
    assert weight_swaps(small_reg(), cards) == ()


# --------------------------------------------------------------------------------- Dirichlet shares


def test_dirichlet_shares_are_reproducible_with_the_same_seed():
    first = dirichlet_first_place_shares(small_reg(), HAND)
    again = dirichlet_first_place_shares(small_reg(), HAND)
    assert first == again
    assert (first.samples, first.seed, first.concentration) == (10000, 2015, D("100"))
    assert abs(sum(s for _, s in first.shares) - 1) <= D("0.0002")
    assert [b for b, _ in first.shares] == ["Y", "X"]


def test_a_very_large_concentration_gives_the_leader_every_first_place():
    shares = dirichlet_first_place_shares(small_reg(), HAND, concentration=D("10000000"), samples=2000)
    assert shares.share("Y") == D("1.0000")
    assert shares.share("X") == D("0.0000")


def test_a_small_concentration_spreads_first_places():
    shares = dirichlet_first_place_shares(small_reg(), HAND, concentration=D("1"))
    assert D("0.2") < shares.share("X") < D("0.8")


def test_tied_first_places_are_split_evenly():
    cards = {"A": {"m1": card(4, 3, 2)}, "B": {"m1": card(4, 3, 2)}, "C": {"m1": card(1, 1, 1)}}
    shares = dirichlet_first_place_shares(small_reg(), cards)
    assert [s for _, s in shares.shares] == [D("0.5000"), D("0.5000"), D("0.0000")]


def test_first_place_shares_is_a_vectorised_product_with_zero_weights_kept_at_zero():
    values = np.array([[5.0, 4.0], [0.0, 5.0]])  # criteria x bids: bid 1 wins only on the unweighted one
    shares = first_place_shares(values, np.array([1.0, 0.0]), concentration=100.0, samples=500, seed=1)
    np.testing.assert_array_equal(shares, [1.0, 0.0])


def test_no_shares_when_no_bid_has_a_total():
    assert dirichlet_first_place_shares(small_reg(), {"A": {}}) is None


# ------------------------------------------------------------------------------------ leave one out


def test_leaving_out_a_member_can_change_the_leader():
    variations = leave_one_out(small_reg(), HAND, member_names={"m1": "Ms One"})
    by = {(v.kind, v.subject): v for v in variations}
    # without m1: X (5, 3, 3) = 4.0 beats Y (3.5, 4.5, 4) = 3.875
    assert by[("member", "m1")].changes_leader and by[("member", "m1")].leaders == ("X",)
    assert by[("member", "m1")].description == "without the scorecards of Ms One, X leads"
    assert not by[("member", "m2")].changes_leader
    assert by[("member", "m2")].description == "without the scorecards of m2, Y still leads"
    assert [v.kind for v in variations] == ["member", "member", "criterion", "criterion", "criterion", "median"]


def test_leaving_out_a_criterion_renormalises_the_other_weights():
    by = {(v.kind, v.subject): v for v in leave_one_out(small_reg(), HAND)}
    # without (b): X (2*4.5 + 2.5)/3 = 3.83 beats Y (2*3.25 + 4)/3 = 3.5
    assert by[("criterion", "b")].leaders == ("X",)
    assert by[("criterion", "a")].leaders == ("Y",) and not by[("criterion", "a")].changes_leader


def test_median_instead_of_mean_can_change_the_leader():
    cards = {"X": {"m1": card(5, 5, 5), "m2": card(5, 5, 5), "m3": card(0, 0, 0)},
             "Y": {"m1": card(4, 4, 4), "m2": card(4, 4, 4), "m3": card(4, 4, 4)}}
    (median,) = [v for v in leave_one_out(small_reg(), cards) if v.kind == "median"]
    assert median.changes_leader and median.leaders == ("X",)
    assert median.description == "with medians instead of means, X leads"


def test_with_a_single_bid_with_a_total_no_variation_changes_the_lead():
    one = {"X": {"m1": card(4, 3, 2)}, "Y": {}}
    variations = leave_one_out(small_reg(), one, member_names={"m1": "Ms One"})
    by = {(v.kind, v.subject): v for v in variations}
    assert by[("member", "m1")].leaders == ()  # without its only scorer the bid has no total...
    assert by[("member", "m1")].description == "without the scorecards of Ms One, no bid has a total"
    assert not any(v.changes_leader for v in variations)  # ...but with no rival, no lead was there to change
    assert assess_sensitivity(small_reg(), one).robust is None


@pytest.mark.parametrize(("bids", "can"), [(0, False), (1, False), (2, True), (5, True)])
def test_a_lead_can_change_only_with_two_bids_with_a_total(bids, can):
    assert lead_can_change(bids) is can


def test_with_two_bids_losing_every_total_still_changes_the_lead():
    two = {"X": {"m1": card(4, 3, 2)}, "Y": {"m1": card(3, 3, 3)}}
    (without,) = [v for v in leave_one_out(small_reg(), two) if v.kind == "member"]
    assert without.leaders == () and without.changes_leader


def test_zero_weight_criteria_are_not_left_out():
    variations = leave_one_out(small_reg(("1", "1", "0")), HAND)
    assert [v.subject for v in variations if v.kind == "criterion"] == ["a", "b"]


# -------------------------------------------------------------------------------------------- verdict


def test_a_dominant_leader_is_robust_and_the_summary_says_why():
    cards = {"Strong": {"m1": card(5, 5, 5), "m2": card("4.5", 5, 5)},
             "Weak": {"m1": card(2, 2, 2), "m2": card(2, "2.5", 2)}}
    s = assess_sensitivity(small_reg(), cards)
    assert s.robust is True and s.reasons == ()
    assert s.summary.startswith("robust: Strong comes first in all 10,000 sampled weightings, keeps the lead "
                                "without any one member, without any one criterion and with medians instead of "
                                "means; ")


def test_the_hand_case_is_sensitive_and_names_every_reason():
    s = assess_sensitivity(small_reg(), HAND, names={"X": "Xanadu", "Y": "Yerevan"})
    assert s.robust is False
    assert s.critical.criterion == "a"
    assert "without the scorecards of m1, Xanadu leads" in s.reasons
    assert "without criterion (b) or (c), Xanadu leads" in s.reasons
    assert s.summary == "sensitive: " + "; ".join(s.reasons) + "."


def test_a_weight_shift_below_five_points_makes_the_ranking_sensitive():
    # Equal weights; Y leads X by 1/12 (3.75 vs 3.667): raising (c) by 1/33 of the total weight
    # (3.03 points) brings X level.
    cards = {"Y": {"m1": card(4, 4, "3.5"), "m2": card(4, 4, "3")},   # means 4, 4, 3.25
             "X": {"m1": card(3, 3, 5), "m2": card(3, 3, 5)}}         # means 3, 3, 5
    s = assess_sensitivity(small_reg(("1", "1", "1")), cards)
    assert s.critical.criterion == "c" and s.critical.shift < 5
    assert (f"a {s.critical.shift}-percentage-point rise in the weight of (c) Playing conditions (from 33.33% to "
            f"{s.critical.weight_after}%) brings X level") in s.summary
    assert s.robust is False


def test_a_small_first_place_share_makes_the_ranking_sensitive():
    s = assess_sensitivity(small_reg(dirichlet_concentration=D("1")), HAND)
    share = s.first_places.share("Y")
    assert share < D("0.9")
    assert f"Y comes first in only {(share * 100).normalize():f}% of 10,000 sampled weightings" in s.reasons


def test_a_tie_for_first_place_is_sensitive():
    cards = {"A": {"m1": card(4, 4, 4)}, "B": {"m1": card(4, 4, 4)}}
    s = assess_sensitivity(small_reg(), cards)
    assert s.robust is False and s.leaders == ("A", "B")
    assert s.summary.startswith("sensitive: A and B are tied for first place at 4.00")
    assert s.critical is None


def test_no_verdict_without_two_scored_bids():
    assert assess_sensitivity(small_reg(), {}).summary == "no ranking yet: no bid has a total."
    single = assess_sensitivity(small_reg(), {"A": {"m1": card(3, 3, 3)}, "B": {}})
    assert single.robust is None
    assert single.summary == "uncontested: only A has a total, so there is nothing to compare."


def test_sensitivity_as_dict_is_json_ready():
    data = assess_sensitivity(small_reg(), HAND).as_dict()
    json.dumps(data)
    assert data["critical"]["shift"] == "6.52"
    assert data["rule"] == {"robust_share": "0.90", "robust_shift_points": "5"}
    assert data["first_places"]["shares"][0]["bid_id"] == "Y"
    assert isinstance(data["first_places"]["shares"][0]["share"], str)
