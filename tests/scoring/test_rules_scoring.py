"""scoring.rules: scorecard checks, the prize-fund reference, statistics, weighted totals, ties, red flags."""

from __future__ import annotations

import dataclasses
import json
import random
from decimal import Decimal as D
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymcdm.methods import WSM

from events.regulation import Criterion, default_event_file, load_regulation_file
from scoring.rules import (
    agreement_sentence,
    default_weights,
    on_scale,
    prize_fund_hint,
    prize_fund_line_value,
    prize_fund_reference,
    rank_bids,
    round_half_up,
    score_problems,
    weight_shares,
)
from tests.scoring.reference_stats import criterion_stats as reference_stats

# Pure arithmetic: no application, no database session.
pytestmark = pytest.mark.no_db

REG = load_regulation_file(default_event_file())
KEYS = [c.key for c in REG.criteria]


def small_reg(weights=("2", "1", "1"), **scoring):
    """Three criteria (a, b, c) with the 2015 labels and scale; b and c carry red flags."""
    crits = tuple(Criterion(c.key, c.article, c.label, D(w)) for c, w in zip(REG.criteria[:3], weights, strict=True))
    return dataclasses.replace(REG, criteria=crits, scoring=dataclasses.replace(
        REG.scoring, red_flag_criteria=("b", "c"), **scoring))


def card(*scores, keys="abc"):
    return {k: D(str(s)) for k, s in zip(keys, scores, strict=True)}


def full_card(value="3", **overrides):
    return {k: D(str(overrides.get(k, value))) for k in KEYS}


# Hand-computed example (weights a=2, b=1, c=1, so the weight total is 4):
#   X: means a 4.5, b 3, c 2.5  -> (2*4.5 + 3 + 2.5) / 4 = 3.625   -> shown 3.63
#   Y: means a 3.25, b 4.75, c 4 -> (2*3.25 + 4.75 + 4) / 4 = 3.8125 -> shown 3.81
#   Z: means a 2, b 1.5, c 1.5    -> (4 + 1.5 + 1.5) / 4 = 1.75
HAND = {
    "X": {"m1": card(4, 3, 2), "m2": card(5, 3, 3)},
    "Y": {"m1": card(3, 5, 4), "m2": card("3.5", "4.5", 4)},
    "Z": {"m1": card(2, 2, 2), "m2": card(2, 1, "1.5"), "m3": card(2, "1.5", 1)},
}


# ------------------------------------------------------------------------------------ weighted totals


def test_weighted_totals_match_hand_computed_sums():
    ranking = rank_bids(small_reg(), HAND)
    assert [b.bid_id for b in ranking.bids] == ["Y", "X", "Z"]
    assert [b.total for b in ranking.bids] == [D("3.81"), D("3.63"), D("1.75")]
    assert [b.total_exact for b in ranking.bids] == [Fraction("3.8125"), Fraction("3.625"), Fraction("1.75")]
    assert [b.rank_label for b in ranking.bids] == ["1", "2", "3"]
    assert ranking.leader == "Y"


def test_contributions_add_up_to_the_displayed_total_by_largest_remainder():
    x = rank_bids(small_reg(), HAND).bid("X")
    # exact 2.25 + 0.75 + 0.625 = 3.625, shown 3.63: the half cent goes to (c), the largest remainder
    assert [c.contribution for c in x.criteria] == [D("2.25"), D("0.75"), D("0.63")]
    assert sum(c.contribution for c in x.criteria) == x.total


def test_weighted_total_uses_the_published_2015_weights():
    ranking = rank_bids(REG, {"B": {"m1": full_card("3", a="5")}})
    # (20 * 5 + 80 * 3) / 100
    assert ranking.bid("B").total == D("3.40")
    assert default_weights(REG)["a"] == D("20")


