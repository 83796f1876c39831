"""Contracts (Art. 15.6): a contract, and its payment milestones with their status on a day. The organizer sees its
own, the secretariat all; anyone else gets 404."""

from __future__ import annotations

from datetime import date
from typing import Any

from flask import request
from pydantic import Field

from api.auth import api_error, api_user
from api.routing import operation
from api.shapes import Amount, Day, Instant, Shape, amount, amount_or_none
from contracts.lifecycle import ContractStatus
from contracts.models import PAYMENT_KINDS, Contract
from contracts.queries import due_soon_days, guarantee_warning_days, may_view, tracker, with_payments
from contracts.rules.terms import MilestoneKind
from contracts.rules.tracker import MilestoneState
from core.db import db, utcnow
from core.urls import external_url
from core.validators import parse_as_of
from finance.rules import PartyKind

NOT_FOUND = "No contract with this id that the caller may see"


class ContractRegulation(Shape):
    title: str
    version: int
    sha256: str
    text_sha256: str


class Parties(Shape):
    fide: str
    organizer: str


class Venue(Shape):
    name: str
    city: str
    country: str


class Guarantee(Shape):
    bank: str
    amount: Amount | None
    valid_until: Day | None


class ContractDetail(Shape):
    """A contract: parties, event, figures, status, hashes and its terms snapshot."""

    id: int
    reference: str
    bid: int
    event: str
    version: int
    status: ContractStatus
    replaces: int | None
    correction_reason: str | None
    regulation: ContractRegulation
    parties: Parties
    venue: Venue
    opening_date: Day
    closing_date: Day
    prize_fund: Amount
    fide_contribution: Amount
    guarantee: Guarantee | None
    issued_at: Instant | None
    pdf_sha256: str | None
    signed_at: Instant | None
    signed_pdf_sha256: str | None
    terms: dict[str, Any]
    url: str
    milestones_url: str


class Payer(Shape):
    kind: PartyKind
    name: str


class Payee(Payer):
    federation: str | None


class MilestoneStatus(Shape):
    state: MilestoneState
    label: str
    paid: Amount
    outstanding: Amount
    completed_on: Day | None
    days: int | None
    due_soon: bool
    overdue: bool


class Payment(Shape):
    id: int
    kind: str = Field(json_schema_extra={"enum": list(PAYMENT_KINDS)})
    amount: Amount
    received_on: Day
    reference: str
    reverses: int | None
    reason: str | None


class Milestone(Shape):
    id: int
    key: str
    kind: MilestoneKind
    article: str
    title: str
    description: str
    payer: Payer
    payee: Payee
    amount: Amount
    is_cap: bool
    due: Day | None
    status: MilestoneStatus
    payments: list[Payment]


class Totals(Shape):
    """Sums over the milestones by who pays (contracts.rules.tracker.Totals); caps of at-cost items are never owed."""

    organizer_amount: Amount
    organizer_paid: Amount
    organizer_outstanding: Amount
    organizer_overdue: Amount
    fide_amount: Amount
    fide_paid: Amount
    fide_outstanding: Amount
    fide_overdue: Amount
    at_cost_cap: Amount
    at_cost_paid: Amount


class ContractMilestones(Shape):
    """The contract's payment milestones with their status on a day, the payments recorded, the totals and the
    bank guarantee's warnings."""

    contract: int
    reference: str
    as_of: Day
    due_soon_days: int
    milestones: list[Milestone]
    totals: Totals
    warnings: list[str]


class MilestonesQuery(Shape):
    as_of: date | None = Field(None, description="The day the status is judged on (default: today)")


def _visible_contract(contract_id: int) -> Contract | None:
    contract = db.session.get(Contract, contract_id)
    if contract is None or not may_view(api_user(), contract):
        return None
    return contract


