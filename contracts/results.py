"""The match result and the deductions from a player's prize balance: recording the result (which adds FIDE's payment of
each prize balance to the contract in force), recording a deduction under one of the call's rules, and returning one.
Each function checks the rules, changes rows, flushes and writes the audit entry; none commits, none reads the
request."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

from accounts.models import User
from contracts import queries
from contracts.guards import ContractError, bookkeeping, check_day, lock_contract, milestone_row
from contracts.models import Contract, MatchResult, Milestone, PrizeDeduction
from contracts.rules.result import (
    MatchOutcome,
    check_deduction,
    check_deduction_return,
    check_result,
    deduction_parts,
    result_milestones,
)
from core.db import db, swap_state
from core.money import format_day
from events.regulation import deduction_rule
from evidence import audit


def record_result(contract: Contract, *, outcome: MatchOutcome, actor: User, now: datetime) -> MatchResult:
    """Record the match result and add FIDE's payment of each player's prize balance to the contract in force
    (Art. 13.1, 13.3, 13.4: due ten days after completion for 2015).

    Raises ContractError when the contract is not in force, a result is already recorded, or the result does
    not fit the schedule (`errors` names the fields). Writes `match.result` to the audit log.
    """
    lock_contract(contract)
    if not contract.state.in_force:
        raise ContractError(f"{contract.reference} is {contract.state.label.lower()}: record the result on the "
                            "contract in force.")
    existing = queries.match_result(contract.bid.event_id)
    if existing is not None:
        raise ContractError(f"The result was already recorded on {format_day(existing.recorded_at)}; it is entered "
                            "once.")
    reg = contract.regulation
    inputs = contract.inputs
    errors = check_result(reg, outcome, opening_date=inputs.opening_date, today=now.date())
    if errors:
        raise ContractError(next(iter(errors.values())), errors=errors)
    try:
        planned = result_milestones(reg, inputs, outcome)
    except ValueError as exc:
        raise ContractError(str(exc)) from None
    result = MatchResult(event_id=contract.bid.event_id, winner_federation=outcome.winner_federation.upper(),
                         decided_in=outcome.decided_in, completed_on=outcome.completed_on, recorded_at=now,
                         recorded_by_id=getattr(actor, "id", None))
    db.session.add(result)
    start = max((m.position for m in contract.milestones), default=-1) + 1
    for i, m in enumerate(planned):
        db.session.add(milestone_row(contract, m, start + i, now))
    db.session.flush()
    db.session.refresh(contract)
    audit.record("match.result", result, actor=actor, now=now,
                 data={"contract": contract.id, "winner": result.winner_federation, "decided_in": outcome.decided_in,
                       "completed_on": outcome.completed_on,
                       "balances": {m.key: m.amount for m in planned}})
    return result


def prize_balance_milestone(contract: Contract, federation: str) -> Milestone | None:
    """The milestone of FIDE's payment of this player's prize balance (made when the result is recorded), or
    None. Raises nothing."""
    key = f"prize_balance_{(federation or '').strip().upper()}"
    return next((m for m in contract.milestones if m.key == key), None)


def record_deduction(contract: Contract, *, federation: str, rule_key: str, amount: Decimal | None, reason: str,
                     decided_on: date, actor: User, now: datetime) -> PrizeDeduction:
    """Record a deduction from a player's prize balance under one of the call's deduction rules (a fine of 3.8.4
    or 4(b), a forfeit of 5.2, a protest fee of 7.3.1 for 2015), with its article and reason.

    Raises ContractError (with `errors` by field) when the contract is not in force, no result is recorded yet,
    the rule is unknown, or `contracts.rules.result.check_deduction` refuses the amount or the reason. Writes
    `prize.deduction` to the audit log. Takes the call's lock first: what is left is read inside it."""
    lock_contract(contract)
    if not contract.state.in_force:
        raise ContractError(f"{contract.reference} is {contract.state.label.lower()}: record deductions on the "
                            "contract in force.")
    check_day(contract, decided_on, what="the day the deduction was decided", now=now, field="decided_on")
    milestone = prize_balance_milestone(contract, federation)
    if milestone is None:
        raise ContractError("Record the match result first: a deduction is made from a player's prize balance, "
                            "which exists once the result is known.", errors={"player": "No prize balance yet."})
    reg = contract.regulation
    try:
        rule = deduction_rule(reg, rule_key)
    except KeyError:
        rule = None
    done = sum((d.amount_in_effect for d in queries.deductions_of(milestone.id)), Decimal("0.00"))
    prize = milestone.amount + reg.prize_split.advance_per_player
    # What is left to take from: the balance less earlier deductions and less what FIDE has already paid of it.
    left = milestone.amount - done - queries.recorded_total(milestone.id)
    errors = check_deduction(rule, amount=amount, prize=prize, balance_left=left, reason=reason,
                             bookkeeping=bookkeeping(contract))
    if errors:
        raise ContractError(next(iter(errors.values())), errors=errors)
    assert rule is not None  # check_deduction refuses a deduction under no rule
    parts = deduction_parts(rule, prize)
    row = PrizeDeduction(milestone_id=milestone.id, rule_key=rule.key, article=rule.article, amount=amount,
                         reason=reason.strip(), decided_on=decided_on, recorded_at=now,
                         recorded_by_id=getattr(actor, "id", None),
                         parts_json=json.dumps([p.as_dict() for p in parts]))
    db.session.add(row)
    db.session.flush()
    audit.record("prize.deduction", row, actor=actor, now=now,
                 data={"contract": contract.id, "milestone": milestone.key, "article": rule.article,
                       "rule": rule.key, "amount": amount, "reason": row.reason, "decided_on": decided_on,
                       "parts": [p.as_dict() for p in parts]})
    return row


