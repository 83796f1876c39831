"""The outbox's SMTP conversation, step by step, with a real server that answers from a script (tests.mailservers.
Scripted) or a real aiosmtpd: what each refusal leads to (a 5xx is for good, a 4xx is tried again, even after the
body), the words the secretariat reads for it, the envelope and the headers as they leave, the login, and a server
that offers no encryption when MAIL_USE_TLS asks for it."""

from __future__ import annotations

import base64
import logging
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from core.db import db, utcnow
from operations import delivery, outbox
from tests.faults import postgres_database
from tests.mailservers import Inbox, Scripted, free_port

BODY = "Dear Olena,\nthe Board decided on your bid.\n"


@pytest.fixture
def mail(app):
    """Mail on, to a port of its own; the retry delays of the default configuration."""
    keys = ("MAIL_ENABLED", "MAIL_SERVER", "MAIL_PORT", "MAIL_TIMEOUT", "MAIL_RETRY_MINUTES", "MAIL_USE_TLS",
            "MAIL_USERNAME", "MAIL_PASSWORD", "MAIL_SENDER", "OUTBOX_STALE_SECONDS")
    saved = {k: app.config[k] for k in keys}
    port = free_port()
    app.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_TIMEOUT=2,
                      MAIL_RETRY_MINUTES="1,5,15", MAIL_USE_TLS=False, MAIL_USERNAME="", MAIL_PASSWORD="",
                      MAIL_SENDER="Gambit <gambit@fide.local>")
    yield port
    app.config.update(saved)


def write(app, to=("olena@example.org",), subject="The decision on your bid", **extra) -> int:
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


def deliver(app, message_id: int, after: timedelta = timedelta(0)) -> str | None:
    with app.app_context():
        return delivery.deliver(message_id, now=lambda: utcnow() + after)


# --------------------------------------------------------------------------------- refusals, and what they lead to


@pytest.mark.parametrize(("replies", "status", "phase", "error"), [
    ({"greeting": b"554 5.7.1 mx.example.org takes no mail from you"}, "failed", "connect",
     "the server's greeting: 554 5.7.1 mx.example.org takes no mail from you"),
    ({"greeting": b"421 4.3.2 mx.example.org is busy, try later"}, "queued", "connect",
     "the server's greeting: 421 4.3.2 mx.example.org is busy, try later"),
    ({"MAIL": b"553 5.7.1 Sender address rejected"}, "failed", "connect",
     "MAIL FROM: 553 5.7.1 Sender address rejected"),
    ({"MAIL": b"451 4.3.0 Try again later"}, "queued", "connect", "MAIL FROM: 451 4.3.0 Try again later"),
    ({"RCPT": b"450 4.2.0 Mailbox busy"}, "queued", "connect", "RCPT TO olena@example.org: 450 4.2.0 Mailbox busy"),
    ({"RCPT": b"500 5.5.0 Mailbox syntax"}, "failed", "connect",
     "RCPT TO olena@example.org: 500 5.5.0 Mailbox syntax"),
    ({"RCPT": b"599 5.9.9 The last code of the permanent class"}, "failed", "connect",
     "RCPT TO olena@example.org: 599 5.9.9 The last code of the permanent class"),
    ({"RCPT": b"600 Not a code of RFC 5321"}, "queued", "connect",
     "RCPT TO olena@example.org: 600 Not a code of RFC 5321"),
    ({"DATA": b"554 5.5.1 No valid recipients"}, "failed", "connect", "DATA: 554 5.5.1 No valid recipients"),
    ({"DATA": b"451 4.3.0 Not now"}, "queued", "connect", "DATA: 451 4.3.0 Not now"),
    ({"message": b"554 5.7.1 Message refused as spam"}, "failed", "body",
     "the message: 554 5.7.1 Message refused as spam"),
    # the body had left, but the server answered it: it does not have it, so it is tried again (not unconfirmed)
    ({"message": b"452 4.3.1 Insufficient system storage"}, "queued", "body",
     "the message: 452 4.3.1 Insufficient system storage"),
])
def test_a_refusal_is_for_good_when_its_code_is_5xx_and_tried_again_otherwise_in_the_servers_words(
        app, mail, replies, status, phase, error):
    message_id = write(app)
    with Scripted(mail, **replies):
        assert deliver(app, message_id) == status
    found = row(app, message_id)
    assert (found.status, found.attempts, found.last_error) == (status, 1, error)
    [attempt] = found.attempt_rows
    outcome = "failed" if status == "failed" else "retry"
    assert (attempt.phase, attempt.outcome, attempt.reply) == (phase, outcome, error)
    assert attempt.finished_at is not None and found.sent_at is None
    if status == "queued":
        assert found.next_attempt_at == attempt.finished_at + timedelta(minutes=1)


