"""Two payments recorded at once on one milestone, with real commits from two threads on a database of their own
(SQLite file, or a fresh PostgreSQL database when DATABASE_URL names one): the outstanding check holds (the
milestone row is locked) and a form sent twice at once is recorded once."""

import threading
import uuid
from datetime import date
from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, OperationalError

from core.db import db

pytestmark = pytest.mark.no_db


@pytest.fixture
def live(tmp_path, database_url):
    from app import create_app

    url, admin, name = f"sqlite:///{tmp_path / 'live.sqlite3'}", None, None
    if database_url.startswith("postgresql"):
        name = f"gambit_contracts_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1),
                                 isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        url = admin.url.set(database=name).render_as_string(hide_password=False)
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": url, "SERVER_NAME": "gambit.test",
                      "UPLOAD_DIR": str(tmp_path / "uploads"), "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024,
                      "SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 5} if name else {}})
    with app.app_context():
        db.create_all()
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
    if admin is not None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


def _milestone(app) -> tuple[int, int]:
    """An issued contract in the 2015 call; returns (first milestone id, admin id)."""
    from datetime import UTC, datetime

    from accounts.services import create_user
    from events.regulation import default_event_file, load_regulation_file
    from events.services import load_event
    from tests.contracts.factories_contracts import issued_contract, selected_bid

    with app.app_context():
        now = datetime(2015, 3, 1, tzinfo=UTC)
        event, _ = load_event(load_regulation_file(default_event_file()), actor=None, now=now, source="test")
        users = [create_user(email=f"{r}@example.org", password="a long enough password", name=r, roles=[r],
                             actor=None, now=now) for r in ("admin", "bidder")]
        bid = selected_bid(event.id, users[1].id)
        contract = issued_contract(bid, admin=users[0], upload_dir=app.config["UPLOAD_DIR"])
        db.session.commit()
        return contract.milestones[0].id, users[0].id


def _twice(app, work):
    barrier = threading.Barrier(2)
    results, errors = [None, None], [None, None]

    def run(i):
        with app.app_context(), app.test_request_context():
            try:
                barrier.wait()
                results[i] = work(i)
                db.session.commit()
            except Exception as exc:  # the losing thread's error is what the test looks at
                db.session.rollback()
                errors[i] = exc
            finally:
                db.session.remove()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results, errors


def _pay(milestone_id, admin_id, amount, key):
    from datetime import UTC, datetime

    from accounts.models import User
    from contracts import services
    from contracts.models import Milestone

    payment, created = services.record_payment(
        db.session.get(Milestone, milestone_id), amount=Decimal(amount), received_on=date(2015, 6, 20),
        reference="UBS", note="", idempotency_key=key, actor=db.session.get(User, admin_id),
        now=datetime(2015, 6, 21, tzinfo=UTC))
    return payment.id, created


def _amounts(app, milestone_id):
    from contracts.models import Payment

    with app.app_context():
        return [p.amount for p in db.session.scalars(select(Payment).where(Payment.milestone_id == milestone_id))]


def test_two_payments_at_once_cannot_together_exceed_what_is_outstanding(live):
    from contracts import services

    milestone_id, admin_id = _milestone(live)
    results, errors = _twice(live, lambda i: _pay(milestone_id, admin_id, "60000.00", f"form-{i}"))
    assert _amounts(live, milestone_id) == [Decimal("60000.00")]
    assert sum(r is not None for r in results) == 1
    loser = next(e for e in errors if e is not None)
    # the loser waited for the winner's lock, then saw what was left; only a SQLite that cannot wait for its
    # writer lock ("database is locked") fails instead, and then nothing of it is recorded either
    if not isinstance(loser, OperationalError):
        assert isinstance(loser, services.ContractError)
        assert str(loser) == ("Art. 15.6.2: €40,000.00 is outstanding on instalment 1, due 30 June 2015; a payment "
                              "of €60,000.00 would exceed it.")


def test_a_form_sent_twice_at_once_is_recorded_once(live):
    milestone_id, admin_id = _milestone(live)
    results, errors = _twice(live, lambda i: _pay(milestone_id, admin_id, "1000.00", "the-same-form"))
    assert _amounts(live, milestone_id) == [Decimal("1000.00")]
    done = [r for r in results if r is not None]
    assert all(e is None or isinstance(e, (IntegrityError, OperationalError)) for e in errors), errors
    assert len({payment_id for payment_id, _ in done}) == 1
    assert sorted(created for _, created in done) in ([True], [False, True])