def test_weight_percentages_add_up_to_exactly_100():
    shares = weight_shares(small_reg(("1", "1", "1")))
    assert [s.percent for s in shares] == [D("33.34"), D("33.33"), D("33.33")]
    assert sum(s.percent for s in weight_shares(REG)) == D("100.00")


def test_another_weights_version_can_change_the_leader():
    weights = {"a": D("10"), "b": D("0"), "c": D("0")}
    ranking = rank_bids(small_reg(), HAND, weights)
    assert ranking.leader == "X"
    assert ranking.bid("X").total == D("4.50")
    assert [c.contribution for c in ranking.bid("X").criteria] == [D("4.50"), None, None]


def test_median_statistic_ranks_on_medians():
    cards = {"X": {"m1": card(5, 5, 5), "m2": card(5, 5, 5), "m3": card(0, 0, 0)},
             "Y": {"m1": card(4, 4, 4), "m2": card(4, 4, 4), "m3": card(4, 4, 4)}}
    assert rank_bids(small_reg(), cards).leader == "Y"
    by_median = rank_bids(small_reg(), cards, statistic="median")
    assert by_median.leader == "X"
    assert by_median.bid("X").total == D("5.00")


def _pymcdm_totals(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    # pymcdm normalises each criterion column; the identity keeps the 0-5 scores as they are, so its
    # weighted sum is ours. Its validation warns about dominant bids (an error under filterwarnings=error)
    # and is not what is being compared, so it is off.
    wsm = WSM(normalization_function=lambda x, cost: x)
    return wsm(means, weights / weights.sum(), np.ones(means.shape[1], dtype=int), validation=False)


@pytest.mark.parametrize("seed", range(8))
def test_totals_and_ranking_agree_with_pymcdm_weighted_sum(seed):
    rng = random.Random(seed)
    scale = [D(i) / 2 for i in range(11)]
    bids = [f"bid{i}" for i in range(rng.randint(2, 6))]
    cards = {b: {f"m{m}": {k: rng.choice(scale) for k in KEYS} for m in range(rng.randint(1, 4))} for b in bids}
    weights = {k: D(rng.randint(0, 30)) for k in KEYS} | {"a": D(rng.randint(1, 30))}
    ranking = rank_bids(REG, cards, weights)

    means = np.array([[float(c.mean_exact) for c in ranking.bid(b).criteria] for b in bids])
    expected = _pymcdm_totals(means, np.array([float(weights[k]) for k in KEYS]))
    ours = np.array([float(ranking.bid(b).total_exact) for b in bids])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)
    # Same order (pymcdm ranks by descending preference; exact ties aside, which floats cannot see).
    assert [b.bid_id for b in ranking.bids] == [bids[i] for i in np.argsort(-expected, kind="stable")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10), min_size=3, max_size=3), min_size=1, max_size=5),
       st.lists(st.integers(0, 40), min_size=3, max_size=3).filter(lambda w: sum(w) > 0))
def test_displayed_contributions_always_add_up_to_the_displayed_total(members, weights):
    reg = small_reg(tuple(str(w) for w in weights))
    cards = {"B": {f"m{i}": card(*(D(s) / 2 for s in scores)) for i, scores in enumerate(members)}}
    bid = rank_bids(reg, cards).bid("B")
    assert sum(c.contribution or 0 for c in bid.criteria) == bid.total
    assert bid.total == round_half_up(bid.total_exact)


# ---------------------------------------------------------------------------------------------- ties


def test_equal_totals_are_shown_as_ties_with_competition_ranking():
    cards = {"A": {"m1": card(4, 4, 4)}, "B": {"m1": card(4, 4, 4)}, "C": {"m1": card(3, 3, 3)}}
    ranking = rank_bids(small_reg(), cards)
    assert [(b.bid_id, b.rank, b.rank_label, b.tied) for b in ranking.bids] == [
        ("A", 1, "1=", True), ("B", 1, "1=", True), ("C", 3, "3", False)]
    assert ranking.leaders == ("A", "B")
    assert ranking.leader is None


