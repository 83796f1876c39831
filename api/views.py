"""The read-only JSON API, /api/v1. Amounts are strings with two decimals; dates are ISO dates."""

from __future__ import annotations

from flask import Blueprint, jsonify, url_for
from sqlalchemy import select

from api.auth import api_error, api_login_required
from api.openapi import openapi_document
from core.db import db
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