def return_deduction(contract: Contract, deduction_id: int, *, decided_on: date | None, reason: str, actor: User,
                     now: datetime) -> PrizeDeduction:
    """Record that a deduction is returned to the player, when its rule says it is (`returned_if`: the protest
    fee of 7.3.1 for 2015, when the protest is accepted): the balance FIDE pays the player is restored by its
    amount. Once only, with a compare-and-swap on the deduction not yet returned.

    Raises ContractError (with `errors` by field) when the contract is not in force, the deduction is not one of
    its prize balances', its rule does not return it, it was already returned, or the day or the reason is
    missing or wrong. Writes `prize.deduction_returned` to the audit log."""
    lock_contract(contract)
    if not contract.state.in_force:
        raise ContractError(f"{contract.reference} is {contract.state.label.lower()}: record it on the contract in "
                            "force.")
    row = db.session.get(PrizeDeduction, deduction_id)
    if row is None or row.milestone_id not in {m.id for m in contract.milestones}:
        raise ContractError("No such deduction on this contract.", errors={"deduction": "No such deduction."})
    try:
        rule = deduction_rule(contract.regulation, row.rule_key)
    except KeyError:
        rule = None
    errors = check_deduction_return(rule, returned=row.returned, deducted_on=row.decided_on, decided_on=decided_on,
                                    reason=reason, bookkeeping=bookkeeping(contract))
    if errors:
        raise ContractError(next(iter(errors.values())), errors=errors)
    assert rule is not None and decided_on is not None  # check_deduction_return refuses both
    if not swap_state(row, expected=None, column="returned_on",
                      values={"returned_on": decided_on, "return_reason": reason.strip(), "returned_at": now,
                              "returned_by_id": getattr(actor, "id", None)}):
        raise ContractError(f"{rule.title} (Art. {rule.article}) was returned at the same moment by "
                            "someone else; reload the page.",
                            errors={"deduction": "Already returned."})
    audit.record("prize.deduction_returned", row, actor=actor, now=now,
                 data={"contract": contract.id, "milestone": row.milestone.key, "article": rule.article,
                       "rule": rule.key, "amount": row.amount, "decided_on": decided_on,
                       "reason": row.return_reason})
    return row