def test_a_tie_below_first_place_skips_the_next_rank():
    cards = {"A": {"m1": card(5, 5, 5)}, "B": {"m1": card(3, 3, 3)}, "C": {"m1": card(3, 3, 3)},
             "D": {"m1": card(1, 1, 1)}}
    assert [b.rank_label for b in rank_bids(small_reg(), cards).bids] == ["1", "2=", "2=", "4"]


def test_ties_keep_the_order_the_bids_were_given_in():
    cards = {"Zeta": {"m1": card(4, 4, 4)}, "Alpha": {"m1": card(4, 4, 4)}}
    assert [b.bid_id for b in rank_bids(small_reg(), cards).bids] == ["Zeta", "Alpha"]


def test_ties_are_exact_even_with_recurring_means():
    # Both totals are exactly 1/6 (a mean of 1/3 on a criterion weighing half); neither is 0.1666...67.
    cards = {"A": {"m1": card(1, 0, keys="ab"), "m2": card(0, 0, keys="ab"), "m3": card(0, 0, keys="ab")},
             "B": {"m1": card(0, 1, keys="ab"), "m2": card(0, 0, keys="ab"), "m3": card(0, 0, keys="ab")}}
    ranking = rank_bids(small_reg(("1", "1", "0")), cards)
    assert ranking.bid("A").total_exact == ranking.bid("B").total_exact == Fraction(1, 6)
    assert [b.rank_label for b in ranking.bids] == ["1=", "1="]


def test_ranking_compares_exact_totals_not_rounded_ones():
    reg = small_reg(("1", "999", "0"))
    cards = {"Y": {"m1": card(3, 3, 3)}, "X": {"m1": card(5, 3, 3)}}  # 3.000 and 3.002
    ranking = rank_bids(reg, cards)
    assert [(b.bid_id, b.total, b.rank_label) for b in ranking.bids] == [("X", D("3.00"), "1"), ("Y", D("3.00"), "2")]
    assert ranking.notes == ("X and Y both show 3.00 but are not tied: the ranking compares exact totals "
                             "(3.002 and 3.000).",)


def test_a_page_of_the_ranking_has_the_notes_of_its_own_bids():
    """`notes_about`: a page of the ranking gives the notes that name one of its bids (a near tie with a bid on
    another page included), not the hundred of a long ranking."""
    reg = small_reg(("1", "999", "0"))
    cards = {"Y": {"m1": card(3, 3, 3)}, "X": {"m1": card(5, 3, 3)}, "W": {"m1": card(1, 1, 1)}, "Empty": {}}
    ranking = rank_bids(reg, cards)
    tie = "X and Y both show 3.00 but are not tied: the ranking compares exact totals (3.002 and 3.000)."
    assert ranking.notes == (tie, "Without a total, listed last and unranked: Empty.")
    assert ranking.notes_about({"X", "Y", "W", "Empty"}, {}) == list(ranking.notes)
    assert ranking.notes_about({"Y"}, {}) == ranking.notes_about({"X", "W"}, {}) == [tie]
    assert ranking.notes_about({"W"}, {}) == []
    assert ranking.notes_about({"Empty"}, {"Empty": "The empty bid"}) == [
        "Without a total, listed last and unranked: The empty bid."]
    also_empty = rank_bids(reg, {**cards, "Void": {}})
    assert also_empty.notes[-1] == "Without a total, listed last and unranked: Empty, Void."
    assert also_empty.notes_about({"Void", "W"}, {}) == ["Without a total, listed last and unranked: Void."]


# ----------------------------------------------------------------------------------- unscored bids


