"""Contracts for tests: a selected bid (the Board's decision made directly: the row's status set to "selected"),
its contract generated and issued through the services, with a stand-in PDF renderer when the PDF itself is not
what the test is about (WeasyPrint takes a second; the access matrix makes hundreds of contracts).

The functions work inside an application context and flush (the caller commits or lets the test roll back);
`ContractFactory` opens its own context and commits, returning ids, for tests that drive the web client.
"""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta

from pypdf import PdfWriter

from accounts.models import User
from bids.models import Bid
from bids.services import apply_data
from contracts import services
from contracts.models import Contract
from core.db import db
from events.models import Event
from tests.bids.factories import valid_bid

SELECTED_AT = datetime(2015, 6, 5, 12, 0, tzinfo=UTC)
ISSUED_AT = datetime(2015, 6, 10, 9, 0, tzinfo=UTC)


def fake_render(contract, terms, *, draft: bool, checkpoint=None) -> bytes:
    """A one-page blank PDF (pypdf, no WeasyPrint: tests of the PDF itself render the real one) that differs per
    contract through its title (so each stored file has its own hash); Gambit signs it like the real one."""
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_metadata({"/Title": f"{contract.reference} {'draft' if draft else 'issued'}"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def selected_bid(event_id: int, owner_id: int, *, actor=None, now: datetime = SELECTED_AT, **overrides) -> Bid:
    """A complete bid of the call (tests/bids/factories.valid_bid with `overrides`), selected by the Board."""
    event = db.session.get(Event, event_id)
    owner = db.session.get(User, owner_id)
    # Made directly, as the scoring factories make theirs: the 2015 call's deadline has passed, so the lifecycle's
    # guard would (rightly) refuse to submit it now.
    bid = Bid(event_id=event.id, owner_id=owner.id, status="selected", version=0, revision=1, created_at=now,
              updated_at=now, first_submitted_at=now, submitted_at=now, consultation="pending")
    db.session.add(bid)
    # The contract tests were written for the first opening date of the window (11 October 2015); a contract does
    # not judge the bid's compliance again, so they keep it (tests/bids/test_schedule_rules judges the dates).
    reg = event.regulation
    first = reg.possible_opening_dates()[0]
    dates = {"opening_date": first, "closing_date": first + timedelta(days=min(reg.closing_offsets()))}
    apply_data(bid, valid_bid(reg, **(dates | overrides)))
    db.session.flush()
    return bid


def proposed_dates(contract: Contract) -> dict[str, date]:
    """The dates the issue form proposes for the milestones the contract dates (the stipends: the closing date)."""
    return {m.key: m.default_due for m in services.build_terms(contract).milestones
            if m.needs_due_date and m.default_due is not None}


def issued_contract(bid: Bid, *, admin, upload_dir: str, now: datetime = ISSUED_AT, due_dates=None, render=fake_render,
                    signal_blocker_required: bool = True) -> Contract:
    """The bid's contract, generated and issued (due dates: `due_dates`, else the proposed ones). The call first
    records `signal_blocker_required` (Art. 14.3, the secretariat's answer, which the contract follows): the money
    tests were written with FIDE requiring it."""
    bid.event.signal_blocker_required = signal_blocker_required
    contract = services.create_contract(bid, actor=admin, now=now)
    dates = proposed_dates(contract) if due_dates is None else due_dates
    return services.issue_contract(contract, due_dates=dates, actor=admin, now=now, upload_dir=upload_dir,
                                   render=render)


def milestone(contract: Contract, key: str):
    for m in contract.milestones:
        if m.key == key:
            return m
    raise KeyError(key)


class ContractFactory:
    """Makes committed rows for tests that drive the web client; returns ids."""

    def __init__(self, app, make):
        self.app = app
        self.make = make
        self.count = 0

    def admin(self) -> int:
        self.count += 1
        return self.make.user(roles=("admin",), email=f"secretariat{self.count}-{id(self)}@example.org")

    def organizer(self) -> int:
        self.count += 1
        return self.make.user(roles=("bidder",), email=f"organizer{self.count}-{id(self)}@example.org")

    def contract(self, event_id: int, *, owner_id: int | None = None, admin_id: int | None = None,
                 issue: bool = True, signal_blocker_required: bool = True, **overrides) -> int:
        """A selected bid of `owner_id` (a new bidder if None) and its contract, issued unless `issue=False`; the
        call records `signal_blocker_required` first (Art. 14.3), as issued_contract does."""
        owner_id = owner_id or self.organizer()
        admin_id = admin_id or self.admin()
        with self.app.app_context():
            admin = db.session.get(User, admin_id)
            bid = selected_bid(event_id, owner_id, **overrides)
            if issue:
                contract = issued_contract(bid, admin=admin, upload_dir=self.app.config["UPLOAD_DIR"],
                                           signal_blocker_required=signal_blocker_required)
            else:
                bid.event.signal_blocker_required = signal_blocker_required
                contract = services.create_contract(bid, actor=admin, now=ISSUED_AT)
            db.session.commit()
            return contract.id
