"""The contract with the selected organizer, its milestones, the payments recorded against them, the reminders
sent, and the match result that sets the prize balances.

Check constraints tie each state to the columns it needs (an issued contract has its PDF's hash, a signed one
the countersigned PDF's hash, a reversal a reason and the payment it reverses). Issued contracts, milestones
and payments are also frozen in the ORM: a flush that would change them raises `FrozenRecordError`, so a
correction is always a new version or a reversing entry, never an edit.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import ClassVar

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    event,
    inspect,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from accounts.models import User
from bids.models import Bid
from contracts.lifecycle import ContractStatus
from contracts.rules.reminders import ReminderKind
from contracts.rules.result import DeductionPart
from contracts.rules.terms import ContractInputs, MilestoneKind
from contracts.rules.tracker import outstanding_on_record
from core.db import Model, utcnow
from events.models import Event, RegulationVersion
from finance.rules import DECIDED_IN

Money = Numeric(14, 2, asdecimal=True)


def _values(enum_cls) -> str:
    return ", ".join(f"'{m.value}'" for m in enum_cls)


class FrozenRecordError(RuntimeError):
    """A change to an issued contract, a milestone or a payment: they are corrected by a new version or a
    reversing entry, never edited."""


class Contract(Model):
    __tablename__ = "contract"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('bid_id', 'regulation_version_id', 'version', 'replaces_id',
            'correction_reason', 'status', 'terms_json', 'created_at', 'created_by_id', 'issued_at', 'issued_by_id',
            'pdf_sha256', 'pdf_stored_name', 'pdf_size', 'signed_at', 'signed_by_id', 'signed_pdf_sha256',
            'signed_pdf_stored_name', 'signed_pdf_original_name', 'signed_pdf_size', 'superseded_at', 'discarded_at',
            'closed_at', 'closed_reason', 'feed_token_hash', 'signature_accepted_reason', 'signature_accepted_at',
            'signature_accepted_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {
        "signed_pdf_signatures": (
            "the verdict on the countersigned PDF's signatures, judged again whenever the trust list changes "
            "(evidence.trust); derived from the file's bytes, which are bound by signed_pdf_sha256"
        ),
    }
    __table_args__ = (
        CheckConstraint(f"status IN ({_values(ContractStatus)})", name="status"),
        CheckConstraint("status IN ('draft', 'discarded') OR (issued_at IS NOT NULL AND pdf_sha256 IS NOT NULL "
                        "AND pdf_stored_name IS NOT NULL AND pdf_size > 0)", name="issued_has_pdf"),
        CheckConstraint("status <> 'signed' OR (signed_at IS NOT NULL AND signed_pdf_sha256 IS NOT NULL "
                        "AND signed_pdf_stored_name IS NOT NULL AND signed_pdf_size > 0)", name="signed_has_pdf"),
        CheckConstraint("status <> 'superseded' OR superseded_at IS NOT NULL", name="superseded_has_time"),
        CheckConstraint("status <> 'discarded' OR discarded_at IS NOT NULL", name="discarded_has_time"),
        CheckConstraint("status <> 'closed' OR (closed_at IS NOT NULL AND closed_reason IS NOT NULL)",
                        name="closed_has_time_and_reason"),
        CheckConstraint("(replaces_id IS NULL) = (correction_reason IS NULL)", name="correction_has_reason"),
        CheckConstraint("version >= 1", name="version"),
        CheckConstraint("(signature_accepted_reason IS NULL) = (signature_accepted_at IS NULL)",
                        name="signature_acceptance_whole"),
        UniqueConstraint("bid_id", "version", name="uq_contract_bid_id_version"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id"), index=True)
    regulation_version_id: Mapped[int] = mapped_column(ForeignKey("regulation_version.id"))
    version: Mapped[int] = mapped_column(Integer, default=1)
    # A correction names the version it replaces, and why.
    replaces_id: Mapped[int | None] = mapped_column(ForeignKey("contract.id"), unique=True)
    correction_reason: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=ContractStatus.DRAFT.value, index=True)
    # contracts.rules.terms.ContractTerms.as_dict(): inputs, due dates, regulation hash and the computed terms.
    terms_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    issued_at: Mapped[datetime | None]
    issued_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    pdf_sha256: Mapped[str | None] = mapped_column(String(64))
    pdf_stored_name: Mapped[str | None] = mapped_column(String(100), unique=True)
    pdf_size: Mapped[int | None] = mapped_column(Integer)
    signed_at: Mapped[datetime | None]
    signed_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    signed_pdf_sha256: Mapped[str | None] = mapped_column(String(64))
    signed_pdf_stored_name: Mapped[str | None] = mapped_column(String(100), unique=True)
    signed_pdf_original_name: Mapped[str | None] = mapped_column(String(255))
    signed_pdf_size: Mapped[int | None] = mapped_column(Integer)
    # The countersigned PDF's signatures (evidence.signing.Inspection as JSON): Gambit's and the organizer's; judged
    # again when the trust list changes, so not frozen.
    signed_pdf_signatures: Mapped[str | None] = mapped_column(Text)
    # An organizer's signature that is not trusted makes the contract signed only when the secretariat accepts it
    # explicitly: why, when and who (shown wherever the signature is shown).
    signature_accepted_reason: Mapped[str | None] = mapped_column(Text)
    signature_accepted_at: Mapped[datetime | None]
    signature_accepted_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    superseded_at: Mapped[datetime | None]
    discarded_at: Mapped[datetime | None]
    # Closed because a correction of the Board's decision selected another bid: when, and which decision.
    closed_at: Mapped[datetime | None]
    closed_reason: Mapped[str | None] = mapped_column(Text)
    # SHA-256 of the calendar feed's token (the token itself is shown once); corrections keep it.
    feed_token_hash: Mapped[str | None] = mapped_column(String(64), index=True)

    bid: Mapped[Bid] = relationship(lazy="joined")
    regulation_version: Mapped[RegulationVersion] = relationship(lazy="joined")
    replaces: Mapped[Contract | None] = relationship(remote_side=[id], foreign_keys=[replaces_id])
    created_by: Mapped[User | None] = relationship(foreign_keys=[created_by_id])
    issued_by: Mapped[User | None] = relationship(foreign_keys=[issued_by_id])
    signature_accepted_by: Mapped[User | None] = relationship(foreign_keys=[signature_accepted_by_id])
    milestones: Mapped[list[Milestone]] = relationship(
        back_populates="contract", order_by="Milestone.position", lazy="selectin")

    @property
    def state(self) -> ContractStatus:
        return ContractStatus(self.status)

    @property
    def terms(self) -> dict:
        return json.loads(self.terms_json)

    @property
    def inputs(self) -> ContractInputs:
        return ContractInputs.from_dict(self.terms["inputs"])

    @property
    def due_dates(self) -> dict[str, date]:
        return {k: date.fromisoformat(v) for k, v in self.terms.get("due_dates", {}).items()}

    @property
    def regulation(self):
        return self.regulation_version.regulation

    @property
    def event(self) -> Event:
        return self.bid.event

    @property
    def reference(self) -> str:
        """FWWCM-2015-7-v1: the call, the bid and the version."""
        return f"{self.bid.event.slug.upper()}-{self.bid_id}-v{self.version}"


class Milestone(Model):
    """One payment the contract provides for, tracked until paid. Created when the contract is issued (and,
    for the prize balances, when the match result is recorded); never changed afterwards."""

    __tablename__ = "contract_milestone"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('contract_id', 'key', 'position', 'kind', 'title', 'article',
            'description', 'payer_kind', 'payer_name', 'payee_kind', 'payee_name', 'payee_federation', 'amount',
            'is_cap', 'due', 'due_rule', 'created_at')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint(f"kind IN ({_values(MilestoneKind)})", name="kind"),
        CheckConstraint("amount >= 0", name="amount"),
        # Only an at-cost item may be tracked without a date; every other milestone has one.
        CheckConstraint("due IS NOT NULL OR is_cap", name="due_or_cap"),
        CheckConstraint(f"is_cap = (kind = '{MilestoneKind.AT_COST.value}')", name="cap_is_at_cost"),
        UniqueConstraint("contract_id", "key", name="uq_contract_milestone_contract_id_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    contract_id: Mapped[int] = mapped_column(ForeignKey("contract.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(60))
    position: Mapped[int] = mapped_column(Integer, default=0)
    kind: Mapped[str] = mapped_column(String(20))
    title: Mapped[str] = mapped_column(String(300))
    article: Mapped[str] = mapped_column(String(20))
    description: Mapped[str] = mapped_column(Text)
    payer_kind: Mapped[str] = mapped_column(String(20))
    payer_name: Mapped[str] = mapped_column(String(200))
    payee_kind: Mapped[str] = mapped_column(String(20))
    payee_name: Mapped[str] = mapped_column(String(200))
    payee_federation: Mapped[str | None] = mapped_column(String(3))
    amount: Mapped[Decimal] = mapped_column(Money)
    is_cap: Mapped[bool] = mapped_column(Boolean, default=False)
    due: Mapped[date | None] = mapped_column(Date)
    due_rule: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    contract: Mapped[Contract] = relationship(back_populates="milestones")
    payments: Mapped[list[Payment]] = relationship(
        # Loaded only when asked for (contracts.queries.with_payments loads them for many milestones at once): a page
        # of the contract reads a milestone's status from aggregates (contracts.queries.ledgers), never its entries.
        back_populates="milestone", order_by=lambda: (Payment.received_on, Payment.id), lazy="select")
    reminders: Mapped[list[Reminder]] = relationship(back_populates="milestone", order_by="Reminder.id",
                                                     lazy="selectin")

    @property
    def milestone_kind(self) -> MilestoneKind:
        return MilestoneKind(self.kind)

    @property
    def paid_total(self) -> Decimal:
        """Every payment recorded, whatever its date (what `outstanding` is checked against)."""
        return sum((p.amount for p in self.payments), Decimal("0.00"))

    @property
    def outstanding(self) -> Decimal:
        return outstanding_on_record(self.amount, self.paid_total)


PAYMENT_KINDS = ("payment", "reversal", "carried_over")


class Payment(Model):
    """Money recorded against a milestone. Never edited or deleted: a mistake is cancelled by a reversal (a
    negative entry dated like the payment it cancels, with a reason); a correction of the contract carries the
    payments over to the new version's milestone (`carried_over`, naming the payment it carries)."""

    __tablename__ = "contract_payment"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('milestone_id', 'kind', 'amount', 'received_on', 'reference', 'note',
            'reason', 'reverses_id', 'carried_from_id', 'idempotency_key', 'recorded_at', 'recorded_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint(f"kind IN ({', '.join(repr(k) for k in PAYMENT_KINDS)})", name="kind"),
        CheckConstraint("(kind = 'reversal') = (reverses_id IS NOT NULL)", name="reversal_links"),
        CheckConstraint("kind <> 'reversal' OR (amount < 0 AND reason IS NOT NULL)", name="reversal_negative"),
        CheckConstraint("kind = 'reversal' OR amount > 0", name="payment_positive"),
        CheckConstraint("(kind = 'carried_over') = (carried_from_id IS NOT NULL)", name="carried_links"),
        # A form sent twice (a double click, a retry) is recorded once.
        UniqueConstraint("milestone_id", "idempotency_key", name="uq_contract_payment_milestone_id_idempotency_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    milestone_id: Mapped[int] = mapped_column(ForeignKey("contract_milestone.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20), default="payment")
    amount: Mapped[Decimal] = mapped_column(Money)
    received_on: Mapped[date] = mapped_column(Date)
    reference: Mapped[str] = mapped_column(String(200), default="")
    note: Mapped[str] = mapped_column(Text, default="")
    reason: Mapped[str | None] = mapped_column(Text)
    reverses_id: Mapped[int | None] = mapped_column(ForeignKey("contract_payment.id"), unique=True)
    carried_from_id: Mapped[int | None] = mapped_column(ForeignKey("contract_payment.id"))
    idempotency_key: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(default=utcnow)
    recorded_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))

    milestone: Mapped[Milestone] = relationship(back_populates="payments")
    reverses: Mapped[Payment | None] = relationship(remote_side=[id], foreign_keys=[reverses_id],
                                                    back_populates="reversed_by")
    reversed_by: Mapped[Payment | None] = relationship(foreign_keys=[reverses_id], back_populates="reverses",
                                                       uselist=False)
    recorded_by: Mapped[User | None] = relationship(foreign_keys=[recorded_by_id])

    @property
    def is_reversed(self) -> bool:
        return self.reversed_by is not None

    @property
    def is_reversal(self) -> bool:
        """A negative entry cancelling another payment."""
        return self.kind == "reversal"

    @property
    def is_carried_over(self) -> bool:
        """A payment carried over from the milestone of the contract version this one replaced."""
        return self.kind == "carried_over"

    @property
    def reversible(self) -> bool:
        """A payment (or one carried over) not yet reversed: a reversal itself is never reversed."""
        return not self.is_reversal and not self.is_reversed


