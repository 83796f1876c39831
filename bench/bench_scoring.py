"""Benchmark of the scoring arithmetic (Art. 15.5): the ranking plus the full sensitivity analysis.

Run from the project root, `python -m bench.bench_scoring` or `python bench/bench_scoring.py`
(`--runs N`, `--bids`, `--members`, `--criteria`). Prints a markdown section with the median time of N runs;
the budget is the scoring aim, 10 ms for 20 bids x 15 members x 10 criteria with the regulation's 10,000 Dirichlet
samples (`make bench` judges the same aim, `bench/__main__.py`'s SCORING_AIM_S). The first call in a process also
draws the Dirichlet weightings (kept for the next calls with the same weights): its time is printed beside.
Timing is measured here, never asserted in the tests. `--strict` exits with status 1 over budget.

`--page` also times the ranking page end to end (the app on a temporary SQLite database, the 2015 call, bids and
submitted scorecards of `--bids` x `--members`) and counts its SQL statements, which must not depend on the
number of bids or members (tests/scoring/test_views_scoring.py asserts that).
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

BUDGET_SECONDS = 0.010  # ranking + full sensitivity, 20 x 15 x 10: the aim `make bench` judges (SCORING_AIM_S)


def make_case(bids: int, members: int, criteria: int, seed: int = 2015):
    """A regulation with `criteria` criteria (the 2015 ones, repeated with new keys when more are asked) and
    seeded scorecards in which every member scores every bid on the scale."""
    reg = load_regulation_file(default_event_file())
    base = reg.criteria
    # By field name: the code before (`--code`) may have another Criterion (there, `article` was a property).
    names = {f.name for f in dataclasses.fields(Criterion)}

    def criterion(i: int) -> Criterion:
        c = base[i % len(base)]
        values = {"key": f"{c.key}{i // len(base) or ''}", "article": c.article, "label": c.label,
                  "weight": c.weight}
        return Criterion(**{k: v for k, v in values.items() if k in names})

    crits = tuple(criterion(i) for i in range(criteria))
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


def _time(fn, runs: int, first: list[float] | None = None) -> list[float]:
    t0 = time.perf_counter()
    fn()  # warm-up: imports, caches
    if first is not None:
        first.append(time.perf_counter() - t0)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def page_case(bids: int, members: int, runs: int) -> tuple[list[float], int]:
    """Time GET /events/<slug>/scoring/ranking as the secretariat on a fresh temporary database; returns the
    times of `runs` requests after one warm-up and the number of SQL statements of one request."""
    import json
    import tempfile
    from datetime import UTC, datetime

    from sqlalchemy import event as sa_event

    from accounts.services import create_user
    from app import create_app
    from bids.models import Bid, BidVersion
    from core.db import db
    from events.services import load_event
    from scoring.models import ConflictDeclaration, Scorecard, ScorecardScore

    when = datetime(2015, 6, 10, tzinfo=UTC)
    password = "bench password for the ranking page"
    reg, cards = make_case(bids, members, 10)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp}/bench.sqlite3", "UPLOAD_DIR": tmp,
                          "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False, "MAIL_ENABLED": False,
                          "SECRET_KEY": "bench", "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024})
        with app.app_context():
            db.create_all()
            event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=when)
            event.status = "scoring"
            create_user(email="admin@bench.example.org", password=password, name="Admin", roles=["admin"],
                        actor=None, now=when)
            owner = create_user(email="bidder@bench.example.org", password=password, name="Bidder",
                                roles=["bidder"], actor=None, now=when)
            people = [create_user(email=f"m{m}@bench.example.org", password=password, name=f"Member {m}",
                                  roles=["wcoc"], federation="GER", actor=None, now=when) for m in range(members)]
            rows = []
            for b, (_, by_member) in enumerate(cards.items()):
                bid = Bid(event_id=event.id, owner_id=owner.id, status="submitted", version=1,
                          first_submitted_at=when, submitted_at=when, applicant_name=f"Bid {b}",
                          host_federation="UKR", venue_city=f"City {b}")
                bid.versions = [BidVersion(number=1, submitted_at=when, submitted_by_id=owner.id,
                                           regulation_version_id=event.regulation_version_id, data="{}",
                                           documents="[]", compliance="[]", compliant=True, sha256="0" * 64)]
                rows.append(bid)
                for person, card in zip(people, by_member.values(), strict=True):
                    rows.append(Scorecard(bid=bid, member_id=person.id, status="submitted", version=1,
                                          submitted_at=when, created_at=when, updated_at=when, scores=[
                                              ScorecardScore(criterion=k, score=v, comment="")
                                              for k, v in card.items() if k in {c.key for c in reg.criteria}]))
            db.session.add_all(rows)
            db.session.flush()
            ids = json.dumps([r.id for r in rows if isinstance(r, Bid)])
            db.session.add_all(ConflictDeclaration(event_id=event.id, member_id=p.id, has_conflict=False,
                                                   covered_bid_ids=ids, confirmed_at=when) for p in people)
            db.session.commit()
            engine = db.engine
        client = app.test_client()
        client.post("/login", data={"email": "admin@bench.example.org", "password": password})
        url = "/events/fwwcm-2015/scoring/ranking"
        statements: list[str] = []

        def count(conn, cursor, statement, *args):
            statements.append(statement)

        sa_event.listen(engine, "before_cursor_execute", count)
        assert client.get(url).status_code == 200
        sa_event.remove(engine, "before_cursor_execute", count)
        times = _time(lambda: client.get(url), runs)
        with app.app_context():
            db.engine.dispose()
    return times, len(statements)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--bids", type=int, default=20)
    p.add_argument("--members", type=int, default=15)
    p.add_argument("--criteria", type=int, default=10)
    p.add_argument("--strict", action="store_true", help="exit with status 1 when the median is over budget")
    p.add_argument("--page", action="store_true", help="also time the ranking page on a temporary database")
    args = p.parse_args(argv)

    reg, cards = make_case(args.bids, args.members, args.criteria)
    cases = [
        ("ranking (`rank_bids`)", lambda: rank_bids(reg, cards)),
        ("sensitivity (`assess_sensitivity`)", lambda: assess_sensitivity(reg, cards)),
        ("ranking + full sensitivity", lambda: (rank_bids(reg, cards), assess_sensitivity(reg, cards))),
    ]
    rows = []
    first: list[float] = []
    for name, fn in cases:
        times = _time(fn, args.runs, first)
        rows.append((name, statistics.median(times), min(times), max(times)))
    total = rows[-1][1]
    verdict = assess_sensitivity(reg, cards).summary

    print("## Scoring: ranking and sensitivity\n")
    print(f"{args.bids} bids x {args.members} members x {args.criteria} criteria, "
          f"{reg.scoring.dirichlet_samples:,} Dirichlet samples, {args.runs} runs after one warm-up "
          f"(Python {sys.version.split()[0]}).\n")
    print("| case | median | min | max |")
    print("|---|---:|---:|---:|")
    for name, med, lo, hi in rows:
        print(f"| {name} | {med * 1000:.1f} ms | {lo * 1000:.1f} ms | {hi * 1000:.1f} ms |")
    status = "within" if total <= BUDGET_SECONDS else "OVER"
    print(f"\nBudget {Decimal(str(BUDGET_SECONDS)) * 1000:.0f} ms for ranking + full sensitivity: "
          f"**{status} budget** ({total * 1000:.1f} ms median; the first call of the process, which also draws the "
          f"Dirichlet weightings: {first[0] * 1000:.1f} ms for the ranking, {first[1] * 1000:.1f} ms for the "
          "sensitivity).\n")
    print(f"Verdict on the generated data: {verdict}")
    if args.page:
        times, queries = page_case(args.bids, args.members, max(3, args.runs // 5))
        print(f"\nThe ranking page (`GET /events/<slug>/scoring/ranking`, {args.bids} bids x {args.members} "
              f"members on SQLite): median {statistics.median(times) * 1000:.1f} ms over {len(times)} requests, "
              f"{queries} SQL statements per request.")
    return 1 if args.strict and status == "OVER" else 0


if __name__ == "__main__":
    raise SystemExit(main())