def contract_detail(contract: Contract) -> ContractDetail:
    """The contract as the API shows it: parties, event, status, hashes, versions. Raises nothing."""
    inputs = contract.inputs
    reg = contract.regulation
    guarantee = (Guarantee(bank=inputs.guarantee_bank, amount=amount_or_none(inputs.guarantee_amount),
                           valid_until=inputs.guarantee_valid_until) if inputs.guarantee_offered else None)
    return ContractDetail(
        id=contract.id, reference=contract.reference, bid=contract.bid_id, event=contract.bid.event.slug,
        version=contract.version, status=ContractStatus(contract.status), replaces=contract.replaces_id,
        correction_reason=contract.correction_reason,
        regulation=ContractRegulation(title=reg.event.regulations_title, version=contract.regulation_version.number,
                                 sha256=contract.regulation_version.sha256, text_sha256=reg.regulations_text.sha256),
        parties=Parties(fide=reg.event.organiser, organizer=inputs.applicant_name),
        venue=Venue(name=inputs.venue_name, city=inputs.venue_city, country=inputs.venue_country),
        opening_date=inputs.opening_date, closing_date=inputs.closing_date,
        prize_fund=amount(inputs.prize_fund), fide_contribution=amount(inputs.fide_contribution),
        guarantee=guarantee, issued_at=contract.issued_at, pdf_sha256=contract.pdf_sha256,
        signed_at=contract.signed_at, signed_pdf_sha256=contract.signed_pdf_sha256, terms=contract.terms,
        url=external_url("contracts.view", contract_id=contract.id),
        milestones_url=external_url("api.contract_milestones", contract_id=contract.id))


@operation("/contracts/<int:contract_id>", operation_id="getContract",
           summary="A contract: parties, event, figures, status, hashes and its terms snapshot",
           response=ContractDetail, errors={404: NOT_FOUND})
def contract(contract_id: int):
    found = _visible_contract(contract_id)
    if found is None:
        return api_error(404, f"No contract {contract_id} that you may see.")
    return contract_detail(found)


@operation("/contracts/<int:contract_id>/milestones", operation_id="getContractMilestones",
           summary="The contract's payment milestones with their status on a day, the payments recorded, totals "
                   "and the bank guarantee's warnings",
           response=ContractMilestones, query=MilestonesQuery,
           errors={400: "as_of is not a date (YYYY-MM-DD)", 404: NOT_FOUND})
def contract_milestones(contract_id: int):
    found = _visible_contract(contract_id)
    if found is None:
        return api_error(404, f"No contract {contract_id} that you may see.")
    raw = request.args.get("as_of")
    if raw is not None and not raw.strip():  # the document declares a date: present and empty is not one
        return api_error(400, "as_of must be a date written YYYY-MM-DD, for example 2015-06-30 (you gave an empty "
                              "value; leave as_of out for today).")
    try:
        as_of = parse_as_of(raw, utcnow().date())
    except ValueError as exc:
        return api_error(400, str(exc))
    soon = due_soon_days()
    t = tracker(found, as_of, due_soon_days=soon, guarantee_warning_days=guarantee_warning_days())
    with_payments(found.milestones)  # every entry is listed: read in one statement, not one per milestone
    return ContractMilestones(
        contract=found.id, reference=found.reference, as_of=as_of, due_soon_days=soon,
        milestones=[Milestone(
            id=m.id, key=m.key, kind=m.milestone_kind, article=m.article, title=m.title, description=m.description,
            payer=Payer(kind=PartyKind(m.payer_kind), name=m.payer_name),
            payee=Payee(kind=PartyKind(m.payee_kind), name=m.payee_name, federation=m.payee_federation),
            amount=amount(m.amount), is_cap=m.is_cap, due=m.due,
            status=MilestoneStatus(state=st.state, label=st.label, paid=amount(st.paid),
                                   outstanding=amount(st.outstanding), completed_on=st.completed_on, days=st.days,
                                   due_soon=st.due_soon, overdue=st.overdue),
            payments=[Payment(id=p.id, kind=p.kind, amount=amount(p.amount), received_on=p.received_on,
                              reference=p.reference, reverses=p.reverses_id, reason=p.reason) for p in m.payments])
            for m, st in t.rows],
        totals=Totals.model_validate(t.totals.as_dict()),
        warnings=t.warnings)