class Reminder(Model):
    """A reminder sent to the organizer: at most one of each kind per milestone, ever."""

    __tablename__ = "contract_reminder"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('milestone_id', 'kind', 'as_of', 'sent_at', 'sent_to', 'carried')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint(f"kind IN ({_values(ReminderKind)})", name="kind"),
        UniqueConstraint("milestone_id", "kind", name="uq_contract_reminder_milestone_id_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    milestone_id: Mapped[int] = mapped_column(ForeignKey("contract_milestone.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    as_of: Mapped[date] = mapped_column(Date)
    sent_at: Mapped[datetime]
    sent_to: Mapped[str] = mapped_column(String(600))
    # A correction of the contract keeps the reminders already sent for an unchanged deadline.
    carried: Mapped[bool] = mapped_column(Boolean, default=False)

    milestone: Mapped[Milestone] = relationship(back_populates="reminders")


class MatchResult(Model):
    """The outcome of the match (one per call): the prize balances follow from it (Art. 13.1, 13.3, 13.4)."""

    __tablename__ = "match_result"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'winner_federation', 'decided_in', 'completed_on',
            'recorded_at', 'recorded_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint(f"decided_in IN ({', '.join(repr(d) for d in DECIDED_IN)})", name="decided_in"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id"), unique=True)
    winner_federation: Mapped[str] = mapped_column(String(3))
    decided_in: Mapped[str] = mapped_column(String(10))
    completed_on: Mapped[date] = mapped_column(Date)
    recorded_at: Mapped[datetime]
    recorded_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))

    @property
    def decided_in_words(self) -> str:
        """How the match was decided, as the pages write it."""
        return "the regular games" if self.decided_in == "regular" else "the tie-break games"


