"""The outbox with real mail servers: one that refuses connections, one that hangs, one that takes the message and
never answers, one that refuses the recipient for good, and one that works."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from datetime import timedelta
from email.utils import format_datetime

import pytest
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from core.db import db, utcnow
from evidence.audit import AuditEntry
from operations import delivery, jobs, outbox
from tests.conftest import csrf_token_from
from tests.mailservers import Inbox, Staller, free_port, smtp_server, wait_until
from tests.scheduling import REDIS, unique_prefix

BODY = "Dear Olena,\n.\nA line that is only a dot, above: it must arrive as it was written.\n"


@pytest.fixture
def mail(app):
    """Mail on, to a port where nothing listens yet; a short timeout so that a hanging server costs a second."""
    keys = ("MAIL_ENABLED", "MAIL_SERVER", "MAIL_PORT", "MAIL_TIMEOUT", "MAIL_RETRY_MINUTES")
    saved = {k: app.config[k] for k in keys}
    port = free_port()
    app.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=1)
    yield port
    app.config.update(saved)


def write(app, subject="The decision on your bid", to=("olena@example.org",), **extra) -> int:
    with app.app_context():
        message = outbox.queue(list(to), subject, BODY, kind="test.notice", now=utcnow(), **extra)
        db.session.commit()
        return message.id


def row(app, message_id: int) -> outbox.OutboxMessage:
    with app.app_context():
        found = db.session.scalars(select(outbox.OutboxMessage).where(outbox.OutboxMessage.id == message_id)
                                   .options(selectinload(outbox.OutboxMessage.attempt_rows))).one()
        db.session.expunge_all()
        return found


def deliver_due(app, after: timedelta = timedelta(0)) -> int:
    with app.app_context():
        return delivery.deliver_due(lambda: utcnow() + after)


def test_a_refused_connection_keeps_the_message_and_it_goes_out_once_when_the_server_is_back(app, mail):
    message_id = write(app)
    assert deliver_due(app) == 0
    waiting = row(app, message_id)
    assert (waiting.status, waiting.attempts) == ("queued", 1)
    assert "Connection refused" in waiting.last_error
    [attempt] = waiting.attempt_rows
    assert (attempt.phase, attempt.outcome) == ("connect", "retry") and "Connection refused" in attempt.reply
    # the next attempt waits for its turn (1 minute after the first)
    assert waiting.next_attempt_at == attempt.finished_at + timedelta(minutes=1)
    assert deliver_due(app) == 0 and row(app, message_id).attempts == 1

    with smtp_server(mail, Inbox()) as inbox:
        assert deliver_due(app, timedelta(minutes=2)) == 1
        assert deliver_due(app, timedelta(minutes=30)) == 0  # sent is sent: never again
    sent = row(app, message_id)
    assert (sent.status, sent.attempts, sent.last_error) == ("sent", 2, "")
    assert sent.attempt_rows[-1].reply == "250 2.0.0 Queued as 42"
    [received] = inbox.messages
    assert received["Message-ID"] == sent.message_id
    assert received["Date"] == format_datetime(sent.created_at)  # RFC 5322: when it was written, every attempt
    assert received["To"] == "olena@example.org" and received["Subject"] == "The decision on your bid"
    assert received["Auto-Submitted"] is None  # somebody pressed a button for this one
    assert received.get_content_type() == "text/plain" and received.get_content().replace("\r\n", "\n") == BODY


def test_a_server_that_hangs_is_given_up_on_after_the_timeout_and_the_message_retried(app, mail):
    staller = Staller(mail)
    try:
        message_id = write(app)
        assert deliver_due(app) == 0
    finally:
        staller.close()
    waiting = row(app, message_id)
    assert waiting.status == "queued" and waiting.last_error.startswith("no answer within 1 s")
    assert waiting.attempt_rows[0].phase == "connect"
    with smtp_server(mail, Inbox()) as inbox:
        assert deliver_due(app, timedelta(minutes=2)) == 1
    assert len(inbox.messages) == 1


def test_a_message_the_server_took_without_answering_is_never_sent_twice_on_its_own(app, mail, make):
    """At most once per row: the body left, the answer never came; the server may have it."""
    message_id = write(app)
    with smtp_server(mail, Inbox(delay=3)) as inbox:
        assert deliver_due(app) == 0
        assert deliver_due(app, timedelta(hours=5)) == 0
    lost = row(app, message_id)
    assert lost.status == "unconfirmed" and lost.attempts == 1
    assert (lost.attempt_rows[0].phase, lost.attempt_rows[0].outcome) == ("body", "unconfirmed")
    assert len(inbox.messages) == 1

    # The secretariat decides to send it again: a new row, a new Message-ID, the old one's history kept.
    with app.app_context():
        from accounts.models import User

        admin = db.session.get(User, make.user(email="sec@example.org", roles=("admin",)))
        copy = outbox.resend(db.session.get(outbox.OutboxMessage, message_id), actor=admin, now=utcnow())
        db.session.commit()
        copy_id = copy.id
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "mail.resent")).one()
        assert entry.data_dict["from"] == message_id and entry.data_dict["status_was"] == "unconfirmed"
    with smtp_server(mail, Inbox()) as again:
        assert deliver_due(app) == 1
    assert row(app, copy_id).resent_from_id == message_id
    assert again.messages[0]["Message-ID"] == row(app, copy_id).message_id != lost.message_id


def test_a_recipient_refused_for_good_fails_at_once_with_the_servers_words(app, mail):
    message_id = write(app)
    with smtp_server(mail, Inbox(refuse=True)):
        assert deliver_due(app) == 0
        assert deliver_due(app, timedelta(hours=5)) == 0
    failed = row(app, message_id)
    assert failed.status == "failed" and failed.attempts == 1
    assert failed.last_error == "RCPT TO olena@example.org: 550 5.1.1 No such mailbox here"


def test_after_the_last_retry_the_message_is_failed_and_visible(app, mail):
    app.config["MAIL_RETRY_MINUTES"] = "1,2"
    message_id = write(app)
    for minutes in (0, 1, 3, 10):
        deliver_due(app, timedelta(minutes=minutes))
    failed = row(app, message_id)
    assert (failed.status, failed.attempts) == ("failed", 3)
    assert [a.outcome for a in failed.attempt_rows] == ["retry", "retry", "failed"]


def test_a_deliverer_that_stopped_mid_way_is_taken_over_by_its_phase(app, mail):
    """A worker killed while sending leaves its row "sending": before the body left it is safe to try again;
    after, the server may have the message."""
    before_body, after_body = write(app, to=("a@example.org",)), write(app, to=("b@example.org",))
    long_ago = utcnow() - timedelta(hours=1)
    with app.app_context():
        for message_id, phase in ((before_body, "envelope"), (after_body, "body")):
            message = db.session.get(outbox.OutboxMessage, message_id)
            message.status, message.claimed_at, message.attempts = "sending", long_ago, 1
            db.session.add(outbox.OutboxAttempt(message_id=message_id, number=1, started_at=long_ago, phase=phase))
        db.session.commit()
    with smtp_server(mail, Inbox()) as inbox:
        assert deliver_due(app) == 1
    assert [m["To"] for m in inbox.messages] == ["a@example.org"]
    assert row(app, before_body).status == "sent"
    taken = row(app, after_body)
    assert taken.status == "unconfirmed"
    assert taken.last_error == ("the deliverer stopped during the attempt after the message had left: the server "
                                "may have it")


@pytest.mark.no_db
def test_two_deliverers_at_once_send_a_message_once(live):
    port = free_port()
    with smtp_server(port, Inbox()) as inbox:
        live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, OUTBOX_DISPATCH="manual")
        with live.app_context():
            message_id = outbox.queue(["olena@example.org"], "Once", BODY, kind="test.notice", now=utcnow()).id
            db.session.commit()
            db.session.remove()
        barrier, results = threading.Barrier(2), []

        def deliver():
            with live.app_context():
                barrier.wait()
                results.append(delivery.deliver(message_id))
                db.session.remove()

        threads = [threading.Thread(target=deliver) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert sorted(results, key=str) == [None, "sent"]
    assert len(inbox.messages) == 1


def test_a_header_cannot_be_smuggled_in_and_a_line_break_in_an_address_is_refused(app, mail):
    message_id = write(app, subject="Your bid\r\nBcc: rival@example.org")
    with smtp_server(mail, Inbox()) as inbox:
        deliver_due(app)
    [received] = inbox.messages
    assert received["Subject"] == "Your bid Bcc: rival@example.org" and received["Bcc"] is None
    assert row(app, message_id).status == "sent"
    with app.app_context(), pytest.raises(outbox.OutboxError) as refused:
        outbox.queue(["olena@example.org\r\nBcc: rival@example.org"], "x", "y", kind="test", now=utcnow())
    assert str(refused.value) == ("The message 'x' cannot go to 'olena@example.org\\r\\nBcc: rival@example.org': "
                                  "not an email address.")


def test_a_message_written_in_a_transaction_that_rolls_back_is_never_sent(app, mail):
    with app.app_context():
        outbox.queue(["olena@example.org"], "Never", BODY, kind="test", now=utcnow())
        db.session.rollback()
        assert db.session.scalars(select(outbox.OutboxMessage)).all() == []


def test_with_mail_off_nothing_is_tried_and_the_message_waits(app):
    message_id = write(app)
    assert deliver_due(app) == 0
    assert (row(app, message_id).status, row(app, message_id).attempts) == ("queued", 0)


# ------------------------------------------------------------------------------ a served app, its own deliverers


def _register(live, email: str):
    client = live.test_client()
    token = csrf_token_from(client.get("/register").data)
    return client.post("/register", data={
        "csrf_token": token, "email": email, "name": "Olena Kovalenko", "organisation": "Ukrainian Chess Federation",
        "applicant_type": "federation", "federation": "UKR", "password": "a long enough password",
        "confirm": "a long enough password"})


@pytest.mark.no_db
def test_the_request_returns_at_once_while_the_mail_server_hangs_and_the_link_arrives_later(live):
    """Thread mode (no Redis): the registration commits its message and answers; a thread of the process talks to
    the server, which hangs. Once a working server is there, the link arrives, once, absolute."""
    port = free_port()
    live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=30,
                       RATELIMIT_ENABLED=False, BASE_URL="https://gambit.fide.example", OUTBOX_DISPATCH="auto")
    staller = Staller(port)
    try:
        response = _register(live, "olena@example.org")
        assert response.status_code == 302
        # The page has answered while the server still holds the delivery's connection unanswered.
        assert staller.accepted.wait(30), "the delivery thread never connected"
        assert staller.still_held()
    finally:
        staller.close()  # the hanging server goes away: the attempt fails, the message waits for the next
    delivery.stop_dispatcher(live)
    with live.app_context():
        [message] = db.session.scalars(select(outbox.OutboxMessage)).all()
        assert message.status == "queued" and message.attempts == 1 and message.kind == "account.confirm"
        db.session.remove()
    with smtp_server(port, Inbox()) as inbox:
        with live.app_context():
            assert delivery.deliver_due(lambda: utcnow() + timedelta(minutes=2)) == 1
            assert delivery.deliver_due(lambda: utcnow() + timedelta(hours=2)) == 0
            db.session.remove()
    [received] = inbox.messages
    assert "https://gambit.fide.example/register/confirm/" in received.get_content()


@pytest.mark.no_db
def test_stopping_the_delivery_thread_waits_for_a_hanging_server_no_longer_than_it_is_told(live):
    """A process that shuts down (an orderly stop, the tests) stops its delivery thread: while that thread hangs on a
    mail server that never answers (MAIL_TIMEOUT 30 s), the stop gives up waiting after the time it is given, and the
    message is left to the next deliverer."""
    port = free_port()
    live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=30,
                       RATELIMIT_ENABLED=False, OUTBOX_DISPATCH="auto", REDIS_URL="")
    staller = Staller(port)
    try:
        assert _register(live, "olena@example.org").status_code == 302
        assert staller.accepted.wait(30), "the delivery thread never connected"
        dispatcher = live.extensions["gambit_outbox"]
        stopping = threading.Thread(target=dispatcher.stop, kwargs={"timeout": 0.5})
        stopping.start()
        stopping.join(10)
        assert not stopping.is_alive(), "the stop waited for the hanging server beyond the 0.5 s it was given"
        assert dispatcher.thread.is_alive()  # the delivery still hangs: it was not waited for
    finally:
        staller.close()  # the attempt fails at once now: the thread ends
    delivery.stop_dispatcher(live)
    assert not dispatcher.thread.is_alive()


@pytest.fixture
def redis_db(live):
    """Redis for the mail queue (tests.scheduling.REDIS, shared with every other test and run on this machine, so
    nothing is flushed): the live app takes a queue prefix of the test's own, whose keys are deleted after."""
    from redis import Redis

    before = live.config.get("RQ_QUEUE_PREFIX", "")
    prefix = unique_prefix()
    live.config["RQ_QUEUE_PREFIX"] = prefix
    yield REDIS
    live.config["RQ_QUEUE_PREFIX"] = before
    connection = Redis.from_url(REDIS)
    for key in connection.scan_iter(f"*{prefix}*"):
        connection.delete(key)


