"""What the outbox writes and what it tells: a message's row as `queue` writes it (its recipients, what it is about,
whom for, its Message-ID's domain), sending one again from the secretariat's Outbox page, the counts and sentences
the pages show, the backlog /readyz reports, and who delivers what a commit wrote (the worker's queue, this
process's delivery thread, or nobody until `flask mail send`)."""

from __future__ import annotations

import logging
import re
import threading
import uuid
from datetime import timedelta
from html import unescape

import pytest
from sqlalchemy import select

from accounts.models import User
from core.db import db, utcnow
from evidence.audit import AuditEntry
from operations import delivery, outbox
from tests.mailservers import Scripted, free_port, wait_until

AT = utcnow().replace(microsecond=0)


def _read(app, message_id: int) -> outbox.OutboxMessage:
    with app.app_context():
        found = db.session.get(outbox.OutboxMessage, message_id)
        db.session.expunge(found)
        return found


# ------------------------------------------------------------------------------------------------- the row


def test_a_message_is_written_once_per_address_with_what_it_is_about_and_whom_for(app, make):
    secretary = make.user(email="sec@example.org", roles=("admin",))
    bidder = make.user(email="olena@example.org")
    with app.app_context():
        message = outbox.queue(
            [" oleg@example.org", "olena@example.org ", "oleg@example.org", "", "   "], "The decision\r\non your bid",
            "Body", kind="decision.notice", now=AT, user_id=bidder, actor=db.session.get(User, secretary),
            about=outbox.About("decision", 4, "L" * 300, "/p" * 200), auto_submitted=True)
        db.session.commit()
        message_id = message.id
    found = _read(app, message_id)
    assert (found.recipients, found.to_list) == ("oleg@example.org,olena@example.org",
                                                 ["oleg@example.org", "olena@example.org"])
    assert (found.subject, found.body, found.kind) == ("The decision on your bid", "Body", "decision.notice")
    assert (found.about_type, found.about_id, found.about_label, found.about_path) == (
        "decision", 4, "L" * 255, ("/p" * 200)[:255])
    assert (found.user_id, found.created_by_id, found.auto_submitted) == (bidder, secretary, True)
    assert (found.status, found.attempts, found.last_error, found.created_at, found.next_attempt_at) == (
        "queued", 0, "", AT, AT)
    assert re.fullmatch(r"<[0-9a-f]{32}\.decision\.notice@fide\.local>", found.message_id)


def test_a_message_about_nothing_and_to_one_address_written_as_text(app):
    with app.app_context():
        message_id = outbox.queue("olena@example.org", "Confirm your address", "Body", kind="account.confirm",
                                  now=AT).id
        db.session.commit()
    found = _read(app, message_id)
    assert found.to_list == ["olena@example.org"]
    assert (found.about_type, found.about_id, found.about_label, found.about_path) == (None, None, "", "")
    assert (found.user_id, found.created_by_id, found.auto_submitted) == (None, None, False)


@pytest.mark.parametrize("to", [[], ["", "   "], "  "])
def test_a_message_with_nobody_to_send_it_to_is_refused_saying_which(app, to):
    with app.app_context(), pytest.raises(outbox.OutboxError) as refused:
        outbox.queue(to, "Your\r\nbid", "Body", kind="test", now=AT)
    assert str(refused.value) == "The message 'Your bid' has no recipient."


@pytest.mark.parametrize(("sender", "base_url", "domain"), [
    ("Gambit <gambit@mail.fide.com>", "https://gambit.fide.example", "mail.fide.com"),
    ('"relay@odd"@mail.fide.com', "", "mail.fide.com"),  # the domain is after the last @
    ("", "https://gambit.fide.example/a//b", "gambit.fide.example"),
    ("Gambit", "http://gambit.fide.example:8080/", "gambit.fide.example:8080"),
    ("", "", "gambit.invalid"),
])
def test_a_message_id_names_the_senders_domain_else_the_sites_host(app, monkeypatch, sender, base_url, domain):
    monkeypatch.setitem(app.config, "MAIL_SENDER", sender)
    monkeypatch.setitem(app.config, "BASE_URL", base_url)
    with app.app_context():
        message = outbox.queue("olena@example.org", "Hello", "Body", kind="test.notice", now=AT)
        assert message.message_id.endswith(f".test.notice@{domain}>")
        db.session.rollback()