class PrizeDeduction(Model):
    """Something the regulations take from a player's prize (a fine, a forfeited share, a withheld protest fee),
    recorded against her prize balance with its article and the reason; FIDE pays the balance less these. The
    record stays as entered (the audit log has who and when)."""

    __tablename__ = "prize_deduction"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('milestone_id', 'rule_key', 'article', 'amount', 'reason', 'decided_on',
            'recorded_at', 'recorded_by_id', 'parts_json', 'returned_on', 'return_reason', 'returned_at',
            'returned_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint("amount > 0", name="amount"),
        CheckConstraint("(returned_on IS NULL) = (returned_at IS NULL) AND (returned_on IS NULL) = "
                        "(return_reason IS NULL)", name="returned_whole"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    milestone_id: Mapped[int] = mapped_column(ForeignKey("contract_milestone.id"), index=True)
    rule_key: Mapped[str] = mapped_column(String(60))
    article: Mapped[str] = mapped_column(String(20))
    amount: Mapped[Decimal] = mapped_column(Money)
    reason: Mapped[str] = mapped_column(Text)
    decided_on: Mapped[date] = mapped_column(Date)
    recorded_at: Mapped[datetime]
    recorded_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    # Who receives each part, when the rule's article names them (JSON list of contracts.rules.result.DeductionPart).
    parts_json: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    # Returned to the player (a protest fee, when the protest is accepted): FIDE pays the balance with it again.
    returned_on: Mapped[date | None] = mapped_column(Date)
    return_reason: Mapped[str | None] = mapped_column(Text)
    returned_at: Mapped[datetime | None]
    returned_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))

    milestone: Mapped[Milestone] = relationship()

    @property
    def returned(self) -> bool:
        return self.returned_on is not None

    @property
    def amount_in_effect(self) -> Decimal:
        """What the deduction takes from the balance: nothing once it was returned."""
        return Decimal("0.00") if self.returned else self.amount

    @property
    def parts(self) -> list[DeductionPart]:
        return [DeductionPart.from_dict(p) for p in json.loads(self.parts_json or "[]")]


