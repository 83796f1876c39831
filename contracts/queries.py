"""Reading contracts: which versions exist, which is in force, who may see them, and where each milestone
stands on a day. Nothing here changes a row."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import BigInteger, ColumnElement, Select, and_, cast, func, or_, select
from sqlalchemy.orm import selectinload

from bids.lifecycle import BidStatus
from bids.models import Bid
from contracts.lifecycle import ContractStatus, may_view_contract
from contracts.models import Contract, MatchResult, Milestone, Payment, PrizeDeduction
from contracts.rules.reminders import ReminderKind, reminder_kind
from contracts.rules.tracker import (
    ZERO,
    Entry,
    MilestoneStatus,
    ScheduleGlance,
    Totals,
    guarantee_warnings,
    milestone_status,
    outstanding_on_record,
    schedule_glance,
    totals,
)
from core.auth import Role
from core.db import db
from core.paging import Page, PageRequest, ordered, sql_page

IN_FORCE = (ContractStatus.ISSUED.value, ContractStatus.SIGNED.value)


def due_soon_days() -> int:
    """How many days before its deadline a milestone counts as due soon (the PAYMENT_DUE_SOON_DAYS setting, which
    config.py defaults). Raises nothing inside an app."""
    return int(current_app.config["PAYMENT_DUE_SOON_DAYS"])


def sane_days_ahead() -> int:
    """How many days after today a payment, deduction or signature may be dated (the SANE_DATE_DAYS_AHEAD setting,
    which config.py defaults): Gambit's sanity check. Raises nothing inside an app."""
    return int(current_app.config["SANE_DATE_DAYS_AHEAD"])


def guarantee_warning_days() -> int:
    """How many days before a guarantee lapses the tracker warns (the GUARANTEE_WARNING_DAYS setting, which
    config.py defaults). Raises nothing inside an app."""
    return int(current_app.config["GUARANTEE_WARNING_DAYS"])


def versions_of(bid_id: int) -> list[Contract]:
    """Every version of the contract with a bid, oldest first (discarded drafts included)."""
    return list(db.session.scalars(select(Contract).where(Contract.bid_id == bid_id).order_by(Contract.version)))


def in_force(bid_id: int) -> Contract | None:
    """The issued or signed version of the bid's contract, if any (there is at most one)."""
    return db.session.scalars(select(Contract).where(Contract.bid_id == bid_id, Contract.status.in_(IN_FORCE))
                              .order_by(Contract.version.desc())).first()


def open_draft(bid_id: int) -> Contract | None:
    return db.session.scalars(select(Contract).where(Contract.bid_id == bid_id,
                                                     Contract.status == ContractStatus.DRAFT.value)).first()


def may_view(user, contract: Contract) -> bool:
    """The same rule as contracts.lifecycle.may_view_contract, for a user and a loaded contract."""
    if user is None or not user.is_authenticated:
        return False
    return may_view_contract(is_admin=Role.ADMIN in user.role_set, is_owner=contract.bid.owner_id == user.id,
                             status=contract.status)


def latest_for(user, bid_id: int) -> Contract | None:
    """The version of a bid's contract a user lands on: the one in force, else the newest they may see."""
    current = in_force(bid_id)
    if current is not None and may_view(user, current):
        return current
    for c in reversed(versions_of(bid_id)):
        if may_view(user, c):
            return c
    return None


# The admin's list of contracts sorts on these (its reference is the call, the bid and the version: by bid).
CONTRACT_SORTS = {"bid": Contract.bid_id, "status": Contract.status, "issued": Contract.issued_at}


def newest_contracts() -> Select:
    """Every bid's newest contract version, as a query to filter, order and page (core.paging.sql_page)."""
    newest = (select(Contract.bid_id, func.max(Contract.version).label("version"))
              .group_by(Contract.bid_id).subquery())
    return select(Contract).join(newest, (Contract.bid_id == newest.c.bid_id) & (Contract.version == newest.c.version))


def contracts_for_admin(ask: PageRequest) -> Page[Contract]:
    """The page `ask` asks for of every bid's newest contract version (newest bid first by default): a COUNT and
    one page of contracts, their milestones read together (lazy="selectin")."""
    return sql_page(newest_contracts(), ask, [ordered(CONTRACT_SORTS[ask.sort], ask.dir), Contract.id.desc()])