def test_a_bid_without_scorecards_has_no_total_and_is_listed_last():
    ranking = rank_bids(small_reg(), {"Empty": {}, **HAND})
    last = ranking.bids[-1]
    assert (last.bid_id, last.total, last.rank, last.rank_label) == ("Empty", None, None, "unranked")
    assert last.note == "No scorecard submitted yet: no total, listed after the ranked bids."
    assert ranking.notes[-1] == "Without a total, listed last and unranked: Empty."
    assert [b.rank for b in ranking.bids[:3]] == [1, 2, 3]
    named = rank_bids(small_reg(), {"Empty": {}, **HAND}, names={"Empty": "Ruritania"})
    assert named.notes[-1] == "Without a total, listed last and unranked: Ruritania."


def test_a_bid_missing_a_weighted_criterion_has_no_total():
    cards = {"A": {"m1": {"a": D(4), "b": D(4), "c": None}}, "B": {"m1": card(1, 1, 1)}}
    ranking = rank_bids(small_reg(), cards)
    assert ranking.bid("A").total is None
    assert ranking.bid("A").note == (
        "No score yet for 15.5(c) playing conditions: no total, listed after the ranked bids.")
    assert ranking.leader == "B"


def test_no_bids_give_an_empty_ranking():
    ranking = rank_bids(REG, {})
    assert ranking.bids == () and ranking.leaders == () and ranking.leader is None


# ------------------------------------------------------------------------------------ statistics


# The statistics of one cell, asked of the product (rank_bids, which computes them in integer units) and of the
# reference from their definitions (tests/scoring/reference_stats.py): every test below holds both to its figures.
def _ranked_stats(reg, key, scores):
    cards = {"B": {m: ({key: s} if s is not None else {}) for m, s in scores.items()}}
    return next(c for c in rank_bids(reg, cards).bid("B").criteria if c.key == key)


STATS = pytest.mark.parametrize("criterion_stats", [_ranked_stats, reference_stats], ids=["product", "reference"])


@STATS
def test_criterion_stats_report_mean_median_spread_and_population_stdev(criterion_stats):
    stats = criterion_stats(REG, "c", {"m1": D(2), "m2": D(4), "m3": D("4.5")})
    assert (stats.count, stats.mean, stats.median, stats.minimum, stats.maximum, stats.range) == (
        3, D("3.50"), D("4.00"), D("2.00"), D("4.50"), D("2.50"))
    # sqrt(((-1.5)^2 + 0.5^2 + 1^2) / 3) = sqrt(7/6) = 1.0801...
    assert stats.stdev == D("1.08")


@STATS
def test_one_member_has_stdev_zero_and_no_disagreement(criterion_stats):
    stats = criterion_stats(REG, "c", {"m1": D(5)})
    assert (stats.count, stats.stdev, stats.range, stats.disagreement) == (1, D("0.00"), D("0.00"), False)


@STATS
def test_nobody_scoring_a_criterion_gives_empty_stats(criterion_stats):
    stats = criterion_stats(REG, "c", {"m1": None})
    assert (stats.count, stats.mean, stats.stdev, stats.disagreement) == (0, None, None, False)


@pytest.mark.parametrize(("scores", "flagged"), [
    (("2", "4"), True),          # range exactly 2
    (("2", "3.5"), False),       # range 1.5
    (("0", "2.5", "1"), True),   # range 2.5
    (("3", "3", "3"), False),
])
@STATS
def test_disagreement_flag_from_the_range(scores, flagged, criterion_stats):
    stats = criterion_stats(REG, "d", {f"m{i}": D(s) for i, s in enumerate(scores)})
    assert stats.disagreement is flagged


@STATS
def test_disagreement_reason_cites_the_article_and_the_range(criterion_stats):
    stats = criterion_stats(REG, "d", {"m1": D(2), "m2": D(4)})
    assert stats.disagreement_reason == (
        "Bidding procedure: evaluation method (criterion 15.5(d)): members disagree: the scores run from 2 to 4, a range of 2 (flagged from 2).")  # noqa: E501


