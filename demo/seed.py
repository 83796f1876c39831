"""Demo data so that a newcomer finds every page filled. Every function here is idempotent.

The accounts are for local use only: their password is printed in the README.
"""

from __future__ import annotations

from datetime import datetime

from accounts import services as accounts
from core.auth import Role
from events.regulation import SEED_DIR, load_regulation_file
from events.services import load_event

DEMO_PASSWORD = "gambit-demo-2015"
PRACTICE_SLUG = "fwwcm-practice"

# email, name, organisation, roles, federation, president
DEMO_USERS = [
    ("admin@example.org", "Secretariat Admin", "FIDE Secretariat", [Role.ADMIN], None, False),
    ("bidder@example.org", "Oksana Bidder", "Ukrainian Chess Federation", [Role.BIDDER], "UKR", False),
    ("georgia@example.org", "Nino Bidder", "Georgian Chess Federation", [Role.BIDDER], "GEO", False),
    ("sponsor@example.org", "Omar Sponsor", "Gulf Chess Promotions LLC", [Role.BIDDER], "UAE", False),
    ("spain@example.org", "Lucia Bidder", "Federación Española de Ajedrez", [Role.BIDDER], "ESP", False),
    ("wcoc@example.org", "Walter Commission", "WCOC", [Role.WCOC], "GER", False),
    ("wcoc2@example.org", "Olha Commission", "WCOC", [Role.WCOC], "UKR", False),
    ("wcoc3@example.org", "Arjun Commission", "WCOC", [Role.WCOC], "IND", False),
    ("board@example.org", "Beatriz Board", "FIDE Presidential Board", [Role.BOARD], "ESP", False),
    ("president@example.org", "Pavel President", "FIDE", [Role.BOARD], "RUS", True),
]


def seed_events(*, now: datetime) -> list[str]:
    """Load every call in seed_data/events, and a practice call: the 2015 rules moved to the future."""
    out = []
    primary = None
    for path in sorted((SEED_DIR / "events").glob("*.toml")):
        reg = load_regulation_file(path)
        event, changed = load_event(reg, actor=None, now=now, source=str(path.relative_to(SEED_DIR.parent)))
        out.append(f"{'loaded' if changed else 'unchanged'}: {event.slug} {event.regulation_version.label}")
        if primary is None and not reg.event.practice:
            primary = reg
    if primary is not None:
        practice = practice_regulation(primary, now=now)
        event, changed = load_event(practice, actor=None, now=now, source=f"{primary.event.slug} moved in time")
        out.append(f"{'loaded' if changed else 'unchanged'}: {event.slug} {event.regulation_version.label}")
    return out


def practice_regulation(reg, *, now: datetime):
    """The same rules with every date moved by whole years, so that its bid deadline lies ahead of `now`."""
    years = max(1, now.year - reg.event.bid_deadline.year)
    while reg.event.bid_deadline.replace(year=reg.event.bid_deadline.year + years) <= now:
        years += 1
    old_year = str(reg.schedule.window_start.year)
    title = reg.event.title.replace(old_year, str(int(old_year) + years))
    return reg.shifted(years=years, slug=PRACTICE_SLUG, title=f"PRACTICE CALL — {title}")


def seed_demo(*, now: datetime) -> list[str]:
    out = []
    for email, name, org, roles, federation, president in DEMO_USERS:
        if accounts.find_user_by_email(email):
            continue
        accounts.create_user(email=email, password=DEMO_PASSWORD, name=name, organisation=org, roles=roles,
                             federation=federation, is_president=president, actor=None, now=now,
                             applicant_type=("sponsor" if "sponsor" in email else "federation")
                             if Role.BIDDER in roles else None)
        out.append(f"demo account: {email}")
    from demo.bids import seed_bids
    from demo.board import seed_board_demo
    from demo.scoring import seed_scoring_demo

    out += seed_bids(now=now)
    out += seed_scoring_demo(now=now)
    out += seed_board_demo(now=now)
    return out
