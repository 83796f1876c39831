"""The payment reminders run by `flask scheduler`: two schedulers started at once against one database (a SQLite
file, or a fresh PostgreSQL database when DATABASE_URL names one) send the day's reminders once."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from contracts.models import Reminder
from contracts.queries import due_reminders
from core.db import db, utcnow
from operations.delivery import deliver_due
from operations.scheduler import ScheduledRun
from tests.scheduling import finish, flask_env, start

pytestmark = pytest.mark.no_db


def _contract_with_payments_owed(app) -> list[tuple[str, str]]:
    """An issued contract of the 2015 call, whose payments the organizer owes are all overdue by now; returns the
    reminders due today, (milestone key, kind) each."""
    from accounts.services import create_user
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.contracts.factories_contracts import issued_contract, selected_bid

    with app.app_context():
        now = datetime(2015, 3, 1, tzinfo=UTC)
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=now, source="test")
        admin, bidder = (create_user(email=f"{r}@example.org", password="a long enough password", name=r,
                                     roles=[r], actor=None, now=now) for r in ("admin", "bidder"))
        issued_contract(selected_bid(event.id, bidder.id), admin=admin, upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        return sorted((m.key, kind.value) for m, kind, _ in due_reminders(utcnow().date(),
                                                                           app.config["PAYMENT_DUE_SOON_DAYS"]))


def test_two_schedulers_started_at_once_send_the_days_reminders_once(app, live, tmp_path, smtp):
    due = _contract_with_payments_owed(live)
    assert len(due) >= 2 and {kind for _, kind in due} == {"overdue"}
    # the smtp fixture's server, where the test app sends (app.config names it)
    env = flask_env(live, tmp_path, MAIL_ENABLED="1", MAIL_SERVER="127.0.0.1", MAIL_PORT=str(app.config["MAIL_PORT"]))
    processes = [start(["scheduler", "--once"], env) for _ in range(2)]
    results = [finish(p) for p in processes]
    today = utcnow().date().isoformat()
    assert [code for code, _ in results] == [0, 0], results
    lines = sorted(next(line for line in out.splitlines() if line.startswith("payments.remind ")) for _, out in results)
    assert lines == [f"payments.remind {today}: ok", f"payments.remind {today}: skipped"]

    with live.app_context():
        runs = [(r.job, r.slot, r.outcome, r.detail) for r in db.session.scalars(select(ScheduledRun))
                if r.job == "payments.remind"]
        assert runs == [("payments.remind", today, "ok", f"{len(due)} reminder(s) queued in the outbox, as of {today}")]
        assert sorted((r.milestone.key, r.kind) for r in db.session.scalars(select(Reminder))) == due
        # The schedulers' "mail.deliver" (or their processes' delivery threads) sent what they found; whatever a
        # run's order left for the next minute's run goes out now: once each, whoever sends it.
        live.config.update(MAIL_ENABLED=True, MAIL_SERVER="127.0.0.1", MAIL_PORT=app.config["MAIL_PORT"])
        deliver_due()
        db.session.remove()
    assert len(smtp.messages) == len(due)
    assert {m["To"] for m in smtp.messages} == {"secretary@example.org"}
    assert all("payment overdue since" in m["Subject"] for m in smtp.messages)
