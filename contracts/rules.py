"""The contract and the payment tracker as pure rules: no Flask, no session.

* The contract's lifecycle (`TRANSITIONS`) and who may see it.
* `contract_terms`: what a contract with the selected organizer says, built from the bid's figures, the
  regulation version and `finance.rules` (Art. 11.1.2, 13, 14, 15.6.1, 15.6.2). Nothing is computed twice:
  obligations, the payment schedule and the prize shares come from finance, this module only arranges them
  into *milestones*, the payments the tracker follows (who pays whom, how much, by when, under which article).
* `milestone_status`: where a milestone stands on a given day (paid, paid late, part-paid, due soon, overdue,
  not yet due), `check_payment` (no payment above what is outstanding), the bank guarantee's warnings, the
  match result's checks and the reminders' wording.

Every figure and article comes from the `Regulation`; dates the regulations do not fix are set by the
contract (Art. 15.6.1) and entered by the secretariat when the contract is issued.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import cast

from core.lifecycle import Lifecycle
from core.money import amount_str, format_count, format_day, format_eur, format_share
from core.validators import NotADateError, country_name, parse_day
from events.regulation import FideBank, Regulation, ScheduleDay, earliest_decisive_game
from finance.money import share_of
from finance.rules import (
    DECIDED_IN,
    BidTerms,
    DecidedIn,
    Obligations,
    Party,
    PartyKind,
    PaymentSchedule,
    PrizeShares,
    contract_article,
    fide_party,
    obligations,
    payment_schedule,
    player_by_federation,
    player_party,
    prize_shares,
)

ZERO = Decimal("0.00")

# ------------------------------------------------------------------------------------------- lifecycle


class ContractStatus(enum.StrEnum):
    DRAFT = "draft"            # generated from the selected bid; FIDE's working copy, not shown to the organizer
    ISSUED = "issued"          # frozen: terms snapshot and PDF stored with their SHA-256; milestones tracked
    SIGNED = "signed"          # the countersigned PDF is on file
    SUPERSEDED = "superseded"  # a correction (a new version) replaced it; its record stays
    DISCARDED = "discarded"    # a draft that was never issued
    # The Board's decision was corrected and selected another bid: no new payments; what was paid stays on
    # record and is refunded by reversing it.
    CLOSED = "closed"

    @property
    def label(self) -> str:
        return {"draft": "Draft", "issued": "Issued, awaiting countersignature", "signed": "Signed",
                "superseded": "Superseded by a correction", "discarded": "Discarded draft",
                "closed": "Closed: the Board's decision was corrected"}[self.value]

    @property
    def is_frozen(self) -> bool:
        """Issued once: its terms, its PDF and its milestones never change again."""
        return self in (ContractStatus.ISSUED, ContractStatus.SIGNED, ContractStatus.SUPERSEDED,
                        ContractStatus.CLOSED)

    @property
    def in_force(self) -> bool:
        """The version whose milestones are tracked, reminded and paid."""
        return self in (ContractStatus.ISSUED, ContractStatus.SIGNED)

    @property
    def takes_reversals(self) -> bool:
        """Payments may be reversed: on the version in force, and on a contract closed by a correction of the
        decision (that is how what was paid is refunded)."""
        return self.in_force or self is ContractStatus.CLOSED

    @property
    def is_draft(self) -> bool:
        return self is ContractStatus.DRAFT

    @property
    def has_pdf(self) -> bool:
        """A PDF to read: the draft rendered on the spot, or the one stored when it was issued."""
        return self is not ContractStatus.DISCARDED

    @property
    def badge(self) -> str:
        """The css class of the status badge."""
        return "pass" if self is ContractStatus.SIGNED else "pending" if self.in_force else "na"

    @property
    def visible_to_organizer(self) -> bool:
        """The organizer sees what FIDE issued, not FIDE's drafts."""
        return self.is_frozen


class ContractAction(enum.StrEnum):
    ISSUE = "issue"
    SIGN = "sign"
    SUPERSEDE = "supersede"
    DISCARD = "discard"
    CLOSE = "close"


# (status, action) -> new status. Anything not listed is refused.
TRANSITIONS: dict[tuple[ContractStatus, ContractAction], ContractStatus] = {
    (ContractStatus.DRAFT, ContractAction.ISSUE): ContractStatus.ISSUED,
    (ContractStatus.DRAFT, ContractAction.DISCARD): ContractStatus.DISCARDED,
    (ContractStatus.ISSUED, ContractAction.SIGN): ContractStatus.SIGNED,
    # A correction issued as a new version replaces the one in force, signed or not.
    (ContractStatus.ISSUED, ContractAction.SUPERSEDE): ContractStatus.SUPERSEDED,
    (ContractStatus.SIGNED, ContractAction.SUPERSEDE): ContractStatus.SUPERSEDED,
    # A correction of the Board's decision that selects another bid closes the old winner's contract.
    (ContractStatus.ISSUED, ContractAction.CLOSE): ContractStatus.CLOSED,
    (ContractStatus.SIGNED, ContractAction.CLOSE): ContractStatus.CLOSED,
}

