"""Benchmark of the scoring arithmetic (Art. 15.5): the ranking plus the full sensitivity analysis.

Run from the project root, `python -m bench.bench_scoring` or `python bench/bench_scoring.py`
(`--runs N`, `--bids`, `--members`, `--criteria`). Prints a markdown section with the median time of N runs;
the budget is 0.25 s for 20 bids x 15 members x 10 criteria with the regulation's 10,000 Dirichlet samples.
Timing is measured here, never asserted in the tests. `--strict` exits with status 1 over budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from events.regulation import Criterion, default_event_file, load_regulation_file  # noqa: E402
from scoring.rules import rank_bids  # noqa: E402
from scoring.sensitivity import assess_sensitivity  # noqa: E402

BUDGET_SECONDS = 0.25


def make_case(bids: int, members: int, criteria: int, seed: int = 2015):
    """A regulation with `criteria` criteria (the 2015 ones, repeated with new keys when more are asked) and
    seeded scorecards in which every member scores every bid on the scale."""
    reg = load_regulation_file(default_event_file())
    base = reg.criteria
    crits = tuple(Criterion(f"{base[i % len(base)].key}{i // len(base) or ''}", base[i % len(base)].label,
                            base[i % len(base)].weight) for i in range(criteria))
    reg = dataclasses.replace(reg, criteria=crits)
    sc = reg.scoring
    steps = int((sc.scale_max - sc.scale_min) / sc.step)
    rng = random.Random(seed)
    cards = {}
    for b in range(bids):
        quality = rng.uniform(0.3, 0.8)  # bids differ, members roughly agree around each bid's quality
        cards[f"bid-{b:02d}"] = {
            f"member-{m:02d}": {
                c.key: sc.scale_min + sc.step * max(0, min(steps, round(rng.gauss(quality * steps, steps / 6))))
                for c in crits
            }
            for m in range(members)
        }
    return reg, cards


def _time(fn, runs: int) -> list[float]:
    fn()  # warm-up: imports, caches
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--bids", type=int, default=20)
    p.add_argument("--members", type=int, default=15)
    p.add_argument("--criteria", type=int, default=10)
    p.add_argument("--strict", action="store_true", help="exit with status 1 when the median is over budget")
    args = p.parse_args(argv)

    reg, cards = make_case(args.bids, args.members, args.criteria)
    cases = [
        ("ranking (`rank_bids`)", lambda: rank_bids(reg, cards)),
        ("sensitivity (`assess_sensitivity`)", lambda: assess_sensitivity(reg, cards)),
        ("ranking + full sensitivity", lambda: (rank_bids(reg, cards), assess_sensitivity(reg, cards))),
    ]
    rows = []
    for name, fn in cases:
        times = _time(fn, args.runs)
        rows.append((name, statistics.median(times), min(times), max(times)))
    total = rows[-1][1]
    verdict = assess_sensitivity(reg, cards).summary

    print("## Scoring (Art. 15.5): ranking and sensitivity\n")
    print(f"{args.bids} bids x {args.members} members x {args.criteria} criteria, "
          f"{reg.scoring.dirichlet_samples:,} Dirichlet samples, {args.runs} runs after one warm-up "
          f"(Python {sys.version.split()[0]}).\n")
    print("| case | median | min | max |")
    print("|---|---:|---:|---:|")
    for name, med, lo, hi in rows:
        print(f"| {name} | {med * 1000:.1f} ms | {lo * 1000:.1f} ms | {hi * 1000:.1f} ms |")
    status = "within" if total < BUDGET_SECONDS else "OVER"
    print(f"\nBudget {Decimal(str(BUDGET_SECONDS)) * 1000:.0f} ms for ranking + full sensitivity: "
          f"**{status} budget** ({total * 1000:.1f} ms median).\n")
    print(f"Verdict on the generated data: {verdict}")
    return 1 if args.strict and status == "OVER" else 0


if __name__ == "__main__":
    raise SystemExit(main())
