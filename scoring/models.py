"""The WCOC's scoring of Art. 15.5 in the database: weights versions, conflict declarations, scorecards and
their submitted versions.

* `WeightsVersion`: the weights of criteria a-j as changed by the secretariat, numbered per call. A call with no
  row uses the weights published in its regulation ("version 0"); every ranking names the version it used.
* `ConflictDeclaration`: one per member per call, confirmed before the member sees any bid; the bids it names
  (`conflict_declaration_bid`) and the bids it covered when confirmed (a bid submitted later needs a new one);
  when the member was first shown others' scores (after which it no longer changes).
* `Scorecard`: one per member per bid, its scores in `ScorecardScore` rows (one per criterion, `Numeric(3, 1)`).
  `revision` is the optimistic lock every save checks with a conditional UPDATE; `version` counts submissions,
  each frozen as a `ScorecardVersion`.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, ClassVar

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Integer,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from accounts.models import User
from bids.models import Bid, BidVersion
from core.db import Model, db, utcnow
from events.models import Event
from scoring.lifecycle import ScorecardStatus

SCORECARD_STATUS_VALUES = ", ".join(f"'{s.value}'" for s in ScorecardStatus)
Score = Numeric(3, 1, asdecimal=True)


class WeightsVersion(Model):
    """A change of the weights of Art. 15.5, kept for good: rankings cite the number."""

    __tablename__ = "weights_version"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'number', 'weights', 'reason', 'event_status',
            'created_by_id', 'created_at')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("event_id", "number", name="uq_weights_version_number"),
                      CheckConstraint("number >= 1", name="number"))

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    # {"a": "20", "b": "10", ...} in the regulation's order; strings, so that they are read as exact decimals.
    weights: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text, default="")
    # The call's state when the change was made: a change after scoring opened carries a reason.
    event_status: Mapped[str] = mapped_column(String(20))
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    event: Mapped[Event] = relationship()
    created_by: Mapped[User | None] = relationship(lazy="joined")

    @property
    def weights_dict(self) -> dict[str, Decimal]:
        return {k: Decimal(v) for k, v in json.loads(self.weights).items()}


conflict_declaration_bid = Table(
    "conflict_declaration_bid", db.Model.metadata,
    Column("declaration_id", ForeignKey("conflict_declaration.id", ondelete="CASCADE"), primary_key=True),
    Column("bid_id", ForeignKey("bid.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class ConflictDeclaration(Model):
    """A member's declaration of conflicts of interest for one call (confirmed again whenever it changes)."""

    __tablename__ = "conflict_declaration"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'member_id', 'has_conflict', 'reason', 'covered_bid_ids',
            'confirmed_at', 'scores_first_shown_at')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("event_id", "member_id", name="uq_conflict_declaration_member"),
                      CheckConstraint("(NOT has_conflict) OR reason <> ''", name="conflict_has_reason"))

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    has_conflict: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str] = mapped_column(Text, default="")
    # The ids of the bids listed on the form when the member confirmed: a bid not among them is not covered.
    covered_bid_ids: Mapped[str] = mapped_column(Text, default="[]")
    confirmed_at: Mapped[datetime]
    # When the member was first shown other members' scores in this call (the ranking, its API or export, or
    # the others' scores beside a scorecard): from then on the declaration cannot change.
    scores_first_shown_at: Mapped[datetime | None]

    member: Mapped[User] = relationship()
    bids: Mapped[list[Bid]] = relationship(secondary=conflict_declaration_bid, order_by="Bid.id")

    @property
    def covered(self) -> set[int]:
        return set(json.loads(self.covered_bid_ids))

    @property
    def conflicted_bid_ids(self) -> set[int]:
        return {b.id for b in self.bids} if self.has_conflict else set()