# --------------------------------------------------------------------------------------- frozen records

# Columns an issued contract never changes (status and the signing / superseding columns still move on).
CONTRACT_FROZEN = ("bid_id", "regulation_version_id", "version", "replaces_id", "correction_reason", "terms_json",
                   "issued_at", "issued_by_id", "pdf_sha256", "pdf_stored_name", "pdf_size", "created_at")
SIGNED_FROZEN = ("signed_at", "signed_by_id", "signed_pdf_sha256", "signed_pdf_stored_name",
                 "signed_pdf_original_name", "signed_pdf_size")


def _changed(target, names) -> list[str]:
    state = inspect(target)
    return [n for n in names if state.attrs[n].history.has_changes()]


@event.listens_for(Contract, "before_update")
def _contract_frozen_once_issued(mapper, connection, target: Contract) -> None:
    history = inspect(target).attrs.status.history
    before = ContractStatus(history.deleted[0] if history.deleted else target.status)
    if not before.is_frozen:
        return
    changed = _changed(target, CONTRACT_FROZEN)
    if before in (ContractStatus.SIGNED, ContractStatus.SUPERSEDED, ContractStatus.CLOSED) and target.signed_pdf_sha256:
        changed += _changed(target, SIGNED_FROZEN)
    if changed:
        raise FrozenRecordError(f"Contract {target.id} was issued: {', '.join(changed)} cannot change. Issue a "
                                "correction as a new version instead.")