@pytest.mark.parametrize(("scores", "flagged"), [
    (("1", "3"), False),           # population stdev exactly 1: not above 1
    (("1", "3.5"), True),          # 1.25
    (("0", "2", "2", "4"), True),  # sqrt(2) = 1.41
    (("2", "2", "2", "4"), False),  # sqrt(0.75) = 0.87
])
@STATS
def test_disagreement_flag_from_the_stdev_is_strictly_above_the_threshold(scores, flagged, criterion_stats):
    reg = small_reg(disagreement_range=D("5"))  # so that only the standard deviation can flag
    stats = criterion_stats(reg, "c", {f"m{i}": D(s) for i, s in enumerate(scores)})
    assert stats.disagreement is flagged
    assert ("standard deviation" in stats.disagreement_reason) is flagged


# -------------------------------------------------------------------------------------- red flags


def _flags(reg, scores_by_member):
    return rank_bids(reg, {"B": scores_by_member}).bid("B").red_flags


def test_a_red_flag_criterion_with_mean_exactly_at_the_threshold_is_not_flagged():
    assert _flags(small_reg(), {"m1": card(5, "2", 5)}) == ()


def test_a_red_flag_criterion_with_mean_below_the_threshold_is_flagged_with_the_article():
    """Art. 15.5 names the criteria, "to be viewed as a whole", and no threshold: a red flag is the bidding
    procedure's, cited as such beside the criterion's article."""
    (flag,) = _flags(small_reg(), {"m1": card(5, "1.5", 5), "m2": card(5, 2, 5)})  # b: mean 1.75
    assert (flag.code, flag.article, flag.criterion, flag.value, flag.threshold) == (
        "criterion_below_threshold", "15.5(b)", "b", D("1.75"), D("2"))
    assert flag.as_text() == ("Bidding procedure: red flags (criterion 15.5(b)): the mean score for covering of "
                              "organisational costs is 1.75, below 2 (Meets the minimum). Shown to the Board; it "
                              "does not exclude the bid.")


def test_a_criterion_outside_the_red_flag_list_is_not_flagged():
    assert _flags(small_reg(), {"m1": card(0, 5, 5)}) == ()  # (a) is not a red-flag criterion


def test_the_total_exactly_at_the_overall_threshold_is_not_flagged_but_below_it_is():
    assert _flags(small_reg(), {"m1": card("2.5", "2.5", "2.5")}) == ()
    (flag,) = _flags(small_reg(), {"m1": card("2.5", "2.5", "2")})  # (5 + 2.5 + 2) / 4 = 2.375
    # Art. 15.5 sets no overall threshold: the flag is the bidding procedure's and cites no article.
    assert (flag.code, flag.article, flag.value) == ("total_below_threshold", "", D("2.38"))
    assert flag.as_text().startswith("Bidding procedure: red flags: the weighted total is 2.38")
    assert flag.message == "the weighted total is 2.38, below 2.5. Shown to the Board; it does not exclude the bid."


def test_red_flags_are_shown_but_do_not_exclude_or_reorder():
    ranking = rank_bids(small_reg(), HAND)
    z = ranking.bid("Z")
    assert [f.criterion for f in z.red_flags] == ["b", "c", None]
    assert z.rank == 3 and z.total == D("1.75")


# ---------------------------------------------------------------------------------------- agreement


