"""The public page of each call (no login), and the admin's controls of its life."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from accounts.forms import EmptyForm
from core.auth import Role, roles_required
from core.db import db, utcnow
from core.hooks import Hook
from core.money import format_day
from core.views import bp as core_bp
from events.forms import CallSettingsForm, signal_blocker_label
from events.lifecycle import ACTION_LABELS, MANUAL_ACTIONS, TransitionError, actions_from
from events.models import Event
from events.provenance import STATUS_LABELS, article_rows, article_table, sourced_rows
from events.regulation import SourceKind, pre_match_schedule, published_schedule
from events.rules import bid_deadline_passed
from events.services import amendments_of, change_event_status, get_event, set_signal_blocker_required
from evidence.audit_views import register_audit_actions, register_audit_link

bp = Blueprint("events", __name__)

# Scoring's part of the call's page, provided by app.py (scoring comes later in the flow): the weights in force
# (scoring.services.weights_in_force), and the progress of scoring told to whoever closes it.
criteria_in_force: Hook[[Event], list] = Hook("events.views.criteria_in_force")
scoring_progress: Hook[[Event], str] = Hook("events.views.scoring_progress")
# The call's bids, provided by app.py (bids come later in the flow): (drafts not submitted, bids submitted), for
# whoever closes the call or opens scoring (bids.queries.call_bid_counts).
bid_counts: Hook[[int], tuple[int, int]] = Hook("events.views.bid_counts")


@dataclass(frozen=True)
class CallOutcome:
    """What the call's public page says of its decision: the day, and the bid selected by who made it and where."""

    decided_on: date
    applicant: str
    federation: str  # the host federation's name ("Ukraine"), "" when the bid names none
    city: str
    country: str     # the country's name ("Ukraine"), not its code


# The Board's decision in force, provided by app.py (the Board comes later in the flow); None before the decision.
call_outcome: Hook[[Event], CallOutcome | None] = Hook("events.views.call_outcome")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _days(deadline, now) -> str:
    days = (deadline.date() - now.date()).days
    if days == 0:
        return "today"
    return f"{_count(abs(days), 'day', 'days')} {'from today' if days > 0 else 'ago'}"


def action_notes(event: Event, actions: list[str], now) -> dict[str, str]:
    """What each consequential move of the call does, in figures (the deadline and how far away it is, the drafts
    locked out, the bids that go on), for the secretariat to read beside its button and in the question that
    confirms it. Raises nothing."""
    notes: dict[str, str] = {}
    if not {"close", "reopen", "open_scoring"} & set(actions):
        return notes
    deadline = event.regulation.event.bid_deadline
    when = f"{format_day(deadline)} at {deadline.strftime('%H:%M')} UTC, {_days(deadline, now)}"
    drafts, submitted = bid_counts(event.id)
    kept = _count(submitted, "submitted bid stays", "submitted bids stay")
    left = _count(drafts, "draft not submitted", "drafts not submitted")
    if "close" in actions:
        early = "" if bid_deadline_passed(now, deadline) else " Closing now ends the call before it."
        notes["close"] = (f"The deadline for bids is {when}.{early} {kept} in the call; {left} will be locked "
                          "out: their bidders can no longer submit them unless the call is re-opened.")
    if "reopen" in actions:
        notes["reopen"] = (f"Bidders can start, change and submit bids again until the deadline, {when}; {left} "
                           "can then be submitted.")
    if "open_scoring" in actions:
        notes["open_scoring"] = (f"{kept} in the call and go to the WCOC; {left} will be left out for good: once "
                                 "scoring opens, the call cannot be re-opened for bids.")
    return notes


def event_or_404(slug: str) -> Event:
    event = get_event(slug)
    if event is None:
        abort(404)
    return event


@core_bp.route("/")
def home():
    """The home page: the calls for bids, newest first (on the site's blueprint: every breadcrumb links to
    core.home). Raises nothing."""
    events = db.session.scalars(select(Event).order_by(Event.created_at.desc(), Event.id.desc())).all()
    return render_template("home.html", events=events)


@bp.route("/events/")
def index():
    events = db.session.scalars(select(Event).order_by(Event.created_at.desc(), Event.id.desc())).all()
    return render_template("events/index.html", events=events)


