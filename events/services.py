"""Loading a call from its regulation file, and moving a call through its life."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from core import audit
from core.auth import Role
from core.db import db, swap_state
from events.models import Event, RegulationVersion
from events.regulation import Regulation
from events.rules import EventStatus, TransitionError, check_transition


def get_event(slug: str) -> Event | None:
    return db.session.scalars(select(Event).where(Event.slug == slug)).first()


def load_event(reg: Regulation, *, actor, now: datetime, source: str = "") -> tuple[Event, bool]:
    """Create the call, or give it a new regulation version when the file changed.

    Returns (event, changed). Loading the same file again changes nothing (idempotent).
    """
    event = get_event(reg.event.slug)
    if event is None:
        event = Event(slug=reg.event.slug, title=reg.event.title, status=EventStatus.OPEN.value, created_at=now)
        db.session.add(event)
        db.session.flush()
    elif event.regulation_version and event.regulation_version.sha256 == reg.sha256:
        return event, False
    existing = db.session.scalars(select(RegulationVersion).where(
        RegulationVersion.event_id == event.id, RegulationVersion.sha256 == reg.sha256)).first()
    if existing is None:
        number = (db.session.scalar(select(func.max(RegulationVersion.number)).where(
            RegulationVersion.event_id == event.id)) or 0) + 1
        existing = RegulationVersion(event_id=event.id, number=number, snapshot=reg.snapshot, sha256=reg.sha256,
                                     source=source, loaded_at=now)
        db.session.add(existing)
        db.session.flush()
    event.regulation_version = existing
    event.title = reg.event.title
    db.session.flush()
    audit.record("event.regulation_loaded", event, actor=actor, now=now,
                 data={"version": existing.number, "sha256": reg.sha256, "source": source})
    return event, True


def set_signal_blocker_required(event: Event, required: bool, *, actor, now: datetime) -> bool:
    """Record whether FIDE requires the organizer's mobile-signal blocker for this call (it is owed only "if
    required by FIDE"); the bids' obligations count it only then. Returns whether anything changed. Raises
    TypeError when `required` is not a bool."""
    if not isinstance(required, bool):
        raise TypeError(f"required must be True or False, got {required!r}")
    if event.signal_blocker_required is required:
        return False
    before = event.signal_blocker_required
    event.signal_blocker_required = required
    db.session.flush()
    audit.record("event.signal_blocker", event, actor=actor, now=now,
                 data={"from": before, "to": required, "article": event.regulation.obligations.signal_blocker_article})
    return True


def change_event_status(event: Event, action: str, *, actor, now: datetime, reason: str = "",
                        by_decision: bool = False) -> EventStatus:
    """Move the call along its TRANSITIONS table, guarded by `events.rules.check_transition` (the secretariat by
    hand, or a command run on the server with no actor; "decide" only from the decision, `by_decision`), with a
    compare-and-swap on the status read: of two changes at the same moment, one wins and the other is refused.
    Raises events.rules.TransitionError when not allowed or changed meanwhile."""
    before = event.state
    by_admin = actor is None or Role.ADMIN in actor.role_set
    after = check_transition(before, action, by_admin=by_admin, by_decision=by_decision)
    if not swap_state(event, expected=before, values={"status": after}):
        raise TransitionError(f"The call changed at the same moment (it is now '{event.state.label}'); reload "
                              "the page.")
    audit.record(f"event.{action}", event, actor=actor, now=now,
                 data={"from": before.value, "to": after.value, "reason": reason})
    return after
