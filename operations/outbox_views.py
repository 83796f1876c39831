"""The secretariat's Outbox page: every message Gambit wrote, its delivery, and a way to send one again."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from core.auth import Role, roles_required
from core.db import db, utcnow
from core.forms import BaseForm
from core.paging import DESC, ordered, page_request, sql_page
from core.templating import register_nav
from evidence.audit_views import pages_of, register_audit_actions, register_audit_link
from operations import delivery, outbox

bp = Blueprint("outbox", __name__, url_prefix="/admin/outbox")

SORTS = {"created": outbox.OutboxMessage.created_at, "status": outbox.OutboxMessage.status,
         "attempts": outbox.OutboxMessage.attempts, "to": outbox.OutboxMessage.recipients,
         "subject": outbox.OutboxMessage.subject}
register_nav(95, Role.ADMIN, "Outbox", "outbox.index")


def _about(value: str | None) -> tuple[str, int] | None:
    """?about=decision:4 as ("decision", 4); anything else as no filter."""
    kind, _, number = (value or "").partition(":")
    return (kind, int(number)) if kind.isalpha() and number.isdigit() and len(number) < 10 else None


@bp.route("/")
@roles_required(Role.ADMIN)
def index():
    M = outbox.OutboxMessage
    ask = page_request(request.args, list(SORTS), default_sort="created", default_dirs={"created": DESC})
    query = select(M)
    status = request.args.get("status", "")
    if status in {s.value for s in outbox.MessageStatus}:
        query = query.where(M.status == status)
    else:
        status = ""
    about = _about(request.args.get("about"))
    if about is not None:
        query = query.where(M.about_type == about[0], M.about_id == about[1])
    user_id = request.args.get("user", "")
    if user_id.isdigit() and len(user_id) < 10:
        query = query.where(M.user_id == int(user_id))
    else:
        user_id = ""
    page = sql_page(query, ask, [ordered(SORTS[ask.sort], ask.dir), M.id.desc()])
    return render_template("outbox/index.html", messages=page.items, page=page, sort=ask.sort, dir=ask.dir,
                           status=status, about=request.args.get("about", "") if about else "",
                           user_filter=user_id, statuses=list(outbox.MessageStatus), counts=outbox.counts(),
                           mail_enabled=current_app.config.get("MAIL_ENABLED"), form=BaseForm())


@bp.route("/<int:message_id>")
@roles_required(Role.ADMIN)
def view(message_id: int):
    message = db.session.scalar(select(outbox.OutboxMessage).where(outbox.OutboxMessage.id == message_id)
                                .options(selectinload(outbox.OutboxMessage.attempt_rows)))
    if message is None:
        abort(404)
    resent = db.session.scalars(select(outbox.OutboxMessage.id).where(
        outbox.OutboxMessage.resent_from_id == message.id)).all()
    return render_template("outbox/view.html", message=message, email=outbox.build(message), resent=resent,
                           mail_enabled=current_app.config.get("MAIL_ENABLED"), form=BaseForm())


@bp.route("/<int:message_id>/resend", methods=["POST"])
@roles_required(Role.ADMIN)
def resend(message_id: int):
    message = db.session.get(outbox.OutboxMessage, message_id)
    if message is None:
        abort(404)
    if not BaseForm().validate_on_submit():
        abort(400)
    try:
        copy = outbox.resend(message, actor=current_user._get_current_object(), now=utcnow())
    except outbox.OutboxError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("outbox.view", message_id=message_id))
    db.session.commit()
    flash(f"Message {message.id} is sent again as message {copy.id}, to {', '.join(copy.to_list)}."
          + ("" if current_app.config.get("MAIL_ENABLED") else " Mail is off on this server: it waits in the outbox."),
          "success")
    return redirect(url_for("outbox.view", message_id=copy.id))


@bp.route("/send", methods=["POST"])
@roles_required(Role.ADMIN)
def send_due():
    """Hand every message due now to a deliverer (the worker or this server's delivery thread), without waiting
    for the server: the page comes back at once."""
    if not BaseForm().validate_on_submit():
        abort(400)
    M = outbox.OutboxMessage
    due = db.session.scalars(select(M.id).where(M.status == outbox.MessageStatus.QUEUED.value,
                                                M.next_attempt_at <= utcnow())).all()
    db.session.commit()
    if not current_app.config.get("MAIL_ENABLED"):
        flash("Mail is off on this server (MAIL_ENABLED is not set): nothing can be sent.", "error")
    elif current_app.config.get("OUTBOX_DISPATCH", "auto") == "manual":
        flash(f"{len(due)} message(s) are due; this server delivers them with `flask mail send` or the scheduler.",
              "info")
    else:
        delivery.dispatch(current_app._get_current_object(), list(due))  # type: ignore[attr-defined]
        flash(f"{len(due)} message(s) due are being sent; reload the page to see how it went.", "success")
    return redirect(url_for("outbox.index"))


register_audit_link("OutboxMessage", pages_of(outbox.OutboxMessage, "outbox.view", "message_id"))
register_audit_actions({"mail.resent": "sent “{subject}” again ({object})",
                        "file.refused": "refused to serve the stored file of {what} ({object})"})
