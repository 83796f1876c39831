"""Issue 25: what is decided together is serialised by one lock, the call's row (events.services.lock_call).

Each race runs two real requests or service calls in two threads, each with its own connection and commit, on a
database of their own (the `live` fixture: a SQLite file, or a fresh PostgreSQL database when DATABASE_URL names
one). On PostgreSQL the interleaving is made certain: the first thread stops just before a chosen statement until
the second has finished or waits for a lock (pg_stat_activity), then goes on. Without the lock the second slips its
change in between what the first read and what it writes, which is what the attack review found. SQLite takes the
write lock at the start of every writing transaction (core.db), so there the two simply run one after the other and
the same invariants are checked."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import select, text

from core.db import db
from tests.conftest import login, utcnow

BOOKKEEPING = "Sanity check: bookkeeping of deductions and payments"  # sanity_checks.bookkeeping

pytestmark = pytest.mark.no_db


def _waiting_for_a_lock(engine) -> bool:
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        return bool(conn.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                     "AND wait_event_type = 'Lock'")))


def _start_and_join(threads: list[threading.Thread], *, racing: bool) -> None:
    """Both threads at once when racing (the first holds itself back); otherwise the first to its end before the
    second starts. Each must end within 60 s."""
    if racing:
        for t in threads:
            t.start()
    else:  # SQLite: one writer at a time anyway
        threads[0].start()
        threads[0].join(60)
        threads[1].start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()


def race(app, first: Callable[[], object], second: Callable[[], object], *, stop_before: Callable[[str], bool]):
    """Run first() and second() in two threads, each in its own app context. On PostgreSQL, first() stops just
    before its first statement for which stop_before(statement) is true, until second() has finished or is
    waiting for a lock; then it goes on. Returns ((result or exception) of first, of second)."""
    with app.app_context():
        engine = db.engine
    racing = engine.dialect.name == "postgresql"
    out: list[object] = [None, None]
    second_done = threading.Event()
    go_second = threading.Event()
    held: list[bool] = []

    def hold(conn, cursor, statement, parameters, context, executemany):
        if threading.current_thread().name != "race-first" or held or not stop_before(statement):
            return
        held.append(True)
        go_second.set()
        for _ in range(3000):  # at most 30 s: the other thread finished or waits for our lock
            if second_done.wait(0.01) or _waiting_for_a_lock(engine):
                return
        raise AssertionError("the second thread neither finished nor waited for a lock")

    def run(i: int, work: Callable[[], object]):
        if i == 1 and racing:
            go_second.wait(30)
        with app.app_context():
            try:
                out[i] = work()
                db.session.commit()
            except Exception as exc:  # the refused one's error is what the test looks at
                db.session.rollback()
                out[i] = exc
            finally:
                db.session.remove()
                if i == 1:
                    second_done.set()

    if racing:
        sa_event.listen(engine, "before_cursor_execute", hold)
    try:
        _start_and_join([threading.Thread(target=run, args=(0, first), name="race-first"),
                         threading.Thread(target=run, args=(1, second), name="race-second")], racing=racing)
    finally:
        if racing:
            sa_event.remove(engine, "before_cursor_execute", hold)
    if racing:
        assert held, "the first thread never reached the statement it was to stop before"
    return out[0], out[1]


# ---- finding 1: a vote changed while the decision is being recorded


def _two_votes_for_lviv(app):
    from tests.security.test_concurrency import _deliberation

    scored, admin_id = _deliberation(app)  # board@example.org voted for Lviv; the pack is made
    from accounts.models import User
    from bids.models import Bid
    from board import services
    from events.models import Event
    from tests.conftest import Factory

    second = Factory(app).user(roles=("board",), federation="NOR", email="board2@example.org")
    with app.app_context():
        services.cast_vote(db.session.get(Event, scored["event"]), db.session.get(User, second),
                           db.session.get(Bid, scored["lviv"]), now=utcnow())
        db.session.commit()
    app.config["WTF_CSRF_ENABLED"] = False  # the forms are posted as a browser would, without the page's token
    return scored


def _as(app, email):
    client = app.test_client()
    assert login(client, email).status_code == 302
    return client


def test_a_vote_changed_while_the_decision_is_recorded_never_leaves_a_decision_against_the_votes(live):
    """The attack: the decision read the tally (Lviv 2, Tbilisi 0), a member changed their vote to Tbilisi and
    committed, then the decision committed "2-0" while the votes were 1-1, a tie. Now the vote waits for the
    decision's lock and is refused (the call is decided), and the decision keeps the votes it counted."""
    from board.models import Decision, Vote

    scored = _two_votes_for_lviv(live)
    admin, member = _as(live, "sec@example.org"), _as(live, "board2@example.org")

    def decide():
        return admin.post("/board/fwwcm-2015/decision", data={
            "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat()})

    def change_vote():
        return member.post("/board/fwwcm-2015/vote", data={"choice": str(scored["tbilisi"])})

    decided, voted = race(live, decide, change_vote,
                          stop_before=lambda s: s.lstrip().startswith("UPDATE event SET status"))
    assert getattr(decided, "status_code", None) == 302, decided
    assert getattr(voted, "status_code", None) == 302, voted
    with live.app_context():
        decision = db.session.scalars(select(Decision)).one()
        votes = db.session.scalars(select(Vote).order_by(Vote.id)).all()
        in_db = {str(b): sum(1 for v in votes if v.bid_id == b) for b in (scored["lviv"], scored["tbilisi"])}
        stored = json.loads(decision.tally)["votes"]
        assert {k: stored[k] for k in in_db} == in_db  # the record says what the votes are
        assert [(c["vote"], c["bid"]) for c in decision.loads("votes")] == [(v.id, v.bid_id) for v in votes]
        assert in_db == {str(scored["lviv"]): 2, str(scored["tbilisi"]): 0}
    page = member.get("/board/fwwcm-2015").get_data(as_text=True)
    # refused inside the lock (PostgreSQL, racing), or by the form once no bid is before the Board (one after other)
    assert ("The Board votes once the WCOC&#39;s scoring is closed and until the decision." in page
            if live.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql") else
            "Choose a bid, or abstain." in page)


def test_a_decision_from_a_page_whose_votes_changed_is_refused(live):
    """The page showed Lviv 2, Tbilisi 0; a member changed their vote before the secretary pressed the button:
    the decision names the votes its page showed, and is refused with the tally as it now is."""
    import re

    from board.models import Decision

    scored = _two_votes_for_lviv(live)
    admin, member = _as(live, "sec@example.org"), _as(live, "board2@example.org")
    page = admin.get("/board/fwwcm-2015").get_data(as_text=True)
    seen = re.search(r'name="votes_seen" type="hidden" value="([0-9a-f]{64})"|'
                     r'id="votes_seen" name="votes_seen" type="hidden" value="([0-9a-f]{64})"', page)
    assert seen, "the decision form names the votes its page showed"
    fingerprint = seen.group(1) or seen.group(2)
    assert member.post("/board/fwwcm-2015/vote", data={"choice": str(scored["tbilisi"])}).status_code == 302
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
        "votes_seen": fingerprint})
    assert response.status_code == 422
    assert ("The votes changed since this page was loaded (now: Georgian Chess Federation — Tbilisi, Georgia: 1; "
            "Ukrainian Chess Federation — Lviv, Ukraine: 1; Spanish Chess Federation — Madrid, Spain: 0); nothing was "
            "recorded. Reload the page, read the tally again and record the decision.") in \
        response.get_data(as_text=True).replace("&#39;", "'")
    with live.app_context():
        assert db.session.scalars(select(Decision)).first() is None