_STATUS_PHRASES = {ContractStatus.DRAFT: "a draft contract", ContractStatus.ISSUED: "an issued contract",
                   ContractStatus.SIGNED: "a signed contract", ContractStatus.SUPERSEDED: "a superseded contract",
                   ContractStatus.DISCARDED: "a discarded draft",
                   ContractStatus.CLOSED: "a contract closed by a correction of the Board's decision"}
_ACTION_PARTICIPLES = {ContractAction.ISSUE: "issued", ContractAction.SIGN: "signed",
                       ContractAction.SUPERSEDE: "superseded", ContractAction.DISCARD: "discarded",
                       ContractAction.CLOSE: "closed"}


class ContractRuleError(ValueError):
    """A contract rule that is not met; the message cites the article and says what to do."""


CONTRACT_LIFECYCLE = Lifecycle(
    "contract", ContractStatus, ContractAction, TRANSITIONS, _STATUS_PHRASES, _ACTION_PARTICIPLES,
    error=ContractRuleError,
    refusal=lambda current, action: f"{_STATUS_PHRASES[current].capitalize()} cannot be "
                                    f"{_ACTION_PARTICIPLES[action]}.")


def next_status(current: ContractStatus | str, action: ContractAction | str) -> ContractStatus:
    """The status `action` leads to. Raises ContractRuleError for an unknown status or action, or a move
    TRANSITIONS does not allow ("a signed contract cannot be issued")."""
    return CONTRACT_LIFECYCLE.next(current, action)


def allowed_actions(current: ContractStatus | str) -> list[ContractAction]:
    """The actions TRANSITIONS allows from `current`. Raises ContractRuleError (a ValueError) for an unknown
    status."""
    return CONTRACT_LIFECYCLE.allowed(current)


def may_view_contract(*, is_admin: bool, is_owner: bool, status: ContractStatus | str) -> bool:
    """The secretariat sees every contract; the organizer (the bid's owner) sees the versions FIDE issued to
    it; nobody else sees any (they get 404). Raises ValueError for an unknown status."""
    return is_admin or (is_owner and ContractStatus(status).visible_to_organizer)


# ----------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class ContractInputs:
    """What the contract is generated from: the selected bid's facts and FIDE's choices. Stored with the
    contract (JSON), so a contract can be rebuilt exactly from its regulation version and these."""

    bid_id: int
    applicant_name: str
    applicant_type: str
    host_federation: str
    signatory_name: str
    signatory_position: str
    contact_name: str
    contact_email: str
    venue_name: str
    venue_city: str
    venue_country: str
    opening_date: date
    closing_date: date
    prize_fund: Decimal
    fide_contribution: Decimal
    guarantee_offered: bool
    guarantee_bank: str = ""
    guarantee_amount: Decimal | None = None
    guarantee_valid_until: date | None = None
    # Art. 14.3: the organizer provides the signal blocker "if required by FIDE": the call's answer as the
    # secretariat recorded it (Event.signal_blocker_required) when the contract was generated; never assumed.
    signal_blocker_required: bool = False
    # Who selected the bid, from the decision in force: "board_vote" (the Presidential Board) or "president"
    # (the FIDE President alone, in consultation with the WCOC); "" for a contract stored before it was kept.
    selected_by: str = ""
    # For the President's decision: the decision's grounds as it records them (why no Board meeting could be held,
    # the WCOC consulted and when; board.models.Decision.grounds); "" otherwise or for a contract stored before.
    selection_grounds: str = ""

    @property
    def by_federation(self) -> bool:
        """The applicant is a member federation of FIDE (otherwise a sponsor)."""
        return self.applicant_type == "federation"

    @property
    def selected_by_president(self) -> bool:
        """The FIDE President selected the bid, in consultation with the WCOC (no Board meeting possible)."""
        return self.selected_by == "president"

    @property
    def selected_by_board_vote(self) -> bool:
        """The Presidential Board selected the bid."""
        return self.selected_by == "board_vote"

    @property
    def bid_terms(self) -> BidTerms:
        return BidTerms(prize_fund=self.prize_fund, fide_contribution=self.fide_contribution,
                        guarantee_offered=self.guarantee_offered, venue_country=self.venue_country,
                        signal_blocker_required=self.signal_blocker_required)

    def as_dict(self) -> dict:
        """JSON-ready (amounts as strings with two decimals, dates ISO). Raises nothing."""
        out = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, Decimal):
                value = amount_str(value)
            elif isinstance(value, date):
                value = value.isoformat()
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> ContractInputs:
        """The inverse of `as_dict`. Raises KeyError for a missing key, ValueError for a malformed value."""
        values = dict(data)
        for name in ("opening_date", "closing_date", "guarantee_valid_until"):
            if values.get(name):
                values[name] = date.fromisoformat(values[name])
        for name in ("prize_fund", "fide_contribution", "guarantee_amount"):
            if values.get(name) is not None:
                values[name] = Decimal(values[name])
        return cls(**values)


