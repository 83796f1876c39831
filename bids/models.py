"""A bid, its room rates, its documents and its submitted versions.

The `Bid` row holds the draft the bidder is editing; each submission freezes a `BidVersion` (the JSON shape of
the import, the documents with their hashes, the compliance report, the regulation's hash). Reviewers read the
version that was submitted last.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import ClassVar, cast

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Integer,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column, object_session, relationship
from sqlalchemy.orm.attributes import set_committed_value

from accounts.models import User
from bids.consultation import CONSULTATION, DECLINED, RULING_GROUNDS, ConsultationState, consultation_state
from bids.data import NO_GUARANTEE, BankGuarantee, BidData, Evaluation, RoomRate
from bids.lifecycle import BidStatus
from core.db import Model, utcnow
from core.findings import Finding
from core.validators import country_name
from events.models import Event
from evidence.signing import Inspection

STATUS_VALUES = ", ".join(f"'{s.value}'" for s in BidStatus)
Money = Numeric(14, 2, asdecimal=True)


class Bid(Model):
    __tablename__ = "bid"
    __table_args__ = (
        CheckConstraint(f"status IN ({STATUS_VALUES})", name="status"),
        CheckConstraint("(status = 'rejected') = (rejection_reason IS NOT NULL)", name="rejected_has_reason"),
        CheckConstraint("status = 'draft' OR first_submitted_at IS NOT NULL", name="submitted_has_time"),
        CheckConstraint("applicant_type IS NULL OR applicant_type IN ('federation', 'sponsor')",
                        name="applicant_type"),
        CheckConstraint("hotel_stars IS NULL OR hotel_stars BETWEEN 1 AND 5", name="hotel_stars"),
        CheckConstraint("prize_fund_eur IS NULL OR prize_fund_eur >= 0", name="prize_fund"),
        CheckConstraint("fide_contribution_eur IS NULL OR fide_contribution_eur >= 0", name="fide_contribution"),
        CheckConstraint("wcoc_inspectors_invited IS NULL OR wcoc_inspectors_invited >= 0", name="inspectors"),
        CheckConstraint(f"consultation IN ({', '.join(repr(c) for c in CONSULTATION)})", name="consultation"),
        # Art. 15.1: FIDE's acceptance of the sponsor's proposal nonetheless follows a refusal or inability only.
        CheckConstraint("(consultation_accepted_at IS NULL) = (consultation_accepted_by_id IS NULL) AND "
                        f"(consultation_accepted_at IS NULL OR consultation IN "
                        f"({', '.join(repr(c) for c in sorted(DECLINED))}))", name="consultation_accepted"),
        # Art. 16: the President's final decision names its ground and its reason, who and when.
        CheckConstraint("(consultation_ruling_grounds IS NULL) = (consultation_ruling_reason IS NULL) AND "
                        "(consultation_ruling_grounds IS NULL) = (consultation_ruling_at IS NULL) AND "
                        "(consultation_ruling_grounds IS NULL) = (consultation_ruling_by_id IS NULL) AND "
                        "(consultation_ruling_grounds IS NULL OR consultation_ruling_grounds IN "
                        f"({', '.join(repr(g) for g in RULING_GROUNDS)}))", name="consultation_ruling"),
        CheckConstraint("(late_admitted_at IS NULL) = (late_admitted_reason IS NULL) AND "
                        "(late_admitted_at IS NULL) = (late_admitted_by_id IS NULL)", name="late_admission_complete"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id"), index=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("user.id"), index=True)
    # A paper bid keyed in by the secretariat on a federation's behalf.
    entered_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    status: Mapped[str] = mapped_column(String(20), default=BidStatus.DRAFT.value, index=True)
    # How many versions were submitted; the draft being edited becomes version `version + 1`.
    version: Mapped[int] = mapped_column(Integer, default=0)
    # Optimistic locking: a save from a stale page is refused instead of overwriting newer input.
    revision: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    first_submitted_at: Mapped[datetime | None]
    submitted_at: Mapped[datetime | None]
    rejection_reason: Mapped[str | None] = mapped_column(Text)
    consultation: Mapped[str] = mapped_column(String(10), default="pending")
    consultation_note: Mapped[str] = mapped_column(Text, default="")
    # Art. 15.1, a sponsor's bid only: after a refusal or inability to co-operate, FIDE's acceptance of the
    # sponsor's proposal nonetheless (recorded by the secretariat), which lets the bid be selected.
    consultation_accepted_at: Mapped[datetime | None]
    consultation_accepted_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    # Art. 16: while no answer is recorded, a case referred to the FIDE President for final decision: the ground
    # ("not_covered" or "unforeseen", bids.consultation.RULING_GROUNDS), the reason, who and when.
    consultation_ruling_grounds: Mapped[str | None] = mapped_column(String(20))
    consultation_ruling_reason: Mapped[str | None] = mapped_column(Text)
    consultation_ruling_at: Mapped[datetime | None]
    consultation_ruling_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    # The call's bidding procedure: a bid admitted after the deadline (or once the call closed), with the reason.
    late_admitted_at: Mapped[datetime | None]
    late_admitted_reason: Mapped[str | None] = mapped_column(Text)
    late_admitted_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))
    # Scoring (Art. 15.5): a bid that failed the compliance gate may still be admitted, with a reason.
    admitted_reason: Mapped[str | None] = mapped_column(Text)
    # Whether the version submitted last passed the compliance gate: a copy of its BidVersion.compliant, written
    # whenever a version is inserted (`_copy_compliance` below), so that the bid list and the scoring gate read one
    # column instead of loading every version.
    submitted_compliant: Mapped[bool | None] = mapped_column(Boolean)
    # The compliance report of the bid as it stands, judged when a service last changed it (bids.judged): what the
    # bid list and the bid's page read instead of judging again, used only while `judged_key` still names what it
    # was judged on (the bid's revision, its documents, the regulation in force) and the day allows. Any other
    # write of the row through the session forgets it (bids.judged._forget_on_change).
    judged_report: Mapped[str | None] = mapped_column(Text, deferred=True)  # read only by what shows it
    judged_key: Mapped[str | None] = mapped_column(String(80))
    judged_on: Mapped[date | None] = mapped_column(Date)

    # ---- 15.1, 12.2
    applicant_type: Mapped[str | None] = mapped_column(String(20))
    applicant_name: Mapped[str | None] = mapped_column(String(200))
    host_federation: Mapped[str | None] = mapped_column(String(3))
    contact_name: Mapped[str | None] = mapped_column(String(200))
    contact_email: Mapped[str | None] = mapped_column(String(254))
    ioc_conflict_free: Mapped[bool | None] = mapped_column(Boolean)
    # ---- 15.2(a, b)
    opening_date: Mapped[date | None] = mapped_column(Date)
    closing_date: Mapped[date | None] = mapped_column(Date)
    venue_name: Mapped[str | None] = mapped_column(String(200))
    venue_city: Mapped[str | None] = mapped_column(String(200))
    venue_country: Mapped[str | None] = mapped_column(String(2))
    # ---- 15.2(c, d)
    prize_fund_eur: Mapped[Decimal | None] = mapped_column(Money)
    fide_contribution_eur: Mapped[Decimal | None] = mapped_column(Money)
    amounts_net_of_taxes: Mapped[bool | None] = mapped_column(Boolean)
    # ---- 15.2(e, f, h)
    commits_fide_obligations: Mapped[bool | None] = mapped_column(Boolean)
    commits_organisational_costs: Mapped[bool | None] = mapped_column(Boolean)
    accepts_regulations: Mapped[bool | None] = mapped_column(Boolean)
    # ---- 15.2(g)
    hotel_name: Mapped[str | None] = mapped_column(String(200))
    hotel_stars: Mapped[int | None] = mapped_column(Integer)
    # ---- 15.2(i), 15.4
    wcoc_inspectors_invited: Mapped[int | None] = mapped_column(Integer)
    inspection_expenses_covered: Mapped[bool | None] = mapped_column(Boolean)
    # ---- 15.2(j)
    guarantee_offered: Mapped[bool | None] = mapped_column(Boolean)
    guarantee_bank: Mapped[str | None] = mapped_column(String(200))
    guarantee_amount_eur: Mapped[Decimal | None] = mapped_column(Money)
    guarantee_valid_until: Mapped[date | None] = mapped_column(Date)
    # ---- 15.2(k)
    signatory_name: Mapped[str | None] = mapped_column(String(200))
    signatory_position: Mapped[str | None] = mapped_column(String(200))
    signed_on: Mapped[date | None] = mapped_column(Date)
    # ---- 15.5 c-j, what the committee scores
    eval_playing_conditions: Mapped[str | None] = mapped_column(Text)
    eval_visas: Mapped[str | None] = mapped_column(Text)
    eval_security: Mapped[str | None] = mapped_column(Text)
    eval_chess_activity: Mapped[str | None] = mapped_column(Text)
    eval_media: Mapped[str | None] = mapped_column(Text)
    eval_development: Mapped[str | None] = mapped_column(Text)
    eval_climate: Mapped[str | None] = mapped_column(Text)
    eval_taxation: Mapped[str | None] = mapped_column(Text)

    event: Mapped[Event] = relationship(lazy="joined")
    owner: Mapped[User] = relationship(foreign_keys=[owner_id], lazy="joined")
    entered_by: Mapped[User | None] = relationship(foreign_keys=[entered_by_id])
    late_admitted_by: Mapped[User | None] = relationship(foreign_keys=[late_admitted_by_id])
    room_rates: Mapped[list[BidRoomRate]] = relationship(
        back_populates="bid", cascade="all, delete-orphan", order_by="BidRoomRate.position", lazy="selectin")
    documents: Mapped[list[BidDocument]] = relationship(
        back_populates="bid", order_by="BidDocument.id", lazy="selectin")
    versions: Mapped[list[BidVersion]] = relationship(
        back_populates="bid", order_by="BidVersion.number", lazy="selectin")

    @property
    def state(self) -> BidStatus:
        return BidStatus(self.status)

    @property
    def by_sponsor(self) -> bool:
        """A sponsor's bid (not a federation's): FIDE consults the host federation on it."""
        return self.applicant_type == "sponsor"

    @property
    def consultation_state(self) -> ConsultationState:
        """Where the consultation of the host federation stands (Art. 15.1; not applicable to a federation's
        bid). Raises nothing."""
        return consultation_state(applicant_type=self.applicant_type, consultation=self.consultation,
                                  fide_accepts=self.consultation_accepted_at is not None,
                                  ruling_grounds=self.consultation_ruling_grounds)

    @property
    def title(self) -> str:
        # "Lviv, Ukraine": a name where people read names, not the ISO code the row keeps
        where = ", ".join(p for p in (self.venue_city, country_name(self.venue_country) if self.venue_country
                                      else None) if p)
        who = self.applicant_name or self.owner.organisation or self.owner.name
        return f"{who} — {where}" if where else who

    def current_documents(self) -> dict[str, BidDocument]:
        """The newest document of each kind (older ones are kept, superseded)."""
        out: dict[str, BidDocument] = {}
        for doc in self.documents:
            out[doc.kind] = doc
        return out

    def to_data(self, *, documents_known: bool = True) -> BidData:
        """The pure view of the draft that the rules of bids/rules.py judge."""
        docs = self.current_documents()
        guarantee = None
        if self.guarantee_offered is True:
            guarantee = BankGuarantee(offered=True, bank=self.guarantee_bank, amount_eur=self.guarantee_amount_eur,
                                      valid_until=self.guarantee_valid_until)
        elif self.guarantee_offered is False:
            guarantee = NO_GUARANTEE
        return BidData(
            applicant_type=self.applicant_type, applicant_name=self.applicant_name,
            host_federation=self.host_federation, contact_name=self.contact_name, contact_email=self.contact_email,
            opening_date=self.opening_date, closing_date=self.closing_date, venue_name=self.venue_name,
            venue_city=self.venue_city, venue_country=self.venue_country, prize_fund_eur=self.prize_fund_eur,
            fide_contribution_eur=self.fide_contribution_eur, amounts_net_of_taxes=self.amounts_net_of_taxes,
            commits_fide_obligations=self.commits_fide_obligations,
            commits_organisational_costs=self.commits_organisational_costs,
            accepts_regulations=self.accepts_regulations, hotel_name=self.hotel_name, hotel_stars=self.hotel_stars,
            room_rates=tuple(RoomRate(r.room_type, r.eur_per_night) for r in self.room_rates),
            wcoc_inspectors_invited=self.wcoc_inspectors_invited,
            inspection_expenses_covered=self.inspection_expenses_covered, bank_guarantee=guarantee,
            ioc_conflict_free=self.ioc_conflict_free, signatory_name=self.signatory_name,
            signatory_position=self.signatory_position, signed_on=self.signed_on,
            evaluation=Evaluation(**{f: getattr(self, f"eval_{f}") for f in EVALUATION_KEYS}),
            has_guarantee_document="guarantee" in docs, has_signed_letter="signed_letter" in docs,
            documents_known=documents_known,
        )

    @property
    def last_version(self) -> BidVersion | None:
        return self.versions[-1] if self.versions else None


EVALUATION_KEYS = ("playing_conditions", "visas", "security", "chess_activity", "media", "development", "climate",
                   "taxation")


class BidRoomRate(Model):
    __tablename__ = "bid_room_rate"
    __table_args__ = (CheckConstraint("eur_per_night IS NULL OR eur_per_night >= 0", name="rate"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    room_type: Mapped[str | None] = mapped_column(String(200))
    eur_per_night: Mapped[Decimal | None] = mapped_column(Money)

    bid: Mapped[Bid] = relationship(back_populates="room_rates")


# kind -> (label, the key of its citation in the call file: reg.citation(key))
DOCUMENT_KINDS = {
    "signed_letter": ("The signed bid letter", "signature"),
    "guarantee": ("The bank guarantee", "guarantee"),
    "supporting": ("Supporting document for the evaluation", "selection"),
}


class BidDocument(Model):
    __tablename__ = "bid_document"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('bid_id', 'kind', 'original_name', 'stored_name', 'sha256', 'size_bytes',
            'uploaded_at', 'uploaded_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {
        "signatures": (
            "the verdict on its signatures, judged again whenever the trust list changes (evidence.trust); derived "
            "from the file's bytes, which are bound by sha256"
        ),
    }
    __table_args__ = (CheckConstraint("size_bytes > 0", name="size"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    original_name: Mapped[str] = mapped_column(String(255))
    stored_name: Mapped[str] = mapped_column(String(100), unique=True)
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    uploaded_at: Mapped[datetime] = mapped_column(default=utcnow)
    uploaded_by_id: Mapped[int] = mapped_column(ForeignKey("user.id"))
    # The digital signatures read on upload (evidence.signing.Inspection as JSON; judged again when the trust list
    # changes); None for a kind whose signature is not checked.
    signatures: Mapped[str | None] = mapped_column(Text)

    bid: Mapped[Bid] = relationship(back_populates="documents")

    @property
    def kind_label(self) -> str:
        return DOCUMENT_KINDS.get(self.kind, (self.kind, ""))[0]

    @property
    def inspection(self) -> Inspection | None:
        return Inspection.from_dict(json.loads(self.signatures)) if self.signatures else None

    @property
    def signature_words(self) -> str:
        """"signed by … on …, intact, trusted" / "not signed (…)"; "" for a kind whose signature is not checked."""
        found = self.inspection
        return found.words() if found is not None else ""

    def as_dict(self) -> dict:
        out = {"id": self.id, "kind": self.kind, "name": self.original_name, "sha256": self.sha256,
               "size_bytes": self.size_bytes, "uploaded_at": self.uploaded_at.isoformat()}
        if self.signatures:
            out["signature"] = self.signature_words
        return out


class BidVersion(Model):
    """What was submitted, frozen: reviewers, dossiers and the API read this."""

    __tablename__ = "bid_version"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('bid_id', 'number', 'submitted_at', 'submitted_by_id',
            'regulation_version_id', 'data', 'documents', 'compliance', 'compliant', 'sha256')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("bid_id", "number", name="uq_bid_version_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    submitted_at: Mapped[datetime]
    submitted_by_id: Mapped[int] = mapped_column(ForeignKey("user.id"))
    regulation_version_id: Mapped[int] = mapped_column(ForeignKey("regulation_version.id"))
    data: Mapped[str] = mapped_column(Text)          # bid_to_json(...) of the bid as submitted
    documents: Mapped[str] = mapped_column(Text)     # [{kind, name, sha256, ...}]
    compliance: Mapped[str] = mapped_column(Text)    # [Finding.as_dict()]
    compliant: Mapped[bool] = mapped_column(Boolean)
    sha256: Mapped[str] = mapped_column(String(64))

    bid: Mapped[Bid] = relationship(back_populates="versions")

    @property
    def data_dict(self) -> dict:
        return json.loads(self.data)

    @property
    def documents_list(self) -> list[dict]:
        return json.loads(self.documents)

    @property
    def compliance_list(self) -> list[dict]:
        return json.loads(self.compliance)

    @property
    def findings(self) -> list[Finding]:
        """The compliance report this version was judged by, as findings (their properties say what they mean)."""
        return [Finding.from_dict(d) for d in self.compliance_list]

    @property
    def blocking_findings(self) -> list[Finding]:
        """What kept this version from meeting the compliance checks: failures and documents still to attach."""
        return [f for f in self.findings if f.blocks_submission]


@event.listens_for(BidVersion, "after_insert")
def _copy_compliance(mapper, connection, version: BidVersion) -> None:
    """A new version is the bid's last: copy its compliance onto the bid's row (and onto the bid object already in
    the session, as if loaded)."""
    connection.execute(update(cast(Table, Bid.__table__)).where(Bid.__table__.c.id == version.bid_id)
                       .values(submitted_compliant=version.compliant))
    session = object_session(version)
    bid = session.identity_map.get(session.identity_key(Bid, version.bid_id)) if session is not None else None
    if bid is not None:
        set_committed_value(bid, "submitted_compliant", version.compliant)


class BidJudgement(Model):
    """A bid's findings under one version of the call's regulation: kept when the regulation is amended, so the
    old findings stay on record with the version they were judged under."""

    __tablename__ = "bid_judgement"
    __table_args__ = (UniqueConstraint("bid_id", "regulation_version_id", name="uq_bid_judgement_bid_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id", ondelete="CASCADE"), index=True)
    regulation_version_id: Mapped[int] = mapped_column(ForeignKey("regulation_version.id"))
    judged_at: Mapped[datetime] = mapped_column(default=utcnow)
    compliant: Mapped[bool] = mapped_column(Boolean)
    findings: Mapped[str] = mapped_column(Text)

    def loads(self) -> list[dict]:
        return json.loads(self.findings or "[]")
