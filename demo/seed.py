"""Demo data so that a newcomer finds every page filled: the calls, the accounts (demo/users.py), then each step's
demo in the order of the flow. Every function here is idempotent.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

from flask import current_app

from accounts import services as accounts
from board.queries import current_decision
from contracts import payments as contract_payments
from contracts import queries, services
from contracts.rules.terms import passed_regulation_dates
from core.auth import Role
from demo.bids import seed_bids
from demo.board import seed_board_demo
from demo.scoring import seed_scoring_demo
from demo.signatures import seed_trust, signed_by
from demo.users import DEMO_PASSWORD, DEMO_USERS
from events.regulation import SEED_DIR, load_regulation_file, practice_regulation
from events.services import get_event, load_event


def seed_events(*, now: datetime) -> list[str]:
    """Load every call in seed_data/events, and a practice call: the 2015 rules moved to the future."""
    out = []
    primary = None
    for path in sorted((SEED_DIR / "events").glob("*.toml")):
        reg = load_regulation_file(path)
        event, changed = load_event(reg, actor=None, now=now, source=str(path.relative_to(SEED_DIR.parent)))
        out.append(f"{'loaded' if changed else 'unchanged'}: {event.slug} {event.regulation_version.label}")
        if primary is None and not reg.event.practice:
            primary = reg
    if primary is not None:
        practice = practice_regulation(primary, now=now)
        event, changed = load_event(practice, actor=None, now=now, source=f"{primary.event.slug} moved in time")
        out.append(f"{'loaded' if changed else 'unchanged'}: {event.slug} {event.regulation_version.label}")
    return out


def seed_demo(*, now: datetime) -> list[str]:
    out = []
    for email, name, org, roles, federation, president in DEMO_USERS:
        if accounts.find_user_by_email(email):
            continue
        accounts.create_user(email=email, password=DEMO_PASSWORD, name=name, organisation=org, roles=roles,
                             federation=federation, is_president=president, actor=None, now=now,
                             applicant_type=("sponsor" if "sponsor" in email else "federation")
                             if Role.BIDDER in roles else None)
        out.append(f"demo account: {email}")
    out += seed_trust(actor=accounts.find_user_by_email("admin@example.org"), now=now)
    out += seed_bids(now=now)
    out += seed_scoring_demo(now=now)
    out += seed_board_demo(now=now)
    out += _seed_contract(now=now)
    return out


def _seed_contract(*, now: datetime) -> list[str]:
    """The contract of the demo decision (issued the day after it), with its payments; idempotent."""
    event = get_event("fwwcm-2015")
    admin = accounts.find_user_by_email("admin@example.org")
    decision = current_decision(event) if event is not None else None
    if decision is None or admin is None:
        return []
    return seed_contract_demo(decision.selected_bid, admin=admin, now=decision.recorded_at + timedelta(days=1))


def seed_contract_demo(bid, *, admin, now: datetime) -> list[str]:
    """The contract with the selected demo bid, issued at `now`, and a few months of its payments so the tracker
    shows every state: the first instalment paid on time, the contract countersigned, the second instalment only
    part-paid (overdue once its date passes), a travel contribution paid late, FIDE's advances paid on time.

    Each entry is recorded as of the day it happened and only if that day has come (a practice call in the
    future gets its contract and nothing else). Idempotent: a bid whose contract is in force is left alone.
    Raises contracts.services.ContractError if the bid is not selected.
    """
    existing = queries.in_force(bid.id)
    if existing is not None:
        return [f"demo contract: unchanged ({existing.reference})"]
    upload_dir = current_app.config["UPLOAD_DIR"]
    contract = queries.open_draft(bid.id) or services.create_contract(bid, actor=admin, now=now)
    terms = services.build_terms(contract)
    # The dates a contract must set: the proposed ones (stipends at the closing date); without a bank guarantee
    # the organizer's payments fall, for the demo, a month before the opening ceremony.
    # A date already past on the day of issue would be refused (contracts.rules.past_due_dates): those move to a
    # month after the issue.
    fallback = terms.inputs.opening_date - timedelta(days=30)
    issued_on = now.date()
    dates = {m.key: d if (d := m.default_due or fallback) >= issued_on else issued_on + timedelta(days=30)
             for m in terms.milestones if m.needs_due_date}
    dates |= {m.key: issued_on + timedelta(days=30)
              for m in passed_regulation_dates(terms.milestones, today=issued_on)}
    services.issue_contract(contract, due_dates=dates, actor=admin, now=now, upload_dir=upload_dir)
    out = [f"demo contract: {contract.reference} issued"]
    today = datetime.now(UTC).date()
    by_key = {m.key: m for m in contract.milestones}

    def at(day):
        return max(now, datetime.combine(day, time(12, 0), tzinfo=UTC))

    def pay(key, days_from_due: int, share=Decimal(1)):
        m = by_key.get(key)
        if m is None or m.due is None:
            return
        day = m.due + timedelta(days=days_from_due)
        if day > today or at(day).date() > today:
            return
        amount = (m.amount * share).quantize(Decimal("0.01"))
        contract_payments.record_payment(m, amount=amount, received_on=day, reference=f"DEMO-{key.upper()}",
                                         note="demo", idempotency_key=f"demo-{key}", actor=admin, now=at(day))
        out.append(f"demo payment: {amount} on {key} ({day.isoformat()})")

    first = next((m for m in contract.milestones if m.kind == "to_fide"), None)
    if first is not None:
        pay(first.key, -3)
    sign_day = (now + timedelta(days=10)).date()
    if sign_day <= today:
        issued = queries.pdf_path(upload_dir, contract)
        assert issued is not None  # the contract was issued above
        # The organizer's demo signature is issued by the development CA: on the trust list, it makes the contract
        # signed (an untrusted one would not).
        out += seed_trust(actor=admin, now=now)
        pdf = signed_by(issued.read_bytes(), terms.inputs.signatory_name or "Organizer",
                        terms.inputs.applicant_name or "Organizer", reason=f"Countersigned: {contract.reference}")
        services.sign_contract(contract, filename="countersigned.pdf", content=pdf, max_bytes=len(pdf),
                               upload_dir=upload_dir, actor=admin, now=at(sign_day))
        out.append(f"demo contract: {contract.reference} countersigned")
    later = [m for m in contract.milestones if m.kind == "to_fide" and m is not first]
    if later:
        pay(later[0].key, -5, Decimal("0.5"))
    pay("travel_1", 2)
    for p in bid.event.regulation.players:
        pay(f"advance_{p.federation}", 0)
    return out