# Bid fields a contract cannot be written without, with how they are named to the secretariat.
# The articles are placeholders the call fills (events.regulation.Regulation.cite_text).
REQUIRED_BID_FACTS = {
    "applicant_name": "the applicant's name ({cite:signature})",
    "opening_date": "the opening date ({art:schedule.window_article})",
    "closing_date": "the closing date ({art:schedule.window_article})",
    "venue_city": "the venue's city ({cite:venue})", "venue_country": "the venue's country ({cite:venue})",
    "prize_fund_eur": "the prize fund ({art:prize_fund.bid_article})",
    "fide_contribution_eur": "the contribution to FIDE ({art:fide_contribution.bid_article})",
}


def missing_bid_facts(values: Mapping, reg: Regulation) -> list[str]:
    """What a bid lacks for a contract to be generated, in words ([] when nothing). Raises nothing."""
    return [reg.cite_text(label) for key, label in REQUIRED_BID_FACTS.items() if values.get(key) in (None, "")]


# ------------------------------------------------------------------------------------------- milestones


class MilestoneKind(enum.StrEnum):
    TO_FIDE = "to_fide"            # the organizer pays into FIDE's account (Art. 15.6.2)
    DIRECT = "direct"              # the organizer pays a player directly (Art. 11.1.2, 14.4)
    AT_COST = "at_cost"            # the organizer buys at cost, up to a cap (Art. 14.3)
    DISBURSEMENT = "disbursement"  # FIDE pays out what it holds (Art. 13.4, 14.5)

    @property
    def label(self) -> str:
        return {"to_fide": "Organizer to FIDE", "direct": "Organizer to a player",
                "at_cost": "Organizer, at cost", "disbursement": "FIDE pays out"}[self.value]

    @property
    def organizer_pays(self) -> bool:
        return self is not MilestoneKind.DISBURSEMENT

    @property
    def paid_into_fide(self) -> bool:
        """Paid into FIDE's account: with a guarantee, the Art. 15.6.2 instalments of the payment schedule."""
        return self is MilestoneKind.TO_FIDE


class DueSetBy(enum.StrEnum):
    REGULATION = "regulation"  # the regulations fix the date (15.6.2 with a guarantee; 13.4 before the start)
    CONTRACT = "contract"      # the regulations fix none: the contract must (15.6.1); the issue form asks
    OPTIONAL = "optional"      # an at-cost item: a date may be set, none is required
    RESULT = "result"          # follows from the match result (13.4: within ten days after completion)


@dataclass(frozen=True)
class MilestonePart:
    """One obligation line (or share of one) that a milestone pays."""

    article: str
    description: str
    amount: Decimal


@dataclass(frozen=True)
class MilestoneTerm:
    """A payment the contract provides for: who pays whom, how much, by when, under which article.

    `amount` is the cap when `is_cap` (paid at cost, "up to"). `due` is None until set when the regulations
    fix no date (`due_set_by` says who sets it; `default_due` is what the issue form proposes).
    """

    key: str
    kind: MilestoneKind
    title: str
    article: str
    description: str
    payer: Party
    payee: Party
    amount: Decimal
    is_cap: bool
    due: date | None
    due_rule: str
    due_set_by: DueSetBy
    default_due: date | None = None
    parts: tuple[MilestonePart, ...] = ()

    @property
    def needs_due_date(self) -> bool:
        return self.due is None and self.due_set_by is DueSetBy.CONTRACT

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {"key": self.key, "kind": self.kind.value, "title": self.title, "article": self.article,
                "description": self.description, "payer": _party(self.payer), "payee": _party(self.payee),
                "amount": amount_str(self.amount), "is_cap": self.is_cap,
                "due": self.due.isoformat() if self.due else None, "due_rule": self.due_rule,
                "due_set_by": self.due_set_by.value,
                "parts": [{"article": p.article, "description": p.description, "amount": amount_str(p.amount)}
                          for p in self.parts]}


def _party(p: Party) -> dict:
    return {"kind": p.kind.value, "name": p.name, "federation": p.federation or None}


def organizer(inputs: ContractInputs) -> Party:
    """The organizer, named as its bid names the applicant. Raises nothing."""
    return Party(PartyKind.ORGANIZER, inputs.applicant_name)


def advance_due(inputs: ContractInputs) -> date:
    """When FIDE pays each player's advance (Art. 13.4: "before the start of the FWWCM").

    The day before the opening ceremony: the ceremony is day 1 of the Art. 2.2 schedule, so the match starts
    with it, and a payment due on the opening date itself could still arrive after the start. Raises nothing.
    """
    return inputs.opening_date - timedelta(days=1)


