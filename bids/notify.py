"""Messages to bidders about their bid, written into the outbox (operations.outbox delivers them)."""

from __future__ import annotations

from datetime import datetime

from bids.models import Bid
from core.urls import external_url, path_for
from operations import outbox


def queue_rejection(bid: Bid, *, actor, now: datetime) -> outbox.OutboxMessage:
    """The notice to the bid's contact (and the account owner) that FIDE rejected the bid, with the reason; written
    in the transaction that rejects it (bids.services.reject_bid)."""
    rejection = bid.event.regulation.citation("rejection")
    body = (f"Dear {bid.contact_name or bid.owner.name},\n\n"
            f"FIDE has rejected your bid for {bid.event.title} under {rejection} of the regulations.\n\n"
            f"Reason: {bid.rejection_reason}\n\n"
            f"Your bid: {external_url('bids.view', bid_id=bid.id)}\n\n"
            "FIDE secretariat, through Gambit\n")
    return outbox.queue([e for e in (bid.contact_email, bid.owner.email) if e],
                        f"Your bid for {bid.event.title} was rejected", body, kind="bid.rejected",
                        about=outbox.About("bid", bid.id, bid.title, path_for("bids.view", bid_id=bid.id)),
                        user_id=bid.owner_id, actor=actor, now=now)
