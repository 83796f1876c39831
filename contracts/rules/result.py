"""The match result and what follows from it, as pure rules: the checks of a recorded result (the schedule of
Art. 2.2, the winning score), the prize balances FIDE then pays (Art. 13.4), and the deductions from a player's
prize the call's rules allow (Art. 5.2 and the like), with their return when the rule says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import cast

from contracts.rules.terms import ContractInputs, DueSetBy, MilestoneKind, MilestonePart, MilestoneTerm, lower_first
from core.money import amount_str, format_day, format_eur, format_share
from events.regulation import Regulation, earliest_decisive_game
from finance.money import share_of
from finance.rules import (
    DECIDED_IN,
    DecidedIn,
    PrizeShares,
    fide_party,
    player_by_federation,
    player_party,
    prize_shares,
)

# ----------------------------------------------------------------------------------------- match result


@dataclass(frozen=True)
class MatchOutcome:
    """The result the secretariat records: the winner's federation, how the match was decided, and when."""

    winner_federation: str
    decided_in: str
    completed_on: date


def check_result(reg: Regulation, outcome: MatchOutcome, *, opening_date: date, today: date) -> dict[str, str]:
    """{field: message} for each problem with a match result ({} when it can be recorded).

    The winner is one of the regulation's players; a match decided in the regular games was completed on a
    game day of the Art. 2.2 schedule, one decided by tie-breaks on the tie-break day; it cannot have been
    completed after `today`. Raises nothing.
    """
    errors: dict[str, str] = {}
    try:
        player_by_federation(reg, outcome.winner_federation)
    except ValueError as exc:
        errors["winner"] = f"Art. {reg.prize_split.article}: {exc}."
    if outcome.decided_in not in DECIDED_IN:
        errors["decided_in"] = f"Choose how the match was decided: {' or '.join(DECIDED_IN)}."
        return errors
    days = reg.schedule_for(opening_date)
    wanted = "game" if outcome.decided_in == "regular" else "tiebreak"
    allowed = [d.on for d in days if d.kind == wanted]
    art = reg.schedule.article
    earliest = earliest_decisive_game(reg) if wanted == "game" else None
    if earliest is not None and reg.result is not None and outcome.completed_on in allowed[:max(earliest - 1, 0)]:
        game = allowed.index(outcome.completed_on) + 1
        errors["completed_on"] = (
            f"Art. {reg.result.article}: the winner is the first player to score {reg.result.winning_score} points, "
            f"so the regular games cannot decide the match before game {earliest} "
            f"({format_day(allowed[earliest - 1])}); {format_day(outcome.completed_on)} is game {game}.")
        return errors
    if outcome.completed_on > today:
        errors["completed_on"] = (f"The match cannot have been completed in the future "
                                  f"({format_day(outcome.completed_on)} is after today, {format_day(today)}).")
    elif outcome.completed_on not in allowed:
        if wanted == "game":
            errors["completed_on"] = (
                f"Art. {art}: a match decided in the regular games ends on a game day of the schedule, between "
                f"{format_day(allowed[0])} and {format_day(allowed[-1])}; {format_day(outcome.completed_on)} is not "
                f"a game day.")
        else:
            errors["completed_on"] = (
                f"Art. {art}: the tie-break games are played on {', '.join(format_day(d) for d in allowed)}; "
                f"{format_day(outcome.completed_on)} is not that day.")
    return errors


def result_shares(reg: Regulation, inputs: ContractInputs, outcome: MatchOutcome) -> PrizeShares:
    """The prize shares for the recorded outcome (Art. 13.1, 13.3, 13.4), home-match rule included.
    Raises ValueError as `finance.rules.prize_shares` does."""
    return prize_shares(reg, prize_fund=inputs.prize_fund, winner_federation=outcome.winner_federation,
                        decided_in=cast(DecidedIn, outcome.decided_in),  # check_result refuses any other
                        venue_country=inputs.venue_country,
                        completed_on=outcome.completed_on)


def result_milestones(reg: Regulation, inputs: ContractInputs, outcome: MatchOutcome) -> tuple[MilestoneTerm, ...]:
    """FIDE's payment of each player's balance once the match is completed: the prize (share of the prize
    fund, plus the home share for the opponent of a home player) less the advance, due the regulation's
    number of days after completion (Art. 13.4). Raises ValueError as `prize_shares` does."""
    shares = result_shares(reg, inputs, outcome)
    fide = fide_party(reg)
    sp = reg.prize_split
    out = []
    for pp in shares.players:
        role = "winner" if pp.won else "loser"
        out.append(MilestoneTerm(
            key=f"prize_balance_{pp.player.federation}", kind=MilestoneKind.DISBURSEMENT,
            title=f"the prize balance of {pp.player.name}", article=sp.advance_article,
            description=(f"Balance of the prize of {pp.player.name} ({role}): {format_eur(pp.total)} less the "
                         f"advance of {format_eur(pp.advance)}"),
            payer=fide, payee=player_party(pp.player), amount=pp.balance, is_cap=False, due=pp.balance_due,
            due_rule=shares.balance_rule, due_set_by=DueSetBy.RESULT,
            parts=tuple(MilestonePart(ln.article, ln.description, -ln.amount if ln.deducted else ln.amount)
                        for ln in pp.lines)))
    return tuple(out)


# ------------------------------------------------------------------------------- deductions from a prize