def plan_milestones(reg: Regulation, inputs: ContractInputs) -> tuple[MilestoneTerm, ...]:
    """The milestones of a contract before the match result is known, in the order they are shown.

    * Organizer to FIDE: one per instalment of `finance.payment_schedule` when it has terms (with a bank
      guarantee, for 2015: half the prize fund by 30 June, the rest and every other obligation to FIDE by 31
      August); otherwise one per obligation line payable to FIDE, each dated by the contract (15.6.1).
    * Organizer to a player (travel 11.1.2, home compensation 14.4): one per line, dated as finance dates it
      (the last instalment's date with a guarantee), else by the contract.
    * At cost (the signal blocker, 14.3): tracked against its cap, with an optional date.
    * FIDE pays out: each player's advance the day before the opening ceremony (13.4, see `advance_due`), each
      principal's stipend (14.5) on a date the contract sets (proposed: the closing date).

    Raises TypeError or ValueError (from finance) when the inputs hold impossible figures.
    """
    terms = inputs.bid_terms
    ob = obligations(reg, terms)
    schedule = payment_schedule(reg, terms)
    org, fide = organizer(inputs), fide_party(reg)
    art15_6_1 = contract_article(reg)
    out: list[MilestoneTerm] = []

    if schedule.has_terms:
        for inst in schedule.instalments:
            out.append(MilestoneTerm(
                key=f"instalment_{inst.number}", kind=MilestoneKind.TO_FIDE,
                title=f"instalment {inst.number}, due {format_day(inst.due)}", article=inst.article,
                description=inst.description, payer=org, payee=fide, amount=inst.amount, is_cap=False,
                due=inst.due, due_rule=f"By {format_day(inst.due)} (Art. {inst.article}), strictly.",
                due_set_by=DueSetBy.REGULATION,
                parts=tuple(MilestonePart(p.line.article, p.line.description, p.amount) for p in inst.parts)))
    else:
        for line in ob.fixed_lines:
            if line.to_fide:
                out.append(_line_milestone(line, MilestoneKind.TO_FIDE, org, art15_6_1))
    for line in schedule.direct:
        out.append(_line_milestone(line, MilestoneKind.DIRECT, org, art15_6_1))
    for line in schedule.at_cost:
        out.append(MilestoneTerm(
            key=line.key, kind=MilestoneKind.AT_COST, title=_lower_first(line.description.split(";")[0]),
            article=line.article, description=line.description, payer=org, payee=line.payee, amount=line.amount,
            is_cap=True, due=None, due_rule=line.due_rule, due_set_by=DueSetBy.OPTIONAL))

    sp = reg.prize_split
    for p in reg.players:
        out.append(MilestoneTerm(
            key=f"advance_{p.federation}", kind=MilestoneKind.DISBURSEMENT, title=f"the advance to {p.name}",
            article=sp.advance_article,
            description=f"Advance on the prize of {p.name}, paid by FIDE before the start of the match and "
                        f"deducted from her share of the prize fund",
            payer=fide, payee=player_party(p), amount=sp.advance_per_player, is_cap=False,
            due=advance_due(inputs),
            due_rule=(f"Before the start of the match (Art. {sp.advance_article}): by the day before the opening "
                      f"ceremony, {format_day(advance_due(inputs))}."),
            due_set_by=DueSetBy.REGULATION))
    for i, st in enumerate(reg.obligations.stipends, start=1):
        out.append(MilestoneTerm(
            key=f"stipend_payout_{i}", kind=MilestoneKind.DISBURSEMENT, title=f"the stipend of the {st.principal}",
            article=reg.obligations.stipends_article, description=f"Stipend of the {st.principal}, paid by FIDE",
            payer=fide, payee=Party(PartyKind.PRINCIPAL, st.principal), amount=st.amount, is_cap=False, due=None,
            due_rule=(f"The regulations set no date for paying the stipends (Art. {reg.obligations.stipends_article}); "
                      f"the contract sets it (Art. {art15_6_1})."),
            due_set_by=DueSetBy.CONTRACT, default_due=inputs.closing_date))
    return tuple(out)


def _line_milestone(line, kind: MilestoneKind, payer: Party, art15_6_1: str) -> MilestoneTerm:
    fixed = line.due is not None
    return MilestoneTerm(
        key=line.key, kind=kind, title=_lower_first(line.description), article=line.article,
        description=line.description, payer=payer, payee=line.payee, amount=line.amount, is_cap=False,
        due=line.due, due_rule=line.due_rule if fixed else (
            f"The regulations set no deadline for this payment; the contract sets it (Art. {art15_6_1})."),
        due_set_by=DueSetBy.REGULATION if fixed else DueSetBy.CONTRACT)


