"""Loading a call from its regulation file, and moving a call through its life."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime

from sqlalchemy import bindparam, func, select

from accounts.models import User
from core.auth import Role
from core.db import db, lock_row, swap_state
from core.hooks import Hook
from events.lifecycle import EventStatus, TransitionError, check_transition
from events.models import Amendment, Event, RegulationVersion
from events.regulation import AmendmentAuthority, Covered, Regulation, amendment_authority
from events.rules import snapshot_changes
from evidence import audit


class AmendmentError(ValueError):
    """An amendment that cannot be recorded as given; the message names what is missing or wrong."""


# `judge_again(event, old_version, new_version, *, now)`, run when an amendment is recorded, returns the report's
# entries: bids/ judges every submitted bid again and lists those whose findings changed (app.py provides it).
judge_again: Hook[..., list[dict]] = Hook("events.services.judge_again")


def amendment_problems(reg: Regulation, *, authority: str | None, decided_on: date | None, reference: str | None,
                       reason: str | None, recommended_by: str | None = None, recommended_on: date | None = None,
                       recommendation: str | None = None, grounds: str | None = None,
                       changed_keys: Sequence[str] = (), covered_before: Iterable[Covered] = ()) -> list[str]:
    """What an amendment lacks, in words ([] when it can be recorded): who decided it (one of the file's amendment
    authorities, with its article), the date and reference of the decision, and the reason; for an authority that
    acts upon another body's recommendation (the Board upon the WCOC's), that recommendation: who made it, when
    (not after the decision) and what it recommended; for an authority that decides only on certain grounds, which
    of them; for an authority that decides only what the regulations do not cover (the President, Art. 16), no
    changed key (`changed_keys`) that the call's list of covered items names, in the new file (`reg.covered`) or the
    version in force (`covered_before`). Raises nothing."""
    problems = []
    keys = ", ".join(f"{a.key} ({a.label}, Art. {a.article})" for a in reg.amendment_authorities)
    who = None
    if not authority:
        problems.append(f"say who decided the change: {keys}")
    else:
        try:
            who = amendment_authority(reg, authority)
        except KeyError:
            problems.append(f"{authority!r} is not an authority of this call; use {keys}")
    if decided_on is None:
        problems.append("give the date of the decision")
    if not (reference or "").strip():
        problems.append("give the reference of the decision (minutes, letter)")
    if not (reason or "").strip():
        problems.append("give the reason for the change")
    if who is None:
        return problems
    problems += _recommendation_problems(who, decided_on, recommended_by, recommended_on, recommendation)
    if who.not_covered_only:
        problems += _covered_changes(reg, who, changed_keys, (*covered_before, *reg.covered))
    problems += _ground_problems(who, grounds)
    return problems


def _recommendation_problems(who: AmendmentAuthority, decided_on: date | None, recommended_by: str | None,
                             recommended_on: date | None, recommendation: str | None) -> list[str]:
    """For an authority that acts upon another body's recommendation, what the recommendation lacks (who made it,
    when, not after the decision, and what it recommended); for any other, a recommendation given."""
    recommended = [bool((recommended_by or "").strip()), recommended_on is not None,
                   bool((recommendation or "").strip())]
    if not who.upon_recommendation_by:
        if any(recommended):
            return [f"{who.label} (Art. {who.article}) does not act upon a recommendation; leave it out"]
        return []
    missing = [what for what, given in zip(("who made it", "its date", "what it recommended"), recommended,
                                           strict=True) if not given]
    if missing:
        return [f"Art. {who.article}: the change is made upon recommendation by "
                f"{who.upon_recommendation_by}; give that recommendation: " + ", ".join(missing)]
    if decided_on is not None and recommended_on is not None and recommended_on > decided_on:
        return [f"Art. {who.article}: the recommendation of {who.upon_recommendation_by} comes before "
                f"the decision that follows it (recommended on {recommended_on.isoformat()}, decided on "
                f"{decided_on.isoformat()})"]
    return []


def _ground_problems(who: AmendmentAuthority, grounds: str | None) -> list[str]:
    """For an authority that decides only on certain grounds, a ground missing or not one of them; for any other,
    a ground given."""
    ground = (grounds or "").strip()
    if not who.grounds:
        if ground:
            return [f"{who.label} (Art. {who.article}) decides on no particular grounds; leave them out"]
        return []
    choices = ", ".join(f"{g.key} ({g.label})" for g in who.grounds)
    if not ground:
        return [f"Art. {who.article}: {who.label} decides only on "
                + " or ".join(g.label for g in who.grounds) + f"; say which: {choices}"]
    try:
        who.ground(ground)
    except KeyError:
        return [f"Art. {who.article}: {ground!r} is not a ground of {who.label}; use {choices}"]
    return []


def _covered_changes(reg: Regulation, who: AmendmentAuthority, changed_keys: Sequence[str],
                     covered: Sequence[Covered]) -> list[str]:
    """One refusal per changed key that a covered item names: the regulations cover it, so only the authority that
    changes the regulations may (the one that acts upon a recommendation: the Board upon the WCOC's, Art. 1.1)."""
    changers = [a for a in reg.amendment_authorities if not a.not_covered_only]
    by = " or ".join(f"{a.label} (Art. {a.article})" for a in changers) or "the authority that changes the regulations"
    out = []
    for key in changed_keys:
        item = next((c for c in covered if c.covers(key)), None)
        if item is not None:
            article = item.article or _entry_article(reg, key)
            where = f"Art. {article}" if article else "the regulations"
            out.append(f"Art. {who.article} refers to {who.label.split(' (')[0]} only cases the regulations do not "
                       f"cover, and {key} is covered by {where} (the call's list of covered items): it is "
                       f"changed only by {by}")
    return out


def _entry_article(reg: Regulation, key: str) -> str:
    """The article an entry of a table names itself ("in_kind[3].text" -> the article of in_kind's fourth entry),
    read from the new file; "" when the entry names none (removed, or a table without articles)."""
    match = re.match(r"([a-z_]+)\[(\d+)\]", key)
    if match is None:
        return ""
    entries = json.loads(reg.snapshot).get(match[1]) or []
    index = int(match[2])
    entry = entries[index] if index < len(entries) else None
    return str(entry.get("article") or "") if isinstance(entry, dict) else ""


def record_amendment(event: Event, old_version: RegulationVersion, new_version: RegulationVersion, *,
                     authority: str, decided_on: date, reference: str, reason: str, actor: User | None,
                     now: datetime, recommended_by: str | None = None, recommended_on: date | None = None,
                     recommendation: str | None = None, grounds: str | None = None) -> Amendment:
    """Record the change from `old_version` to `new_version` as an amendment, with what changed key by key, then run
    the `judge_again` hook (every submitted bid judged again under the new version; the report lists whose findings
    changed). The Board's amendment carries the WCOC's recommendation it followed (`recommended_by`,
    `recommended_on`, `recommendation`); the President's, the grounds (`grounds`: a key of the authority's grounds).
    Raises AmendmentError when `amendment_problems` finds something missing. Writes `event.amendment` to the audit
    log."""
    reg = new_version.regulation
    changes = snapshot_changes(json.loads(old_version.snapshot), json.loads(new_version.snapshot))
    problems = amendment_problems(reg, authority=authority, decided_on=decided_on, reference=reference,
                                  reason=reason, recommended_by=recommended_by, recommended_on=recommended_on,
                                  recommendation=recommendation, grounds=grounds,
                                  changed_keys=[c["key"] for c in changes],
                                  covered_before=old_version.regulation.covered)
    if problems:
        raise AmendmentError("The call's file changed, so the change must be recorded as an amendment: "
                             + "; ".join(problems) + ".")
    who = amendment_authority(reg, authority)
    ground = who.ground(grounds.strip()) if who.grounds and grounds else None
    follows = bool(who.upon_recommendation_by)
    report = judge_again(event, old_version, new_version, now=now)
    amendment = Amendment(event_id=event.id, from_version_id=old_version.id, to_version_id=new_version.id,
                          authority=who.key, authority_label=who.label, article=who.article, decided_on=decided_on,
                          reference=reference.strip(), reason=reason.strip(),
                          recommended_by=(recommended_by or "").strip() if follows else None,
                          recommended_on=recommended_on if follows else None,
                          recommendation=(recommendation or "").strip() if follows else None,
                          grounds=ground.key if ground else ("not_covered" if who.not_covered_only else None),
                          grounds_label=ground.label if ground else (who.not_covered_only or None),
                          changes=json.dumps(changes, ensure_ascii=False), report=json.dumps(report),
                          recorded_at=now, recorded_by_id=getattr(actor, "id", None))
    db.session.add(amendment)
    db.session.flush()
    audit.record("event.amendment", amendment, actor=actor, now=now,
                 data={"from": old_version.number, "to": new_version.number, "authority": who.key,
                       "article": who.article, "decided_on": decided_on, "reference": amendment.reference,
                       "reason": amendment.reason, "recommended_by": amendment.recommended_by,
                       "recommended_on": amendment.recommended_on, "recommendation": amendment.recommendation,
                       "grounds": amendment.grounds, "changed_keys": [c["key"] for c in changes],
                       "findings_changed": [r["bid"] for r in report]})
    return amendment


def amendments_of(event: Event) -> list[Amendment]:
    """The call's amendments, newest first."""
    return list(db.session.scalars(select(Amendment).where(Amendment.event_id == event.id)
                                   .order_by(Amendment.recorded_at.desc(), Amendment.id.desc())))


# Every page of a call reads it by its slug: the statement is built once, the slug bound at each run.
_EVENT_BY_SLUG = select(Event).where(Event.slug == bindparam("slug"))


def get_event(slug: str) -> Event | None:
    return db.session.scalars(_EVENT_BY_SLUG, {"slug": slug}).first()


_EVENT_ID_BY_SLUG = select(Event.id).where(Event.slug == bindparam("slug"))


def event_exists(slug: str) -> bool:
    """Whether a call has this slug, read without loading the call (a versioned page's access step, before a 304).
    Raises nothing."""
    return db.session.scalar(_EVENT_ID_BY_SLUG, {"slug": slug}) is not None


def all_events() -> list[Event]:
    """Every call, in the order they were loaded (the API's list). Raises nothing."""
    return list(db.session.scalars(select(Event).order_by(Event.id)))


def bid_deadlines() -> list[datetime]:
    """Every call's bid deadline (`reg.event.bid_deadline` of the regulation in force): the instants within a day at
    which a page changes (the versioned pages' key, operations.page_cache). Raises nothing of its own."""
    return [e.regulation.event.bid_deadline for e in all_events()]


def load_event(reg: Regulation, *, actor: User | None, now: datetime, source: str = "",
               action: str = "event.regulation_loaded") -> tuple[Event, bool]:
    """Create the call, or give it a new regulation version when the file changed, writing `action` to the audit
    log (events.upgrade names its own).

    Returns (event, changed). Loading the same file again changes nothing (idempotent). Raises nothing of its own.
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
                                     source=source, loaded_at=now, regulations_text=reg.text or None)
        db.session.add(existing)
        db.session.flush()
    event.regulation_version = existing
    event.title = reg.event.title
    db.session.flush()
    audit.record(action, event, actor=actor, now=now,
                 data={"version": existing.number, "sha256": reg.sha256, "source": source})
    return event, True


def set_signal_blocker_required(event: Event, required: bool, *, actor: User, now: datetime) -> bool:
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


def lock_call(event: Event) -> Event:
    """The one lock of what is decided together in a call: its votes and decision (and the decision's
    corrections), late admissions, the call's own moves (the close, scoring's opening), submissions, and the
    contract's issue, countersignature, payments and deductions. Every service that changes one of those takes it
    first (core.db.lock_row: the call's row, FOR UPDATE on PostgreSQL; SQLite's write lock), then checks the state
    as it now is: the event row is read again here, and whatever the caller reads next is read inside the lock.
    Returns the event. Raises what the database raises when the wait times out."""
    lock_row(event)
    return event


def change_event_status(event: Event, action: str, *, actor: User | None, now: datetime, reason: str = "",
                        by_decision: bool = False) -> EventStatus:
    """Move the call along its TRANSITIONS table, guarded by `events.lifecycle.check_transition` (the secretariat by
    hand, or a command run on the server with no actor; "decide" only from the decision, `by_decision`), with a
    compare-and-swap on the status read: of two changes at the same moment, one wins and the other is refused.
    Raises events.lifecycle.TransitionError when not allowed or changed meanwhile."""
    lock_call(event)
    before = event.state
    by_admin = actor is None or Role.ADMIN in actor.role_set
    after = check_transition(before, action, by_admin=by_admin, by_decision=by_decision)
    if not swap_state(event, expected=before, values={"status": after}):
        raise TransitionError(f"The call changed at the same moment (it is now '{event.state.label}'); reload "
                              "the page.")
    audit.record(f"event.{action}", event, actor=actor, now=now,
                 data={"from": before.value, "to": after.value, "reason": reason})
    return after