@contextlib.contextmanager
def registered_with_the_queue(live, redis_url: str):
    """A registration made with Redis on: its confirmation is queued for the worker. Yields (the SMTP server's inbox,
    the live app's mail queue), the server listening until the block ends."""
    port = free_port()
    with smtp_server(port, Inbox()) as inbox:
        live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, REDIS_URL=redis_url,
                           RATELIMIT_ENABLED=False, OUTBOX_DISPATCH="auto")
        assert _register(live, "olena@example.org").status_code == 302
        with live.app_context():
            queue = jobs.queue(jobs.MAIL)
        yield inbox, queue


@pytest.mark.no_db
def test_with_redis_the_worker_delivers_from_the_mail_queue(live, redis_db):
    from rq import SimpleWorker

    with registered_with_the_queue(live, redis_db) as (inbox, queue):
        assert queue.count == 1 and inbox.messages == []  # queued for the worker, not sent by the request
        with live.app_context():
            SimpleWorker([queue], connection=queue.connection).work(burst=True)
            db.session.remove()
    [received] = inbox.messages
    assert received["Subject"] == "Confirm your address to open your Gambit account"


@pytest.mark.no_db
def test_a_mail_job_queued_by_a_release_before_the_move_is_delivered_by_todays_worker(live, redis_db):
    """Releases before 0.36.0 queued `core.outbox.deliver_job`; a worker started after the upgrade still runs it."""
    with registered_with_the_queue(live, redis_db) as (inbox, queue):
        [queued] = queue.jobs
        assert queued.func_name == "operations.delivery.deliver_job"
        queue.empty()
        try:
            with live.app_context():
                jobs.enqueue("core.outbox.deliver_job", *queued.args, queue_=jobs.MAIL)
                jobs.work(burst=True)
                db.session.remove()
        finally:  # the old paths stay unknown to the rest of the suite, so that no test leans on them
            for old in jobs.MOVED_JOBS:
                sys.modules.pop(old.rsplit(".", 1)[0], None)
        assert wait_until(lambda: inbox.messages), "the job queued under the old path was not run"
    [received] = inbox.messages
    assert received["Subject"] == "Confirm your address to open your Gambit account"


@pytest.mark.no_db
def test_with_redis_down_the_process_delivers_the_message_itself(live, caplog):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    port = free_port()
    with smtp_server(port, Inbox()) as inbox:
        live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, REDIS_URL=closed,
                           RATELIMIT_ENABLED=False, OUTBOX_DISPATCH="auto")
        with caplog.at_level(logging.WARNING, logger="operations.outbox"):
            assert _register(live, "olena@example.org").status_code == 302
        assert any("the mail queue (Redis) cannot be reached" in r.getMessage() for r in caplog.records)
        assert wait_until(lambda: inbox.messages), "the process's own delivery thread sent nothing"
    [received] = inbox.messages
    assert received["To"] == "olena@example.org"
