"""The outbox: every message Gambit sends is first a row, written in the transaction of the change it reports, then
delivered (operations.delivery), so that no notice is lost when the mail server is down or slow.

This module is the row: its table and states, `queue()` (adds the row, flushed, not committed: it commits or rolls
back with the caller's change; the ids it wrote wait in the session under PENDING until the commit hands them to a
deliverer), `resend()` (a new row for a message failed or unconfirmed), `build()` (the message as sent), and what the
pages and the readiness check read of the outbox (`counts`, `written_sentence`, `backlog`).

Every message carries RFC 5322's Date and a Message-ID fixed when the row is written (the same for every attempt
of the row), is plain text, and is marked `Auto-Submitted: auto-generated` when nobody pressed a button for it (the
payment reminders).
"""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from typing import Any

from flask import current_app
from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, mapped_column, relationship

from core.db import Model, db
from core.lifecycle import Lifecycle
from core.validators import is_email
from evidence import audit

PENDING = "gambit_outbox_pending"  # session.info key: the ids of messages written in the open transaction


class OutboxError(ValueError):
    """A message that cannot be written or re-sent; the text says why."""


class MessageStatus(enum.StrEnum):
    QUEUED = "queued"            # waiting for its (next) attempt
    SENDING = "sending"          # claimed by a deliverer
    SENT = "sent"                # the server answered 250 to the message
    FAILED = "failed"            # refused for good, or every attempt failed
    UNCONFIRMED = "unconfirmed"  # the body left but no answer came: the server may have it; never retried alone


class MessageAction(enum.StrEnum):
    CLAIM = "claim"
    DELIVER = "deliver"
    DEFER = "defer"
    GIVE_UP = "give_up"
    LOSE_TRACK = "lose_track"


LIFECYCLE = Lifecycle(
    name="message", states=MessageStatus, actions=MessageAction, error=OutboxError,
    transitions={
        (MessageStatus.QUEUED, MessageAction.CLAIM): MessageStatus.SENDING,
        (MessageStatus.SENDING, MessageAction.DELIVER): MessageStatus.SENT,
        (MessageStatus.SENDING, MessageAction.DEFER): MessageStatus.QUEUED,
        (MessageStatus.SENDING, MessageAction.GIVE_UP): MessageStatus.FAILED,
        (MessageStatus.SENDING, MessageAction.LOSE_TRACK): MessageStatus.UNCONFIRMED,
    })

STATUS_WORDS = {
    MessageStatus.QUEUED: "Queued",
    MessageStatus.SENDING: "Sending",
    MessageStatus.SENT: "Sent",
    MessageStatus.FAILED: "Failed",
    MessageStatus.UNCONFIRMED: "Unconfirmed",
}


# The badge each status wears on the Outbox pages.
STATUS_BADGES = {MessageStatus.SENT: "pass", MessageStatus.FAILED: "fail", MessageStatus.UNCONFIRMED: "warning"}


