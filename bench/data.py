"""Temporary databases for the benchmarks: the 2015 call seeded as `flask seed --demo` does (demo accounts, three
submitted demo bids, a draft), more submitted bids made through the same services until the call holds `bids`
submitted bids, then the demo's scoring (three WCOC members who declared, a weights version, scorecards).

Nothing here is timed; it only builds the data the timed parts read. Everything lives in the folder it is given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

SLUG = "fwwcm-2015"
HOSTS = ("UKR", "GEO", "UAE", "FRA", "NOR", "ARM", "POL", "NED", "KAZ", "CHN")


@dataclass(frozen=True)
class Site:
    """One seeded database: where it is and what the benchmarks need to know about it."""

    folder: Path
    database_url: str
    upload_dir: str
    bids: int
    first_bid_id: int
    admin_email: str
    admin_password: str

    def env(self) -> dict[str, str]:
        """The environment under which a process of the app (gunicorn) uses this database."""
        return {**os.environ, "GAMBIT_INSTANCE": str(self.folder), "DATABASE_URL": self.database_url,
                "UPLOAD_DIR": self.upload_dir, "RATELIMIT_ENABLED": "false", "MAIL_ENABLED": "false"}

    def app_config(self, **extra) -> dict:
        return {"SQLALCHEMY_DATABASE_URI": self.database_url, "UPLOAD_DIR": self.upload_dir,
                "RATELIMIT_ENABLED": False, "MAIL_ENABLED": False, **extra}


def _demo_users() -> tuple[str, list]:
    """The demo's password and accounts, wherever the measured tree keeps them."""
    try:
        from demo.users import DEMO_PASSWORD, DEMO_USERS
    except ImportError:  # an older tree measured with --code keeps them in demo.seed
        from demo.seed import DEMO_PASSWORD, DEMO_USERS  # type: ignore[no-redef]
    return DEMO_PASSWORD, list(DEMO_USERS)


def make_app(site: Site, **extra):
    from app import create_app

    return create_app(site.app_config(**extra))