# ---- the call's other moves


def test_a_late_admission_racing_the_opening_of_scoring_is_made_before_it_or_refused(live):
    """The bid's compare-and-swap checks the bid, not the call: without the lock the admission read "closed",
    scoring opened, and the admission was recorded into a call already scoring."""
    from accounts.models import User
    from bids.models import Bid
    from bids.services import BidError, admit_late_bid
    from events.models import Event
    from events.services import change_event_status
    from evidence.audit import AuditEntry
    from tests.security.test_concurrency import _ready_bid

    bid_id, _ = _ready_bid(live)
    with live.app_context():
        from accounts.services import create_user

        admin = create_user(email="sec@example.org", password="a long enough password", name="Sec",
                            roles=["admin"], actor=None, now=utcnow())
        event = db.session.get(Bid, bid_id).event
        change_event_status(event, "close", actor=None, now=utcnow())
        db.session.commit()
        admin_id, event_id = admin.id, event.id

    def admit():
        admit_late_bid(db.session.get(Bid, bid_id), reason="The courier was delayed by a strike.",
                       actor=db.session.get(User, admin_id), now=utcnow())

    def open_scoring():
        change_event_status(db.session.get(Event, event_id), "open_scoring", actor=None, now=utcnow())

    admitted, opened = race(live, admit, open_scoring, stop_before=lambda s: s.lstrip().startswith("UPDATE bid"))
    assert opened is None, opened
    assert admitted is None or isinstance(admitted, BidError), admitted
    with live.app_context():
        actions = [a for a in db.session.scalars(select(AuditEntry.action).order_by(AuditEntry.id))
                   if a in ("bid.late_admission", "event.open_scoring")]
        # an admission, if any, comes before scoring opened: never into a call already scoring
        assert actions in (["bid.late_admission", "event.open_scoring"], ["event.open_scoring"]), actions


