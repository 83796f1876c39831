"""Payment reminders of a day: the work behind `flask payments remind` and the scheduler's daily "payments.remind".

Both call send_due_reminders; the command prints its report, the scheduler records its summary. Each reminder is
written into the outbox with its record (contracts.services.send_reminder); the outbox delivers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from contracts import queries
from contracts.models import Contract, Milestone, Reminder
from contracts.rules.reminders import ReminderKind, reminder_message
from contracts.rules.tracker import MilestoneStatus
from core.db import db, utcnow
from core.money import format_eur
from core.urls import external_url, path_for
from evidence import audit
from operations import outbox


@dataclass
class ReminderReport:
    """What one run did, in the order it did it: each reminder written, then the warnings of the contracts in force
    (a guarantee lapsing before the money is paid)."""

    day: date
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.lines)} reminder(s) queued in the outbox, as of {self.day.isoformat()}"


def send_due_reminders(day: date, *, now: datetime) -> ReminderReport:
    """Remind the organizer's contact of each payment due within PAYMENT_DUE_SOON_DAYS days of `day` and each one
    overdue on it, once per milestone and kind (a reminder already written is never written again: another run that
    wrote it meanwhile is skipped). Each reminder is committed with its message, so a failure part-way loses none.
    `now` is the instant recorded on each reminder. Commits; raises nothing of its own (database errors propagate)."""
    days = queries.due_soon_days()
    report = ReminderReport(day=day)
    for milestone, kind, status in queries.due_reminders(day, days):
        url = external_url("contracts.view", contract_id=milestone.contract_id)
        try:
            with db.session.begin_nested():
                send_reminder(milestone, kind, status, url=url, now=now)
        except IntegrityError:
            db.session.rollback()  # another run sent it meanwhile
            continue
        db.session.commit()
        assert status.due is not None  # only a milestone with a deadline is reminded of
        report.lines.append(f"{kind.value:8} {milestone.contract.reference} {milestone.key}: "
                            f"{format_eur(status.outstanding)} due {status.due.isoformat()} ({status.label})")
    for contract in db.session.scalars(select(Contract).where(Contract.status.in_(queries.IN_FORCE))):
        t = queries.tracker(contract, day, due_soon_days=days, guarantee_warning_days=queries.guarantee_warning_days())
        report.warnings.extend(f"{contract.reference}: {warning}" for warning in t.warnings)
    return report


def scheduled_reminders(now: datetime) -> str:
    """The scheduler's daily job: the reminders of `now`'s day (UTC). Returns the report's summary."""
    return send_due_reminders(now.date(), now=utcnow()).summary()


def send_reminder(milestone: Milestone, kind: ReminderKind, status: MilestoneStatus, *, url: str, now: datetime,
                  actor=None) -> Reminder:
    """Write the reminder to the organizer's contact about a milestone falling due or overdue into the outbox, and
    record it, in one transaction (once per kind and milestone: the unique constraint refuses a second). The outbox
    delivers it (operations.outbox), marked Auto-Submitted.

    Raises sqlalchemy IntegrityError when that reminder was already recorded; the caller runs this in a savepoint
    and rolls it back then. Writes `payment.reminder` to the audit log.
    """
    contract = milestone.contract
    bid = contract.bid
    to = contract.inputs.contact_email or bid.contact_email or bid.owner.email
    reminder = Reminder(milestone_id=milestone.id, kind=kind.value, as_of=status.as_of, sent_at=now, sent_to=to)
    db.session.add(reminder)
    db.session.flush()
    subject, body = reminder_message(
        kind=kind, event_title=contract.regulation.event.title, reference=contract.reference, title=milestone.title,
        article=milestone.article, status=status, payee=milestone.payee_name,
        bank=contract.regulation.fide_bank if milestone.payee_kind == "fide" else None,
        contact_name=contract.inputs.contact_name, url=url)
    message = outbox.queue([to], subject, body, kind=f"payment.{kind.value}", now=now, actor=actor,
                           auto_submitted=True, user_id=bid.owner_id,
                           about=outbox.About("contract", contract.id, f"Contract {contract.reference}",
                                              path_for("contracts.view", contract_id=contract.id)))
    audit.record("payment.reminder", reminder, actor=actor, now=now,
                 data={"milestone": milestone.id, "kind": kind.value, "to": to, "as_of": status.as_of,
                       "outstanding": status.outstanding, "message": message.id})
    return reminder