def build_site(folder: Path, bids: int, *, state: str = "scoring", members: int = 3,
               database_url: str | None = None) -> Site:
    """Seed a fresh database in `folder` (SQLite, or the empty database `database_url` names) with `bids`
    submitted, compliant bids in the 2015 call, scored by the demo's 3 WCOC members and `members - 3` more (their
    submitted scorecards written as rows), and leave the call in `state` ("scoring" or "deliberation")."""
    from sqlalchemy import select

    from accounts.services import create_user, find_user_by_email
    from bids import services as bid_services
    from bids.models import Bid, BidRoomRate
    from core.auth import Role
    from core.db import db, utcnow
    from demo.bids import _demo_bids, _letter, seed_bids
    from demo.scoring import seed_scoring_demo
    from demo.seed import seed_events
    DEMO_PASSWORD, DEMO_USERS = _demo_users()
    from events.services import change_event_status, get_event

    folder.mkdir(parents=True, exist_ok=True)
    site = Site(folder=folder, database_url=database_url or f"sqlite:///{folder / 'gambit.sqlite3'}",
                upload_dir=str(folder / "uploads"), bids=bids, first_bid_id=0,
                admin_email="admin@example.org", admin_password=DEMO_PASSWORD)
    # Cheap password hashes while seeding only: a login verifies with the parameters stored in the hash.
    app = make_app(site, ARGON2_TIME_COST=1, ARGON2_MEMORY_COST=1024)
    with app.app_context():
        db.create_all()
        now = utcnow()
        seed_events(now=now)
        # `seed_demo` without its later steps (scoring, board): the demo accounts and the demo bids.
        for email, name, org, roles, federation, president in DEMO_USERS:
            create_user(email=email, password=DEMO_PASSWORD, name=name, organisation=org, roles=roles,
                        federation=federation, is_president=president, actor=None, now=now,
                        applicant_type=("sponsor" if "sponsor" in email else "federation")
                        if Role.BIDDER in roles else None)
        seed_bids(now=now)
        db.session.commit()
        event = get_event(SLUG)
        reg = event.regulation
        submitted = list(db.session.scalars(select(Bid).where(Bid.event_id == event.id, Bid.status == "submitted")
                                            .order_by(Bid.id)))
        if len(submitted) > bids:
            raise ValueError(f"the demo already holds {len(submitted)} submitted bids; ask for at least that many")
        specs = [s for s in _demo_bids(reg) if s.submit]
        letter = _letter("Bid letter", "We bid to organise the match.")
        guarantee = _letter("Bank guarantee", "Guarantee of the prize fund and FIDE's contribution.")
        when = reg.event.bid_deadline - timedelta(days=9)  # inside the call, before its deadline
        for k in range(len(submitted), bids):
            spec = specs[k % len(specs)]
            host = HOSTS[k % len(HOSTS)]
            owner = create_user(email=f"bidder{k}@bench.example.org", password=DEMO_PASSWORD,
                                name=f"Bidder {k}", organisation=f"Chess Federation {k}", roles=[Role.BIDDER],
                                federation=host, applicant_type="federation", actor=None, now=now)
            bid = bid_services.create_bid(event, owner=owner, actor=owner, now=when)
            values = {**spec.values, "applicant_type": "federation",
                      "applicant_name": f"{spec.values['applicant_name']} {k}", "host_federation": host,
                      "venue_city": f"{spec.values['venue_city']} {k}", "contact_email": owner.email}
            for name, value in values.items():
                setattr(bid, name, value)
            bid.room_rates = [BidRoomRate(position=i, room_type=t, eur_per_night=Decimal(a))
                              for i, (t, a) in enumerate(spec.rates)]
            db.session.flush()
            bid_services.store_document(bid, "signed_letter", filename="signed-bid-letter.pdf", content=letter,
                                        upload_dir=site.upload_dir, max_bytes=10 * 1024 * 1024, actor=owner,
                                        now=when)
            if values.get("guarantee_offered"):
                bid_services.store_document(bid, "guarantee", filename="bank-guarantee.pdf", content=guarantee,
                                            upload_dir=site.upload_dir, max_bytes=10 * 1024 * 1024,
                                            actor=owner, now=when)
            bid_services.submit_bid(bid, actor=owner, now=when + timedelta(hours=1))
        db.session.commit()
        seed_scoring_demo(now=now)
        db.session.commit()
        event = get_event(SLUG)
        _more_members(event, members - 3, now=now)
        db.session.commit()
        if state == "deliberation":
            change_event_status(event, "close_scoring", actor=find_user_by_email(site.admin_email),
                                now=reg.event.bid_deadline + timedelta(days=20), reason="benchmark")
            db.session.commit()
        elif state != "scoring":
            raise ValueError(f"unknown state {state!r}")
        count = len(db.session.scalars(select(Bid.id).where(Bid.event_id == event.id,
                                                            Bid.status == "submitted")).all())
        if count != bids:
            raise RuntimeError(f"seeded {count} submitted bids instead of {bids}")
        first = db.session.scalars(select(Bid.id).where(Bid.event_id == event.id, Bid.status == "submitted")
                                   .order_by(Bid.id)).first()
        db.session.remove()
        db.engine.dispose()
    return Site(**{**site.__dict__, "first_bid_id": first})


def _more_members(event, extra: int, *, now) -> None:
    """`extra` more WCOC members (of no bid's federation), each with a submitted scorecard on every bid before the
    WCOC, written as rows (what scoring.services.save_scorecard leaves), scores spread over the scale."""
    from sqlalchemy import select

    from accounts.services import create_user
    from bids.models import Bid
    from core.auth import Role
    DEMO_PASSWORD, _ = _demo_users()
    from scoring.models import Scorecard, ScorecardScore

    if extra <= 0:
        return
    reg = event.regulation
    sc = reg.scoring
    steps = int((sc.scale_max - sc.scale_min) / sc.step)
    bid_ids = list(db_scalars(select(Bid.id).where(Bid.event_id == event.id, Bid.status == "submitted")
                              .order_by(Bid.id)))
    for m in range(extra):
        member = create_user(email=f"wcoc{m}@bench.example.org", password=DEMO_PASSWORD, name=f"Member {m:02d}",
                             roles=[Role.WCOC], federation="SUI", actor=None, now=now)
        for b, bid_id in enumerate(bid_ids):
            scores = [ScorecardScore(criterion=c.key, comment="",
                                     score=sc.scale_min + sc.step * ((b * 7 + m * 3 + i) % (steps + 1)))
                      for i, c in enumerate(reg.criteria)]
            db_add(Scorecard(bid_id=bid_id, member_id=member.id, status="submitted", version=1, revision=2,
                             created_at=now, updated_at=now, submitted_at=now, scores=scores))


def db_scalars(query):
    from core.db import db

    return db.session.scalars(query)


def db_add(row) -> None:
    from core.db import db

    db.session.add(row)