def contracts_for_owner(user_id: int, ask: PageRequest) -> Page[Contract]:
    """The page `ask` asks for of the versions FIDE issued to this bidder, newest first."""
    frozen = [s.value for s in ContractStatus if s.is_frozen]
    query = (select(Contract).join(Bid, Contract.bid_id == Bid.id)
             .where(Bid.owner_id == user_id, Contract.status.in_(frozen)))
    return sql_page(query, ask, [Contract.bid_id.desc(), Contract.version.desc()])


def selected_without_contract() -> list[Bid]:
    """Selected bids with no contract yet (discarded drafts do not count)."""
    live = select(Contract.bid_id).where(Contract.status != ContractStatus.DISCARDED.value)
    return list(db.session.scalars(select(Bid).where(Bid.status == BidStatus.SELECTED.value, Bid.id.not_in(live))
                                   .order_by(Bid.id)).unique())


def payment_by_key(milestone_id: int, key: str) -> Payment | None:
    """The entry a form with this one-time key recorded on the milestone, if any."""
    return db.session.scalars(select(Payment).where(Payment.milestone_id == milestone_id,
                                                    Payment.idempotency_key == key)).first()


def match_result(event_id: int) -> MatchResult | None:
    return db.session.scalars(select(MatchResult).where(MatchResult.event_id == event_id)).first()


# ---------------------------------------------------------------------------------------------- tracker


def deductions_of(milestone_id: int) -> list[PrizeDeduction]:
    """The deductions recorded against a prize balance, oldest first."""
    return list(db.session.scalars(select(PrizeDeduction).where(PrizeDeduction.milestone_id == milestone_id)
                                   .order_by(PrizeDeduction.recorded_at, PrizeDeduction.id)))


def amount_owed(m: Milestone, deductions: list[PrizeDeduction] | None = None) -> Decimal:
    """What the milestone calls for: its amount, less the deductions recorded against it and not returned (a prize
    balance, which FIDE pays less what the regulations take from it; no other milestone has deductions).
    `deductions` are the milestone's, when they were read already."""
    taken = deductions_of(m.id) if deductions is None else deductions
    return m.amount - sum((d.amount_in_effect for d in taken), ZERO)


def cents_sum(column: Any) -> ColumnElement:
    """SUM of a Numeric(14, 2) money column, exact on both databases, in cents (an integer). SQLite keeps such a
    column as a binary float, so its SUM(amount) can be off by a cent over enough rows; each amount times 100,
    rounded, is its exact number of cents (exact up to 2^53 cents, far above Numeric(14, 2)), and a sum of integers
    is exact. On PostgreSQL the same expression is exact numeric arithmetic."""
    return func.sum(cast(func.round(column * 100), BigInteger))


def from_cents(cents) -> Decimal:
    """An integer number of cents (as the database returns it: int, or Decimal on PostgreSQL) as euros, exactly."""
    return Decimal(int(cents or 0)).scaleb(-2)


@dataclass(frozen=True)
class Ledger:
    """What a milestone's entries come to, read with one aggregate (never the entries themselves): the net amount
    received on each day (a day's entries added up, reversals negative, so the tracker's rule, which adds entries up
    by day, finds the same status), how many entries there are, and their total whatever their day."""

    days: tuple[Entry, ...] = ()
    entries: int = 0
    total: Decimal = ZERO


NO_ENTRIES = Ledger()


def ledgers(milestone_ids: list[int]) -> dict[int, Ledger]:
    """The ledger of each milestone in `milestone_ids` (those without an entry are left out: use NO_ENTRIES): one
    statement, GROUP BY milestone and day, whatever the number of entries; no Payment object is loaded. Its rows
    are the days on which money was received or reversed, not the entries."""
    if not milestone_ids:
        return {}
    rows = db.session.execute(
        select(Payment.milestone_id, Payment.received_on, cents_sum(Payment.amount), func.count())
        .where(Payment.milestone_id.in_(milestone_ids))
        .group_by(Payment.milestone_id, Payment.received_on).order_by(Payment.milestone_id, Payment.received_on))
    by_milestone: dict[int, list[tuple[date, Decimal, int]]] = {}
    for milestone_id, day, cents, count in rows:
        by_milestone.setdefault(milestone_id, []).append((day, from_cents(cents), int(count)))
    return {mid: Ledger(days=tuple(Entry(amount, day) for day, amount, _ in days),
                        entries=sum(n for _, _, n in days), total=sum((a for _, a, _ in days), ZERO))
            for mid, days in by_milestone.items()}


