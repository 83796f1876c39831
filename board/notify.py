"""Telling every bidder the outcome."""

from __future__ import annotations

import logging

from sqlalchemy import select

from bids.lifecycle import BidStatus
from bids.models import Bid
from board.models import Decision
from core.db import db
from core.mail import MailError, send_mail
from core.urls import external_url
from finance.rules import contract_article

log = logging.getLogger(__name__)


def tell_bidders(decision: Decision) -> tuple[int, list[str]]:
    """Email the contact of every bid the Board decided on. Returns (sent, failures)."""
    event = decision.event
    bids = db.session.scalars(select(Bid).where(Bid.event_id == event.id, Bid.status.in_(
        [BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value]))).all()
    sent, failures = 0, []
    selection = event.regulation.citation("selection")
    # Who decided, as recorded: the Board by vote, or the President alone, and then why no Board meeting could be
    # held and whom of the WCOC the President consulted (Art. 15.5 allows nothing else).
    who = "The FIDE Presidential Board" if decision.how.by_vote else "The FIDE President"
    grounds = "" if decision.how.by_vote else f"{decision.grounds}\n\n"
    for bid in bids:
        chosen = bid.id == decision.selected_bid_id
        to = sorted({e for e in (bid.contact_email, bid.owner.email) if e})
        subject = f"{event.title}: {'your bid is selected' if chosen else 'the decision on your bid'}"
        body = (f"Dear {bid.contact_name or bid.owner.name},\n\n"
                + (f"{who} has selected your bid to organise the {event.title} ({selection}). "
                   "FIDE will send you the contract covering the organisation and the terms of payment "
                   f"(Art. {contract_article(event.regulation)}).\n\n" if chosen else
                   f"{who} has decided on the {event.title} ({selection}) and selected "
                   f"another bid. Thank you for bidding.\n\n")
                + grounds
                + f"Your bid: {external_url('bids.view', bid_id=bid.id)}\n\n"
                  "FIDE secretariat, through Gambit\n")
        try:
            if send_mail(to, subject, body):
                sent += 1
        except MailError as exc:
            log.warning("%s", exc)
            failures.append(str(exc))
    return sent, failures
