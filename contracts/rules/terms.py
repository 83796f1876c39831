"""The contract's terms as pure rules: what a contract with the selected organizer says (Art. 15.6.1).

`contract_terms` builds it from the bid's facts (`ContractInputs`), the regulation version and `finance.rules`
(Art. 11.1.2, 13, 14, 15.6.2). Nothing is computed twice: obligations, the payment schedule and the prize shares
come from finance; this module only arranges them into *milestones*, the payments the tracker follows (who pays
whom, how much, by when, under which article). Dates the regulations do not fix are set by the contract
(Art. 15.6.1) and entered by the secretariat when the contract is issued.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from core.money import amount_str, format_day
from core.validators import country_name
from events.regulation import FideBank, Regulation, ScheduleDay
from finance.rules import (
    DECIDED_IN,
    BidTerms,
    Obligations,
    Party,
    PartyKind,
    PaymentSchedule,
    PrizeShares,
    contract_article,
    fide_party,
    obligations,
    payment_schedule,
    player_party,
    prize_shares,
)


class ContractRuleError(ValueError):
    """A contract rule that is not met; the message cites the article and says what to do."""


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
            key=line.key, kind=MilestoneKind.AT_COST, title=lower_first(line.description.split(";")[0]),
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
        key=line.key, kind=kind, title=lower_first(line.description), article=line.article,
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


def lower_first(text: str) -> str:
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
