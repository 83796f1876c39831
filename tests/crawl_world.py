"""A database of its own for a whole-app test, and the world the crawl walks in it: the demo (demo.seed: the 2015
call taken through bids, scoring, the pack, the votes, the decision, the contract countersigned and its payments,
a part payment among them), then what the demo leaves out, each through its service as a person's request would:
a payment reversed, the match result, a prize deduction, a late admission in a call of its own, mail queued and
delivered to a real SMTP server (aiosmtpd), and last a correction of the decision (the old contract closed).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

from tests.faults import postgres_database

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def fresh_database(database_url: str, folder: Path, name: str) -> Iterator[str]:
    """A new, empty database of the suite's kind (a SQLite file in `folder`, or a PostgreSQL database on the
    server DATABASE_URL names: tests.faults.postgres_database), dropped afterwards; yields its URL."""
    if not database_url.startswith("postgresql"):
        yield f"sqlite:///{folder / (name + '.sqlite3')}"
        return
    with postgres_database() as url:
        yield url


def app_config(url: str, instance: Path, signing_ca, **extra) -> dict:
    """The settings of an app on its own database, as the suite's app has them (manual outbox, no CSRF or rate
    limits, fast hashing), with short pages so that every list has paging links."""
    return {
        "TESTING": True, "SECRET_KEY": "crawl-secret",
        "SQLALCHEMY_DATABASE_URI": url, "UPLOAD_DIR": str(instance / "uploads"),
        "SIGNING_PKCS12": str(signing_ca.path), "SIGNING_PASSPHRASE": signing_ca.passphrase,
        "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False, "MAIL_ENABLED": False, "OUTBOX_DISPATCH": "manual",
        "SERVER_NAME": "gambit.test", "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "PAGE_SIZE": 3,
        # A failing page answers 500 as it would to a person (the crawl lists them all), not an exception raised
        # into the test at the first one.
        "PROPAGATE_EXCEPTIONS": False,
        **extra,
    }


def migrate(app) -> None:
    """The schema made by the migrations, as `flask db upgrade` makes it."""
    from flask_migrate import upgrade

    with app.app_context():
        upgrade(directory=os.path.join(app.root_path, "migrations"))


def build_world(app) -> list[str]:
    """The demo, then the rest of the flow (module docstring); committed. Returns what was done, a line each."""
    from core.db import db, utcnow
    from demo.seed import seed_demo, seed_events

    with app.app_context():
        now = utcnow()
        done = seed_events(now=now) + seed_demo(now=now)
        db.session.commit()
        done += _contract_activity(now=now)
        db.session.commit()
        done += _late_admission(now=now)
        db.session.commit()
        done += _mail(app)
        done += _correction(now=now)
        db.session.commit()
        db.session.remove()
    return done


def _people():
    from accounts.services import find_user_by_email

    return find_user_by_email("admin@example.org")


def _contract_in_force():
    from board.queries import current_decision
    from contracts import queries
    from events.services import get_event

    event = get_event("fwwcm-2015")
    decision = current_decision(event)
    return event, decision, queries.in_force(decision.selected_bid_id)


def _contract_activity(*, now: datetime) -> list[str]:
    from contracts import payments as contract_payments
    from contracts import results
    from contracts.models import Payment
    from contracts.rules.result import MatchOutcome
    from core.db import db

    admin = _people()
    event, _, contract = _contract_in_force()
    reg = event.regulation
    payment = db.session.scalars(sa.select(Payment).join(Payment.milestone)
                                 .where(Payment.reverses_id.is_(None)).order_by(Payment.id)).first()
    contract_payments.reverse_payment(payment, reason="Recorded on the wrong milestone.",
                                      idempotency_key="crawl-reverse", actor=admin, now=now)
    days = reg.schedule_for(contract.bid.opening_date)
    last_game = [d.on for d in days if d.kind == "game"][-1]
    winner = reg.players[0].federation
    results.record_result(contract, outcome=MatchOutcome(winner, "regular", last_game), actor=admin,
                          now=datetime.combine(last_game + timedelta(days=1), datetime.min.time(), tzinfo=UTC))
    rule = next(r for r in reg.deductions if r.amount is not None)
    results.record_deduction(contract, federation=winner, rule_key=rule.key, amount=rule.amount,
                             reason="Decision of the Chief Arbiter.", decided_on=last_game + timedelta(days=2),
                             actor=admin, now=now)
    return [f"payment {payment.id} reversed", f"result: {winner} won", f"deduction: {rule.key}"]


def _late_admission(*, now: datetime) -> list[str]:
    """A call of its own whose deadline has passed (the 2015 rules under another slug), with a draft the
    secretariat admits late."""
    from accounts.services import find_user_by_email
    from bids import services
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event

    admin = _people()
    reg = load_regulation_file(default_event_file())
    late = reg.shifted(years=0, slug="fwwcm-late", title="Late admission — " + reg.event.title, practice=False)
    event, _ = load_event(late, actor=admin, now=now, source="crawl")
    owner = find_user_by_email("spain@example.org")
    before = reg.event.bid_deadline - timedelta(days=2)
    bid = services.create_bid(event, owner=owner, actor=owner, now=before)
    services.admit_late_bid(bid, reason="The federation's letter was delayed by a postal strike.", actor=admin,
                            now=now)
    return [f"late admission: bid {bid.id} in {event.slug}"]


def _mail(app) -> list[str]:
    """Every message the flow queued, delivered to a real SMTP server."""
    from core.db import db
    from operations import delivery
    from tests.mailservers import Inbox, free_port, smtp_server

    port = free_port()
    settings = {"MAIL_ENABLED": True, "MAIL_SERVER": "127.0.0.1", "MAIL_PORT": port, "MAIL_USE_TLS": False}
    saved = {k: app.config.get(k) for k in settings}
    app.config.update(settings)
    try:
        with smtp_server(port, Inbox()) as inbox:
            sent = delivery.deliver_due(lambda: datetime.now(UTC))
    finally:
        app.config.update(saved)
    db.session.remove()
    return [f"mail: {sent} delivered, {len(inbox.messages)} received"]


def _correction(*, now: datetime) -> list[str]:
    """The decision corrected (same bid, a corrected rationale): the old decision superseded, its contract closed
    to new payments."""
    from board import services

    admin = _people()
    event, decision, _ = _contract_in_force()
    corrected = services.record_decision(
        event, method=decision.method, selected=decision.selected_bid, rationale="Corrected rationale.",
        decided_on=decision.decided_on, consultations=[], actor=admin, now=now + timedelta(minutes=5),
        corrects=decision, correction_reason="The minutes named the wrong meeting.")
    return [f"decision {decision.id} corrected by {corrected.id}"]

