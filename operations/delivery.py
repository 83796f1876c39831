"""Delivering the outbox (operations.outbox holds the rows): after the commit that wrote them, messages are handed to a
deliverer (`dispatch`): the RQ queue "gambit-mail" when REDIS_URL is set (the worker delivers them; if Redis cannot
be reached, a background thread of this process does), otherwise a background thread of this process. `flask mail
send` and the scheduler's periodic `deliver_due` deliver whatever is due, which also covers a process that stopped
before its thread ran.

Delivered at most once per row: a deliverer first claims the row (queued -> sending, a compare-and-swap, so of two
deliverers one wins), records the attempt, and talks to the SMTP server with no transaction open. Before the
message's body leaves, the attempt's phase is committed as "body": a failure before it (refused, timed out, a 4xx)
means the server has nothing and the row is retried with backoff; the server's 250 after it makes the row "sent";
a failure after it (the reply never came) means the server may have the message, so the row becomes "unconfirmed"
and is never retried on its own: the secretariat decides, on the Outbox page, whether to send it again (a new row,
with a new Message-ID). A deliverer killed mid-way leaves a row "sending": after OUTBOX_STALE_SECONDS the sweep in
`deliver_due` treats it by its phase the same way. After the last retry the row is "failed", visible, re-sendable.

The session's commit and rollback listeners that hand over or drop what a transaction wrote are registered when this
module is imported (app.py imports it for its `flask mail` commands).
"""

from __future__ import annotations

import logging
import re
import smtplib
import ssl
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from email.utils import parseaddr

import click
from flask import Blueprint, Flask, current_app, has_request_context
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from core.db import db, swap_state, utcnow
from operations import jobs
from operations.outbox import (
    LIFECYCLE,
    PENDING,
    MessageAction,
    MessageStatus,
    OutboxAttempt,
    OutboxMessage,
    build,
)

# One logger for the outbox, its rows and their delivery: what an operator filters the mail's lines on.
log = logging.getLogger("operations.outbox")


# ------------------------------------------------------------------------------------------------ delivering


class _Refused(Exception):
    """The server answered with an error code; `permanent` for a 5xx."""

    def __init__(self, code: int, reply: bytes | str, what: str):
        text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
        super().__init__(f"{what}: {code} {text}".strip())
        self.permanent = 500 <= code < 600


def _retry_delays() -> list[timedelta]:
    return [timedelta(minutes=int(m)) for m in str(current_app.config["MAIL_RETRY_MINUTES"]).split(",") if m.strip()]


def _talk(msg: EmailMessage, recipients: list[str], reached_body: Callable[[], None]) -> str:
    """One SMTP conversation; returns the server's answer to the message. Calls `reached_body()` just before the
    body leaves (after the server said 354 to DATA). Raises _Refused for an error code, OSError or
    smtplib.SMTPException when the server cannot be reached or stops answering."""
    cfg = current_app.config
    sender = parseaddr(cfg["MAIL_SENDER"])[1] or cfg["MAIL_SENDER"]
    smtp = smtplib.SMTP(timeout=cfg["MAIL_TIMEOUT"])
    # The name STARTTLS hands to TLS as the server's: smtplib sets it only when SMTP() itself connects, and without
    # it starttls() raises ValueError (no MAIL_USE_TLS delivery ever went out).
    smtp._host = cfg["MAIL_SERVER"]  # type: ignore[attr-defined]
    try:
        code, reply = smtp.connect(cfg["MAIL_SERVER"], cfg["MAIL_PORT"])
        if code != 220:
            raise _Refused(code, reply, "the server's greeting")
        smtp.ehlo_or_helo_if_needed()
        if cfg.get("MAIL_USE_TLS"):
            # Verified: the certificate must name MAIL_SERVER and chain to the system's authorities or
            # MAIL_TLS_CA_FILE's (smtplib's own default checks neither, which lets a server in the middle read it).
            smtp.starttls(context=ssl.create_default_context(cafile=cfg.get("MAIL_TLS_CA_FILE") or None))
            smtp.ehlo()
        if cfg.get("MAIL_USERNAME"):
            smtp.login(cfg["MAIL_USERNAME"], cfg["MAIL_PASSWORD"])
        code, reply = smtp.mail(sender)
        if code != 250:
            raise _Refused(code, reply, "MAIL FROM")
        for rcpt in recipients:
            code, reply = smtp.rcpt(rcpt)
            if code not in (250, 251):
                raise _Refused(code, reply, f"RCPT TO {rcpt}")
        code, reply = smtp.docmd("DATA")
        if code != 354:
            raise _Refused(code, reply, "DATA")
        data = re.sub(rb"(?m)^\.", b"..", msg.as_bytes(policy=SMTP_POLICY))
        if not data.endswith(b"\r\n"):
            data += b"\r\n"
        reached_body()
        smtp.send(data + b".\r\n")
        code, reply = smtp.getreply()
        if code != 250:
            raise _Refused(code, reply, "the message")
        return f"{code} {reply.decode(errors='replace')}"
    finally:
        try:
            smtp.quit()
        except (OSError, smtplib.SMTPException):
            smtp.close()


