"""The payment reminders as pure rules: which reminder a milestone calls for, and its wording."""

from __future__ import annotations

import enum

from contracts.rules.terms import MilestoneKind
from contracts.rules.tracker import MilestoneStatus, days_text
from core.money import format_day, format_eur
from events.regulation import FideBank

# ------------------------------------------------------------------------------------------- reminders


class ReminderKind(enum.StrEnum):
    DUE_SOON = "due_soon"
    OVERDUE = "overdue"


def reminder_kind(kind: MilestoneKind, status: MilestoneStatus) -> ReminderKind | None:
    """Which reminder a milestone calls for: the organizer's own payments only, once due within the window
    and once overdue; nothing for FIDE's disbursements, at-cost items or settled milestones. Raises nothing."""
    if not kind.organizer_pays or kind is MilestoneKind.AT_COST or status.outstanding <= 0:
        return None
    if status.overdue:
        return ReminderKind.OVERDUE
    if status.due_soon:
        return ReminderKind.DUE_SOON
    return None


def reminder_message(*, kind: ReminderKind, event_title: str, reference: str, title: str, article: str,
                     status: MilestoneStatus, payee: str, bank: FideBank | None, contact_name: str,
                     url: str) -> tuple[str, str]:
    """(subject, body) of a reminder to the organizer's contact. Raises nothing."""
    due = format_day(status.due)
    if kind is ReminderKind.OVERDUE:
        subject = f"{event_title}: payment overdue since {due} ({format_eur(status.outstanding)})"
        opening = (f"the payment of {title} (Art. {article}) fell due on {due} and is overdue by "
                   f"{days_text(status.days or 0)}. {format_eur(status.outstanding)} is outstanding.")
    else:
        subject = f"{event_title}: payment due {due} ({format_eur(status.outstanding)})"
        opening = (f"the payment of {title} (Art. {article}) falls due on {due}. {format_eur(status.outstanding)} "
                   f"is outstanding.")
    lines = [f"Dear {contact_name or 'organizer'},", "", opening]
    if status.paid > 0:
        lines.append(f"FIDE has recorded {format_eur(status.paid)} of {format_eur(status.amount)} so far.")
    lines += ["", f"Contract {reference}; payee: {payee}."]
    if bank is not None:
        lines += ["", "FIDE's account:", f"  {bank.holder}", f"  {bank.bank}, {bank.address}",
                  f"  IBAN {bank.iban}", f"  SWIFT {bank.swift}"]
    lines += ["", f"What FIDE has recorded against your obligations: {url}", "",
              "If you have already paid, thank you: please send the bank's reference to the FIDE secretariat.",
              "", "FIDE secretariat (sent by Gambit)"]
    return subject, "\n".join(lines)
