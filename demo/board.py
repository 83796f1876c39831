"""Demo board: scoring closed, the dossiers and the pack made, two board votes and one recorded decision (the
top of the ranking), so that a newcomer can open the dossiers and the decision record. Idempotent."""

from __future__ import annotations

from datetime import datetime, timedelta

import flask

from accounts.services import find_user_by_email
from board import queries, services
from events.lifecycle import EventStatus
from events.services import change_event_status, get_event


def seed_board_demo(*, now: datetime, slug: str = "fwwcm-2015") -> list[str]:
    """Close scoring, build the dossiers, vote and record the decision; nothing for a call not in scoring."""
    out: list[str] = []
    event = get_event(slug)
    admin = find_user_by_email("admin@example.org")
    if event is None or admin is None or event.state not in (EventStatus.SCORING, EventStatus.DELIBERATION):
        return out
    reg = event.regulation
    day = reg.event.bid_deadline + timedelta(days=14)
    upload_dir = flask.current_app.config["UPLOAD_DIR"]
    if event.state is EventStatus.SCORING:
        change_event_status(event, "close_scoring", actor=admin, now=day, reason="Every member has scored.")
        out.append(f"demo: {event.slug} scoring closed")
    pack, dossiers = services.ensure_pack(event, actor=admin, now=day + timedelta(hours=1), upload_dir=upload_dir)
    out.append(f"demo dossiers: {', '.join(d.identifier for d in dossiers)} and {pack.identifier}")
    report = queries.ranking_report(event)
    leader = report.ranking.leader
    bids = {b.id: b for b in queries.bids_before_board(event)}
    if leader is None or leader not in bids:
        return out
    for email in ("board@example.org", "president@example.org"):
        member = find_user_by_email(email)
        if member is not None and not queries.recused_from_vote(event, member):
            services.cast_vote(event, member, bids[leader], now=day + timedelta(days=2))
            services.record_view(dossiers[0], member, now=day + timedelta(days=1))
    decision = services.record_decision(
        event, method="board_vote", selected=bids[leader], rationale="", decided_on=(day + timedelta(days=3)).date(),
        consultations=[], actor=admin, now=day + timedelta(days=3))
    services.store_minutes(decision, actor=admin, now=day + timedelta(days=3, minutes=1), upload_dir=upload_dir)
    out.append(f"demo decision: {decision.selected_bid.title} selected ({event.slug} decided)")
    return out