def _move(message: OutboxMessage, action: MessageAction, values: dict) -> bool:
    after = LIFECYCLE.next(message.state, action)
    return swap_state(message, expected=message.status, values={"status": after.value, **values})


def deliver(message_id: int, *, now: Callable[[], datetime] = utcnow) -> str | None:
    """Claim one message and try to send it once. Returns its status afterwards, or None when it was not this
    call's to send (not due, already claimed or sent, or gone). Commits its own short transactions; holds none
    while talking to the server. Mail off (MAIL_ENABLED unset): nothing is tried, the message stays queued."""
    if not current_app.config.get("MAIL_ENABLED"):
        return None
    message = db.session.get(OutboxMessage, message_id)
    if message is None or message.state != MessageStatus.QUEUED or message.next_attempt_at > now():
        db.session.rollback()
        return None
    started = now()
    number = message.attempts + 1
    if not _move(message, MessageAction.CLAIM, {"claimed_at": started, "attempts": number}):
        db.session.rollback()
        return None
    attempt = OutboxAttempt(message_id=message.id, number=number, started_at=started, phase="connect")
    db.session.add(attempt)
    db.session.flush()
    msg, recipients = build(message), message.to_list
    attempt_id, message_id_ = attempt.id, message.id
    db.session.commit()

    def reached_body() -> None:
        row = db.session.get_one(OutboxAttempt, attempt_id)
        row.phase = "body"
        db.session.commit()

    try:
        reply = _talk(msg, recipients, reached_body)
    except (_Refused, OSError, smtplib.SMTPException) as exc:
        db.session.rollback()
        return _after_failure(message_id_, attempt_id, exc, now())
    message = db.session.get_one(OutboxMessage, message_id_)
    attempt = db.session.get_one(OutboxAttempt, attempt_id)
    attempt.phase, attempt.outcome, attempt.reply, attempt.finished_at = "done", "sent", reply[:2000], now()
    _move(message, MessageAction.DELIVER, {"sent_at": attempt.finished_at, "last_error": ""})
    db.session.commit()
    log.info("mail %s sent to %s: %s", message.id, message.recipients, message.subject)
    return message.status


def _after_failure(message_id: int, attempt_id: int, exc: Exception, at: datetime) -> str:
    message = db.session.get_one(OutboxMessage, message_id)
    attempt = db.session.get_one(OutboxAttempt, attempt_id)
    error = str(exc) or type(exc).__name__
    if isinstance(exc, smtplib.SMTPResponseException):
        said = exc.smtp_error
        error = f"{exc.smtp_code} {said.decode(errors='replace') if isinstance(said, bytes) else said}"
    if isinstance(exc, TimeoutError) or "timed out" in error:
        error = f"no answer within {current_app.config['MAIL_TIMEOUT']} s ({error})"
    answered = isinstance(exc, (_Refused, smtplib.SMTPResponseException))
    action, outcome = _judge(message, attempt.phase, permanent=getattr(exc, "permanent", False), answered=answered)
    values: dict = {"last_error": error[:2000]}
    if action == MessageAction.DEFER:
        values["next_attempt_at"] = at + _retry_delays()[message.attempts - 1]
    attempt.outcome, attempt.reply, attempt.finished_at = outcome, error[:2000], at
    _move(message, action, values)
    db.session.commit()
    log.warning("mail %s to %s not sent (attempt %s, %s): %s", message.id, message.recipients, message.attempts,
                outcome, error)
    return message.status


