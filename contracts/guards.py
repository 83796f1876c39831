"""What every change to a contract checks first, and the error it refuses with: the call's lock (then the contract read
again), Gambit's sanity check of a day entered for it, and a milestone's row from the terms. Used by the contract's
life (contracts.services), its payments (contracts.payments) and its result and deductions (contracts.results)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

from contracts import queries
from contracts.models import Contract, Milestone
from contracts.rules.result import BOOKKEEPING
from contracts.rules.terms import MilestoneTerm
from core.db import db
from core.validators import implausible_day
from events.services import lock_call


class ContractError(ValueError):
    """A request about a contract or a payment that cannot be met; the message is for the person who asked.
    `errors` maps form fields to messages when several fields are at fault."""

    def __init__(self, message: str, field: str | None = None, errors: Mapping[str, str] | None = None):
        super().__init__(message)
        self.field = field
        self.errors = dict(errors or {})


def lock_contract(contract: Contract) -> None:
    """Take the call's lock (events.services.lock_call) before a change to the contract, its payments or its
    deductions, and read the contract again: what is checked next is the state as it now is (an issue and a
    countersignature, two deductions, a payment and a deduction at once are made one after the other)."""
    lock_call(contract.bid.event)
    db.session.refresh(contract)


def check_day(contract: Contract, day: date, *, what: str, now: datetime, field: str,
              days_ahead: int | None = None) -> None:
    """Gambit's sanity check of a day entered for the contract (core.validators.implausible_day): not before the
    call existed, not far in the future (`days_ahead`: the SANE_DATE_DAYS_AHEAD setting unless given). Raises
    ContractError naming `field`."""
    # The call existed from when it was loaded into Gambit, or, for a call loaded after the fact (an earlier
    # season's), at the latest by its own bid deadline.
    earliest = min(contract.bid.event.created_at.date(), contract.regulation.event.bid_deadline.date())
    problem = implausible_day(day, what=what, earliest=earliest,
                              earliest_is="this call existed", today=now.date(),
                              days_ahead=queries.sane_days_ahead() if days_ahead is None else days_ahead)
    if problem:
        raise ContractError(problem, field, errors={field: problem})


def milestone_row(contract: Contract, m: MilestoneTerm, position: int, now: datetime) -> Milestone:
    return Milestone(contract_id=contract.id, key=m.key, position=position, kind=m.kind.value, title=m.title[:300],
                     article=m.article, description=m.description, payer_kind=m.payer.kind.value,
                     payer_name=m.payer.name[:200], payee_kind=m.payee.kind.value, payee_name=m.payee.name[:200],
                     payee_federation=m.payee.federation or None, amount=m.amount, is_cap=m.is_cap, due=m.due,
                     due_rule=m.due_rule, created_at=now)


def bookkeeping(contract: Contract) -> str:
    """The label of Gambit's check of its own records of a contract (sanity_checks.bookkeeping): from the contract's
    version of the call file, else the call's current one (a contract issued before the check was named), else the
    plain words. Raises nothing."""
    for reg in (contract.regulation, contract.event.regulation):
        try:
            return str(reg.citation("bookkeeping"))
        except KeyError:
            continue
    return BOOKKEEPING
