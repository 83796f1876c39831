"""Telling every bidder the outcome: one message per bid decided on, written into the outbox in the transaction that
records the decision (operations.outbox delivers it)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from bids.lifecycle import BidStatus
from bids.models import Bid
from board.models import Decision
from core.db import db
from core.money import format_day
from core.urls import external_url, path_for
from finance.rules import contract_article
from operations import outbox


def queue_notices(decision: Decision, *, actor, now: datetime) -> list[outbox.OutboxMessage]:
    """Write the notice to the contact (and the account owner) of every bid the Board decided on; returns the
    messages. Called by board.services.record_decision for the first decision and for every correction, so every
    path that records one tells the bidders."""
    event = decision.event
    bids = db.session.scalars(select(Bid).where(Bid.event_id == event.id, Bid.status.in_(
        [BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value])).order_by(Bid.id)).all()
    selection = event.regulation.citation("selection")
    # Who decided, as recorded: the Board by vote, or the President alone, and then why no Board meeting could be
    # held and whom of the WCOC the President consulted (Art. 15.5 allows nothing else).
    who = "The FIDE Presidential Board" if decision.how.by_vote else "The FIDE President"
    grounds = "" if decision.how.by_vote else f"{decision.grounds}\n\n"
    about = outbox.About("decision", decision.id, f"Decision on the {event.title}",
                         path_for("board.decision", slug=event.slug))
    # A correction says so first: what it mends, and whether the bid selected changed (the contract of a bid no
    # longer selected is closed by the correction, contracts/).
    corrected = decision.corrects
    correction = ""
    if corrected is not None:
        changed = ("it selects another bid than the decision it corrects, which had selected "
                   f"{corrected.selected_bid.title}" if corrected.selected_bid_id != decision.selected_bid_id
                   else "the bid selected is the same")
        correction = (f"The decision of {format_day(corrected.decided_on)} on the {event.title} is corrected "
                      f"({decision.correction_reason.rstrip('.')}); {changed}. This notice replaces the one you "
                      "received about it.\n\n")
    messages = []
    for bid in bids:
        chosen = bid.id == decision.selected_bid_id
        subject = (f"{event.title}: {'correction: ' if corrected is not None else ''}"
                   f"{'your bid is selected' if chosen else 'the decision on your bid'}")
        body = (f"Dear {bid.contact_name or bid.owner.name},\n\n" + correction
                + (f"{who} has selected your bid to organise the {event.title} ({selection}). "
                   "FIDE will send you the contract covering the organisation and the terms of payment "
                   f"(Art. {contract_article(event.regulation)}).\n\n" if chosen else
                   f"{who} has decided on the {event.title} ({selection}) and selected "
                   f"another bid. Thank you for bidding.\n\n")
                + grounds
                + f"Your bid: {external_url('bids.view', bid_id=bid.id)}\n\n"
                  "FIDE secretariat, through Gambit\n")
        messages.append(outbox.queue([e for e in (bid.contact_email, bid.owner.email) if e], subject, body,
                                     kind="decision.notice", about=about, user_id=bid.owner_id, actor=actor,
                                     now=now))
    return messages
