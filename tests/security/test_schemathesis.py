"""Issue 8: schemathesis against /api/v1/openapi.json, in-process through the WSGI app, with an admin's API token.

Two runs: cases generated from the document alone (slugs and ids at random, mostly answering 404), and cases
whose path parameters name real rows (the 2015 call decided, a bid, a contract with a payment) with the rest
generated, so the documented 200 answers are checked too. Checks: no server error, the status code is
documented, the content type and the body conform to the document. Bounded and deterministic: at most 20
examples per operation, no deadline, derandomized.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from api.openapi import openapi_document
from core.db import db, utcnow
from tests.security.hostile import World

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# The rows are made once per test and only read (the API changes nothing), so sharing them between the
# examples of one test is what is wanted: hence the function-scoped fixture health check is off.
BOUNDED = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def api_rows(app, make, event, practice, monkeypatch):
    """The 2015 call decided between three scored bids, a contract with a payment, and the admin's API token."""
    import io

    from pypdf import PdfWriter

    from accounts.models import User
    from accounts.services import issue_api_token

    out = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.write(out)
    monkeypatch.setattr("evidence.pdf.html_to_pdf", lambda html, *a, **k: out.getvalue())  # WeasyPrint: seconds

    world = World(app, make, event, practice)
    bids = world.decided_call()
    contract_id, _ = world.contract(pay=True)
    with app.app_context():
        token = issue_api_token(db.session.get(User, world.admin_id), actor=None, now=utcnow())
        db.session.commit()
    return {"token": token, "slug": "fwwcm-2015", "bid_id": bids[0], "contract_id": contract_id}


# The document the app serves (test_the_served_document_is_the_one_tested checks it is this one), loaded when the
# module is collected: schemathesis' lazy `from_fixture` reads pytest's private `Node._nodeid`, gone in pytest 9.
schema = schemathesis.openapi.from_dict(openapi_document())


def test_the_served_document_is_the_one_tested(client):
    assert client.get("/api/v1/openapi.json").get_json() == openapi_document()


@schema.parametrize()
@BOUNDED
def test_generated_requests_conform_to_the_document(app, case, api_rows):
    case.call_and_validate(app=app, headers={"Authorization": f"Bearer {api_rows['token']}"}, checks=CHECKS)


def test_requests_for_real_rows_conform_to_the_document(app, api_rows):
    auth = {"Authorization": f"Bearer {api_rows['token']}"}
    statuses: dict[str, set[int]] = {}

    def run(operation) -> None:
        real = {p.name: api_rows[p.name] for p in operation.path_parameters}

        @BOUNDED
        @given(case=operation.as_strategy(path_parameters=real))
        def check(case):
            response = case.call_and_validate(app=app, headers=auth, checks=CHECKS)
            statuses.setdefault(operation.label, set()).add(response.status_code)

        check()

    for result in schema.get_all_operations():
        run(result.ok())
    assert len(statuses) >= 9, statuses
    not_ok = sorted(label for label, codes in statuses.items() if 200 not in codes)
    assert not not_ok, f"never answered 200 for real rows: {not_ok} ({statuses})"
