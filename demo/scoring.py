"""Demo scoring: the 2015 call moved into scoring, three WCOC members who declared (one conflict declared, one
recused by federation), a weights version with its reason, and scorecards, so that a newcomer finds every
scoring page filled. Made through the real services at dates after the bid deadline. Idempotent: run it again
and nothing changes.

Call it after `demo.bids.seed_bids` (it scores the bids that one submitted): `seed_scoring_demo(now=now)`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import select

from accounts.services import create_user, find_user_by_email
from core.auth import Role
from core.db import db
from demo.users import DEMO_PASSWORD
from events.lifecycle import EventStatus
from events.services import change_event_status, get_event
from scoring import services
from scoring.models import Scorecard
from scoring.queries import current_weights_version, declaration_of, load_scoring

# The demo's WCOC accounts (demo.users.DEMO_USERS; made here, with these names and federations, only when
# missing): email, name, federation, the bids (by host federation) they declare a conflict with, and why.
# wcoc2 belongs to the Ukrainian federation in the demo, so it is recused from the Ukrainian bid by federation.
MEMBERS = [
    ("wcoc@example.org", "Walter Commission", "GER", (), ""),
    ("wcoc2@example.org", "Olha Commission", "UKR", (), ""),
    ("wcoc3@example.org", "Arjun Commission", "IND", ("UAE",), "I advised Gulf Chess Promotions on its 2014 events."),
]
# A member's leaning per host federation, on the 0-5 scale; the criteria add a little variation around it.
LEANING = {"UKR": Decimal("3.5"), "GEO": Decimal("3"), "UAE": Decimal("4")}


def _score(reg, base: Decimal, i: int, j: int) -> Decimal:
    sc = reg.scoring
    value = base + sc.step * ((i * 3 + j) % 3 - 1)
    return min(max(value, sc.scale_min), sc.scale_max)


def seed_scoring_demo(*, now: datetime, slug: str = "fwwcm-2015") -> list[str]:
    """Move the call into scoring (closing it first if it is open) and fill in declarations, a weights version and
    scorecards. Does nothing for a call that is missing or past scoring. Returns what it did, one line each."""
    out: list[str] = []
    event = get_event(slug)
    admin = find_user_by_email("admin@example.org")
    if event is None or event.state in (EventStatus.DELIBERATION, EventStatus.DECIDED):
        return out
    reg = event.regulation
    day = reg.event.bid_deadline + timedelta(days=1)
    if event.state is EventStatus.OPEN:
        change_event_status(event, "close", actor=admin, now=day, reason="The bid deadline has passed.")
        out.append(f"demo: {event.slug} closed for bids")
    if event.state is EventStatus.CLOSED:
        change_event_status(event, "open_scoring", actor=admin, now=day + timedelta(days=2),
                            reason="The compliance gate is applied.")
        out.append(f"demo: {event.slug} open for scoring")

    members = []
    for email, name, federation, _, _ in MEMBERS:
        user = find_user_by_email(email)
        if user is None:
            user = create_user(email=email, password=DEMO_PASSWORD, name=name, organisation="WCOC",
                               roles=[Role.WCOC], federation=federation, actor=None, now=now)
            out.append(f"demo account: {email}")
        members.append(user)

    data = load_scoring(event)
    for user, (_, _, _, hosts, reason) in zip(members, MEMBERS, strict=True):
        if declaration_of(event, user) is None:
            conflicted = [b for b in data.bids if b.host_federation in hosts]
            services.declare_conflicts(event, user, has_conflict=bool(conflicted), conflicted=conflicted,
                                       reason=reason, listed=data.bids, actor=user, now=day + timedelta(days=3))
            out.append(f"demo declaration: {user.name}" + (f" (conflict: {reason})" if conflicted else ""))

    if current_weights_version(event) is None:
        weights = {c.key: c.weight for c in reg.criteria}
        key = "c" if "c" in weights else reg.criteria[0].key
        weights[key] += 3
        criterion = reg.criterion(key)  # its article from the call's data, like every citation shown
        reason = (f"After the venue inspections the WCOC asked for more weight on {criterion.label[0].lower()}"
                  f"{criterion.label[1:]} (Art. {criterion.article}).")
        assert admin is not None  # seed_demo made the admin account first
        services.change_weights(event, weights, reason=reason, actor=admin, now=day + timedelta(days=4))
        out.append("demo weights: version 1")

    data = load_scoring(event)
    when = day + timedelta(days=6)
    for i, user in enumerate(members):
        due = data.due(user)
        for j, bid in enumerate(due):
            if db.session.scalars(select(Scorecard).where(Scorecard.bid_id == bid.id,
                                                          Scorecard.member_id == user.id)).first():
                continue
            base = LEANING.get(bid.host_federation or "", Decimal("3"))
            scores = {c.key: _score(reg, base, i, j + k) for k, c in enumerate(reg.criteria)}
            comments = {c.key: f"{c.label}: as the bid describes it, confirmed at the inspection."
                        for c in reg.criteria}
            # The last member leaves their last scorecard as a draft: it shows on the progress page, not in the
            # ranking.
            submit = not (i == len(members) - 1 and j == len(due) - 1)
            services.save_scorecard(bid, user, scores=scores, comments=comments, revision=0, submit=submit,
                                    actor=user, now=when + timedelta(hours=i * 3 + j))
            out.append(f"demo scorecard: {user.name} on {bid.title} ({'submitted' if submit else 'draft'})")
    return out