def _judge(message: OutboxMessage, phase: str, *, permanent: bool,
           answered: bool = True) -> tuple[MessageAction, str]:
    """What a failed attempt leads to: the body had left and no answer came -> unconfirmed (never resent alone);
    a refusal for good (5xx) or the last attempt -> failed; otherwise -> queued again after a delay."""
    if phase == "body" and not answered:
        return MessageAction.LOSE_TRACK, "unconfirmed"
    if permanent or message.attempts > len(_retry_delays()):
        return MessageAction.GIVE_UP, "failed"
    return MessageAction.DEFER, "retry"


def _sweep(at: datetime) -> int:
    """Rows left "sending" by a deliverer that stopped (killed, or its process ended) more than
    OUTBOX_STALE_SECONDS ago: queued again if the body had not left, "unconfirmed" if it had."""
    cutoff = at - timedelta(seconds=current_app.config["OUTBOX_STALE_SECONDS"])
    stale = db.session.scalars(select(OutboxMessage).where(
        OutboxMessage.status == MessageStatus.SENDING.value, OutboxMessage.claimed_at < cutoff)).all()
    for message in stale:
        attempt = message.attempt_rows[-1] if message.attempt_rows else None
        phase = attempt.phase if attempt is not None else "connect"
        action, outcome = _judge(message, phase, permanent=False, answered=False)
        error = "the deliverer stopped during the attempt" + (
            " after the message had left: the server may have it" if phase == "body" else "")
        values: dict = {"last_error": error}
        if action == MessageAction.DEFER:
            values["next_attempt_at"] = at
        if attempt is not None:
            attempt.outcome, attempt.reply, attempt.finished_at = outcome, error, at
        _move(message, action, values)
    db.session.commit()
    return len(stale)


def deliver_due(now: Callable[[], datetime] = utcnow, *, limit: int = 200) -> int:
    """Deliver every queued message whose (next) attempt is due, oldest first, after sweeping stale claims; returns
    how many were sent. What the scheduler runs every minute and `flask mail send` runs on demand."""
    if not current_app.config.get("MAIL_ENABLED"):
        return 0
    _sweep(now())
    due = db.session.scalars(select(OutboxMessage.id).where(
        OutboxMessage.status == MessageStatus.QUEUED.value, OutboxMessage.next_attempt_at <= now())
        .order_by(OutboxMessage.next_attempt_at, OutboxMessage.id).limit(limit)).all()
    db.session.commit()
    return sum(deliver(message_id, now=now) == MessageStatus.SENT.value for message_id in due)


def scheduled_delivery(now: datetime) -> str:
    """The scheduler's job every minute ("mail.deliver"): what is due, retries included. Returns its summary."""
    if not current_app.config.get("MAIL_ENABLED"):
        return "mail is off (MAIL_ENABLED is not set): nothing sent"
    return f"{deliver_due()} message(s) sent"


def deliver_job(ids: list[int]) -> int:
    """The worker's job (queue "gambit-mail"): deliver the messages a commit wrote; runs in the app context."""
    return sum(deliver(message_id) == MessageStatus.SENT.value for message_id in ids)


# --------------------------------------------------------------------------------------------- dispatching