def test_a_reply_that_is_not_utf8_is_kept_readable(app, mail):
    refused, sent = write(app, to=("olena@example.org",)), write(app, to=("oleg@example.org",))
    with Scripted(mail, RCPT=b"550 5.1.1 Bo\xeete inconnue"):
        assert deliver(app, refused) == "failed"
    with Scripted(mail, message=b"250 2.0.0 Re\xe7u, merci"):
        assert deliver(app, sent) == "sent"
    assert row(app, refused).last_error == "RCPT TO olena@example.org: 550 5.1.1 Bo\ufffdte inconnue"
    assert row(app, sent).attempt_rows[0].reply == "250 2.0.0 Re\ufffdu, merci"


def test_a_long_reply_is_kept_to_its_first_2000_characters(app, mail):
    refused, sent = write(app, to=("olena@example.org",)), write(app, to=("oleg@example.org",))
    with Scripted(mail, RCPT=b"550 " + b"r" * 2500):
        assert deliver(app, refused) == "failed"
    with Scripted(mail, message=b"250 " + b"s" * 2500):
        assert deliver(app, sent) == "sent"
    found = row(app, refused)
    assert found.last_error == found.attempt_rows[0].reply == f"RCPT TO olena@example.org: 550 {'r' * 2500}"[:2000]
    assert row(app, sent).attempt_rows[0].reply == f"250 {'s' * 2500}"[:2000]


def test_a_forwarding_answer_to_a_recipient_is_an_acceptance(app, mail):
    """RFC 5321's 251 (user not local; will forward) accepts the recipient, as a 250 does."""
    message_id = write(app)
    with Scripted(mail, RCPT=b"251 2.1.5 User not local; will forward") as server:
        assert deliver(app, message_id) == "sent"
    assert len(server.messages) == 1


def test_each_attempt_waits_its_own_delay_and_the_last_one_fails_the_message(app, mail, caplog):
    """MAIL_RETRY_MINUTES 1,5,15: the first failure waits 1 minute, the second 5, the third 15, the fourth is the
    last; the operator's log says each one."""
    message_id = write(app)
    waited = []
    with caplog.at_level(logging.WARNING, logger="operations.outbox"), Scripted(mail, RCPT=b"450 4.2.0 Mailbox busy"):
        after = timedelta(0)
        for _ in range(4):
            assert deliver(app, message_id, after) in ("queued", "failed")
            found = row(app, message_id)
            waited.append(found.next_attempt_at - found.attempt_rows[-1].finished_at)
            assert deliver(app, message_id, after) is None  # not due again before its delay
            after = found.next_attempt_at - utcnow() + timedelta(seconds=1)
    found = row(app, message_id)
    assert (found.status, found.attempts) == ("failed", 4)
    assert waited[:3] == [timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=15)]
    assert [a.outcome for a in found.attempt_rows] == ["retry", "retry", "retry", "failed"]
    assert [r.getMessage() for r in caplog.records] == [
        f"mail {message_id} to olena@example.org not sent (attempt {n}, {outcome}): RCPT TO olena@example.org: "
        "450 4.2.0 Mailbox busy" for n, outcome in ((1, "retry"), (2, "retry"), (3, "retry"), (4, "failed"))]


def test_the_retry_delays_may_be_written_with_spaces_and_a_trailing_comma(app, mail):
    app.config["MAIL_RETRY_MINUTES"] = " 2, 7 ,"
    message_id = write(app)
    waited = []
    with Scripted(mail, RCPT=b"450 4.2.0 Mailbox busy"):
        after = timedelta(0)
        for _ in range(3):
            deliver(app, message_id, after)
            found = row(app, message_id)
            waited.append(found.next_attempt_at - found.attempt_rows[-1].finished_at)
            after = found.next_attempt_at - utcnow() + timedelta(seconds=1)
    assert [a.outcome for a in found.attempt_rows] == ["retry", "retry", "failed"]
    assert waited[:2] == [timedelta(minutes=2), timedelta(minutes=7)]


# --------------------------------------------------------------------------------------- what leaves, and how