@event.listens_for(Contract, "before_delete")
def _issued_contract_not_deleted(mapper, connection, target: Contract) -> None:
    if target.state is not ContractStatus.DRAFT:
        raise FrozenRecordError(f"Contract {target.id} is {target.state.label.lower()}: it stays on record.")


@event.listens_for(Milestone, "before_update")
def _milestone_frozen(mapper, connection, target: Milestone) -> None:
    changed = _changed(target, [c.key for c in mapper.column_attrs])
    if changed:
        raise FrozenRecordError(f"Milestone {target.id} is part of an issued contract: {', '.join(changed)} "
                                "cannot change.")


@event.listens_for(Milestone, "before_delete")
def _milestone_not_deleted(mapper, connection, target: Milestone) -> None:
    raise FrozenRecordError(f"Milestone {target.id} is part of an issued contract: it stays on record.")


@event.listens_for(Payment, "before_update")
def _payment_frozen(mapper, connection, target: Payment) -> None:
    changed = _changed(target, [c.key for c in mapper.column_attrs])
    if changed:
        raise FrozenRecordError(f"Payment {target.id} is recorded: {', '.join(changed)} cannot change. "
                                "Reverse it and record the right one.")


@event.listens_for(Payment, "before_delete")
def _payment_not_deleted(mapper, connection, target: Payment) -> None:
    raise FrozenRecordError(f"Payment {target.id} is recorded: it is never deleted. Reverse it instead.")