@dataclass(frozen=True)
class DeductionPart:
    """The part of a deduction a recipient receives, as the rule's article names it (Art. 5.2 for 2015: 5% to the
    Organizer, a further 5% to FIDE)."""

    key: str
    label: str
    share: Decimal
    amount: Decimal

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "label": self.label, "share": str(self.share), "amount": amount_str(self.amount)}

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> DeductionPart:
        return cls(key=data["key"], label=data["label"], share=Decimal(data["share"]), amount=Decimal(data["amount"]))


def deduction_parts(rule, prize: Decimal) -> tuple[DeductionPart, ...]:
    """Each recipient's part of one breach under `rule` (an events.regulation.DeductionRule) for a player whose
    prize money is `prize`: its share of the prize money, rounded to the cent; () when the rule names no
    recipients. Raises nothing for a rule of the call."""
    return tuple(DeductionPart(r.key, r.label, r.share, share_of(prize, r.share)) for r in rule.recipients)


BOOKKEEPING = "Sanity check: bookkeeping"  # the label when the call's file has no sanity_checks.bookkeeping


def check_deduction(rule, *, amount: Decimal | None, prize: Decimal, balance_left: Decimal, reason: str,
                    bookkeeping: str = BOOKKEEPING) -> dict[str, str]:
    """{field: message} for each problem with a deduction from a player's prize ({} when it can be recorded).

    `rule` is the call's events.regulation.DeductionRule (None when none was chosen); `prize` the player's prize
    money (her share, before the advance is deducted); `balance_left` what remains of her prize balance after the
    deductions already recorded. A fine "of not more than" an amount may be less; a fixed fine is that amount; a
    share of the prize money is that share for each breach (one breach a record). What the article says is cited
    with it; Gambit's own checks of its records (a reason, an amount above zero, no more than the balance) carry
    `bookkeeping`, the call's sanity check (contracts.services.bookkeeping). Raises nothing."""
    errors: dict[str, str] = {}
    if rule is None:
        return {"rule": "Choose what the deduction is for."}
    if not (reason or "").strip():
        errors["reason"] = (f"{bookkeeping}: say why the deduction ({lower_first(rule.title)}, Art. {rule.article}) "
                            "is made (the decision and its date).")
    if amount is None or amount <= 0:
        errors["amount"] = f"{bookkeeping}: enter the amount deducted, above zero."
        return errors
    entered = format_eur(amount)
    if rule.amount is not None and rule.up_to and amount > rule.amount:
        errors["amount"] = (f"Art. {rule.article}: {lower_first(rule.title)} is at most {format_eur(rule.amount)} "
                            f"(you entered {entered}).")
    elif rule.amount is not None and not rule.up_to and amount != rule.amount:
        errors["amount"] = (f"Art. {rule.article}: {lower_first(rule.title)} is {format_eur(rule.amount)} "
                            f"(you entered {entered}).")
    elif rule.recipients and rule.amount is None:
        parts = deduction_parts(rule, prize)
        expected = sum((p.amount for p in parts), Decimal("0.00"))
        if amount != expected:
            each = " and ".join(f"{format_share(p.share)} to {p.label} ({format_eur(p.amount)})" for p in parts)
            errors["amount"] = (f"Art. {rule.article}: of the prize money ({format_eur(prize)}), {each}: "
                                f"{format_eur(expected)} for each breach; record one breach at a time (you entered "
                                f"{entered}).")
    elif rule.share is not None and rule.amount is None:
        expected = share_of(prize, rule.share)
        if amount != expected:
            errors["amount"] = (f"Art. {rule.article}: {format_share(rule.share)} of the prize money "
                                f"({format_eur(prize)}) is {format_eur(expected)} for each breach; record one breach "
                                f"at a time (you entered {entered}).")
    if "amount" not in errors and amount > balance_left:
        errors["amount"] = (f"{bookkeeping}: the deductions cannot exceed the prize balance still due, "
                            f"{format_eur(balance_left)} (you entered {entered}).")
    return errors


def check_deduction_return(rule, *, returned: bool, deducted_on: date, decided_on: date | None, reason: str,
                           bookkeeping: str = BOOKKEEPING) -> dict[str, str]:
    """{field: message} for each problem with returning a deduction to the player ({} when it can be recorded).

    `rule` is the call's events.regulation.DeductionRule the deduction was made under (None when the call no longer
    has it); only a rule that says when its amount is returned (`returned_if`: a protest fee, when the protest is
    accepted) allows it, once, on a decision no earlier than the deduction's. Raises nothing."""
    if rule is None or not rule.returned_if:
        what = f"Art. {rule.article}: {lower_first(rule.title)}" if rule is not None else "This deduction"
        return {"deduction": f"{what} is not returned to the player under the regulations."}
    if returned:
        return {"deduction": f"{bookkeeping}: {lower_first(rule.title)} (Art. {rule.article}) was already returned; "
                             "it is returned once."}
    errors: dict[str, str] = {}
    if decided_on is None:
        errors["decided_on"] = f"{bookkeeping}: enter the day of the decision ({rule.returned_if})."
    elif decided_on < deducted_on:
        errors["decided_on"] = (f"{bookkeeping}: the decision to return it comes after the deduction of "
                                f"{format_day(deducted_on)} (you entered {format_day(decided_on)}).")
    if not (reason or "").strip():
        errors["reason"] = (f"Art. {rule.article}: the amount is returned if {rule.returned_if}; say so (the "
                            "decision and its date).")
    return errors
