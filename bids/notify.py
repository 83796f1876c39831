"""Messages to bidders about their bid."""

from __future__ import annotations

import logging

from bids.models import Bid
from core.mail import MailError, send_mail
from core.urls import external_url

log = logging.getLogger(__name__)


def tell_bidder_rejected(bid: Bid) -> bool:
    """Email the bid's contact (and the account owner) that FIDE rejected the bid, with the reason.
    Returns True when sent; a failure to send is logged, not raised: the reason also shows on the bid's page."""
    rejection = bid.event.regulation.citation("rejection")
    to = sorted({e for e in (bid.contact_email, bid.owner.email) if e})
    body = (f"Dear {bid.contact_name or bid.owner.name},\n\n"
            f"FIDE has rejected your bid for {bid.event.title} under {rejection} of the regulations.\n\n"
            f"Reason: {bid.rejection_reason}\n\n"
            f"Your bid: {external_url('bids.view', bid_id=bid.id)}\n\n"
            "FIDE secretariat, through Gambit\n")
    try:
        return send_mail(to, f"Your bid for {bid.event.title} was rejected", body)
    except MailError as exc:
        log.warning("%s", exc)
        return False
