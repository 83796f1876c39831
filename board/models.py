"""Dossiers (frozen, hashed PDFs), the board's votes, and the decision record."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import ClassVar

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from accounts.models import User
from bids.models import Bid
from board.lifecycle import DecisionStatus
from board.rules import DecisionMethod, president_grounds
from core.db import Model, utcnow
from events.models import Event, RegulationVersion


class Dossier(Model):
    """A PDF the board reads: one bid's dossier, or the board pack (bid_id NULL). Built from a snapshot of its
    inputs; the same snapshot gives the same stored file (unique inputs_sha256)."""

    __tablename__ = "dossier"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'bid_id', 'kind', 'number', 'identifier', 'inputs_sha256',
            'inputs', 'stored_name', 'pdf_sha256', 'pages', 'size_bytes', 'created_at', 'created_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        UniqueConstraint("event_id", "kind", "inputs_sha256", name="uq_dossier_inputs"),
        UniqueConstraint("event_id", "kind", "bid_id", "number", name="uq_dossier_number"),
        CheckConstraint("kind IN ('bid', 'pack')", name="kind"),
        CheckConstraint("(kind = 'bid') = (bid_id IS NOT NULL)", name="bid_for_bid_dossier"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id"), index=True)
    bid_id: Mapped[int | None] = mapped_column(ForeignKey("bid.id"), index=True)
    kind: Mapped[str] = mapped_column(String(8))
    number: Mapped[int] = mapped_column(Integer)
    identifier: Mapped[str] = mapped_column(String(80), unique=True)
    inputs_sha256: Mapped[str] = mapped_column(String(64))
    inputs: Mapped[str] = mapped_column(Text)
    stored_name: Mapped[str] = mapped_column(String(100), unique=True)
    pdf_sha256: Mapped[str] = mapped_column(String(64))
    pages: Mapped[int] = mapped_column(Integer)
    size_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))

    event: Mapped[Event] = relationship()
    bid: Mapped[Bid | None] = relationship()


class DossierView(Model):
    """Who opened which dossier first, so the board sees what it has already read."""

    __tablename__ = "dossier_view"
    __table_args__ = (UniqueConstraint("dossier_id", "user_id", name="uq_dossier_view_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dossier_id: Mapped[int] = mapped_column(ForeignKey("dossier.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id"), index=True)
    opened_at: Mapped[datetime] = mapped_column(default=utcnow)


class Vote(Model):
    """A board member's vote in a call: for one bid, or an abstention (bid_id NULL). One per member; a member may
    change it until the decision is recorded."""

    __tablename__ = "vote"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'member_id', 'bid_id', 'cast_at')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("event_id", "member_id", name="uq_vote_one_per_member"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id"), index=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("user.id"))
    bid_id: Mapped[int | None] = mapped_column(ForeignKey("bid.id"))
    cast_at: Mapped[datetime] = mapped_column(default=utcnow)

    member: Mapped[User] = relationship(lazy="joined")
    bid: Mapped[Bid | None] = relationship(lazy="joined")


METHODS = tuple(m.value for m in DecisionMethod)
_IN_FORCE = DecisionStatus.IN_FORCE.value
_PRESIDENT = DecisionMethod.PRESIDENT.value


class Decision(Model):
    """The decision of Art. 15.5, as recorded. Never edited: a correction is a new record that names the one it
    corrects, and the corrected one is marked superseded (compare-and-swap on its status). At most one decision
    per call is in force: a unique index over the call's records in force refuses a second."""

    __tablename__ = "decision"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'method', 'selected_bid_id', 'decided_on', 'tally',
            'no_meeting_reason', 'consultations', 'rationale', 'ranking', 'reviewed', 'recorded_at', 'recorded_by_id',
            'corrects_id', 'correction_reason', 'minutes_stored_name', 'minutes_sha256', 'regulation_version_id',
            'bidders_notified', 'status', 'superseded_at', 'votes')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint(f"method IN ({', '.join(repr(m) for m in METHODS)})", name="method"),
        CheckConstraint(f"status IN ({', '.join(repr(s.value) for s in DecisionStatus)})", name="status"),
        CheckConstraint(f"(status = '{_IN_FORCE}') = (superseded_at IS NULL)", name="superseded_has_time"),
        # Art. 15.5: the President decides alone only when no Board meeting can be held, and the record says why.
        CheckConstraint(f"(method = '{_PRESIDENT}') = (no_meeting_reason <> '')", name="president_says_why"),
        UniqueConstraint("corrects_id", name="uq_decision_one_correction"),
        Index("uq_decision_one_in_force", "event_id", unique=True,
              sqlite_where=text(f"status = '{_IN_FORCE}'"), postgresql_where=text(f"status = '{_IN_FORCE}'")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id"), index=True)
    method: Mapped[str] = mapped_column(String(12))
    selected_bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id"))
    decided_on: Mapped[date] = mapped_column(Date)
    tally: Mapped[str] = mapped_column(Text)            # JSON: votes per bid, abstentions, recusals
    # JSON: the votes the tally counted, [{vote, member, name, bid}] (bid null: abstained), read inside the call's
    # lock; "[]" for a President's decision with no votes, or a record made before they were kept.
    votes: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    # The President's decision (Art. 15.5): why no Board meeting could be held ("" for a board vote), and the WCOC
    # members consulted as JSON [{member, member_id, advice, on}] (`on`: the ISO day each was consulted).
    no_meeting_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    consultations: Mapped[str] = mapped_column(Text)
    rationale: Mapped[str] = mapped_column(Text, default="")
    ranking: Mapped[str] = mapped_column(Text)          # JSON: the ranking the board had (ranks, totals, flags)
    reviewed: Mapped[str] = mapped_column(Text)         # JSON: identifiers and SHA-256 of dossiers and pack
    recorded_at: Mapped[datetime] = mapped_column(default=utcnow)
    recorded_by_id: Mapped[int] = mapped_column(ForeignKey("user.id"))
    corrects_id: Mapped[int | None] = mapped_column(ForeignKey("decision.id"))
    correction_reason: Mapped[str] = mapped_column(Text, default="")
    minutes_stored_name: Mapped[str | None] = mapped_column(String(100))
    minutes_sha256: Mapped[str | None] = mapped_column(String(64))
    # The regulation version in force when the decision was recorded: its regulations' text and its call data,
    # each identified by its own SHA-256 on the record (None for a decision recorded before it was kept).
    regulation_version_id: Mapped[int | None] = mapped_column(ForeignKey("regulation_version.id"))
    bidders_notified: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(12), default=_IN_FORCE, server_default=_IN_FORCE)
    superseded_at: Mapped[datetime | None]

    event: Mapped[Event] = relationship()
    selected_bid: Mapped[Bid] = relationship()
    recorded_by: Mapped[User] = relationship()
    corrects: Mapped[Decision | None] = relationship(remote_side=[id])
    regulation_version: Mapped[RegulationVersion | None] = relationship()

    @property
    def state(self) -> DecisionStatus:
        return DecisionStatus(self.status)

    @property
    def how(self) -> DecisionMethod:
        return DecisionMethod(self.method)

    def loads(self, name: str):
        return json.loads(getattr(self, name))

    def consulted(self) -> list[dict]:
        """The WCOC members the President consulted, each {member, member_id, advice, on} with `on` a date (None
        for a record made before the day was kept). Raises ValueError for a malformed stored day."""
        return [{**c, "on": date.fromisoformat(c["on"]) if c.get("on") else None}
                for c in self.loads("consultations")]

    @property
    def grounds(self) -> str:
        """For the President's decision, the sentence saying why no Board meeting could be held and whom of the
        WCOC the President consulted when, citing the call's article (board.rules.president_grounds); "" for a
        board vote."""
        if self.how.by_vote:
            return ""
        reg = (self.regulation_version or self.event.regulation_version).regulation
        return president_grounds(self.no_meeting_reason, [(c["member"], c["on"]) for c in self.consulted()],
                                 selection=str(reg.citation("selection")))

    @property
    def reasons(self) -> str:
        """The reasons as the record states them: the web page and the minutes print this one sentence. None are
        asked for when the choice follows the WCOC's ranking (board.rules.rationale_needed)."""
        if self.rationale:
            return self.rationale
        who = "The Board" if self.how.by_vote else "The FIDE President"
        return f"{who} followed the WCOC's ranking."