def with_due_dates(milestones: Iterable[MilestoneTerm], due_dates: Mapping[str, date | None],
                   *, issued_on: date | None = None) -> tuple[MilestoneTerm, ...]:
    """The milestones with the dates the contract sets (by key) filled in. A date the regulations fix is kept
    whatever `due_dates` says, unless it is already past on `issued_on` (the day the contract is issued): then
    the contract sets the date in its place (see `passed_regulation_dates`). Raises nothing."""
    out = []
    for m in milestones:
        chosen = due_dates.get(m.key)
        if m.due_set_by in (DueSetBy.CONTRACT, DueSetBy.OPTIONAL) and chosen is not None:
            rule = f"By {format_day(chosen)}, as this contract sets it ({m.due_rule.rstrip('.')})."
            m = _replace(m, due=chosen, due_rule=rule)
        elif chosen is not None and issued_on is not None and passed_regulation_dates([m], today=issued_on):
            assert m.due is not None  # a passed date is a date
            rule = (f"By {format_day(chosen)}, as this contract sets it in place of {format_day(m.due)}, which had "
                    f"passed when the contract was issued ({m.due_rule.rstrip('.')}).")
            title = f"{m.title.split(', due ')[0]}, due {format_day(chosen)}" if ", due " in m.title else m.title
            m = _replace(m, due=chosen, due_rule=rule, due_set_by=DueSetBy.CONTRACT, title=title)
        out.append(m)
    return tuple(out)


def passed_regulation_dates(milestones: Iterable[MilestoneTerm], *, today: date,
                            kept: Mapping[str, date | None] | None = None) -> list[MilestoneTerm]:
    """The milestones whose date the regulations fix (Art. 15.6.2 with a guarantee, the advances before the
    start) and which is already before `today`: a contract issued today cannot hold the payment to it, so the
    contract sets a new date in its place. `kept`: the dates of the version a correction replaces (by key); a
    date already in force there stays (its payments are carried over). Raises nothing."""
    kept = kept or {}
    return [m for m in milestones if m.due_set_by is DueSetBy.REGULATION and m.due is not None and m.due < today
            and kept.get(m.key) != m.due]


def past_due_dates(reg: Regulation, milestones: Iterable[MilestoneTerm], *, today: date,
                   kept: Mapping[str, date | None] | None = None) -> dict[str, str]:
    """{milestone key: message} for each payment of a contract issued on `today` that would be overdue from the
    moment it exists: a date the regulations fix that has passed and that the contract has not replaced, or a
    date the contract sets that is before `today` (a sanity check). Dates that follow the match result are not
    judged (a result is recorded after the match), nor, for a correction, a date the version it replaces already
    had (`kept`, by key: that payment was due all along). Raises nothing."""
    out: dict[str, str] = {}
    kept = kept or {}
    issue_day = format_day(today)
    for m in passed_regulation_dates(milestones, today=today, kept=kept):
        assert m.due is not None
        out[m.key] = (f"Art. {m.article}: the regulations fix {format_day(m.due)} for {m.title.split(', due')[0]}, "
                      f"which is already past on {issue_day}, the day the contract is issued; the payment would be "
                      f"overdue from the start. The contract sets a new date in its place (Art. "
                      f"{contract_article(reg)}): enter the date by which it is due, from {issue_day} on.")
    for m in milestones:
        if m.due_set_by in (DueSetBy.CONTRACT, DueSetBy.OPTIONAL) and m.due is not None and m.due < today \
                and kept.get(m.key) != m.due:
            out[m.key] = (f"Sanity check: {m.title} cannot be due on {format_day(m.due)} (you entered "
                          f"{m.due.isoformat()}): that is before {issue_day}, the day the contract is issued, so "
                          f"it would be overdue from the start. Enter a date from {issue_day} on.")
    return out


def fill_blank_due_dates(milestones: Iterable[MilestoneTerm], due_dates: Mapping[str, date | None],
                         same: date | None, *, today: date | None = None) -> dict[str, date | None]:
    """The issue form's dates with its "one date for every payment left blank" applied: each payment whose date the
    contract must set (DueSetBy.CONTRACT) and, for a contract issued on `today`, each date the regulations fixed that
    has passed (`passed_regulation_dates`), left blank, takes `same`; optional dates (items at cost) and dates
    already given are kept, and nothing changes when `same` is None. Raises nothing."""
    out = dict(due_dates)
    if same is None:
        return out
    milestones = list(milestones)
    passed = {m.key for m in passed_regulation_dates(milestones, today=today)} if today is not None else set()
    for m in milestones:
        if (m.due_set_by is DueSetBy.CONTRACT or m.key in passed) and out.get(m.key) is None:
            out[m.key] = same
    return out


def _replace(m: MilestoneTerm, **changes) -> MilestoneTerm:
    return dataclasses.replace(m, **changes)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def due_date_message(reg: Regulation, m: MilestoneTerm, *, guarantee_offered: bool) -> str:
    """Why the issue form asks for a milestone's date, citing the articles. Raises nothing."""
    art, pay_art = contract_article(reg), reg.payments.article
    if m.kind is MilestoneKind.DISBURSEMENT:
        return (f"Art. {art}: the regulations set no date for {m.title} (Art. {m.article}); the contract must set "
                f"it. Enter the date by which FIDE pays it.")
    why = ("no bank guarantee is offered, so the deadlines of Art. " + pay_art + " do not apply"
           if not guarantee_offered else "the regulations give no deadline for it")
    return (f"Art. {art}: the regulations set no deadline for {m.title} ({why}); the contract must set it. "
            f"Enter the date by which it is due.")


