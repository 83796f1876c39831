"""Scoring fixtures: bids as the WCOC sees them (a Bid row and its submitted BidVersion, made directly: the 2015
call's deadline has passed, so `submit_bid` would refuse), WCOC members, declarations and scorecards.

Every helper opens its own application context and commits (the test's outer transaction is rolled back), and
returns ids, so tests never hold an instance across requests.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

from bids.models import Bid, BidVersion
from bids.shape import bid_to_json
from core.db import db
from events.models import Event
from tests.bids.factories import valid_bid

SUBMITTED = datetime(2015, 5, 20, 12, 0, tzinfo=UTC)
SCORING_DAY = datetime(2015, 6, 10, 9, 0, tzinfo=UTC)

FAILED_FINDING = {"code": "prize_fund_minimum", "article": "15.2(c)", "field": "prize_fund_eur", "outcome": "fail",
                  "message": "the prize fund must be at least €200,000.00 net of local taxes", "value": "€150,000.00"}


class ScoringFactory:
    def __init__(self, app, make):
        self.app = app
        self.make = make
        self.count = 0

    # ---- people

    def member(self, *, federation: str | None = None, name: str | None = None, roles=("wcoc",)) -> int:
        self.count += 1
        return self.make.user(roles=roles, email=f"wcoc{self.count}-{id(self)}@example.org",
                              name=name or f"Member {self.count}", federation=federation)

    # ---- bids

    def bid(self, event_id: int, *, city: str = "Lviv", host: str = "UKR", name: str | None = None,
            compliant: bool = True, status: str = "submitted", prize_fund: Decimal | None = None,
            owner_id: int | None = None) -> int:
        """A submitted bid with one BidVersion; `compliant=False` gives it a failed compliance finding."""
        self.count += 1
        if owner_id is None:
            owner_id = self.make.user(roles=("bidder",), email=f"bidder{self.count}-{id(self)}@example.org",
                                      federation=host)
        with self.app.app_context():
            event = db.session.get(Event, event_id)
            reg = event.regulation
            name = name or f"Federation of {city}"
            prize = prize_fund if prize_fund is not None else reg.prize_fund.minimum
            data = valid_bid(reg, applicant_name=name, host_federation=host, venue_city=city,
                             prize_fund_eur=prize)
            bid = Bid(event_id=event_id, owner_id=owner_id, status=status, version=1, revision=2,
                      created_at=SUBMITTED, updated_at=SUBMITTED, first_submitted_at=SUBMITTED,
                      submitted_at=SUBMITTED, applicant_name=name, applicant_type="federation",
                      host_federation=host, venue_city=city, venue_country="UA", prize_fund_eur=prize,
                      rejection_reason="rejected in a test" if status == "rejected" else None)
            db.session.add(bid)
            db.session.flush()
            db.session.add(BidVersion(
                bid_id=bid.id, number=1, submitted_at=SUBMITTED, submitted_by_id=owner_id,
                regulation_version_id=event.regulation_version_id, data=json.dumps(bid_to_json(data)),
                documents="[]", compliance=json.dumps([] if compliant else [FAILED_FINDING]), compliant=compliant,
                sha256="0" * 64))
            db.session.commit()
            return bid.id

    # ---- the call

    def status(self, event_id: int, status: str) -> None:
        with self.app.app_context():
            db.session.get(Event, event_id).status = status
            db.session.commit()

    # ---- scoring through the services

    def declare(self, event_id: int, member_id: int, conflicted: tuple[int, ...] = (), reason: str = "",
                now: datetime = SCORING_DAY) -> None:
        from accounts.models import User
        from scoring.queries import bids_before_reviewers
        from scoring.services import declare_conflicts

        with self.app.app_context():
            event = db.session.get(Event, event_id)
            member = db.session.get(User, member_id)
            listed = bids_before_reviewers(event)
            declare_conflicts(event, member, has_conflict=bool(conflicted),
                              conflicted=[b for b in listed if b.id in conflicted], reason=reason, listed=listed,
                              actor=member, now=now)
            db.session.commit()

    def score(self, bid_id: int, member_id: int, scores: dict[str, str] | str = "3", *, submit: bool = True,
              comments: dict[str, str] | None = None, now: datetime = SCORING_DAY) -> int:
        """Save (and by default submit) a member's scorecard; a single value scores every criterion with it.
        Returns the scorecard id."""
        from accounts.models import User
        from scoring.models import Scorecard
        from scoring.services import save_scorecard

        with self.app.app_context():
            bid = db.session.get(Bid, bid_id)
            member = db.session.get(User, member_id)
            keys = [c.key for c in bid.event.regulation.criteria]
            values = {k: Decimal(scores) for k in keys} if isinstance(scores, str) else {
                k: Decimal(scores[k]) if scores.get(k) is not None else None for k in keys}
            notes = {k: f"comment on ({k})" for k in keys} if comments is None else comments
            card = db.session.scalars(db.select(Scorecard).filter_by(bid_id=bid_id, member_id=member_id)).first()
            card = save_scorecard(bid, member, scores=values, comments=notes, revision=card.revision if card else 0,
                                  submit=submit, actor=member, now=now)
            db.session.commit()
            return card.id
