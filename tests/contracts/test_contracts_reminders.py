"""`flask payments remind`: the organizer's contact is emailed before a payment falls due and once it is overdue,
through a real SMTP server (the `smtp` fixture), each reminder recorded and never sent twice."""

from datetime import date
from decimal import Decimal

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from accounts.models import User
from contracts import payments as contract_payments
from contracts.models import Contract, Reminder
from core.db import db
from operations.outbox import OutboxMessage
from tests.contracts.factories_contracts import ISSUED_AT, milestone


@pytest.fixture
def contract_id(cf, event):
    return cf.contract(event)


def remind(runner, day: str):
    return runner.invoke(args=["payments", "remind", "--as-of", day])


def reminders(app):
    with app.app_context():
        return sorted((r.milestone.key, r.kind) for r in db.session.scalars(select(Reminder)))


def test_a_payment_falling_due_is_reminded_once_then_once_more_when_overdue(app, runner, smtp, contract_id):
    result = remind(runner, "2015-06-20")
    assert result.exit_code == 0, result.output
    assert "1 reminder(s) queued in the outbox" in result.output
    assert len(smtp.deliver()) == 1
    msg = smtp.deliver()[0]
    assert msg["To"] == "secretary@example.org"
    # (a header with a non-ASCII character is folded into encoded words; compare the words)
    assert " ".join(msg["Subject"].split()) == ("FIDE Women's World Championship Match 2015: payment due 30 June 2015 "
                              "(€100,000.00)")
    body = msg.get_content()
    assert "Dear Olena Kovalenko," in body and "instalment 1, due 30 June 2015 (Art. 15.6.2)" in body
    assert "IBAN CH54 0024 3243 3420 8763 Y" in body and f"/contracts/{contract_id}" in body

    # the next run, the same day or a later one within the window, sends nothing new
    assert "0 reminder(s) queued in the outbox" in remind(runner, "2015-06-20").output
    assert "0 reminder(s) queued in the outbox" in remind(runner, "2015-06-29").output
    assert len(smtp.deliver()) == 1

    # once overdue, one more
    result = remind(runner, "2015-07-03")
    assert "1 reminder(s) queued in the outbox" in result.output
    assert smtp.deliver()[1]["Subject"].startswith("FIDE Women's World Championship Match 2015: payment overdue "
                                                  "since 30 June 2015")
    assert "overdue by 3 days" in smtp.deliver()[1].get_content()
    assert "0 reminder(s) queued in the outbox" in remind(runner, "2015-07-20").output
    assert len(smtp.deliver()) == 2
    assert reminders(app) == [("instalment_1", "due_soon"), ("instalment_1", "overdue")]


def test_a_paid_milestone_and_fides_own_payments_are_not_reminded(app, runner, smtp, contract_id):
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        admin = db.session.scalars(select(User).where(User.email.like("secretariat%"))).first()
        contract_payments.record_payment(milestone(contract, "instalment_1"), amount=Decimal("100000.00"),
                                         received_on=date(2015, 6, 15), reference="UBS", note="", idempotency_key="k",
                                         actor=admin, now=ISSUED_AT.replace(month=6, day=16))
        db.session.commit()
    assert "0 reminder(s) queued in the outbox" in remind(runner, "2015-06-20").output
    # late August: the second instalment and the three payments to the players fall due; FIDE's advances
    # (10 October) are FIDE's to make and are never reminded to the organizer
    result = remind(runner, "2015-08-20")
    assert "4 reminder(s) queued in the outbox" in result.output, result.output
    assert sorted(m["Subject"] for m in smtp.deliver())[0].endswith("(€197,500.00)")
    assert reminders(app) == [("home_compensation", "due_soon"), ("instalment_2", "due_soon"),
                              ("travel_1", "due_soon"), ("travel_2", "due_soon")]
    remind(runner, "2015-10-09")  # everything still unpaid is overdue by now
    assert len(reminders(app)) == 8
    assert all(k not in {key for key, _ in reminders(app)} for k in ("advance_CHN", "advance_UKR"))


def test_the_database_keeps_one_reminder_of_each_kind_per_milestone(app, runner, smtp, contract_id):
    remind(runner, "2015-06-20")
    with app.app_context():
        m = milestone(db.session.get(Contract, contract_id), "instalment_1")
        with pytest.raises(IntegrityError):
            db.session.add(Reminder(milestone_id=m.id, kind="due_soon", as_of=date(2015, 6, 21),
                                    sent_at=ISSUED_AT, sent_to="x@example.org"))
            db.session.flush()
        db.session.rollback()


def test_with_mail_off_the_reminder_waits_in_the_outbox_and_goes_out_once_mail_is_on(app, runner, contract_id):
    assert not app.config["MAIL_ENABLED"]
    result = remind(runner, "2015-06-20")
    assert result.exit_code == 0 and "1 reminder(s) queued in the outbox" in result.output
    assert reminders(app) == [("instalment_1", "due_soon")]
    held = runner.invoke(args=["mail", "send"])
    assert held.exit_code == 1
    assert held.output.startswith("Mail is off (MAIL_ENABLED is not set): nothing was sent")
    with app.app_context():
        [message] = db.session.scalars(select(OutboxMessage)).all()
        assert (message.status, message.attempts, message.kind) == ("queued", 0, "payment.due_soon")
        assert message.auto_submitted and message.about_path == f"/contracts/{contract_id}"


def test_the_guarantee_lapsing_before_the_money_is_paid_is_reported(app, runner, smtp, contract_id):
    # the factory's guarantee is valid until 1 September 2015, the day after the last deadline
    result = remind(runner, "2015-08-20")
    assert "WARNING" in result.output and "the bank guarantee lapses in 12 days, on 1 September 2015" in result.output


def test_a_date_that_is_not_a_date_is_refused(runner):
    result = runner.invoke(args=["payments", "remind", "--as-of", "20-06-2015"])
    assert result.exit_code == 2 and "is not a date written YYYY-MM-DD" in result.output