def missing_due_dates(reg: Regulation, milestones: Iterable[MilestoneTerm], *, guarantee_offered: bool
                      ) -> dict[str, str]:
    """{key: message} for each milestone that still needs a date the contract must set. Raises nothing."""
    return {m.key: due_date_message(reg, m, guarantee_offered=guarantee_offered)
            for m in milestones if m.needs_due_date}


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


# ------------------------------------------------------------------------------------------------ terms


@dataclass(frozen=True)
class Scenario:
    """One possible outcome of the match and how the prize fund is then shared."""

    title: str
    shares: PrizeShares


@dataclass(frozen=True)
class ContractTerms:
    """Everything the contract states, built by `contract_terms`; `as_dict()` is the stored snapshot."""

    inputs: ContractInputs
    regulation: Regulation
    obligations: Obligations
    schedule: PaymentSchedule
    scenarios: tuple[Scenario, ...]
    schedule_days: tuple[ScheduleDay, ...]
    milestones: tuple[MilestoneTerm, ...]
    due_dates: Mapping[str, date] = field(default_factory=dict)

    @property
    def fide(self) -> Party:
        return fide_party(self.regulation)

    @property
    def organizer(self) -> Party:
        return organizer(self.inputs)

    @property
    def bank(self) -> FideBank:
        return self.regulation.fide_bank

    @property
    def contract_article(self) -> str:
        return contract_article(self.regulation)

    @property
    def home_player(self):
        return self.obligations.home_player

    @property
    def venue_country_name(self) -> str:
        return country_name(self.inputs.venue_country)

    @property
    def balance_rule(self) -> str:
        """When the prize balances are due (Art. 13.4), in words."""
        return self.scenarios[0].shares.balance_rule if self.scenarios else ""

    def milestones_of(self, *kinds: MilestoneKind) -> tuple[MilestoneTerm, ...]:
        return tuple(m for m in self.milestones if m.kind in kinds)

    def as_dict(self) -> dict:
        """The snapshot stored with the contract: inputs, due dates, regulation hash, and the computed terms.
        Raises nothing."""
        reg = self.regulation
        return {
            "inputs": self.inputs.as_dict(),
            "due_dates": {k: v.isoformat() for k, v in sorted(self.due_dates.items())},
            "regulation": {"title": reg.event.regulations_title, "sha256": reg.sha256,
                           "text_sha256": reg.regulations_text.sha256},
            "parties": {"fide": _party(self.fide), "organizer": _party(self.organizer)},
            "obligations": self.obligations.as_dict(),
            "schedule": self.schedule.as_dict(),
            "scenarios": [{"title": s.title, "winner": s.shares.winner.player.federation,
                           "decided_in": s.shares.decided_in,
                           "balances": {pp.player.federation: amount_str(pp.balance) for pp in s.shares.players},
                           "totals": {pp.player.federation: amount_str(pp.total) for pp in s.shares.players}}
                          for s in self.scenarios],
            "milestones": [m.as_dict() for m in self.milestones],
        }


def contract_terms(reg: Regulation, inputs: ContractInputs, due_dates: Mapping[str, date] | None = None,
                   *, issued_on: date | None = None) -> ContractTerms:
    """What the contract with the selected organizer says (Art. 15.6.1): parties, event, dates and venue with
    the Art. 2.2 schedule, the prize fund and its sharing for every outcome (13.1-13.4), each obligation of
    Art. 11, 13 and 14, the terms of payment (15.6.2) as milestones, FIDE's bank details.

    `due_dates` gives the dates the contract sets (by milestone key); the others stay None (see
    `missing_due_dates`). `issued_on`: the day of issue, on which a date the regulations fix may have passed and
    be replaced by one of `due_dates` (`with_due_dates`). Raises ContractRuleError when the figures cannot make a
    contract (finance refuses them, or the dates are reversed).
    """
    if inputs.closing_date <= inputs.opening_date:
        raise ContractRuleError(f"Art. {reg.schedule.article}: the closing date ({format_day(inputs.closing_date)}) "
                                f"must come after the opening date ({format_day(inputs.opening_date)}).")
    dates = {k: v for k, v in (due_dates or {}).items() if v is not None}
    try:
        terms = inputs.bid_terms
        ob = obligations(reg, terms)
        schedule = payment_schedule(reg, terms)
        scenarios = []
        for p in reg.players:
            for decided_in in DECIDED_IN:
                how = "the regular games" if decided_in == "regular" else "the tie-break games"
                scenarios.append(Scenario(
                    f"If {p.name} ({p.federation}) wins in {how}",
                    prize_shares(reg, prize_fund=inputs.prize_fund, winner_federation=p.federation,
                                 decided_in=decided_in, venue_country=inputs.venue_country)))
        milestones = with_due_dates(plan_milestones(reg, inputs), dates, issued_on=issued_on)
    except (TypeError, ValueError) as exc:
        raise ContractRuleError(f"The bid's figures cannot make a contract: {exc}.") from None
    return ContractTerms(inputs=inputs, regulation=reg, obligations=ob, schedule=schedule,
                         scenarios=tuple(scenarios),
                         schedule_days=tuple(reg.programme(inputs.opening_date, inputs.closing_date)),
                         milestones=milestones, due_dates=dates)


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