def test_a_submission_racing_the_close_of_the_call_is_made_before_it_or_refused(live):
    from accounts.models import User
    from bids import services
    from bids.models import Bid
    from events.models import Event
    from events.services import change_event_status
    from evidence.audit import AuditEntry
    from tests.security.test_concurrency import _ready_bid

    bid_id, owner_id = _ready_bid(live)
    with live.app_context():
        event_id = db.session.get(Bid, bid_id).event_id

    def submit():
        services.submit_bid(db.session.get(Bid, bid_id), actor=db.session.get(User, owner_id), now=utcnow())

    def close():
        change_event_status(db.session.get(Event, event_id), "close", actor=None, now=utcnow())

    submitted, closed = race(live, submit, close, stop_before=lambda s: s.lstrip().startswith("UPDATE bid SET"))
    assert closed is None, closed
    assert submitted is None or isinstance(submitted, services.BidError), submitted
    with live.app_context():
        actions = [a for a in db.session.scalars(select(AuditEntry.action).order_by(AuditEntry.id))
                   if a in ("bid.submit", "event.close")]
        assert actions in (["bid.submit", "event.close"], ["event.close"]), actions


# ---- contracts


def _signed_off_result(app):
    """An issued contract in the 2015 call with the match result recorded (so each player has a prize balance);
    returns (contract id, admin id, federation of a player)."""
    from accounts.services import create_user
    from contracts import payments as contract_payments
    from contracts import results
    from contracts.rules.result import MatchOutcome
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
        results.record_result(contract, outcome=MatchOutcome("CHN", "regular", date(2015, 10, 26)),
                              actor=users[0], now=datetime(2015, 10, 27, 18, tzinfo=UTC))
        # FIDE has paid all of Muzychuk's balance but €6,000: one fine of €5,000 fits, two do not
        balance = results.prize_balance_milestone(contract, "UKR")
        contract_payments.record_payment(balance, amount=balance.amount - Decimal("6000.00"),
                                         received_on=date(2015, 11, 5),
                                         reference="FIDE", note="", idempotency_key="most", actor=users[0],
                                         now=datetime(2015, 11, 5, 12, tzinfo=UTC))
        db.session.commit()
        return contract.id, users[0].id, "UKR"