class ScorecardFacts:
    """What a scorecard's status and version say: for the ORM object and for the scoring pages' plain rows
    (scoring.queries.CardRow) alike."""

    __slots__ = ()
    if TYPE_CHECKING:  # the columns of the class it is mixed into (for mypy only: the ORM maps annotations it sees)
        status: str
        version: int

    @property
    def state(self) -> ScorecardStatus:
        return ScorecardStatus(self.status)

    @property
    def is_submitted(self) -> bool:
        return self.state is ScorecardStatus.SUBMITTED

    @property
    def ever_submitted(self) -> bool:
        """Submitted at least once (a reopened scorecard still was)."""
        return self.version >= 1


class Scorecard(ScorecardFacts, Model):
    """One member's scores of one bid (Art. 15.5 a-j)."""

    __tablename__ = "scorecard"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('bid_id', 'member_id', 'status', 'revision', 'version', 'created_at',
            'updated_at', 'submitted_at')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        UniqueConstraint("bid_id", "member_id", name="uq_scorecard_member"),
        CheckConstraint(f"status IN ({SCORECARD_STATUS_VALUES})", name="status"),
        CheckConstraint("status = 'draft' OR (submitted_at IS NOT NULL AND version >= 1)", name="submitted"),
        CheckConstraint("version >= 0 AND revision >= 1", name="counters"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bid_id: Mapped[int] = mapped_column(ForeignKey("bid.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(20), default=ScorecardStatus.DRAFT.value)
    # Optimistic lock: every save is UPDATE ... WHERE revision = <the revision the form was loaded with>.
    revision: Mapped[int] = mapped_column(Integer, default=1)
    # How many times it was submitted; each submission is a ScorecardVersion with this number.
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    submitted_at: Mapped[datetime | None]

    bid: Mapped[Bid] = relationship()
    member: Mapped[User] = relationship()
    scores: Mapped[list[ScorecardScore]] = relationship(
        back_populates="scorecard", cascade="all, delete-orphan", order_by="ScorecardScore.id")
    versions: Mapped[list[ScorecardVersion]] = relationship(
        back_populates="scorecard", cascade="all, delete-orphan", order_by="ScorecardVersion.number")

    def score_map(self) -> dict[str, Decimal | None]:
        return {s.criterion: s.score for s in self.scores}

    def comment_map(self) -> dict[str, str]:
        return {s.criterion: s.comment for s in self.scores}


class ScorecardScore(Model):
    """One criterion of one scorecard: the score (None until given) and the member's comment."""

    __tablename__ = "scorecard_score"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('scorecard_id', 'criterion', 'score', 'comment')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("scorecard_id", "criterion", name="uq_scorecard_score_criterion"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scorecard_id: Mapped[int] = mapped_column(ForeignKey("scorecard.id", ondelete="CASCADE"), index=True)
    criterion: Mapped[str] = mapped_column(String(10))
    score: Mapped[Decimal | None] = mapped_column(Score)
    comment: Mapped[str] = mapped_column(Text, default="")

    scorecard: Mapped[Scorecard] = relationship(back_populates="scores")


class ScorecardVersion(Model):
    """A submitted scorecard, frozen: what the member submitted, when, and on which version of the bid."""

    __tablename__ = "scorecard_version"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('scorecard_id', 'number', 'submitted_at', 'submitted_by_id',
            'bid_version_id', 'scores')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (UniqueConstraint("scorecard_id", "number", name="uq_scorecard_version_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scorecard_id: Mapped[int] = mapped_column(ForeignKey("scorecard.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    submitted_at: Mapped[datetime]
    submitted_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"))
    bid_version_id: Mapped[int | None] = mapped_column(ForeignKey("bid_version.id", ondelete="SET NULL"))
    # {"a": {"score": "4", "comment": "..."}, ...} in the regulation's order.
    scores: Mapped[str] = mapped_column(Text)

    scorecard: Mapped[Scorecard] = relationship(back_populates="versions")
    bid_version: Mapped[BidVersion | None] = relationship()

    @property
    def scores_dict(self) -> dict[str, dict]:
        return json.loads(self.scores)