@bp.route("/events/<slug>")
def public(slug: str):
    event = event_or_404(slug)
    reg = event.regulation
    opening_dates = reg.possible_opening_dates()
    sample_schedule = reg.schedule_for(opening_dates[0])
    criteria = criteria_in_force(event)
    total_weight = sum(c.weight for c in criteria)
    actions = [(a, ACTION_LABELS[a]) for a in actions_from(event.state)]
    notes = {}
    if current_user.is_authenticated and current_user.has_role(Role.ADMIN):
        notes = action_notes(event, list(dict(actions)), utcnow())
    if current_user.is_authenticated and current_user.has_role(Role.ADMIN) and "close_scoring" in dict(actions):
        # Whoever closes scoring is told how many scorecards are in and who has not scored: they cannot change after.
        notes["close_scoring"] = (f"{scoring_progress(event)} Once scoring is closed, no scorecard can be "
                                  "submitted or changed.")
    return render_template("events/public.html", event=event, reg=reg, opening_dates=opening_dates,
                           sample_schedule=sample_schedule, total_weight=total_weight, now=utcnow(),
                           criteria_in_force=criteria,
                           actions=actions, action_notes=notes, action_form=EmptyForm(),
                           published=published_schedule(reg), amendments=amendments_of(event),
                           published_pre_match=_published_pre_match(reg),
                           signal_blocker_label=signal_blocker_label(reg), outcome=call_outcome(event),
                           deadline_passed=event.deadline_passed(utcnow()),
                           settings_form=CallSettingsForm(
                               data={"signal_blocker_required": event.signal_blocker_required}).for_regulation(reg))


def _published_pre_match(reg) -> list:
    """The days before game 1 (as schedule days) for the schedule the regulations publish, [] when none is
    published. Raises nothing."""
    published = published_schedule(reg)
    return pre_match_schedule(reg, published[0].on) if published else []


@bp.route("/events/<slug>/regulations.txt")
def regulations_text(slug: str):
    """The text of the call's regulations, as stored with its regulation version (SHA-256 in the call file)."""
    event = event_or_404(slug)
    reg = event.regulation
    if not reg.text:
        abort(404)
    response = Response(reg.text, mimetype="text/plain")
    response.headers["Content-Disposition"] = f'inline; filename="{reg.regulations_text.file}"'
    response.headers["X-Content-SHA256"] = reg.regulations_text.sha256
    return response


@bp.route("/events/<slug>/articles")
def articles(slug: str):
    """Every article of the regulations with its status (applied, the procedure's, a sanity check, or not bearing
    on the call), where Gambit applies it and how it reads the ambiguous ones, filtered by `?status=`; then the
    citations of the call file, the bidding procedure and the checks. Raises NotFound for an unknown call."""
    event = event_or_404(slug)
    reg = event.regulation
    status = request.args.get("status")
    return render_template("events/articles.html", event=event, reg=reg, rows=article_rows(reg),
                           table=article_table(reg), status=status if status in STATUS_LABELS else None,
                           procedure=sourced_rows(reg, SourceKind.PROCEDURE),
                           checks=sourced_rows(reg, SourceKind.SANITY_CHECK))


@bp.route("/events/<slug>/settings", methods=["POST"])
@roles_required(Role.ADMIN)
def settings(slug: str):
    event = event_or_404(slug)
    form = CallSettingsForm()
    if not form.validate_on_submit():
        abort(400)
    required = bool(form.signal_blocker_required.data)
    changed = set_signal_blocker_required(event, required, actor=current_user, now=utcnow())
    db.session.commit()
    if changed:
        state = "required by FIDE" if required else "not required by FIDE"
        flash(f"{signal_blocker_label(event.regulation)}: recorded as {state}.", "success")
    return redirect(url_for("events.public", slug=slug))


@bp.route("/events/<slug>/status", methods=["POST"])
@roles_required(Role.ADMIN)
def change_status(slug: str):
    event = event_or_404(slug)
    action = request.form.get("action", "")
    if action not in MANUAL_ACTIONS:
        flash(f"'{action}' is not an action the call's page can take.", "error")
        return redirect(url_for("events.public", slug=slug))
    try:
        after = change_event_status(event, action, actor=current_user, now=utcnow(),
                                    reason=request.form.get("reason", "")[:500])
    except TransitionError as exc:
        flash(str(exc), "error")
        return redirect(url_for("events.public", slug=slug))
    db.session.commit()
    flash(f"{event.title}: {after.label}.", "success")
    return redirect(url_for("events.public", slug=slug))


# ------------------------------------------------------------------------------------- the audit log's words


def _event_pages(ids: list[int]) -> dict[int, str]:
    """{event id: its public page} (one statement)."""
    return {i: url_for("events.public", slug=slug)
            for i, slug in db.session.execute(select(Event.id, Event.slug).where(Event.id.in_(ids)))}


register_audit_link("Event", _event_pages)
register_audit_actions({
    "event.regulation_loaded": "loaded the regulations of {object}",
    # events.upgrade, at the end of `flask db upgrade`: the call given the file of the release installed.
    "event.regulation_upgraded": "brought the regulations of {object} forward to the call file of the release "
                                 "installed",
    "event.bids_judged_again": "judged the submitted bids of {object} again under its regulations brought forward",
    "event.amendment": "amended the regulations ({object})",
    "event.signal_blocker": "changed whether {object} requires a signal blocker",
    # The call's own moves (events.lifecycle.EventAction), recorded as "event.<action>".
    "event.close": "closed the call for bids {object}", "event.reopen": "re-opened the call for bids {object}",
    "event.open_scoring": "opened scoring of {object}", "event.close_scoring": "closed scoring of {object}",
    "event.reopen_scoring": "re-opened scoring of {object}",
    "event.decide": "marked {object} as decided by the Board"})