def _days(n: int) -> str:
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
                      f"Paid late, on {format_day(completed)}: {_days(late)} after the due date",
                      completed_on=completed, days=late)
    if due is None:
        part = f"; {format_eur(paid)} of {format_eur(amount)} received" if paid else ""
        return status(MilestoneState.PART_PAID if paid else MilestoneState.NOT_YET_DUE, f"No due date set{part}")
    left = (due - as_of).days
    if left < 0:
        part = f"; part-paid, {format_eur(paid)} of {format_eur(amount)} received" if paid > 0 else ""
        return status(MilestoneState.OVERDUE, f"Overdue by {_days(-left)}{part}", days=-left, overdue=True)
    soon = left <= due_soon_days
    when = "today" if left == 0 else f"in {_days(left)}"
    if paid > 0:
        return status(MilestoneState.PART_PAID,
                      f"Part-paid: {format_eur(paid)} of {format_eur(amount)}; {format_eur(outstanding)} due "
                      f"{when}, by {format_day(due)}", days=left, soon=soon)
    if soon:
        return status(MilestoneState.DUE_SOON, f"Due {when}, by {format_day(due)}", days=left, soon=True)
    return status(MilestoneState.NOT_YET_DUE, f"Not yet due: due {format_day(due)}, in {_days(left)}", days=left)


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


# -------------------------------------------------------------------------------------------- payments


class PaymentRefused(ValueError):
    """A payment the tracker does not record; the message cites the article and gives the figures."""


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
        out.append(f"{source}: the bank guarantee lapses {'today' if left == 0 else 'in ' + _days(left)}, on "
                   f"{format_day(valid_until)}, while {format_eur(outstanding)} is still outstanding.")
    if last_due is not None and last_due > valid_until:
        out.append(f"{source}: the bank guarantee lapses on {format_day(valid_until)}, before the last unpaid "
                   f"milestone falls due on {format_day(last_due)}. Ask the organizer for an extension.")
    return out


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
                   f"{_days(status.days or 0)}. {format_eur(status.outstanding)} is outstanding.")
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


# ----------------------------------------------------------------------------------------------- dates


def parse_as_of(raw: str | None, today: date) -> date:
    """The `as_of` day of a page or API call: `today` when absent. Raises ValueError with a sentence for the
    person when it is not a date written YYYY-MM-DD."""
    if raw is None or raw.strip() == "":
        return today
    text = raw.strip()
    try:
        return parse_day(text)
    except NotADateError:
        raise ValueError(f"as_of must be a date written YYYY-MM-DD, for example 2015-06-30 (you gave "
                         f"'{text[:40]}').") from None


# --------------------------------------------------------------------------------------- countersigning


def countersign_problem(*, name: str, reference: str, issued_sha256: str, issued_size: int, content_sha256: str,
                        keeps_issued: bool, inspection, gambit_key_sha256: str) -> str | None:
    """Why `name` is not the issued contract countersigned, or None when it is: it keeps the PDF Gambit issued
    byte for byte (`keeps_issued`: the file starts with those bytes; a signature added by a PDF reader is an
    incremental update that appends to the file) and adds at least one intact signature after it that covers the
    whole file. `inspection` is core.signing.Inspection of the upload; `gambit_key_sha256` the SHA-256 of Gambit's
    public key (SubjectPublicKeyInfo)."""
    again = "Sign the issued PDF itself digitally (without printing, scanning or saving it anew) and upload that."
    if content_sha256 == issued_sha256:
        return (f"{name} is {reference} exactly as Gambit issued it: it carries no countersignature. {again}")
    ours = [s for s in inspection.signatures if s.public_key_sha256 == gambit_key_sha256]
    if not keeps_issued:
        if not ours:
            unsigned = "" if inspection.signed else " and it carries no signature at all"
            return (f"{name} does not contain the contract Gambit issued: it was made anew (printed to PDF, scanned "
                    f"or re-saved), so FIDE's signed version is gone{unsigned}. {again}")
        return (f"{name} changes the version that Gambit signed: its first {issued_size} bytes differ from "
                f"{reference} as issued. A countersignature adds to the issued file; it never changes it. {again}")
    later = [s for s in inspection.signatures if s.revision_end > issued_size and s not in ours]
    if not later:
        return f"{name} keeps {reference} as issued but adds no signature to it. {again}"
    broken = [s for s in later if not s.intact]
    if broken:
        return f"{name}: the signature added after Gambit's is not valid ({broken[0].words()}). {again}"
    if not any(not s.modified_after for s in later):
        return (f"{name}: the file was changed after it was countersigned ({later[-1].words()}). Upload the file "
                "as it was signed.")
    if any(s.altered_after for s in ours):
        return (f"{name} keeps {reference} as issued but changes its content afterwards (a later revision alters "
                "the pages or the document beyond adding a signature), so it is not the contract Gambit issued, "
                f"countersigned. {again}")
    return None