@pytest.mark.parametrize(("cards", "due", "sentence"), [
    ({"m1": ("4", "3", "2")}, 2, "Only 1 of 2 members has scored this bid: agreement cannot be judged yet."),
    ({"m1": ("4", "3", "2")}, 4, "Only 1 of 4 members has scored this bid: agreement cannot be judged yet."),
    ({"m1": ("4", "3", "2")}, 1, "Only 1 member is due to score this bid: agreement cannot be judged."),
    ({}, 3, "None of the 3 members has scored this bid: agreement cannot be judged yet."),
    ({"m1": ("4", "3", "2"), "m2": ("4", "3.5", "2")}, 2,
     "The members broadly agree on every criterion (no disagreement flagged)."),
    ({"m1": ("4", "3", "2"), "m2": ("4", "3.5", "2")}, 3,
     "The 2 members who scored this bid broadly agree on every criterion (no disagreement flagged)."),
    ({"m1": ("4", "3", "2"), "m2": ("1", "3", "2")}, 2, None),  # a disagreement: the criteria are listed instead
])
def test_agreement_is_judged_only_from_two_scorecards(cards, due, sentence):
    scorecards = {"X": {m: dict(zip("abc", (D(v) for v in vs), strict=True)) for m, vs in cards.items()}}
    result = rank_bids(small_reg(), scorecards).bid("X")
    assert agreement_sentence(result, due) == sentence


# ----------------------------------------------------------------------------- prize-fund reference


@pytest.mark.parametrize(("prize_fund", "line", "reference"), [
    ("200000", "2.00", "2"),      # the call's minimum
    ("400000", "5.00", "5"),      # the target
    ("300000", "3.50", "3.5"),    # half way: on the scale already
    ("250000", "2.75", "3"),      # between two steps of 0.5: the tie goes up
    ("245000", "2.68", "2.5"),    # nearer 2.5
    ("250001", "2.75", "3"),      # 2.750015, two decimals
    ("100000", "0.50", "0.5"),    # below the minimum the line continues down
    ("0", "0.00", "0"),
    ("-50000", "0.00", "0"),      # clamped at the bottom of the scale
    ("1000000", "5.00", "5"),     # clamped at the top
])
def test_prize_fund_reference_score_is_a_score_of_the_scale(prize_fund, line, reference):
    assert prize_fund_line_value(REG, D(prize_fund)) == D(line)
    assert prize_fund_reference(REG, D(prize_fund)) == D(reference)
    assert on_scale(REG, prize_fund_reference(REG, D(prize_fund)))


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-10**7, max_value=10**7))
def test_every_prize_fund_reference_is_on_the_scale(prize_fund):
    assert on_scale(REG, prize_fund_reference(REG, D(prize_fund)))


def test_prize_fund_reference_refuses_a_float():
    with pytest.raises(TypeError):
        prize_fund_reference(REG, 250000.0)


def test_the_scorecard_hint_gives_the_reference_score_of_the_bids_prize_fund():
    key = REG.criteria[0].key
    hint = prize_fund_hint(REG, key, "250000.00")
    assert (hint.criterion, hint.prize_fund, hint.score, hint.line_value) == (key, D("250000.00"), D("3"), D("2.75"))
    assert hint.text(REG, "€250,000.00") == (
        "Reference score from the prize fund of €250,000.00: 3 (2.75 on the straight line from 2 at the minimum "
        "prize fund to 5 at the target, rounded to the nearest step of 0.5 on the scale) — a suggestion only; the "
        "score is yours.")
    on_line = prize_fund_hint(REG, key, "300000")
    assert on_line.text(REG, "€300,000.00") == (
        "Reference score from the prize fund of €300,000.00: 3.5 (on the straight line from 2 at the minimum prize "
        "fund to 5 at the target) — a suggestion only; the score is yours.")


@pytest.mark.parametrize(("criterion", "prize_fund"), [("a", None), ("a", ""), ("no such criterion", "250000.00")])
def test_no_scorecard_hint_without_a_prize_fund_or_the_criterion(criterion, prize_fund):
    assert prize_fund_hint(REG, criterion, prize_fund) is None


# ------------------------------------------------------------------------------------ score problems


def test_a_top_score_without_a_comment_is_refused_on_submission():
    problems = score_problems(REG, full_card(c="5"), {}, final=True)
    assert problems == {"c": "Bidding procedure: evaluation method (criterion 15.5(c)): a score of 5 (Excellent) needs a comment saying why."}  # noqa: E501