# ----------------------------------------------------------------------------------- sending one again


def _message(app, *, status: str, **extra) -> int:
    with app.app_context():
        message = outbox.queue(["oleg@example.org", "olena@example.org"], "The decision on your bid", "Body",
                               kind="decision.notice", now=AT, **extra)
        message.status = status
        db.session.commit()
        return message.id


@pytest.mark.parametrize("status", ["queued", "sending"])
def test_a_message_still_waiting_or_being_sent_is_not_sent_again(app, client, login_as, status):
    login_as("admin")
    message_id = _message(app, status=status)
    response = client.post(f"/admin/outbox/{message_id}/resend", follow_redirects=True)
    assert (f"Message {message_id} is still {status}: it is sent without being asked again."
            in unescape(response.get_data(as_text=True)))
    with app.app_context():
        assert db.session.scalars(select(outbox.OutboxMessage.id)).all() == [message_id]
        assert db.session.scalars(select(AuditEntry).where(AuditEntry.action == "mail.resent")).all() == []


def test_a_failed_message_sent_again_is_a_new_row_keeping_what_it_is_about_and_whom_for(app, client, login_as, make):
    bidder = make.user(email="olena@example.org")
    message_id = _message(app, status="failed", user_id=bidder, auto_submitted=True,
                          about=outbox.About("decision", 4, "Decision on the 2015 call", "/board/fwwcm-2015/decision"))
    secretary = login_as("admin")
    response = client.post(f"/admin/outbox/{message_id}/resend", follow_redirects=True)
    with app.app_context():
        copy = db.session.scalars(select(outbox.OutboxMessage).where(outbox.OutboxMessage.id != message_id)).one()
        assert (copy.resent_from_id, copy.status, copy.recipients, copy.subject, copy.body, copy.kind) == (
            message_id, "queued", "oleg@example.org,olena@example.org", "The decision on your bid", "Body",
            "decision.notice")
        assert (copy.about_type, copy.about_id, copy.about_label, copy.about_path) == (
            "decision", 4, "Decision on the 2015 call", "/board/fwwcm-2015/decision")
        assert (copy.user_id, copy.created_by_id, copy.auto_submitted) == (bidder, secretary, True)
        [entry] = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "mail.resent")).all()
        assert (entry.actor_id, entry.object_type, entry.object_id) == (secretary, "OutboxMessage", str(copy.id))
        assert entry.data_dict == {"from": message_id, "status_was": "failed",
                                   "to": "oleg@example.org,olena@example.org", "subject": "The decision on your bid"}
        copy_id = copy.id
    assert (f"Message {message_id} is sent again as message {copy_id}, to oleg@example.org, olena@example.org. "
            "Mail is off on this server: it waits in the outbox.") in unescape(response.get_data(as_text=True))


# ------------------------------------------------------------------------------- the counts and the sentences


def test_the_counts_by_status_of_one_record_and_of_one_account(app, make):
    olena, oleg = make.user(email="olena@example.org"), make.user(email="oleg@example.org")
    about, other = outbox.About("decision", 4, "D"), outbox.About("decision", 5, "E")
    for status, about_, user in (("queued", about, olena), ("failed", about, oleg), ("failed", about, olena),
                                 ("sent", other, olena), ("sent", None, None), ("unconfirmed", outbox.About(
                                     "contract", 4, "C"), oleg)):
        _message(app, status=status, about=about_, user_id=user)
    with app.app_context():
        assert outbox.counts(about=("decision", 4)) == {"queued": 1, "failed": 2}
        assert outbox.counts(about=("contract", 4)) == {"unconfirmed": 1}
        assert outbox.counts(user_id=olena) == {"queued": 1, "failed": 1, "sent": 1}
        assert outbox.counts(about=("decision", 4), user_id=olena) == {"queued": 1, "failed": 1}
        assert outbox.counts() == {"queued": 1, "failed": 2, "sent": 2, "unconfirmed": 1}


