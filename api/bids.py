"""The bids: one bid in the import's JSON shape with its status, version, compliance and documents; what it commits
the organiser to pay; the bids of a call the caller may see."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import undefer

from api.auth import api_error, api_user
from api.routing import operation
from api.shapes import Amount, Instant, OpenShape, Shape, amount_or_none
from bids import judged
from bids.models import Bid
from bids.presenters import bid_cost, consultation_of
from bids.rules import is_compliant
from bids.services import bids_visible_to, can_see
from bids.shape import bid_to_json
from core.db import db, utcnow
from core.findings import Outcome
from core.urls import external_url
from events.services import get_event
from scoring.queries import declaration_required

DECLARE_FIRST = "A WCOC member who has not declared their conflicts of interest for the call yet"
NOT_FOUND = "No bid with this id that the caller may see"


class Finding(Shape):
    """One item of the compliance report (core.findings.Finding)."""

    code: str
    article: str
    field: str
    outcome: Outcome
    message: str
    value: str
    kind: str
    cite: str


class Compliance(Shape):
    compliant: bool
    findings: list[Finding]


class Document(Shape):
    """A document attached to the bid; `signature` only for a kind whose signature is checked."""

    id: int
    kind: str
    name: str
    sha256: str
    size_bytes: int
    uploaded_at: Instant
    signature: str = ""


class Consultation(Shape):
    """Art. 15.1 on a sponsor's bid: where FIDE's consultation of the host federation stands
    (bids.consultation.ConsultationState), what the pages say of it, and whether it keeps the bid from being
    selected. `cite` is the article it rests on: 15.1, or 16 for a case the President decided."""

    state: str
    cite: str
    text: str
    blocks_selection: bool


class BidDetail(OpenShape):
    """A bid: the keys of the JSON import's shape (bids.shape, which declares them) with these added;
    `consultation` only on a sponsor's bid (a federation's bid has none)."""

    id: int
    event: str
    status: str
    version: int
    prize_fund_eur: Amount | None = None
    fide_contribution_eur: Amount | None = None
    compliance: Compliance
    documents: list[Document]
    consultation: Consultation | None = None


class BidObligations(Shape):
    """finance.rules' obligations and payment schedule of the bid, each line with its call's article."""

    bid: int
    obligations: dict[str, Any]
    schedule: dict[str, Any]


class BidSummary(Shape):
    id: int
    applicant_name: str | None
    venue_city: str | None
    venue_country: str | None
    status: str
    version: int
    prize_fund_eur: Amount | None
    url: str


class EventBids(Shape):
    event: str
    bids: list[BidSummary]


def _visible_bid(bid_id: int) -> Bid | None:
    bid = db.session.get(Bid, bid_id, options=[undefer(Bid.judged_report)])  # the report kept with it is shown
    if bid is None or not can_see(api_user(), bid):
        return None
    return bid


def _declaration_gate(event, owner_id: int | None = None):
    """403 for a WCOC member who must declare their conflicts before seeing a bid of the call
    (scoring.queries.declaration_required, the gate of every page showing a bid); None lets them in."""
    message = declaration_required(api_user(), event, owner_id=owner_id)
    return None if message is None else api_error(403, message)


def bid_detail(bid: Bid) -> BidDetail:
    """The import's JSON shape, with status, version and compliance added (reviewers read the submitted data,
    which is what the bid holds while it is not a draft). Raises pydantic.ValidationError if the bid's JSON
    breaks the declared keys."""
    findings = judged.findings_of(bid, today=utcnow().date())  # the report kept with the bid while it holds
    consulted = consultation_of(bid)
    extra = {} if consulted is None else {"consultation": {
        "state": consulted["state"].value, "text": consulted["text"],
        "cite": consulted["ruling"]["cite"] if consulted["ruling"] else f"Art. {consulted['article']}",
        "blocks_selection": consulted["blocks_selection"]}}
    return BidDetail.model_validate({
        "id": bid.id, "event": bid.event.slug, **bid_to_json(bid.to_data()), "status": bid.status,
        "version": bid.version,
        "compliance": {"compliant": is_compliant(findings), "findings": [f.as_dict() for f in findings]},
        "documents": [d.as_dict() for d in bid.current_documents().values()], **extra})


@operation("/bids/<int:bid_id>", operation_id="getBid",
           summary="A bid in the import's JSON shape, with status, version and compliance", response=BidDetail,
           errors={403: DECLARE_FIRST, 404: NOT_FOUND})
def bid(bid_id: int):
    found = _visible_bid(bid_id)
    if found is None:
        return api_error(404, f"No bid {bid_id} that you may see.")
    return _declaration_gate(found.event, found.owner_id) or bid_detail(found)


@operation("/bids/<int:bid_id>/obligations", operation_id="getBidObligations",
           summary="What the bid commits the organiser to pay and when, each line with its call's article",
           response=BidObligations, errors={403: DECLARE_FIRST, 404: NOT_FOUND, 409: "Figures missing"})
def bid_obligations(bid_id: int):
    found = _visible_bid(bid_id)
    if found is None:
        return api_error(404, f"No bid {bid_id} that you may see.")
    if gate := _declaration_gate(found.event, found.owner_id):
        return gate
    cost = bid_cost(found.event.regulation, found.to_data(),
                    signal_blocker_required=found.event.signal_blocker_required)
    if cost is None:
        return api_error(409, "The bid does not state its prize fund, FIDE contribution and venue country yet.")
    ob, schedule = cost
    return BidObligations(bid=found.id, obligations=ob.as_dict(), schedule=schedule.as_dict())


@operation("/events/<slug>/bids", operation_id="listEventBids", summary="The bids of a call that the caller may see",
           response=EventBids, errors={404: "No call with this slug"})
def event_bids(slug: str):
    ev = get_event(slug)
    if ev is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    rows = db.session.scalars(bids_visible_to(api_user(), ev).order_by(Bid.id)).unique().all()
    return EventBids(event=slug, bids=[
        BidSummary(id=b.id, applicant_name=b.applicant_name, venue_city=b.venue_city, venue_country=b.venue_country,
                   status=b.status, version=b.version, prize_fund_eur=amount_or_none(b.prize_fund_eur),
                   url=external_url("api.bid", bid_id=b.id))
        for b in rows])