def ledger_of(milestone_id: int) -> Ledger:
    """One milestone's ledger (one statement)."""
    return ledgers([milestone_id]).get(milestone_id, NO_ENTRIES)


def recorded_total(milestone_id: int) -> Decimal:
    """Every entry recorded against the milestone added up, whatever its day (exact: `cents_sum`)."""
    return from_cents(db.session.scalar(select(cents_sum(Payment.amount)).where(Payment.milestone_id == milestone_id)))


def deductions_by_milestone(milestone_ids: list[int]) -> dict[int, list[PrizeDeduction]]:
    """The deductions recorded against each of `milestone_ids`, oldest first, in one statement (only prize
    balances have any)."""
    out: dict[int, list[PrizeDeduction]] = {}
    if milestone_ids:
        for d in db.session.scalars(select(PrizeDeduction).where(PrizeDeduction.milestone_id.in_(milestone_ids))
                                    .order_by(PrizeDeduction.recorded_at, PrizeDeduction.id)):
            out.setdefault(d.milestone_id, []).append(d)
    return out


def status_of(m: Milestone, as_of: date, due_soon_days: int, *, ledger: Ledger | None = None,
              deductions: list[PrizeDeduction] | None = None) -> MilestoneStatus:
    """Where `m` stands on `as_of` (contracts.rules.tracker.milestone_status), from its ledger and its deductions
    (read here when not given: one statement each). Never loads the milestone's payments."""
    entries = ledger_of(m.id) if ledger is None else ledger
    return milestone_status(amount_owed(m, deductions), entries.days, m.due, as_of, due_soon_days, at_cost=m.is_cap)


def statuses(milestones: list[Milestone], as_of: date, due_soon_days: int) -> dict[int, MilestoneStatus]:
    """The status of each of `milestones` on `as_of`, by milestone id: two statements (their ledgers and their
    deductions), whatever the number of milestones and of payments."""
    ids = [m.id for m in milestones]
    books, taken = ledgers(ids), deductions_by_milestone(ids)
    return {m.id: status_of(m, as_of, due_soon_days, ledger=books.get(m.id, NO_ENTRIES),
                            deductions=taken.get(m.id, [])) for m in milestones}


def still_recordable(m: Milestone, ledger: Ledger, deductions: list[PrizeDeduction] | None = None) -> Decimal:
    """What may still be recorded against `m` (what a new payment is checked against): what it calls for less every
    entry recorded, whatever its day (contracts.rules.tracker.outstanding_on_record)."""
    return outstanding_on_record(amount_owed(m, deductions), ledger.total)


# A milestone's entries sort on these; the entry's id breaks ties, so that no entry sits on two pages.
PAYMENT_SORTS = {"received": Payment.received_on, "amount": Payment.amount, "recorded": Payment.recorded_at}


