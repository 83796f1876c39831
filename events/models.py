"""The call for bids and the versions of its regulation (snapshot + hash: a bid records which one judged it)."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime
from typing import ClassVar

from sqlalchemy import Boolean, CheckConstraint, Date, ForeignKey, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from core.db import Model, utcnow
from events.lifecycle import EventStatus, takes_online_bids
from events.regulation import Regulation, regulation_from_snapshot
from events.rules import bid_deadline_passed

STATUS_VALUES = ", ".join(f"'{s.value}'" for s in EventStatus)

_cache: dict[str, Regulation] = {}


class Event(Model):
    __tablename__ = "event"
    __table_args__ = (CheckConstraint(f"status IN ({STATUS_VALUES})", name="status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default=EventStatus.OPEN.value)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The signal blocker is due only "if required by FIDE": the secretariat records FIDE's requirement here.
    signal_blocker_required: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    regulation_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("regulation_version.id", use_alter=True, name="fk_event_regulation_version"))

    # Never None once load_event has made the event (the column is nullable only because the two tables refer to
    # each other); typed so, like the other required relationships.
    regulation_version: Mapped[RegulationVersion] = relationship(
        foreign_keys=[regulation_version_id], lazy="joined", post_update=True)
    versions: Mapped[list[RegulationVersion]] = relationship(
        back_populates="event", foreign_keys="RegulationVersion.event_id", order_by="RegulationVersion.number")

    @property
    def regulation(self) -> Regulation:
        """The regulation in force, rebuilt from its stored snapshot (cached by hash)."""
        return self.regulation_version.regulation

    @property
    def state(self) -> EventStatus:
        return EventStatus(self.status)

    def takes_bids(self, now: datetime) -> bool:
        """The call takes new online bids now (events.lifecycle.takes_online_bids)."""
        return takes_online_bids(self.status, now=now, deadline=self.regulation.event.bid_deadline)

    def deadline_passed(self, now: datetime) -> bool:
        """The call's bid deadline has passed at `now` (events.rules.bid_deadline_passed), for the pages' "(passed)".
        Raises ValueError for a naive `now`."""
        return bid_deadline_passed(now, self.regulation.event.bid_deadline)

    @property
    def practice(self) -> bool:
        return self.regulation.event.practice


class RegulationVersion(Model):
    __tablename__ = "regulation_version"
    __table_args__ = (UniqueConstraint("event_id", "number", name="uq_regulation_version_number"),
                      UniqueConstraint("event_id", "sha256", name="uq_regulation_version_sha256"))

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    # The snapshot and the regulations' text (about 43 KB in 2015) are read only when the regulation is not in the
    # process's cache yet (`regulation`), not with the call on every page: both in one statement then.
    snapshot: Mapped[str] = mapped_column(Text, deferred=True, deferred_group="regulation")
    sha256: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(300), default="")
    # The regulations' text as loaded beside the call file (its SHA-256 is in the snapshot: regulations_text).
    regulations_text: Mapped[str | None] = mapped_column(Text, deferred=True, deferred_group="regulation")
    loaded_at: Mapped[datetime] = mapped_column(default=utcnow)

    event: Mapped[Event] = relationship(back_populates="versions", foreign_keys=[event_id])

    @property
    def regulation(self) -> Regulation:
        reg = _cache.get(self.sha256)
        if reg is None:
            reg = regulation_from_snapshot(self.snapshot)
            if self.regulations_text:
                reg = dataclasses.replace(reg, text=self.regulations_text)
            _cache[self.sha256] = reg
        return reg

    @property
    def label(self) -> str:
        return f"v{self.number} ({self.sha256[:12]})"


class Amendment(Model):
    """A change of the call's regulation, as decided: who decided it (the Presidential Board on the WCOC's
    recommendation, or the FIDE President on grounds not covered; the articles come from the call's file), the
    date and reference of the decision, the reason, what changed between the two versions, and whose findings
    changed when the submitted bids were judged again. The Board's amendment records the WCOC recommendation it
    followed; the President's, the grounds it was decided on."""

    __tablename__ = "regulation_amendment"
    # Evidence (evidence.rows): bound to the audit entry that writes the row; new columns go at the end.
    __evidence__: ClassVar[tuple[str, ...]] = ('event_id', 'from_version_id', 'to_version_id', 'authority',
            'authority_label', 'article', 'decided_on', 'reference', 'reason', 'recommended_by', 'recommended_on',
            'recommendation', 'grounds', 'grounds_label', 'changes', 'report', 'recorded_at', 'recorded_by_id')
    __evidence_excluded__: ClassVar[dict[str, str]] = {}
    __table_args__ = (
        CheckConstraint("(recommended_by IS NULL) = (recommended_on IS NULL) AND "
                        "(recommended_by IS NULL) = (recommendation IS NULL)", name="recommendation_whole"),
        CheckConstraint("(grounds IS NULL) = (grounds_label IS NULL)", name="grounds_labelled"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("event.id", ondelete="CASCADE"), index=True)
    from_version_id: Mapped[int] = mapped_column(ForeignKey("regulation_version.id"))
    to_version_id: Mapped[int] = mapped_column(ForeignKey("regulation_version.id"))
    authority: Mapped[str] = mapped_column(String(20))
    authority_label: Mapped[str] = mapped_column(String(300))
    article: Mapped[str] = mapped_column(String(20))
    decided_on: Mapped[date] = mapped_column(Date)
    reference: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    # The recommendation the authority acted upon (the WCOC's, for the Board): who made it, when, what it said.
    recommended_by: Mapped[str | None] = mapped_column(String(200))
    recommended_on: Mapped[date | None] = mapped_column(Date)
    recommendation: Mapped[str | None] = mapped_column(Text)
    # The grounds of a decision allowed only on certain grounds (the President's: not covered, unforeseen).
    grounds: Mapped[str | None] = mapped_column(String(40))
    grounds_label: Mapped[str | None] = mapped_column(String(300))
    changes: Mapped[str] = mapped_column(Text, default="[]")
    report: Mapped[str] = mapped_column(Text, default="[]")
    recorded_at: Mapped[datetime] = mapped_column(default=utcnow)
    recorded_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id"))

    from_version: Mapped[RegulationVersion] = relationship(foreign_keys=[from_version_id])
    to_version: Mapped[RegulationVersion] = relationship(foreign_keys=[to_version_id])

    def loads(self, name: str) -> list:
        return json.loads(getattr(self, name) or "[]")
