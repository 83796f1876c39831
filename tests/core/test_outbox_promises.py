"""The outbox's claim is a compare-and-swap: of two deliverers that both read one message as queued, the one whose claim
lands second sends nothing. Made certain rather than left to a race: the second deliverer holds the message as it
read it (queued) while the first claims and sends it, through a real SMTP server."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.db import db, utcnow
from operations import delivery, outbox
from tests.mailservers import Inbox, free_port, smtp_server

pytestmark = pytest.mark.no_db


def test_of_two_deliverers_that_read_one_queued_message_only_the_first_claim_sends_it(live):
    port = free_port()
    live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=5,
                       OUTBOX_DISPATCH="manual")
    with live.app_context():
        message_id = outbox.queue(["olena@example.org"], "Once only", "Sent once.\n", kind="test.notice",
                                  now=utcnow()).id
        db.session.commit()
        db.session.remove()
    with smtp_server(port, Inbox()) as inbox:
        with live.app_context():  # the late deliverer reads the message: queued
            late = db.session.get(outbox.OutboxMessage, message_id)
            assert late is not None and late.status == "queued"
            db.session.expunge(late)  # kept as read, its transaction ended (SQLite: no lock held meanwhile)
            db.session.rollback()
            with live.app_context():  # the first deliverer, a session of its own, claims and sends it
                assert delivery.deliver(message_id) == "sent"
                db.session.remove()
            db.session.add(late)  # the late deliverer goes on from what it read
            try:
                second = delivery.deliver(message_id)
            except outbox.OutboxError as exc:  # a claim not checked: it sends, then cannot mark a sent message
                second = exc
            db.session.remove()
    assert [m["Subject"] for m in inbox.messages] == ["Once only"], "the message was delivered twice"
    assert second is None
    with live.app_context():
        message = db.session.get(outbox.OutboxMessage, message_id)
        assert (message.status, message.attempts) == ("sent", 1)
        assert db.session.scalar(select(func.count()).select_from(outbox.OutboxAttempt)
                                 .where(outbox.OutboxAttempt.message_id == message_id)) == 1
        db.session.remove()