def test_the_envelope_and_the_headers_leave_as_written(app, mail):
    """MAIL FROM carries the sender's address (not its name), one RCPT per recipient, and the message has exactly
    From, To (every recipient), Subject, Date, Message-ID and Auto-Submitted for a message nobody asked for, with
    those names, then its plain-text part."""
    message_id = write(app, to=("oleg@example.org", "olena@example.org"), subject="Your payment is due",
                       auto_submitted=True)
    with Scripted(mail) as server:
        assert deliver(app, message_id) == "sent"
    sent = row(app, message_id)
    assert [c.upper() for c in server.commands if c.split(":")[0].upper() in ("MAIL FROM", "RCPT TO", "DATA")] == [
        "MAIL FROM:<GAMBIT@FIDE.LOCAL>", "RCPT TO:<OLEG@EXAMPLE.ORG>", "RCPT TO:<OLENA@EXAMPLE.ORG>", "DATA"]
    [raw] = server.messages
    head = raw.split(b"\r\n\r\n", 1)[0].decode()
    assert [line.split(":", 1)[0] for line in head.split("\r\n")] == [
        "From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted", "Content-Type", "Content-Transfer-Encoding",
        "MIME-Version"]
    headers = dict(line.split(": ", 1) for line in head.split("\r\n"))
    assert headers["From"] == "Gambit <gambit@fide.local>"
    assert headers["To"] == "oleg@example.org, olena@example.org"
    assert headers["Subject"] == "Your payment is due"
    assert headers["Message-ID"] == sent.message_id
    assert headers["Auto-Submitted"] == "auto-generated"
    assert raw.endswith(b"the Board decided on your bid.\r\n")
    assert sent.attempt_rows[0].reply == "250 2.0.0 Ok: queued as 7"


def test_a_message_is_sent_the_moment_it_falls_due_and_its_attempt_says_so(app, mail, caplog):
    at = utcnow().replace(microsecond=0)
    with app.app_context():
        message_id = outbox.queue(["olena@example.org"], "On time", BODY, kind="test.notice", now=at).id
        db.session.commit()
    with caplog.at_level(logging.INFO, logger="operations.outbox"), Scripted(mail):
        with app.app_context():
            assert delivery.deliver(message_id, now=lambda: at - timedelta(seconds=1)) is None
            assert delivery.deliver(message_id, now=lambda: at) == "sent"
    sent = row(app, message_id)
    [attempt] = sent.attempt_rows
    assert (attempt.number, attempt.phase, attempt.outcome, attempt.started_at, attempt.finished_at) == (
        1, "done", "sent", at, at)
    assert (sent.status, sent.sent_at, sent.claimed_at, sent.last_error) == ("sent", at, at, "")
    assert [r.getMessage() for r in caplog.records] == [f"mail {message_id} sent to olena@example.org: On time"]


def test_the_login_carries_the_configured_name_and_password_and_a_refused_login_is_tried_again(app, mail):
    app.config.update(MAIL_USERNAME="gambit-relay", MAIL_PASSWORD="s3cret pass")
    good, bad = write(app), write(app, to=("oleg@example.org",))
    with Scripted(mail) as server:
        assert deliver(app, good) == "sent"
    [auth] = [c for c in server.commands if c.startswith("AUTH")]
    assert base64.b64decode(auth.split()[2]) == b"\0gambit-relay\0s3cret pass"
    with Scripted(mail, AUTH=b"535 5.7.8 Authentication credentials invalid \xff"):
        assert deliver(app, bad) == "queued"
    refused = row(app, bad)
    assert refused.last_error == "535 5.7.8 Authentication credentials invalid \ufffd"
    assert refused.attempt_rows[0].outcome == "retry"


def test_without_a_login_configured_none_is_tried(app, mail):
    message_id = write(app)
    with Scripted(mail) as server:
        assert deliver(app, message_id) == "sent"
    assert not [c for c in server.commands if c.startswith("AUTH")]


def test_with_mail_use_tls_a_server_that_offers_no_encryption_is_never_sent_the_message_in_clear(app, mail):
    app.config["MAIL_USE_TLS"] = True
    message_id = write(app)
    with Scripted(mail) as server:
        assert deliver(app, message_id) == "queued"
    assert server.messages == [] and "STARTTLS" not in server.commands
    assert row(app, message_id).last_error == "STARTTLS extension not supported by server."


def test_the_server_talked_to_is_the_one_mail_server_names(app, mail):
    """A server on 127.0.0.2 (not the local host's default address): the message goes there."""
    app.config["MAIL_SERVER"] = "127.0.0.2"
    message_id = write(app)
    with Scripted(mail, host="127.0.0.2") as server:
        assert deliver(app, message_id) == "sent"
    assert len(server.messages) == 1


