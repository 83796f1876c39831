"""Every route has a row in the access matrix, and every row holds for every role."""

import pytest
from sqlalchemy import select

from tests.access_matrix import MATRIX, ROLES
from tests.conftest import login
from tests.pdfs import valid_pdf


def test_every_route_is_in_the_access_matrix(app):
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    missing = sorted(endpoints - set(MATRIX))
    assert not missing, f"routes without a row in tests/access_matrix.py: {missing}"
    stale = sorted(set(MATRIX) - endpoints)
    assert not stale, f"rows for routes that no longer exist: {stale}"


def test_every_method_of_every_route_is_covered(app):
    for rule in app.url_map.iter_rules():
        methods = (rule.methods or set()) - {"HEAD", "OPTIONS"}
        covered = {method for method, _, _ in MATRIX[rule.endpoint]}
        assert methods <= covered, f"{rule.endpoint}: no row for {sorted(methods - covered)}"


ROWS = [(endpoint, method, url, role, expected[role])
        for endpoint, rows in sorted(MATRIX.items())
        for method, url, expected in rows for role in ROLES]


def _draft_bid(app, owner_id: int, event_id: int) -> tuple[int, int]:
    """A draft bid of `owner_id` in the practice call, with one document; returns (bid id, document id)."""
    from accounts.models import User
    from bids import services
    from core.db import db, utcnow
    from events.models import Event

    with app.app_context():
        owner = db.session.get(User, owner_id)
        bid = services.create_bid(db.session.get(Event, event_id), owner=owner, actor=owner, now=utcnow())
        doc = services.store_document(bid, "signed_letter", filename="l.pdf", content=valid_pdf(),
                                      upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**6, actor=owner,
                                      now=utcnow())
        db.session.commit()
        return bid.id, doc.id


def _contract(app, owner_id: int, event_id: int, *, pay: bool = False) -> dict[str, int]:
    """An issued contract of a selected bid of `owner_id` in the 2015 call (tests/contracts/factories_contracts.py),
    with a payment on its first milestone when `pay`; returns the ids the placeholders need."""
    from datetime import date
    from decimal import Decimal

    from accounts.models import User
    from contracts import payments
    from core.db import db
    from tests.contracts.factories_contracts import ISSUED_AT, issued_contract, selected_bid

    with app.app_context():
        admin = db.session.scalars(select(User).where(User.email == "contracts-admin@example.org")).first()
        bid = selected_bid(event_id, owner_id)
        contract = issued_contract(bid, admin=admin, upload_dir=app.config["UPLOAD_DIR"])
        first = contract.milestones[0]
        payment = payments.record_payment(first, amount=Decimal("1000.00"), received_on=date(2015, 6, 10),
                                          reference="T-1", note="", idempotency_key="matrix", actor=admin,
                                          now=ISSUED_AT)[0] if pay else None
        db.session.commit()
        return {"contract": contract.id, "milestone": first.id, "bid": bid.id,
                "payment": payment.id if payment else 0}


@pytest.mark.parametrize("endpoint, method, url, role, expected", ROWS,
                         ids=[f"{r[0]}-{r[1]}-{r[2]}-{r[3]}" for r in ROWS])
def test_access(app, make, event, practice, endpoint, method, url, role, expected):
    client = app.test_client()
    other = make.user(roles=("bidder",), email="other-party@example.org")
    caller = None
    if role != "anon":
        user_email = f"{role}-caller@example.org"
        caller = make.user(roles=(role,), email=user_email)
        assert login(client, user_email).status_code == 302
    other_bid, other_doc = _draft_bid(app, other, practice) if "_bid}" in url else (0, 0)
    own_bid = _draft_bid(app, caller if role == "bidder" else other, practice)[0] if "{own_bid}" in url else 0
    contract = own = {"contract": 0, "milestone": 0, "bid": 0, "payment": 0}
    if "{contract}" in url or "{own_contract" in url:
        make.user(roles=("admin",), email="contracts-admin@example.org")
        if "{contract}" in url:
            contract = _contract(app, other, event, pay="{payment}" in url)
        if "{own_contract" in url:
            own = _contract(app, caller if role == "bidder" else other, event)
    target = url.format(slug="fwwcm-2015", practice="fwwcm-practice", other_user=other, other_bid=other_bid,
                        other_doc=other_doc, own_bid=own_bid, contract=contract["contract"],
                        milestone=contract["milestone"], payment=contract["payment"], own_contract=own["contract"],
                        own_milestone=own["milestone"], own_contract_bid=own["bid"])
    response = client.open(target, method=method)
    response.close()
    assert response.status_code == expected, f"{method} {target} as {role}: {response.status_code}"
