"""The public page of each call (no login), and the admin's controls of its life."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from accounts.forms import EmptyForm
from core.auth import Role, roles_required
from core.db import db, utcnow
from events.forms import CallSettingsForm, signal_blocker_label
from events.models import Event
from events.regulation import published_schedule
from events.rules import ACTION_LABELS, MANUAL_ACTIONS, TransitionError, actions_from
from events.services import amendments_of, change_event_status, get_event, set_signal_blocker_required

bp = Blueprint("events", __name__)


def event_or_404(slug: str) -> Event:
    event = get_event(slug)
    if event is None:
        abort(404)
    return event


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
    from scoring.services import weights_in_force

    criteria = weights_in_force(event)
    total_weight = sum(c.weight for c in criteria)
    return render_template("events/public.html", event=event, reg=reg, opening_dates=opening_dates,
                           sample_schedule=sample_schedule, total_weight=total_weight, now=utcnow(),
                           criteria_in_force=criteria,
                           actions=[(a, ACTION_LABELS[a]) for a in actions_from(event.state)],
                           action_form=EmptyForm(), published=published_schedule(reg),
                           amendments=amendments_of(event),
                           signal_blocker_label=signal_blocker_label(reg),
                           settings_form=CallSettingsForm(
                               data={"signal_blocker_required": event.signal_blocker_required}).for_regulation(reg))


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
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400)
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