def test_two_deductions_at_once_cannot_together_exceed_what_is_left(live):
    """record_deduction read what is left of the balance without a lock: two at once both fitted, and together
    took more than the balance. Now the second waits and sees what the first took."""
    from accounts.models import User
    from contracts import results, services
    from contracts.models import Contract, PrizeDeduction

    contract_id, admin_id, player = _signed_off_result(live)

    def deduct():
        return results.record_deduction(db.session.get(Contract, contract_id), federation=player,
                                        rule_key="fine_playing_conditions", amount=Decimal("5000.00"),
                                        reason="A fine decided by the Chief Arbiter.",
                                        decided_on=date(2015, 11, 20), actor=db.session.get(User, admin_id),
                                        now=datetime(2015, 12, 2, tzinfo=UTC)).id

    first, second = race(live, deduct, deduct,
                         stop_before=lambda s: s.lstrip().startswith("INSERT INTO prize_deduction"))
    with live.app_context():
        amounts = list(db.session.scalars(select(PrizeDeduction.amount)))
    assert amounts == [Decimal("5000.00")]  # not two: together they exceed the €6,000 left
    refused = first if isinstance(first, Exception) else second
    assert isinstance(refused, services.ContractError), refused
    assert str(refused) == (f"{BOOKKEEPING}: the deductions cannot exceed the prize balance still "
                            "due, €1,000.00 (you entered €5,000.00).")


def test_issuing_a_correction_and_countersigning_the_version_it_replaces_at_once_end_consistently(live, signing_ca):
    """The correction supersedes version 1 while version 1's countersignature is filed: one after the other, never
    a signature filed on a superseded version nor a correction issued over a version that changed under it."""
    from accounts.models import User
    from contracts import queries, services
    from contracts.models import Contract
    from evidence import signing, trust
    from evidence.audit import AuditEntry
    from tests.contracts.factories_contracts import fake_render, proposed_dates
    from tests.signing import sign, trusted_signer

    contract_id, admin_id, _ = _signed_off_result(live)
    with live.app_context():
        v1 = db.session.get(Contract, contract_id)
        admin = db.session.get(User, admin_id)
        trust.add_certificate(signing.pem(signing_ca.ca), actor=admin, now=utcnow())
        v2 = services.prepare_correction(v1, reason="The stipends are paid at the closing ceremony.", actor=admin,
                                         now=datetime(2015, 12, 3, tzinfo=UTC))
        countersigned = sign(queries.pdf_path(live.config["UPLOAD_DIR"], v1).read_bytes(),
                             trusted_signer(signing_ca), field="Organizer")
        db.session.commit()
        v2_id = v2.id

    def issue():
        draft = db.session.get(Contract, v2_id)
        return services.issue_contract(draft, due_dates=proposed_dates(draft), actor=db.session.get(User, admin_id),
                                       now=datetime(2015, 12, 3, 12, tzinfo=UTC),
                                       upload_dir=live.config["UPLOAD_DIR"], render=fake_render).id

    def countersign():
        return services.sign_contract(db.session.get(Contract, contract_id), filename="signed.pdf",
                                      content=countersigned, max_bytes=10**7, upload_dir=live.config["UPLOAD_DIR"],
                                      actor=db.session.get(User, admin_id), now=utcnow()).id

    issued, signed = race(live, issue, countersign,
                          stop_before=lambda s: s.lstrip().startswith("UPDATE contract SET status"))
    for outcome in (issued, signed):
        assert not isinstance(outcome, Exception) or isinstance(outcome, services.ContractError), repr(outcome)
    with live.app_context():
        rows = {c.id: c for c in db.session.scalars(select(Contract))}
        in_force = [c for c in rows.values() if c.state.in_force]
        assert len(in_force) == 1
        actions = [a for a in db.session.scalars(select(AuditEntry.action).where(
            AuditEntry.object_type == "Contract").order_by(AuditEntry.id))
            if a in ("contract.sign", "contract.supersede")]
        if rows[contract_id].signed_at is not None:  # a signature is filed only while its version is in force
            assert actions[0] == "contract.sign", actions
        if rows[v2_id].status == "issued":
            assert rows[contract_id].status == "superseded"
        else:
            assert rows[contract_id].status == "signed" and isinstance(issued, services.ContractError)