@pytest.mark.no_db
@pytest.mark.parametrize(("counts", "what", "mail", "sentence"), [
    ({"sent": 1}, "notices to the bidders", True, "1 notice to the bidders is in the outbox and was sent."),
    ({"sent": 3}, "notices to the bidders", True, "3 notices to the bidders are in the outbox and were sent."),
    ({"queued": 1}, "notices to the bidders", True,
     "1 notice to the bidders is in the outbox and being sent now; the outbox shows each one's delivery."),
    ({"failed": 2}, "reminders", True,
     "2 reminders are in the outbox and being sent now; 2 could not be delivered; the outbox shows each one's "
     "delivery."),
    ({"sent": 2, "unconfirmed": 1}, "reminders", True,
     "3 reminders are in the outbox and being sent now (2 sent so far); the outbox shows each one's delivery."),
    ({}, "reminders", True, "No reminder was written: there was no one to write to."),
    ({"queued": 1}, "notices to the bidders", False,
     "1 notice to the bidders is in the outbox. Mail delivery is off on this server, so it waits there and goes out "
     "once delivery is turned on."),
    ({"queued": 1, "sent": 1, "failed": 1}, "notices to the bidders", True,
     "3 notices to the bidders are in the outbox and being sent now (1 sent so far); 1 could not be delivered; the "
     "outbox shows each one's delivery."),
    ({"sent": 1, "queued": 1}, "reminders", False,
     "2 reminders are in the outbox. Mail delivery is off on this server, so they wait there and go out once "
     "delivery is turned on."),
])
def test_what_became_of_the_messages_said_for_one_and_for_several(counts, what, mail, sentence):
    assert outbox.written_sentence(counts, what=what, mail_enabled=mail) == sentence


def _row(app, *, status: str, due, attempts: int = 0) -> None:
    with app.app_context():
        message = outbox.queue("federation@example.org", "Notice", "Body", kind="test", now=due)
        message.status, message.attempts = status, attempts
        db.session.commit()


def test_the_backlog_counts_what_waits_what_is_retried_and_what_waits_for_the_secretariat(app):
    with app.app_context():
        assert outbox.backlog(AT) == outbox.Backlog(0, 0, None, 0, 0)
    _row(app, status="queued", due=AT + timedelta(minutes=10), attempts=2)  # a retry not due yet
    with app.app_context():
        assert outbox.backlog(AT) == outbox.Backlog(waiting=1, retrying=1, overdue=None)
    _row(app, status="queued", due=AT)  # due this very moment
    with app.app_context():
        assert outbox.backlog(AT) == outbox.Backlog(waiting=2, retrying=1, overdue=timedelta(0))
    _row(app, status="sending", due=AT - timedelta(minutes=20), attempts=1)  # being sent: waiting, not retried
    _row(app, status="queued", due=AT - timedelta(minutes=5), attempts=0)
    for status in ("failed", "failed", "unconfirmed"):
        _row(app, status=status, due=AT - timedelta(days=3), attempts=5)
    for _ in range(2):
        _row(app, status="sent", due=AT - timedelta(days=400), attempts=1)  # history
    with app.app_context():
        assert outbox.backlog(AT) == outbox.Backlog(waiting=4, retrying=1, overdue=timedelta(minutes=20), failed=2,
                                                    unconfirmed=1)


# ------------------------------------------------------------------------------------- who delivers a commit


@pytest.fixture
def mail_queue(live):
    """The live app with a Redis queue of its own (a prefix no other test or helper uses), emptied after."""
    from redis import Redis

    url = "redis://127.0.0.1:6379/13"
    live.config.update(REDIS_URL=url, RQ_QUEUE_PREFIX=f"outbox-test-{uuid.uuid4().hex[:8]}:")
    with live.app_context():
        from operations import jobs

        queue = jobs.queue(jobs.MAIL, redis=Redis.from_url(url))
    yield queue
    queue.empty()
    queue.delete()


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gambit-mail-dispatcher"]


@pytest.mark.no_db
def test_with_the_worker_s_queue_a_commit_s_messages_are_one_job_given_time_for_its_attempts(live, mail_queue):
    live.config.update(OUTBOX_DISPATCH="auto", MAIL_TIMEOUT=30)
    assert delivery.dispatch(live, [3, 4]) == "rq"
    live.config["MAIL_TIMEOUT"] = 2
    assert delivery.dispatch(live, [5]) == "rq"
    assert delivery.dispatch(live, []) == "manual"  # nothing written: no job
    jobs_ = mail_queue.get_jobs()
    assert [(j.func_name, j.args, j.timeout) for j in jobs_] == [
        ("operations.delivery.deliver_job", ([3, 4],), 300), ("operations.delivery.deliver_job", ([5],), 60)]
    live.config["OUTBOX_DISPATCH"] = "manual"
    assert delivery.dispatch(live, [6]) == "manual"
    assert mail_queue.count == 2 and _threads() == []


