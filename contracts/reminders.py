"""Payment reminders of a day: the work behind `flask payments remind` and the scheduler's daily "payments.remind".

Both call send_due_reminders; the command prints its report, the scheduler records its summary (and an error when a
reminder could not be sent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from contracts import queries, services
from contracts.models import Contract
from core.db import db, utcnow
from core.mail import MailError
from core.money import format_eur
from core.urls import external_url


@dataclass(frozen=True)
class ReminderLine:
    """One reminder: sent (`sent` True) or not (its reason in `text`)."""

    sent: bool
    text: str


@dataclass
class ReminderReport:
    """What one run did, in the order it did it: each reminder sent or not sent, then the warnings of the contracts
    in force (a guarantee lapsing before the money is paid)."""

    day: date
    lines: list[ReminderLine] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def sent(self) -> int:
        return sum(line.sent for line in self.lines)

    @property
    def not_sent(self) -> int:
        return sum(not line.sent for line in self.lines)

    def summary(self) -> str:
        return f"{self.sent} reminder(s) sent, {self.not_sent} not sent, as of {self.day.isoformat()}"


class RemindersNotSent(RuntimeError):
    """Some reminders of a scheduled run could not be sent (the message lists them); the others were."""


def send_due_reminders(day: date, *, now: datetime) -> ReminderReport:
    """Email the organizer's contact about each payment due within PAYMENT_DUE_SOON_DAYS days of `day` and each one
    overdue on it, once per milestone and kind (a reminder already sent is never sent again: another run that sent
    it meanwhile is skipped). Each reminder is committed as it is sent, so a failure part-way loses none; one that
    could not be sent (mail disabled or refused, contract error) is rolled back and reported. `now` is the instant
    recorded on each reminder. Commits; raises nothing of the reminders' own (database errors propagate)."""
    days = queries.due_soon_days()
    report = ReminderReport(day=day)
    for milestone, kind, status in queries.due_reminders(day, days):
        url = external_url("contracts.view", contract_id=milestone.contract_id)
        try:
            with db.session.begin_nested():
                services.send_reminder(milestone, kind, status, url=url, now=now)
        except IntegrityError:
            db.session.rollback()  # another run sent it meanwhile
            continue
        except (MailError, services.ContractError) as exc:
            db.session.rollback()
            report.lines.append(ReminderLine(False, f"{milestone.contract.reference} {milestone.key} "
                                                    f"({kind.value}): {exc}"))
            continue
        db.session.commit()
        assert status.due is not None  # only a milestone with a deadline is reminded of
        report.lines.append(ReminderLine(True, f"{kind.value:8} {milestone.contract.reference} {milestone.key}: "
                                               f"{format_eur(status.outstanding)} due {status.due.isoformat()} "
                                               f"({status.label})"))
    for contract in db.session.scalars(select(Contract).where(Contract.status.in_(queries.IN_FORCE))):
        t = queries.tracker(contract, day, due_soon_days=days, guarantee_warning_days=queries.guarantee_warning_days())
        report.warnings.extend(f"{contract.reference}: {warning}" for warning in t.warnings)
    return report


def scheduled_reminders(now: datetime) -> str:
    """The scheduler's daily job: the reminders of `now`'s day (UTC). Returns the report's summary. Raises
    RemindersNotSent when any could not be sent (the scheduler records the run as failed, with the reasons)."""
    report = send_due_reminders(now.date(), now=utcnow())
    if report.not_sent:
        reasons = "; ".join(line.text for line in report.lines if not line.sent)
        raise RemindersNotSent(f"{report.summary()}: {reasons}")
    return report.summary()
