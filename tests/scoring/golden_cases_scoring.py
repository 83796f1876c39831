"""Seeded inputs for the ranking and its sensitivity, and their outputs as canonical JSON.

`tests/scoring/golden_arithmetic_scoring.json` holds, per case, the SHA-256 of `canonical(case)` as the code before
issue 15's rewrite of the arithmetic computed it (exact Fractions everywhere), with its leaders and verdict to read.
`python -m tests.scoring.golden_cases_scoring` prints the file again from the code in place (after a deliberate change
of a message or a figure, and only then).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import sys
from decimal import Decimal
from fractions import Fraction

from events.regulation import Criterion, default_event_file, load_regulation_file

REG = load_regulation_file(default_event_file())


def _reg(criteria: int, weights: list[Decimal], **scoring):
    base = REG.criteria
    crits = tuple(Criterion(f"{base[i % len(base)].key}{i // len(base) or ''}", base[i % len(base)].article,
                            base[i % len(base)].label, w) for i, w in zip(range(criteria), weights, strict=True))
    return dataclasses.replace(REG, criteria=crits, scoring=dataclasses.replace(REG.scoring, **scoring))


def make_golden_case(seed: int, bids: int, members: int, criteria: int, *, ties: bool = False,
                     recusals: float = 0.0, missing: float = 0.0, empty_bids: int = 0, zero_weights: int = 0,
                     concentration: str | None = None):
    """A regulation and scorecards: members score around each bid's quality; `recusals` is the chance a member has no
    scorecard on a bid, `missing` the chance a score is None, `empty_bids` bids have no scorecard, `ties` makes the
    first bid strong and copies its scorecards onto the second, `zero_weights` criteria weigh 0. Returns (reg,
    cards, weights, names, member_names)."""
    rng = random.Random(seed)
    weights = [Decimal(rng.choice(["5", "7", "8", "10", "15", "20", "2.5"])) for _ in range(criteria)]
    for i in rng.sample(range(criteria), min(zero_weights, criteria - 1)):
        weights[i] = Decimal(0)
    extra = {"dirichlet_concentration": Decimal(concentration)} if concentration else {}
    reg = _reg(criteria, weights, red_flag_criteria=tuple(c.key for c in REG.criteria[1:3]), **extra)
    sc = reg.scoring
    steps = int((sc.scale_max - sc.scale_min) / sc.step)
    cards: dict[str, dict[str, dict[str, Decimal | None]]] = {}
    for b in range(bids):
        quality = rng.uniform(0.2, 0.9)
        if ties and b == 0:  # the copied bid leads: a tie for first place
            quality = 0.97
        by_member = {}
        for m in range(members):
            if rng.random() < recusals:
                continue
            by_member[f"m{m}"] = {
                c.key: None if rng.random() < missing else
                sc.scale_min + sc.step * max(0, min(steps, round(rng.gauss(quality * steps, steps / 5))))
                for c in reg.criteria}
        cards[f"B{b}"] = by_member
    if ties and bids > 1:
        cards["B1"] = {m: dict(card) for m, card in cards["B0"].items()}
    for b in range(min(empty_bids, bids)):
        cards[f"B{bids - 1 - b}"] = {}
    names = {b: f"Bid {b}" for b in cards}
    member_names = {f"m{m}": f"Member {m}" for m in range(members)}
    return reg, cards, {c.key: c.weight for c in reg.criteria}, names, member_names


GOLDEN_CASES = {
    "bench 20x15x10": dict(seed=2015, bids=20, members=15, criteria=10),
    "ties": dict(seed=1, bids=5, members=4, criteria=10, ties=True),
    "recusals": dict(seed=2, bids=8, members=7, criteria=10, recusals=0.3),
    "missing scores": dict(seed=3, bids=6, members=5, criteria=10, missing=0.15, recusals=0.1),
    "missing scorecards": dict(seed=4, bids=7, members=5, criteria=10, empty_bids=2),
    "one member": dict(seed=5, bids=6, members=1, criteria=10),
    "one bid": dict(seed=6, bids=1, members=5, criteria=10),
    "zero weights": dict(seed=7, bids=6, members=4, criteria=6, zero_weights=2, missing=0.1),
    "spread shares": dict(seed=8, bids=5, members=3, criteria=4, concentration="2"),
    "close bids": dict(seed=9, bids=12, members=15, criteria=10, recusals=0.05),
    "three criteria": dict(seed=10, bids=4, members=2, criteria=3, ties=True),
    "all tied": dict(seed=11, bids=3, members=1, criteria=2, ties=True),
}


def _f(x: Fraction | None) -> str | None:
    return None if x is None else f"{x.numerator}/{x.denominator}"


def canonical(reg, cards, weights, names, member_names, *, rank_bids, assess_sensitivity) -> str:
    """Everything the ranking (means and medians) and the sensitivity say, exact fields included, as sorted JSON."""
    out = {}
    for statistic in ("mean", "median"):
        r = rank_bids(reg, cards, weights, statistic=statistic, names=names)
        d = r.as_dict()
        for bid, res in zip(d["bids"], r.bids, strict=True):
            bid["total_exact"] = _f(res.total_exact)
            for cd, cs in zip(bid["criteria"], res.criteria, strict=True):
                cd["mean_exact"], cd["median_exact"] = _f(cs.mean_exact), _f(cs.median_exact)
        out[statistic] = d
    s = assess_sensitivity(reg, cards, weights, names=names, member_names=member_names)
    d = s.as_dict()
    d["deltas"] = [_f(w.delta) for w in s.swaps]
    d["critical_delta"] = _f(s.critical.delta) if s.critical else None
    out["sensitivity"] = d
    return json.dumps(out, sort_keys=True, default=str)


def golden(rank_bids, assess_sensitivity) -> dict:
    out = {}
    for name, params in GOLDEN_CASES.items():
        case = make_golden_case(**params)
        text = canonical(*case, rank_bids=rank_bids, assess_sensitivity=assess_sensitivity)
        data = json.loads(text)
        out[name] = {"sha256": hashlib.sha256(text.encode()).hexdigest(),
                     "leaders": data["sensitivity"]["leaders"], "summary": data["sensitivity"]["summary"]}
    return out


if __name__ == "__main__":
    from scoring.rules import rank_bids
    from scoring.sensitivity import assess_sensitivity

    json.dump(golden(rank_bids, assess_sensitivity), sys.stdout, indent=1, ensure_ascii=False)
    print()