def entries_page(milestone_id: int, ask: PageRequest, *, holding: int | None = None) -> Page[Payment]:
    """The page `ask` asks for of the entries recorded against a milestone, or, with `holding` (an entry's id), the
    page that holds that entry in the order asked for: a COUNT (two when `holding` is given) and the page's entries,
    with the entries they reverse or are reversed by and who recorded them (one statement each), whatever the
    number of entries."""
    column = PAYMENT_SORTS[ask.sort]
    query = select(Payment).where(Payment.milestone_id == milestone_id)
    if holding is not None:
        key = db.session.scalar(select(column).where(Payment.id == holding, Payment.milestone_id == milestone_id))
        if key is not None:
            after = column > key if ask.dir == "desc" else column < key
            tie = Payment.id > holding if ask.dir == "desc" else Payment.id < holding
            before = db.session.scalar(select(func.count()).select_from(
                query.where(or_(after, and_(column == key, tie))).subquery())) or 0
            ask = PageRequest(page=before // ask.size + 1, sort=ask.sort, dir=ask.dir, size=ask.size)
    return sql_page(query, ask, [ordered(column, ask.dir), ordered(Payment.id, ask.dir)],
                    fetch=lambda limited: list(db.session.scalars(limited.options(
                        selectinload(Payment.reverses), selectinload(Payment.reversed_by),
                        selectinload(Payment.recorded_by)))))


def with_payments(milestones: list[Milestone]) -> list[Milestone]:
    """`milestones` with every payment of each loaded (one statement), for what lists them all: the payments'
    export and the API's milestones."""
    if milestones:
        list(db.session.scalars(select(Milestone).where(Milestone.id.in_([m.id for m in milestones]))
                                .options(selectinload(Milestone.payments))))
    return milestones


@dataclass(frozen=True)
class Tracker:
    """A contract's milestones with their status on `as_of`, the totals and the guarantee's warnings."""

    contract: Contract
    as_of: date
    rows: list[tuple[Milestone, MilestoneStatus]]
    totals: Totals
    warnings: list[str]


def tracker(contract: Contract, as_of: date, *, due_soon_days: int, guarantee_warning_days: int) -> Tracker:
    """Where every milestone of `contract` stands on `as_of`, and what the bank guarantee warns about."""
    found = statuses(contract.milestones, as_of, due_soon_days)
    rows = [(m, found[m.id]) for m in contract.milestones]
    sums = totals((m.milestone_kind, st) for m, st in rows)
    bid = contract.bid
    warnings: list[str] = []
    if contract.state.in_force and bid.guarantee_offered:
        unpaid = [m.due for m, st in rows
                  if m.milestone_kind.organizer_pays and not m.is_cap and st.outstanding > 0 and m.due]
        warnings = guarantee_warnings(source=str(contract.regulation.citation("guarantee_terms")),
                                      valid_until=bid.guarantee_valid_until, as_of=as_of,
                                      outstanding=sums.organizer_outstanding, last_due=max(unpaid, default=None),
                                      warn_days=guarantee_warning_days)
    return Tracker(contract=contract, as_of=as_of, rows=rows, totals=sums, warnings=warnings)


def glance(contract: Contract, found: dict[int, MilestoneStatus]) -> ScheduleGlance:
    """What is overdue on `contract`, and what falls due next (contracts.rules.schedule_glance), from the status of
    each of its milestones (`statuses`)."""
    return schedule_glance((m.title, m.milestone_kind, found[m.id]) for m in contract.milestones)


def due_reminders(as_of: date, due_soon_days: int) -> list[tuple[Milestone, ReminderKind, MilestoneStatus]]:
    """Reminders to send on `as_of`: for each milestone the organizer pays under a contract in force, one
    before it falls due and one once it is overdue, each never sent before."""
    out = []
    contracts = db.session.scalars(select(Contract).where(Contract.status.in_(IN_FORCE)).order_by(Contract.id))
    for c in contracts:
        found = statuses(c.milestones, as_of, due_soon_days)
        for m in c.milestones:
            st = found[m.id]
            kind = reminder_kind(m.milestone_kind, st)
            if kind is not None and kind.value not in {r.kind for r in m.reminders}:
                out.append((m, kind, st))
    return out


# ------------------------------------------------------------------------------------------ feed, files


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def feed_contract(contract_id: int, token: str | None) -> Contract | None:
    """The contract whose deadlines a calendar feed shows, when `token` is that contract's feed token: the
    version in force of the same bid (a subscription survives a correction). None otherwise."""
    contract = db.session.get(Contract, contract_id)
    if contract is None or not contract.feed_token_hash or not token or len(token) > 200:
        return None
    if not secrets.compare_digest(token_hash(token), contract.feed_token_hash):
        return None
    return in_force(contract.bid_id) or (contract if contract.state.is_frozen else None)


def pdf_path(upload_dir: str, contract: Contract, *, signed: bool = False) -> Path | None:
    name = contract.signed_pdf_stored_name if signed else contract.pdf_stored_name
    return Path(upload_dir) / "contracts" / str(contract.bid_id) / name if name else None


def outstanding_totals(contracts: list[Contract]) -> dict[int, Decimal]:
    """What the organizer still owes on each of `contracts`, by contract id: every milestone it pays (caps of
    at-cost items aside) less every entry recorded against it, whatever its day. One statement for them all."""
    owed = [m for c in contracts for m in c.milestones if m.milestone_kind.organizer_pays and not m.is_cap]
    books = ledgers([m.id for m in owed])
    out = {c.id: ZERO for c in contracts}
    for m in owed:
        out[m.contract_id] += outstanding_on_record(m.amount, books.get(m.id, NO_ENTRIES).total)
    return out


def places_of(model: Any, ids: list[int]) -> dict[int, tuple[int, int]]:
    """{id: (contract id, milestone id)} of the rows of `model` (Payment, PrizeDeduction, Reminder: whatever has a
    milestone_id) among `ids`, for links to their milestone's page: one statement."""
    rows = db.session.execute(select(model.id, Milestone.contract_id, Milestone.id)
                              .join(Milestone, model.milestone_id == Milestone.id).where(model.id.in_(ids)))
    return {i: (c, m) for i, c, m in rows}