class OutboxMessage(Model):
    __tablename__ = "outbox_message"
    __table_args__ = (Index("ix_outbox_message_about", "about_type", "about_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), unique=True)
    created_at: Mapped[datetime]
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"))
    kind: Mapped[str] = mapped_column(String(40), index=True)
    recipients: Mapped[str] = mapped_column(Text)  # comma-separated addresses
    subject: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    auto_submitted: Mapped[bool] = mapped_column(Boolean, default=False)
    # What the message is about, for the secretariat's page and the links to it: "decision" 4, "contract" 2, ...
    about_type: Mapped[str | None] = mapped_column(String(20))
    about_id: Mapped[int | None] = mapped_column(Integer)
    about_label: Mapped[str] = mapped_column(String(255), default="")
    about_path: Mapped[str] = mapped_column(String(255), default="")
    # The account the message goes to, when it goes to one (the user page links to its messages).
    user_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=MessageStatus.QUEUED.value, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    claimed_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    last_error: Mapped[str] = mapped_column(Text, default="")
    resent_from_id: Mapped[int | None] = mapped_column(ForeignKey("outbox_message.id", ondelete="SET NULL"))

    attempt_rows: Mapped[list[OutboxAttempt]] = relationship(
        back_populates="message", order_by="OutboxAttempt.number", cascade="all, delete-orphan")

    @property
    def state(self) -> MessageStatus:
        return LIFECYCLE.state(self.status)

    @property
    def status_label(self) -> str:
        return STATUS_WORDS[self.state]

    @property
    def status_badge(self) -> str:
        return STATUS_BADGES.get(self.state, "pending")

    @property
    def to_list(self) -> list[str]:
        return [a for a in self.recipients.split(",") if a]


class OutboxAttempt(Model):
    __tablename__ = "outbox_attempt"

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("outbox_message.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    # How far the conversation got: "connect", then "envelope" (MAIL FROM / RCPT TO accepted), then "body" (the
    # message is leaving); "done" once the server answered it. Committed before the body leaves.
    phase: Mapped[str] = mapped_column(String(16), default="connect")
    outcome: Mapped[str] = mapped_column(String(16), default="")  # sent / retry / failed / unconfirmed
    reply: Mapped[str] = mapped_column(Text, default="")  # the server's answer, or the error

    message: Mapped[OutboxMessage] = relationship(back_populates="attempt_rows")


# ------------------------------------------------------------------------------------------------- writing


def _one_line(value: str) -> str:
    """A header value on one line: a CR or LF in a name or a title never becomes a header of its own."""
    return re.sub(r"[\r\n\t]+", " ", value).strip()


def _domain() -> str:
    """The domain of Message-IDs: the sender's, else the public address's host."""
    _name, address = parseaddr(current_app.config.get("MAIL_SENDER") or "")
    if "@" in address:
        return address.rsplit("@", 1)[1]
    return (current_app.config.get("BASE_URL") or "http://gambit.invalid").split("//", 1)[-1].split("/")[0]


@dataclass(frozen=True)
class About:
    """What a message is about: the record's type and id, its name and its page's path (for the outbox page)."""

    type: str
    id: int
    label: str
    path: str = ""


def queue(to: Iterable[str] | str, subject: str, body: str, *, kind: str, now: datetime, about: About | None = None,
          user_id: int | None = None, actor: Any = None, auto_submitted: bool = False) -> OutboxMessage:
    """Write a message into the outbox, in the caller's transaction: it is delivered once that commits, and never
    if it rolls back. Raises OutboxError when there is nobody to send it to."""
    recipients = sorted({a.strip() for a in ([to] if isinstance(to, str) else to) if a and a.strip()})
    if not recipients:
        raise OutboxError(f"The message '{_one_line(subject)}' has no recipient.")
    wrong = [a for a in recipients if not is_email(a)]
    if wrong:  # an address with a line break in it would smuggle in a header of its own
        raise OutboxError(f"The message '{_one_line(subject)}' cannot go to {wrong[0]!r}: not an email address.")
    message = OutboxMessage(
        message_id=f"<{uuid.uuid4().hex}.{kind}@{_domain()}>", created_at=now,
        created_by_id=getattr(actor, "id", None), kind=kind, recipients=",".join(recipients),
        subject=_one_line(subject), body=body, auto_submitted=auto_submitted,
        about_type=about.type if about else None, about_id=about.id if about else None,
        about_label=about.label[:255] if about else "", about_path=about.path[:255] if about else "",
        user_id=user_id, status=MessageStatus.QUEUED.value, attempts=0, next_attempt_at=now, last_error="")
    db.session.add(message)
    db.session.flush()
    db.session.info.setdefault(PENDING, []).append(message.id)
    return message


def resend(message: OutboxMessage, *, actor: Any, now: datetime) -> OutboxMessage:
    """Send a message again as a new row (a new Message-ID: the old row keeps its own history). Refused while the
    message is still waiting or being sent. Writes `mail.resent` to the audit log."""
    if message.state in (MessageStatus.QUEUED, MessageStatus.SENDING):
        raise OutboxError(f"Message {message.id} is still {message.status_label.lower()}: it is sent without "
                          "being asked again.")
    copy = queue(message.to_list, message.subject, message.body, kind=message.kind, now=now,
                 about=About(message.about_type, message.about_id, message.about_label, message.about_path)
                 if message.about_type and message.about_id is not None else None,
                 user_id=message.user_id, actor=actor, auto_submitted=message.auto_submitted)
    copy.resent_from_id = message.id
    audit.record("mail.resent", copy, actor=actor, now=now,
                 data={"from": message.id, "status_was": message.status, "to": message.recipients,
                       "subject": message.subject})
    return copy


def build(message: OutboxMessage) -> EmailMessage:
    """The message as sent: From, To, Subject, Date (when it was written), its Message-ID, Auto-Submitted when
    nobody asked for it, one plain-text part."""
    msg = EmailMessage()
    msg["From"] = current_app.config["MAIL_SENDER"]
    msg["To"] = ", ".join(message.to_list)
    msg["Subject"] = message.subject
    msg["Date"] = format_datetime(message.created_at)
    msg["Message-ID"] = message.message_id
    if message.auto_submitted:
        msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(message.body)
    return msg


def counts(*, about: tuple[str, int] | None = None, user_id: int | None = None) -> dict[str, int]:
    """How many messages there are in each status, of one record (`about`: ("decision", 4)) or one account."""
    query = select(OutboxMessage.status, func.count()).group_by(OutboxMessage.status)
    if about is not None:
        query = query.where(OutboxMessage.about_type == about[0], OutboxMessage.about_id == about[1])
    if user_id is not None:
        query = query.where(OutboxMessage.user_id == user_id)
    return {status: n for status, n in db.session.execute(query)}


def written_sentence(counts: Mapping[str, int], *, what: str, mail_enabled: bool) -> str:
    """What became of the messages a change just wrote, for the person who made it, from their `counts` by status
    (`counts`) and whether this server delivers mail: "2 notices to the bidders are in the outbox and are being
    sent now; …", or, mail delivery off, that they wait in the outbox (not a failure). `what` is the plural noun
    ("notices to the bidders"); its singular drops the s of the first word. Raises nothing."""
    total = sum(counts.values())
    first, _, rest = what.partition(" ")
    one = f"{first.removesuffix('s')} {rest}".strip()
    if total == 0:
        return f"No {one} was written: there was no one to write to."
    noun = what if total != 1 else one
    held = f"{total} {noun} {'is' if total == 1 else 'are'} in the outbox"
    if not mail_enabled:
        return (f"{held}. Mail delivery is off on this server, so {'it waits' if total == 1 else 'they wait'} there "
                f"and {'goes' if total == 1 else 'go'} out once delivery is turned on.")
    sent, failed = counts.get(MessageStatus.SENT.value, 0), counts.get(MessageStatus.FAILED.value, 0)
    if sent == total:
        return f"{held} and {'was' if total == 1 else 'were'} sent."
    so_far = f" ({sent} sent so far)" if sent else ""
    trouble = f"; {failed} could not be delivered" if failed else ""
    return f"{held} and being sent now{so_far}{trouble}; the outbox shows each one's delivery."


@dataclass(frozen=True)
class Backlog:
    """What the outbox holds that is not delivered, as the readiness check reports it.

    `waiting`: messages still to be delivered on their own (queued, or being sent), of which `retrying` were tried
    and deferred; `overdue`: how long ago the earliest of them fell due (its `next_attempt_at`: written as the time
    of the change it reports, moved on by each retry's delay), None while none is due yet. `failed` and
    `unconfirmed`: messages no deliverer will try again, waiting for the secretariat (the Outbox page)."""

    waiting: int = 0
    retrying: int = 0
    overdue: timedelta | None = None
    failed: int = 0
    unconfirmed: int = 0


def backlog(at: datetime) -> Backlog:
    """The outbox's backlog at `at`, in one statement over the messages not sent. A message's wait is counted from
    when it fell due, not from when it was written: a message written long ago whose retry is due now has not been
    kept waiting, and one delivered long ago is history. Raises nothing of its own (a database error, as raised)."""
    waiting_states = (MessageStatus.QUEUED.value, MessageStatus.SENDING.value)
    rows = db.session.execute(
        select(OutboxMessage.status, func.count(), func.min(OutboxMessage.next_attempt_at),
               func.count().filter(OutboxMessage.attempts > 0))
        .where(OutboxMessage.status != MessageStatus.SENT.value).group_by(OutboxMessage.status)).all()
    by_status = {status: (n, due, tried) for status, n, due, tried in rows}
    waiting = [by_status[s] for s in waiting_states if s in by_status]
    due = min((d for _, d, _ in waiting if d is not None), default=None)
    queued = by_status.get(MessageStatus.QUEUED.value)
    return Backlog(
        waiting=sum(n for n, _, _ in waiting), retrying=queued[2] if queued else 0,
        overdue=at - due if due is not None and due <= at else None,
        failed=by_status.get(MessageStatus.FAILED.value, (0,))[0],
        unconfirmed=by_status.get(MessageStatus.UNCONFIRMED.value, (0,))[0])