class _Dispatcher:
    """The background thread of one app in one process: delivers what a commit wrote, then sleeps until the next
    retry is due (at most a minute) or another commit wakes it."""

    def __init__(self, app: Flask):
        self.app = app
        self.wake = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self.run, name="gambit-mail-dispatcher", daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping:
            self.wake.clear()
            wait = 60.0
            with self.app.app_context():
                try:
                    deliver_due()
                    upcoming = db.session.scalar(select(func.min(OutboxMessage.next_attempt_at)).where(
                        OutboxMessage.status == MessageStatus.QUEUED.value))
                    db.session.commit()
                    if upcoming is not None and self.app.config.get("MAIL_ENABLED"):
                        wait = min(wait, max(1.0, (upcoming - utcnow()).total_seconds()))
                except Exception:  # the thread must outlive a failure of the database or the server
                    log.exception("the outbox's delivery thread failed; it tries again in a minute")
                    db.session.rollback()
                finally:
                    db.session.remove()
            self.wake.wait(wait)

    def stop(self, timeout: float = 30) -> None:
        self.stopping = True
        self.wake.set()
        self.thread.join(timeout)


_LOCK = threading.Lock()


def _thread_for(app: Flask) -> _Dispatcher:
    with _LOCK:
        found = app.extensions.get("gambit_outbox")
        if found is None or not found.thread.is_alive():
            found = app.extensions["gambit_outbox"] = _Dispatcher(app)
        return found


def stop_dispatcher(app: Flask) -> None:
    """Stop this process's delivery thread of `app`, if it runs (tests; an orderly shutdown)."""
    with _LOCK:
        found = app.extensions.pop("gambit_outbox", None)
    if found is not None:
        found.stop()


def dispatch(app: Flask, ids: list[int]) -> str:
    """Hand messages just committed to a deliverer; returns which: "rq", "thread" (in a request, without Redis or
    when it cannot be reached) or "manual" (OUTBOX_DISPATCH = manual, or outside a request without Redis: only
    `flask mail send` and the scheduler deliver). Never raises: the messages are in the outbox
    whatever happens here, and the periodic `deliver_due` finds them."""
    mode = app.config.get("OUTBOX_DISPATCH", "auto")
    if mode == "manual" or not ids:
        return "manual"
    if app.config.get("REDIS_URL"):
        try:
            with app.app_context():
                jobs.enqueue(deliver_job, ids, queue_=jobs.MAIL, timeout=max(60, 10 * app.config["MAIL_TIMEOUT"]))
            return "rq"
        except Exception as exc:  # Redis down: this process delivers instead
            log.warning("the mail queue (Redis) cannot be reached (%s): this process delivers the messages", exc)
    if not has_request_context():
        # A command or a job (`flask payments remind`, the scheduler, the worker) ends when its work is done: a
        # thread of it would be cut off mid-delivery. The scheduler's "mail.deliver" and `flask mail send` deliver.
        return "manual"
    _thread_for(app).wake.set()
    return "thread"


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    ids = session.info.pop(PENDING, None)
    if ids:
        try:
            app = current_app._get_current_object()  # type: ignore[attr-defined]
        except RuntimeError:  # no app context: the periodic delivery will find them
            return
        dispatch(app, ids)


@event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, previous_transaction) -> None:
    # The whole transaction rolled back: its messages are gone. (After a savepoint's rollback the ids are kept: a
    # deliverer finds nothing for those rolled back, and the rest go out with the commit.)
    if previous_transaction.parent is None:
        session.info.pop(PENDING, None)


# --------------------------------------------------------------------------------------------------- CLI

cli = Blueprint("mail_cli", __name__, cli_group="mail")


@cli.cli.command("send")
def send_command() -> None:
    """Deliver every message of the outbox whose (next) attempt is due, now, and print what is left."""
    if not current_app.config.get("MAIL_ENABLED"):
        click.echo("Mail is off (MAIL_ENABLED is not set): nothing was sent; the messages wait in the outbox.")
        raise SystemExit(1)
    sent = deliver_due()
    counts = dict(db.session.execute(select(OutboxMessage.status, func.count()).group_by(OutboxMessage.status)).all())
    click.echo(f"{sent} message(s) sent. In the outbox: "
               + ", ".join(f"{counts.get(s.value, 0)} {s.value}" for s in MessageStatus) + ".")
    if counts.get(MessageStatus.FAILED.value) or counts.get(MessageStatus.UNCONFIRMED.value):
        click.echo("Failed and unconfirmed messages wait for the secretariat on the Outbox page (re-send).")
