"""A bidder's draft in the call's practice round, made straight through the services in the live app, for the
browser tests that walk the bid form."""

from __future__ import annotations

EMAIL = "nino@georgia.example.org"


def draft_bid(live, *, password: str) -> int:
    """Seed the calls, make the Georgian federation's bidder (EMAIL, `password`) and a draft of theirs in the
    practice call; its id."""
    from accounts.services import create_user
    from bids.services import create_bid
    from core.auth import Role
    from core.db import db, utcnow
    from demo.seed import seed_events
    from events.services import get_event

    with live.app.app_context():
        now = utcnow()
        seed_events(now=now)
        owner = create_user(email=EMAIL, password=password, name="Nino Bidder", organisation="Georgian Chess "
                            "Federation", federation="GEO", applicant_type="federation", roles=[Role.BIDDER],
                            actor=None, now=now)
        bid = create_bid(get_event("fwwcm-practice"), owner=owner, actor=owner, now=now)
        db.session.commit()
        bid_id = bid.id
        db.session.remove()
    return bid_id
