"""The read-only JSON API, /api/v1. Amounts are strings with two decimals; dates are ISO dates."""

from __future__ import annotations

from flask import Blueprint, jsonify, url_for
from sqlalchemy import select

from api.auth import api_error, api_login_required, api_user
from api.openapi import openapi_document
from core.db import db, utcnow
from core.money import amount_str
from events.models import Event
from events.services import get_event

bp = Blueprint("api", __name__, url_prefix="/api/v1")


def event_json(event: Event, *, full: bool = False) -> dict:
    reg = event.regulation
    out = {
        "slug": event.slug,
        "title": event.title,
        "status": event.status,
        "practice": reg.event.practice,
        "bid_deadline": reg.event.bid_deadline.isoformat(),
        "regulation": {"version": event.regulation_version.number, "sha256": event.regulation_version.sha256},
        "url": url_for("events.public", slug=event.slug, _external=True),
    }
    if full:
        s = reg.schedule
        out.update({
            "window": {"start": s.window_start.isoformat(), "end": s.window_end.isoformat(),
                       "article": s.window_article},
            "possible_opening_dates": [d.isoformat() for d in reg.possible_opening_dates()],
            "players": [{"name": p.name, "federation": p.federation, "country": p.country} for p in reg.players],
            "prize_fund": {"minimum": amount_str(reg.prize_fund.minimum), "article": reg.prize_fund.bid_article,
                           "net_of_taxes_required": reg.prize_fund.net_of_taxes_required},
            "fide_contribution": {"min_share_of_prize_fund": str(reg.fide_contribution.min_share_of_prize_fund),
                                  "article": reg.fide_contribution.bid_article},
            "hotel": {"min_stars": reg.hotel.min_stars, "article": reg.hotel.article},
            "inspection": {"min_inspectors": reg.inspection.min_inspectors, "article": reg.inspection.article},
            "criteria": [{"key": c.key, "label": c.label, "weight": str(c.weight), "article": c.article}
                         for c in reg.criteria],
        })
    return out


@bp.route("/events")
@api_login_required
def events():
    rows = db.session.scalars(select(Event).order_by(Event.id)).all()
    return jsonify({"events": [event_json(e) for e in rows]})


@bp.route("/events/<slug>")
@api_login_required
def event(slug: str):
    ev = get_event(slug)
    if ev is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    return jsonify(event_json(ev, full=True))


@bp.route("/openapi.json")
def openapi():
    return jsonify(openapi_document())


# ----------------------------------------------------------------------------------------------------- bids


def _visible_bid(bid_id: int):
    from bids.models import Bid
    from bids.services import can_see

    bid = db.session.get(Bid, bid_id)
    if bid is None or not can_see(api_user(), bid):
        return None
    return bid


def _declaration_gate(event, owner_id: int | None = None):
    """403 for a WCOC member who must declare their conflicts before seeing a bid of the call
    (scoring.queries.declaration_required, the gate of every page showing a bid); None lets them in."""
    from scoring.queries import declaration_required

    message = declaration_required(api_user(), event, owner_id=owner_id)
    return None if message is None else api_error(403, message)


def bid_json(bid) -> dict:
    """The import's JSON shape, with status, version and compliance added (reviewers read the submitted data,
    which is what the bid holds while it is not a draft)."""
    from bids.rules import is_compliant
    from bids.services import compliance
    from bids.shape import bid_to_json

    findings = compliance(bid, today=utcnow().date())
    return {"id": bid.id, "event": bid.event.slug, **bid_to_json(bid.to_data()), "status": bid.status,
            "version": bid.version,
            "compliance": {"compliant": is_compliant(findings), "findings": [f.as_dict() for f in findings]},
            "documents": [d.as_dict() for d in bid.current_documents().values()]}


@bp.route("/bids/<int:bid_id>")
@api_login_required
def bid(bid_id: int):
    found = _visible_bid(bid_id)
    if found is None:
        return api_error(404, f"No bid {bid_id} that you may see.")
    return _declaration_gate(found.event, found.owner_id) or jsonify(bid_json(found))


@bp.route("/bids/<int:bid_id>/obligations")
@api_login_required
def bid_obligations(bid_id: int):
    from bids.presenters import bid_cost

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
    return jsonify({"bid": found.id, "obligations": ob.as_dict(), "schedule": schedule.as_dict()})


@bp.route("/events/<slug>/bids")
@api_login_required
def event_bids(slug: str):
    from bids.models import Bid
    from bids.services import bids_visible_to

    ev = get_event(slug)
    if ev is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    rows = db.session.scalars(bids_visible_to(api_user(), ev).order_by(Bid.id)).unique().all()
    return jsonify({"event": slug, "bids": [
        {"id": b.id, "applicant_name": b.applicant_name, "venue_city": b.venue_city,
         "venue_country": b.venue_country, "status": b.status, "version": b.version,
         "prize_fund_eur": amount_str(b.prize_fund_eur) if b.prize_fund_eur is not None else None,
         "url": url_for("api.bid", bid_id=b.id, _external=True)} for b in rows]})


# ------------------------------------------------------------------------------------------------- decision


@bp.route("/events/<slug>/decision")
@api_login_required
def decision(slug: str):
    from board.services import current_decision
    from core.auth import Role

    ev = get_event(slug)
    if ev is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    if not (api_user().role_set & {Role.BOARD, Role.ADMIN, Role.WCOC}):
        return api_error(403, "The decision record is for the Board, the WCOC and the secretariat.")
    found = current_decision(ev)
    if found is None:
        return api_error(404, "No decision is recorded for this call yet.")
    return jsonify({
        "id": found.id, "event": slug, "method": found.method, "decided_on": found.decided_on.isoformat(),
        "selected_bid": {"id": found.selected_bid_id, "title": found.selected_bid.title},
        "tally": found.loads("tally"), "consultations": found.loads("consultations"),
        "rationale": found.rationale, "ranking": found.loads("ranking"), "reviewed": found.loads("reviewed"),
        "recorded_at": found.recorded_at.isoformat(), "recorded_by": found.recorded_by.name,
        "corrects": found.corrects_id, "correction_reason": found.correction_reason or None,
        "minutes_sha256": found.minutes_sha256})