def countersign_trust_problem(*, name: str, reference: str, signatures, accepted_reason: str) -> str | None:
    """Why the organizer's countersignature does not make the contract signed, or None when it does: at least one
    of `signatures` (core.signing.SignatureInfo, those added after Gambit's) must be trusted (its certificate, or
    one that issued it, on the secretariat's trust list, valid when checked, not known revoked), unless the
    secretariat accepts an untrusted one explicitly, with a reason (`accepted_reason`)."""
    if any(s.trusted for s in signatures) or accepted_reason.strip():
        return None
    words = "; ".join(s.words() for s in signatures)
    return (f"{name}: the organizer's signature is not trusted ({words}), so {reference} stays issued, not signed. "
            "Add the organizer's certificate (or the certification authority's that issued it) to the trust list "
            "and upload the file again, or accept this signature explicitly and say why.")


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

    def as_text(self) -> str:
        return f"{format_eur(self.amount)} to {self.label} ({format_share(self.share)})"


def deduction_parts(rule, prize: Decimal) -> tuple[DeductionPart, ...]:
    """Each recipient's part of one breach under `rule` (an events.regulation.DeductionRule) for a player whose
    prize money is `prize`: its share of the prize money, rounded to the cent; () when the rule names no
    recipients. Raises nothing for a rule of the call."""
    return tuple(DeductionPart(r.key, r.label, r.share, share_of(prize, r.share)) for r in rule.recipients)


def check_deduction(rule, *, amount: Decimal | None, prize: Decimal, balance_left: Decimal, reason: str
                    ) -> dict[str, str]:
    """{field: message} for each problem with a deduction from a player's prize ({} when it can be recorded).

    `rule` is the call's events.regulation.DeductionRule (None when none was chosen); `prize` the player's prize
    money (her share, before the advance is deducted); `balance_left` what remains of her prize balance after the
    deductions already recorded. A fine "of not more than" an amount may be less; a fixed fine is that amount; a
    share of the prize money is that share for each breach (one breach a record). Raises nothing."""
    errors: dict[str, str] = {}
    if rule is None:
        return {"rule": "Choose what the deduction is for."}
    if not (reason or "").strip():
        errors["reason"] = f"Art. {rule.article}: say why the deduction is made (the decision and its date)."
    if amount is None or amount <= 0:
        errors["amount"] = f"Art. {rule.article}: enter the amount deducted, above zero."
        return errors
    entered = format_eur(amount)
    if rule.amount is not None and rule.up_to and amount > rule.amount:
        errors["amount"] = (f"Art. {rule.article}: {_lower_first(rule.title)} is at most {format_eur(rule.amount)} "
                            f"(you entered {entered}).")
    elif rule.amount is not None and not rule.up_to and amount != rule.amount:
        errors["amount"] = (f"Art. {rule.article}: {_lower_first(rule.title)} is {format_eur(rule.amount)} "
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
        errors["amount"] = (f"Art. {rule.article}: the deductions cannot exceed the prize balance still due, "
                            f"{format_eur(balance_left)} (you entered {entered}).")
    return errors


def check_deduction_return(rule, *, returned: bool, deducted_on: date, decided_on: date | None, reason: str
                           ) -> dict[str, str]:
    """{field: message} for each problem with returning a deduction to the player ({} when it can be recorded).

    `rule` is the call's events.regulation.DeductionRule the deduction was made under (None when the call no longer
    has it); only a rule that says when its amount is returned (`returned_if`: a protest fee, when the protest is
    accepted) allows it, once, on a decision no earlier than the deduction's. Raises nothing."""
    if rule is None or not rule.returned_if:
        what = f"Art. {rule.article}: {_lower_first(rule.title)}" if rule is not None else "This deduction"
        return {"deduction": f"{what} is not returned to the player under the regulations."}
    if returned:
        return {"deduction": f"Art. {rule.article}: {_lower_first(rule.title)} was already returned; it is returned "
                             "once."}
    errors: dict[str, str] = {}
    if decided_on is None:
        errors["decided_on"] = f"Art. {rule.article}: enter the day of the decision ({rule.returned_if})."
    elif decided_on < deducted_on:
        errors["decided_on"] = (f"Art. {rule.article}: the decision to return it comes after the deduction of "
                                f"{format_day(deducted_on)} (you entered {format_day(decided_on)}).")
    if not (reason or "").strip():
        errors["reason"] = (f"Art. {rule.article}: the amount is returned if {rule.returned_if}; say so (the "
                            "decision and its date).")
    return errors
