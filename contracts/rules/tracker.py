"""The payment tracker as pure rules: where a milestone stands on a given day (`milestone_status`: paid, paid
late, part-paid, due soon, overdue, not yet due), the sums by who pays (`totals`), `check_payment` (no payment above
what is outstanding) and the bank guarantee's warnings.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from contracts.rules.terms import MilestoneKind
from core.money import amount_str, format_count, format_day, format_eur

ZERO = Decimal("0.00")

# ------------------------------------------------------------------------------------ milestone status


class MilestoneState(enum.StrEnum):
    PAID = "paid"
    PAID_LATE = "paid_late"
    PART_PAID = "part_paid"
    DUE_SOON = "due_soon"
    OVERDUE = "overdue"
    NOT_YET_DUE = "not_yet_due"
    AT_COST = "at_cost"

    @property
    def css(self) -> str:
        return {"paid": "pass", "paid_late": "pending", "part_paid": "pending", "due_soon": "pending",
                "overdue": "fail", "not_yet_due": "na", "at_cost": "na"}[self.value]


@dataclass(frozen=True)
class Entry:
    """A payment as the status sees it: an amount (negative for a reversal) received on a day."""

    amount: Decimal
    received_on: date


@dataclass(frozen=True)
class MilestoneStatus:
    """Where a milestone stands on `as_of`. `paid` counts what was received by then; `days` is the days late
    (paid late, overdue) or the days left (due soon, not yet due, part-paid), None when there is no date."""

    state: MilestoneState
    amount: Decimal
    paid: Decimal
    outstanding: Decimal
    due: date | None
    as_of: date
    completed_on: date | None
    days: int | None
    due_soon: bool
    overdue: bool
    label: str

    @property
    def settled(self) -> bool:
        return self.state in (MilestoneState.PAID, MilestoneState.PAID_LATE)

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {"state": self.state.value, "label": self.label, "paid": amount_str(self.paid),
                "outstanding": amount_str(self.outstanding),
                "completed_on": self.completed_on.isoformat() if self.completed_on else None,
                "days": self.days, "due_soon": self.due_soon, "overdue": self.overdue}


def _entries(payments) -> list[Entry]:
    out = []
    for p in payments:
        if isinstance(p, tuple):
            out.append(Entry(Decimal(p[0]), p[1]))
        else:
            out.append(Entry(p.amount, p.received_on))
    return out


def outstanding_on_record(owed: Decimal, recorded: Decimal) -> Decimal:
    """What may still be recorded against a milestone that calls for `owed`, when `recorded` is every entry recorded
    against it whatever its day (a new payment is checked against this; the status, against what was received by
    its day). Never below zero. Raises nothing."""
    return max(owed - recorded, ZERO)


def days_text(n: int) -> str:
    return "1 day" if n == 1 else f"{format_count(n)} days"


def milestone_status(amount: Decimal, payments: Iterable, due: date | None, as_of: date, due_soon_days: int, *,
                     at_cost: bool = False) -> MilestoneStatus:
    """The status of a milestone of `amount` due on `due`, as of the day `as_of`.

    `payments` are objects with `amount` and `received_on` (or `(amount, received_on)` pairs); a reversal is
    a negative amount dated like the payment it cancels. Only what was received by `as_of` counts. In order:

    * fully paid: *paid* if the total first reached the amount (for the last time) on or before `due`, else
      *paid late* by so many days;
    * past `due`: *overdue* by so many days (part-paid or not: the label says what was received);
    * something received: *part-paid*;
    * `due` within `due_soon_days` (today included): *due soon*;
    * otherwise *not yet due*.

    An at-cost item (`at_cost`, `amount` its cap) is never overdue: its status only says what was spent.
    Raises ValueError for a negative `due_soon_days`.
    """
    if due_soon_days < 0:
        raise ValueError(f"due_soon_days cannot be negative, got {due_soon_days}")
    counted = sorted((e for e in _entries(payments) if e.received_on <= as_of), key=lambda e: e.received_on)
    paid = sum((e.amount for e in counted), ZERO)
    outstanding = max(amount - paid, ZERO)

    def status(state, label, *, completed_on=None, days=None, soon=False, overdue=False):
        return MilestoneStatus(state=state, amount=amount, paid=paid, outstanding=outstanding, due=due, as_of=as_of,
                               completed_on=completed_on, days=days, due_soon=soon, overdue=overdue, label=label)

    if at_cost:
        return status(MilestoneState.AT_COST,
                      f"At cost, up to {format_eur(amount)}: {format_eur(paid)} recorded so far")
    if paid >= amount:
        completed = _completed_on(counted, amount)
        if completed is None:
            return status(MilestoneState.PAID, "Nothing to pay")
        if due is None or completed <= due:
            return status(MilestoneState.PAID, f"Paid on {format_day(completed)}", completed_on=completed)
        late = (completed - due).days
        return status(MilestoneState.PAID_LATE,
                      f"Paid late, on {format_day(completed)}: {days_text(late)} after the due date",
                      completed_on=completed, days=late)
    if due is None:
        part = f"; {format_eur(paid)} of {format_eur(amount)} received" if paid else ""
        return status(MilestoneState.PART_PAID if paid else MilestoneState.NOT_YET_DUE, f"No due date set{part}")
    left = (due - as_of).days
    if left < 0:
        part = f"; part-paid, {format_eur(paid)} of {format_eur(amount)} received" if paid > 0 else ""
        return status(MilestoneState.OVERDUE, f"Overdue by {days_text(-left)}{part}", days=-left, overdue=True)
    soon = left <= due_soon_days
    when = "today" if left == 0 else f"in {days_text(left)}"
    if paid > 0:
        return status(MilestoneState.PART_PAID,
                      f"Part-paid: {format_eur(paid)} of {format_eur(amount)}; {format_eur(outstanding)} due "
                      f"{when}, by {format_day(due)}", days=left, soon=soon)
    if soon:
        return status(MilestoneState.DUE_SOON, f"Due {when}, by {format_day(due)}", days=left, soon=True)
    return status(MilestoneState.NOT_YET_DUE, f"Not yet due: due {format_day(due)}, in {days_text(left)}", days=left)


def _completed_on(entries: list[Entry], amount: Decimal) -> date | None:
    """The day the running total last rose to `amount` (reversals can take it back below); None when the
    amount is zero and nothing was ever needed."""
    if amount <= 0:
        return None
    running, completed = ZERO, None
    by_day: dict[date, Decimal] = {}
    for e in entries:
        by_day[e.received_on] = by_day.get(e.received_on, ZERO) + e.amount
    for day in sorted(by_day):
        before = running
        running += by_day[day]
        if before < amount <= running:
            completed = day
    return completed


@dataclass(frozen=True)
class Totals:
    """Sums over milestones, by who pays. Caps of at-cost items are never counted as owed."""

    organizer_amount: Decimal
    organizer_paid: Decimal
    organizer_outstanding: Decimal
    organizer_overdue: Decimal
    fide_amount: Decimal
    fide_paid: Decimal
    fide_outstanding: Decimal
    fide_overdue: Decimal
    at_cost_cap: Decimal
    at_cost_paid: Decimal

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {k: amount_str(v) for k, v in vars(self).items()}


def totals(rows: Iterable[tuple[MilestoneKind, MilestoneStatus]]) -> Totals:
    """Add up (kind, status) pairs: what the organizer owes and has paid, what FIDE pays out. Raises nothing."""
    s = dict.fromkeys(Totals.__dataclass_fields__, ZERO)
    for kind, st in rows:
        if kind is MilestoneKind.AT_COST:
            s["at_cost_cap"] += st.amount
            s["at_cost_paid"] += st.paid
            continue
        who = "organizer" if kind.organizer_pays else "fide"
        s[f"{who}_amount"] += st.amount
        s[f"{who}_paid"] += st.paid
        s[f"{who}_outstanding"] += st.outstanding
        if st.overdue:
            s[f"{who}_overdue"] += st.outstanding
    return Totals(**s)


@dataclass(frozen=True)
class NextDue:
    """The next milestone to fall due: its title, day, what is outstanding on it and whether FIDE pays it."""

    title: str
    due: date
    outstanding: Decimal
    fide_pays: bool


@dataclass(frozen=True)
class ScheduleGlance:
    """A contract's schedule at a glance, for the list of contracts: what is overdue (by the organizer, by FIDE)
    and on how many milestones, and the next milestone to fall due (None when none is left)."""

    organizer_overdue: Decimal
    fide_overdue: Decimal
    overdue_count: int
    next_due: NextDue | None


def schedule_glance(rows: Iterable[tuple[str, MilestoneKind, MilestoneStatus]]) -> ScheduleGlance:
    """From (title, kind, status on the day) of each milestone: the overdue amounts and count, and the milestone
    with the earliest day among those not settled, not overdue and with a day set (the first in the order given
    on the same day). At-cost items are never due. Raises nothing."""
    overdue = {True: ZERO, False: ZERO}
    count = 0
    upcoming: NextDue | None = None
    for title, kind, st in rows:
        if kind is MilestoneKind.AT_COST or st.settled:
            continue
        if st.overdue:
            overdue[kind.organizer_pays] += st.outstanding
            count += 1
        elif st.due is not None and st.outstanding > 0 and (upcoming is None or st.due < upcoming.due):
            upcoming = NextDue(title, st.due, st.outstanding, not kind.organizer_pays)
    return ScheduleGlance(overdue[True], overdue[False], count, upcoming)


# -------------------------------------------------------------------------------------------- payments


class PaymentRefused(ValueError):
    """A payment the tracker does not record; the message cites the article and gives the figures."""


def no_payment_taken(*, title: str, outstanding: Decimal, is_cap: bool = False) -> str | None:
    """Why no payment can be recorded against a milestone on which `outstanding` may still be recorded (for an
    at-cost item: what remains under its cap), or None when it still takes money. The milestone's page offers the
    payment form only on None, and says this instead. Raises nothing."""
    if outstanding > ZERO:
        return None
    if is_cap:
        return (f"Nothing remains under the cap on {title}: no further payment can be recorded against it. To "
                f"correct an entry, reverse it above.")
    return (f"{title[:1].upper()}{title[1:]} is fully paid: nothing is outstanding, so no further payment can be "
            f"recorded against it. To correct an entry, reverse it above.")


def check_payment(*, article: str, title: str, amount: Decimal, outstanding: Decimal, is_cap: bool = False,
                  cap: Decimal | None = None) -> None:
    """Refuse a payment that is not a positive amount, or that would exceed what is outstanding (for an at-cost
    item: what remains under its cap). The outstanding amount counts every payment recorded, whatever its date.

    Raises PaymentRefused: "Art. 15.6.2: €1,000.00 is outstanding on instalment 1, due 30 June 2015; a
    payment of €2,000.00 would exceed it."
    """
    if amount <= 0:
        raise PaymentRefused("A payment is a positive amount. To correct a payment already recorded, reverse it.")
    if amount > outstanding:
        if is_cap:
            raise PaymentRefused(
                f"Art. {article}: {format_eur(outstanding)} remains under the cap of {format_eur(cap)} on {title}; "
                f"a payment of {format_eur(amount)} would exceed it.")
        raise PaymentRefused(f"Art. {article}: {format_eur(outstanding)} is outstanding on {title}; a payment of "
                             f"{format_eur(amount)} would exceed it.")


# ------------------------------------------------------------------------------------- bank guarantee


def guarantee_warnings(*, source: str, valid_until: date | None, as_of: date, outstanding: Decimal,
                       last_due: date | None, warn_days: int) -> list[str]:
    """Warnings about the bank guarantee while the organizer still owes money: it has lapsed, it lapses within
    `warn_days`, or it lapses before the last unpaid milestone falls due. [] when there is no guarantee or nothing
    is outstanding. `source` cites what the warnings apply: how long a guarantee stays valid is the call's bidding
    procedure (reg.citation("guarantee_terms")), not the article that asks for "any bank guarantees as described
    in the bidding procedure". Raises nothing."""
    if valid_until is None or outstanding <= 0:
        return []
    if valid_until < as_of:
        return [f"{source}: the bank guarantee lapsed on {format_day(valid_until)} while "
                f"{format_eur(outstanding)} is still outstanding."]
    out = []
    left = (valid_until - as_of).days
    if left <= warn_days:
        out.append(f"{source}: the bank guarantee lapses {'today' if left == 0 else 'in ' + days_text(left)}, on "
                   f"{format_day(valid_until)}, while {format_eur(outstanding)} is still outstanding.")
    if last_due is not None and last_due > valid_until:
        out.append(f"{source}: the bank guarantee lapses on {format_day(valid_until)}, before the last unpaid "
                   f"milestone falls due on {format_day(last_due)}. Ask the organizer for an extension.")
    return out