def test_with_mail_use_tls_the_conversation_is_encrypted_before_the_envelope(app, mail, tmp_path):
    """A real aiosmtpd that refuses any envelope before STARTTLS: the message arrives, and the TLS handshake named
    the server as MAIL_SERVER does (SNI)."""
    import ssl

    from aiosmtpd.controller import Controller

    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    named = []
    context.sni_callback = lambda _socket, name, _context: named.append(name)
    app.config.update(MAIL_USE_TLS=True, MAIL_SERVER="localhost", MAIL_TLS_CA_FILE=cert)
    message_id = write(app)
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=mail, tls_context=context, require_starttls=True)
    controller.start()
    try:
        assert deliver(app, message_id) == "sent"
    finally:
        controller.stop()
    assert [m["Subject"] for m in inbox.messages] == ["The decision on your bid"]
    assert named == ["localhost"]


def test_with_mail_use_tls_a_server_whose_certificate_is_not_trusted_is_not_given_the_message(app, mail, tmp_path):
    """STARTTLS verifies the server: a certificate chaining to no trusted authority (MAIL_TLS_CA_FILE unset), or one
    not naming MAIL_SERVER, gets no envelope; the message waits for another attempt and says why."""
    import ssl

    from aiosmtpd.controller import Controller

    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=mail, tls_context=context, require_starttls=True)
    controller.start()
    try:
        for settings in ({"MAIL_SERVER": "localhost"}, {"MAIL_SERVER": "127.0.0.1", "MAIL_TLS_CA_FILE": cert}):
            app.config.update({"MAIL_USE_TLS": True, "MAIL_TLS_CA_FILE": "", **settings})
            message_id = write(app)
            assert deliver(app, message_id) == "queued"
            assert "certificate verify failed" in row(app, message_id).last_error
    finally:
        controller.stop()
    assert inbox.messages == []


def _self_signed(folder):
    from datetime import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mx.example.org")])
    now = datetime.now()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "mx.pem", folder / "mx.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


# ------------------------------------------------------------------------------- stale claims and the due list


def _claimed(app, message_id: int, *, at, phase: str | None) -> None:
    with app.app_context():
        message = db.session.get(outbox.OutboxMessage, message_id)
        message.status, message.claimed_at, message.attempts = "sending", at, 1
        if phase is not None:
            db.session.add(outbox.OutboxAttempt(message_id=message_id, number=1, started_at=at, phase=phase))
        db.session.commit()


def test_a_claim_is_stale_only_past_outbox_stale_seconds_and_its_attempt_says_what_happened(app, mail):
    app.config["OUTBOX_STALE_SECONDS"] = 600
    at = utcnow().replace(microsecond=0)
    fresh, stale = write(app, to=("a@example.org",)), write(app, to=("b@example.org",))
    _claimed(app, fresh, at=at - timedelta(seconds=600), phase="envelope")
    _claimed(app, stale, at=at - timedelta(seconds=601), phase="envelope")
    with Scripted(mail, greeting=b"421 4.3.2 busy"):  # the message swept is tried at once, and refused
        with app.app_context():
            assert delivery.deliver_due(lambda: at) == 0
    assert row(app, fresh).status == "sending"
    found = row(app, stale)
    assert (found.status, found.attempts) == ("queued", 2)
    first, second = found.attempt_rows
    assert (first.outcome, first.reply, first.finished_at) == (
        "retry", "the deliverer stopped during the attempt", at)
    assert second.reply == "the server's greeting: 421 4.3.2 busy"


def test_a_claim_left_without_an_attempt_is_taken_over_as_one_before_the_body(app, mail):
    message_id = write(app)
    _claimed(app, message_id, at=utcnow() - timedelta(hours=1), phase=None)
    with Scripted(mail) as server:
        with app.app_context():
            assert delivery.deliver_due() == 1
    assert row(app, message_id).status == "sent" and len(server.messages) == 1


def test_what_is_due_goes_out_oldest_first_up_to_the_limit_and_nothing_before_its_time(app, mail):
    at = utcnow().replace(microsecond=0)
    with app.app_context():
        ids = {}
        for subject, due in (("later", at + timedelta(seconds=1)), ("second", at), ("first", at - timedelta(1)),
                             ("third", at), ("given up", at - timedelta(2))):
            message = outbox.queue(["olena@example.org"], subject, BODY, kind="test.notice", now=due)
            ids[subject] = message.id
        message.status = "failed"  # no longer due: it takes no place in a batch
        db.session.commit()
    with Scripted(mail) as server:
        with app.app_context():
            assert delivery.deliver_due(lambda: at, limit=2) == 2
            assert delivery.deliver_due(lambda: at) == 1
    subjects = [raw.split(b"Subject: ", 1)[1].split(b"\r\n", 1)[0].decode() for raw in server.messages]
    assert subjects == ["first", "second", "third"]
    assert row(app, ids["later"]).status == "queued" and row(app, ids["given up"]).status == "failed"


