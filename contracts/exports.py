"""Exports of the payment tracker: CSV of milestones and of payments, and the iCalendar feed of the deadlines."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta

from icalendar import Alarm, Calendar
from icalendar import Event as CalendarEvent

from contracts.models import Contract, Milestone, Payment
from contracts.rules.terms import MilestoneKind
from contracts.rules.tracker import MilestoneStatus
from core.exports import csv_cell
from core.money import amount_str, format_eur

MILESTONE_COLUMNS = ("contract", "version", "key", "kind", "article", "title", "payer", "payee", "amount", "is_cap",
                     "due", "as_of", "status", "status_label", "paid", "outstanding", "completed_on")
PAYMENT_COLUMNS = ("contract", "version", "milestone_key", "milestone_article", "payment_id", "kind", "received_on",
                   "amount", "reference", "note", "reason", "reverses_payment_id", "carried_from_payment_id",
                   "recorded_at", "recorded_by")


def milestones_csv(contract: Contract, rows: list[tuple[Milestone, MilestoneStatus]]) -> str:
    """One line per milestone with its status on the tracker's day. Amounts have two decimals, dates are ISO."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(MILESTONE_COLUMNS)
    for m, st in rows:
        w.writerow([contract.reference, contract.version, m.key, m.kind, m.article, csv_cell(m.title),
                    csv_cell(m.payer_name), csv_cell(m.payee_name), amount_str(m.amount), "yes" if m.is_cap else "no",
                    m.due.isoformat() if m.due else "", st.as_of.isoformat(), st.state.value, csv_cell(st.label),
                    amount_str(st.paid), amount_str(st.outstanding),
                    st.completed_on.isoformat() if st.completed_on else ""])
    return out.getvalue()


def payments_csv(contract: Contract) -> str:
    """One line per entry recorded against the contract's milestones, reversals and carried payments included
    (amounts of reversals are negative: the column adds up to what was received)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(PAYMENT_COLUMNS)
    for m in contract.milestones:
        p: Payment
        for p in m.payments:
            w.writerow([contract.reference, contract.version, m.key, m.article, p.id, p.kind,
                        p.received_on.isoformat(), amount_str(p.amount), csv_cell(p.reference), csv_cell(p.note),
                        csv_cell(p.reason), p.reverses_id or "", p.carried_from_id or "",
                        p.recorded_at.isoformat(), csv_cell(p.recorded_by.email if p.recorded_by else "")])
    return out.getvalue()


def calendar_ics(contract: Contract, rows: list[tuple[Milestone, MilestoneStatus]], *, now: datetime,
                 url: str) -> bytes:
    """The deadlines as an iCalendar feed: one all-day event per dated milestone, its UID stable across
    corrections of the contract (so a calendar updates an event instead of adding one)."""
    cal = Calendar()
    cal.add("prodid", "-//Gambit//Contract deadlines//EN")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", f"{contract.regulation.event.short_title}: payment deadlines ({contract.reference})")
    for m, st in rows:
        if m.due is None:
            continue
        kind = MilestoneKind(m.kind)
        ev = CalendarEvent()
        ev.add("uid", f"contract-{contract.bid_id}-{m.key}@gambit")
        ev.add("dtstamp", now)
        ev.add("dtstart", m.due)
        ev.add("dtend", m.due + timedelta(days=1))
        amount = f"{'up to ' if m.is_cap else ''}{format_eur(m.amount)}"
        ev.add("summary", f"Due: {amount} — {m.title} (Art. {m.article})")
        ev.add("description", "\n".join([
            f"{kind.label}: {m.payer_name} pays {m.payee_name}.", m.description, m.due_rule,
            f"Status on {st.as_of.isoformat()}: {st.label}.", f"Contract {contract.reference}: {url}"]))
        ev.add("categories", [kind.label])
        ev.add("url", url)
        if st.outstanding > 0 and not m.is_cap:
            alarm = Alarm()
            alarm.add("action", "DISPLAY")
            alarm.add("description", f"{m.title}: {format_eur(st.outstanding)} due {m.due.isoformat()}")
            alarm.add("trigger", timedelta(days=-7))
            ev.add_component(alarm)
        cal.add_component(ev)
    return cal.to_ical()