@pytest.mark.parametrize(("score", "label"), [("0", "Unacceptable"), ("1", "Poor"), ("5", "Excellent")])
def test_scores_listed_in_comment_required_for_need_a_comment(score, label):
    problems = score_problems(REG, full_card(g=score), {"g": "   "}, final=True)
    assert problems == {"g": f"Bidding procedure: evaluation method (criterion 15.5(g)): a score of {score} ({label}) needs a comment saying why."}  # noqa: E501


def test_a_comment_satisfies_the_requirement_and_other_scores_need_none():
    assert score_problems(REG, full_card(c="5", d="4.5", e="0.5"), {"c": "Best hall we saw."}, final=True) == {}


def test_a_draft_may_be_incomplete_and_uncommented():
    assert score_problems(REG, {"a": D(5), "b": None}, {}, final=False) == {}


def test_a_submitted_scorecard_must_score_every_criterion():
    problems = score_problems(REG, {k: D(3) for k in KEYS if k != "h"}, {}, final=True)
    assert problems == {"h": "Bidding procedure: evaluation method (criterion 15.5(h)): a score is needed before the scorecard is submitted."}  # noqa: E501


@pytest.mark.parametrize("score", ["5.5", "-0.5", "4.25", "NaN"])
def test_a_score_off_the_scale_is_refused_even_in_a_draft(score):
    problems = score_problems(REG, {"b": D(score)}, {}, final=False)
    assert problems == {"b": f"Bidding procedure: evaluation method (criterion 15.5(b)): a score runs from 0 to 5 in steps of 0.5 (you entered {score})."}  # noqa: E501


def test_an_unknown_criterion_is_reported_under_its_key():
    problems = score_problems(REG, {"k": D(3)}, {}, final=False)
    assert problems == {"k": "Bidding procedure: evaluation method: there is no criterion (k) in this call."}


def test_a_float_score_is_a_programming_error():
    with pytest.raises(TypeError):
        score_problems(REG, {"a": 4.5}, {}, final=False)


# ------------------------------------------------------------------------------------- bad input


def test_ranking_refuses_a_score_off_the_scale_naming_where():
    with pytest.raises(ValueError, match=r"bid 'X', member 'm1', criterion \(b\)"):
        rank_bids(small_reg(), {"X": {"m1": card(5, "5.5", 5)}})


def test_ranking_refuses_an_unknown_criterion():
    with pytest.raises(ValueError, match="no such criterion"):
        rank_bids(small_reg(), {"X": {"m1": {"z": D(3)}}})


def test_ranking_refuses_float_scores():
    with pytest.raises(TypeError):
        rank_bids(small_reg(), {"X": {"m1": {"a": 3.0}}})


@pytest.mark.parametrize("weights", [
    {"a": D(1), "b": D(1)},                       # (c) missing
    {"a": D(1), "b": D(1), "c": D(1), "z": D(1)},  # unknown
    {"a": D(1), "b": D(-1), "c": D(1)},           # negative
    {"a": D(0), "b": D(0), "c": D(0)},            # nothing to weigh
])
def test_ranking_refuses_an_unusable_weights_version(weights):
    with pytest.raises(ValueError):
        rank_bids(small_reg(), HAND, weights)


def test_ranking_as_dict_is_json_ready_with_decimals_as_strings():
    data = rank_bids(small_reg(), {**HAND, "Empty": {}}).as_dict()
    text = json.dumps(data)
    assert data["bids"][0]["total"] == "3.81"
    assert data["bids"][0]["criteria"][0]["mean"] == "3.25"
    assert data["leaders"] == ["Y"]
    assert data["bids"][-1]["total"] is None
    assert data["bids"][2]["red_flags"][0]["text"].startswith("Bidding procedure: red flags (criterion 15.5(b)): ")
    assert data["weights"][0] == {"key": "a", "label": "Prize fund", "article": "15.5(a)", "weight": "2",
                                  "percent": "50.00"}
    assert "Decimal" not in text