def test_a_message_taken_over_from_a_stopped_deliverer_is_due_again_after_those_already_waiting(app, mail):
    at = utcnow().replace(microsecond=0)
    with app.app_context():
        stalled = outbox.queue(["a@example.org"], "stalled", BODY, kind="test.notice", now=at - timedelta(hours=2))
        waiting = outbox.queue(["b@example.org"], "waiting", BODY, kind="test.notice", now=at - timedelta(hours=1))
        db.session.commit()
        stalled_id, waiting_id = stalled.id, waiting.id
    _claimed(app, stalled_id, at=at - timedelta(hours=1), phase="connect")
    with Scripted(mail) as server, app.app_context():
        assert delivery.deliver_due(lambda: at, limit=1) == 1
    assert row(app, waiting_id).status == "sent" and len(server.messages) == 1
    taken = row(app, stalled_id)
    assert (taken.status, taken.next_attempt_at) == ("queued", at)


def test_the_workers_job_and_the_schedulers_summary_count_what_was_sent(app, mail):
    one, two, refused = write(app), write(app, to=("oleg@example.org",)), write(app, to=("nobody@example.org",))
    with Scripted(mail) as server:
        with app.app_context():
            assert delivery.deliver_job([one, two]) == 2
    assert len(server.messages) == 2
    with Scripted(mail, RCPT=b"550 5.1.1 No such user"), app.app_context():
        assert delivery.scheduled_delivery(utcnow()) == "0 message(s) sent"
    assert row(app, refused).status == "failed"
    three = write(app)
    with Scripted(mail), app.app_context():
        assert delivery.scheduled_delivery(utcnow()) == "1 message(s) sent"
    assert row(app, three).status == "sent"
    app.config["MAIL_ENABLED"] = False
    with app.app_context():
        assert delivery.scheduled_delivery(utcnow()) == "mail is off (MAIL_ENABLED is not set): nothing sent"


@pytest.mark.no_db
def test_on_postgresql_a_message_taken_over_at_the_instant_another_was_written_goes_out_first(app, tmp_path):
    """Two messages due at the same instant go out in the order they were written. PostgreSQL hands rows of equal
    keys back in storage order, and a row whose status changed lies after those written since (the claim and the
    sweep write it anew at the end of the table): the batch is ordered by the messages' numbers too. (On SQLite
    ties come in rowid order whatever the query says, so only PostgreSQL shows it.)"""
    from app import create_app

    port, at = free_port(), utcnow().replace(microsecond=0)
    with postgres_database() as url:
        application = create_app({
            "TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url, "SERVER_NAME": "gambit.test",
            "UPLOAD_DIR": str(tmp_path / "uploads"), "AUDIT_KEY": app.config["AUDIT_KEY"],
            "OUTBOX_DISPATCH": "manual", "MAIL_ENABLED": True, "MAIL_SERVER": "127.0.0.1", "MAIL_PORT": port,
            "MAIL_TIMEOUT": 2, "MAIL_USE_TLS": False, "MAIL_USERNAME": "", "MAIL_SENDER": "Gambit <gambit@fide.local>"})
        try:
            with application.app_context():
                db.create_all()
                stalled = outbox.queue(["a@example.org"], "stalled", BODY, kind="test.notice",
                                       now=at - timedelta(hours=2))
                db.session.commit()
                outbox.queue(["b@example.org"], "written", BODY, kind="test.notice", now=at)
                db.session.commit()
                # its deliverer stopped an hour ago, before the body left: the sweep queues it again, due at `at`
                stalled.status, stalled.claimed_at, stalled.attempts = "sending", at - timedelta(hours=1), 1
                db.session.add(outbox.OutboxAttempt(message_id=stalled.id, number=1, started_at=at - timedelta(hours=1),
                                                    phase="connect"))
                db.session.commit()
            with Scripted(port) as server, application.app_context():
                assert delivery.deliver_due(lambda: at) == 2
        finally:
            with application.app_context():
                db.session.remove()
                db.engine.dispose()
    subjects = [raw.split(b"Subject: ", 1)[1].split(b"\r\n", 1)[0].decode() for raw in server.messages]
    assert subjects == ["stalled", "written"]
