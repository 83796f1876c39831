"""Scoring: the ranking plus the sensitivity analysis for 20 bids x 15 members x 10 criteria, with the functions of
bench/bench_scoring.py, and the ranking page around it (in-process, the SQL statements counted)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass


@dataclass
class ScoringResult:
    bids: int
    members: int
    criteria: int
    samples: int
    runs: int
    rank_s: float
    sensitivity_s: float
    total_s: float
    cpu: dict[str, float]  # CPU-time medians of the same runs: steadier when the neighbours are busy
    verdict: str
    page_s: float
    page_runs: int
    page_queries: int
    small_page_queries: int
    small: tuple[int, int]


def run_scoring(*, bids: int = 20, members: int = 15, criteria: int = 10, runs: int = 30,
                page_runs: int = 5, small: tuple[int, int] = (3, 2)) -> ScoringResult:
    """Median times of `rank_bids`, `assess_sensitivity` and both, after one warm-up each (interleaved rounds);
    the ranking page's median time and SQL statements at `bids` x `members`, and its statements at `small`."""
    from bench.bench_scoring import make_case, page_case
    from scoring.rules import rank_bids
    from scoring.sensitivity import assess_sensitivity

    reg, cards = make_case(bids, members, criteria)
    cases = {"rank": lambda: rank_bids(reg, cards), "sensitivity": lambda: assess_sensitivity(reg, cards),
             "total": lambda: (rank_bids(reg, cards), assess_sensitivity(reg, cards))}
    times: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn()
    for _ in range(runs):
        for key, fn in cases.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[key].append(time.perf_counter() - t0)
            cpu[key].append(time.process_time() - c0)
    page_times, page_queries = page_case(bids, members, page_runs)
    _, small_queries = page_case(small[0], small[1], 1)
    return ScoringResult(
        bids=bids, members=members, criteria=criteria, samples=reg.scoring.dirichlet_samples, runs=runs,
        rank_s=statistics.median(times["rank"]), sensitivity_s=statistics.median(times["sensitivity"]),
        total_s=statistics.median(times["total"]), cpu={k: statistics.median(v) for k, v in cpu.items()},
        verdict=assess_sensitivity(reg, cards).summary,
        page_s=statistics.median(page_times), page_runs=len(page_times), page_queries=page_queries,
        small_page_queries=small_queries, small=small)