@pytest.mark.no_db
def test_without_redis_a_command_leaves_the_delivery_to_the_scheduler_and_a_request_to_its_thread(live):
    live.config.update(OUTBOX_DISPATCH="auto", REDIS_URL="")
    assert delivery.dispatch(live, [1]) == "manual" and _threads() == []
    with live.test_request_context("/"):
        assert delivery.dispatch(live, [1]) == "thread"
        assert delivery.dispatch(live, [2]) == "thread"
    [thread] = _threads()  # one thread per app and process, woken again
    assert thread.daemon  # it never keeps the process from ending
    live.extensions["gambit_outbox"].stop()  # a thread that ended is replaced by the next dispatch
    with live.test_request_context("/"):
        assert delivery.dispatch(live, [3]) == "thread"
    [again] = _threads()
    assert again is not thread and again.is_alive()


@pytest.mark.no_db
def test_with_redis_unreachable_a_request_s_messages_go_to_its_thread_and_the_log_says_why(live, caplog):
    port = free_port()
    live.config.update(OUTBOX_DISPATCH="auto", REDIS_URL=f"redis://127.0.0.1:{port}/0")
    with caplog.at_level(logging.WARNING, logger="operations.outbox"), live.test_request_context("/"):
        assert delivery.dispatch(live, [1]) == "thread"
    [said] = [r.getMessage() for r in caplog.records if r.name == "operations.outbox"]
    assert re.fullmatch(rf"the mail queue \(Redis\) cannot be reached \(Error 111 connecting to 127\.0\.0\.1:{port}\."
                        r" Connection refused\.\): this process delivers the messages", said), said


@pytest.mark.no_db
def test_the_delivery_thread_wakes_up_when_the_next_retry_falls_due(live, caplog):
    """Nothing is due when the thread is woken; it sleeps until the earliest queued message falls due (here in a
    second and a half), not a minute, and sends it then; with nothing left to send, it waits without a word."""
    port = free_port()
    live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=5,
                       OUTBOX_DISPATCH="manual", REDIS_URL="")
    with live.app_context():
        later = outbox.queue("olena@example.org", "In a moment", "Body", kind="test.notice",
                             now=utcnow() + timedelta(seconds=1.5)).id
        db.session.commit()
        db.session.remove()
    with Scripted(port) as server:
        live.config["OUTBOX_DISPATCH"] = "auto"
        with caplog.at_level(logging.ERROR, logger="operations.outbox"):
            with live.test_request_context("/"):
                assert delivery.dispatch(live, [later]) == "thread"
            assert wait_until(lambda: server.messages, timeout=15), "the thread slept past the message's time"
            delivery.stop_dispatcher(live)  # after the round that sent it, and found nothing more queued
    assert _read(live, later).status == "sent"
    assert [r.getMessage() for r in caplog.records if r.name == "operations.outbox"] == []


@pytest.mark.no_db
def test_a_delivery_thread_that_fails_says_so_in_the_log_and_lives_on(live, caplog):
    """A retry delay that is not a number (MAIL_RETRY_MINUTES=soon) breaks the first failed attempt: the thread
    logs it for the operator and keeps running."""
    live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=free_port(), MAIL_TIMEOUT=2,
                       MAIL_RETRY_MINUTES="soon", OUTBOX_DISPATCH="manual", REDIS_URL="")
    with live.app_context():
        message_id = outbox.queue("olena@example.org", "Refused", "Body", kind="test.notice", now=utcnow()).id
        db.session.commit()
        db.session.remove()
    live.config["OUTBOX_DISPATCH"] = "auto"
    with caplog.at_level(logging.ERROR, logger="operations.outbox"):
        with live.test_request_context("/"):
            delivery.dispatch(live, [message_id])
        assert wait_until(lambda: any(r.name == "operations.outbox" for r in caplog.records))
        [thread] = _threads()
        assert thread.is_alive()
        delivery.stop_dispatcher(live)
    [record] = [r for r in caplog.records if r.name == "operations.outbox"]
    assert record.getMessage() == "the outbox's delivery thread failed; it tries again in a minute"
    assert record.exc_info[0] is ValueError
