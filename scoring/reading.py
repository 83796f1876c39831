"""The ranking in words for people who are not statisticians: one verdict sentence, and what each figure is. Built
from the ranking report (scoring.queries.RankingReport); no rule is decided here."""

from __future__ import annotations

from decimal import Decimal


def _points(value: Decimal) -> str:
    return f"{value} points"  # two decimals: "1.00 points", as a figure with decimals reads


def verdict(report) -> str:
    """One sentence: who leads, with what, by how much over whom, and how firm that is."""
    ranking, s = report.ranking, report.sensitivity
    top = report.data.reg.scoring.scale_max
    scored = [r for r in ranking.bids if r.total is not None]
    if not scored:
        return "No bid has a weighted total yet: no submitted scorecard counts."
    firmness = {True: "; the ranking is robust (see “How stable the ranking is”)",
                False: "; the ranking is sensitive to small changes (see “How stable the ranking is”)"}.get(
                    s.robust, "")
    leaders = [r for r in scored if r.rank == 1]
    if len(leaders) > 1:
        names = ", ".join(report.bid(r.bid_id).title for r in leaders[:-1])
        return (f"{names} and {report.bid(leaders[-1].bid_id).title} are tied for first place with a weighted "
                f"total of {leaders[0].total} out of {top}{firmness}.")
    first = leaders[0]
    name = report.bid(first.bid_id).title
    if len(scored) == 1:
        return f"{name} is the only bid with a weighted total: {first.total} out of {top}."
    second = scored[1]
    return (f"{name} leads with a weighted total of {first.total} out of {top}, "
            f"{_points(first.total - second.total)} of weighted score ahead of {report.bid(second.bid_id).title} "
            f"({second.total}){firmness}.")


def disagreements(result) -> list[str]:
    """The criteria of one bid on which the members disagree, each with the reason (empty when they agree)."""
    return [f"({c.key}) {c.label}: {c.disagreement_reason}" for c in result.criteria if c.disagreement]
