"""The contract pages and the contract API, driven through the test client as the secretariat and the organizer."""

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from html import unescape

import pytest
from sqlalchemy import select

from accounts.models import User
from bids.data import NO_GUARANTEE
from contracts import queries
from contracts.models import Contract, MatchResult, Payment
from core.db import db
from core.money import format_day
from evidence.audit import AuditEntry, Checkpoint, verify_chain
from tests.conftest import login
from tests.contracts.factories_contracts import milestone, selected_bid
from tests.pdfs import valid_pdf
from tests.signing import sign, trusted_signer

# The contracts issued through these pages are never read back here (tests/contracts/test_contracts_pdf.py reads them).
pytestmark = pytest.mark.pdf_layout_once("contract.html")


def email_of(app, user_id: int) -> str:
    with app.app_context():
        return db.session.get(User, user_id).email


def as_user(app, user_id: int):
    client = app.test_client()
    assert login(client, email_of(app, user_id)).status_code == 302
    return client


def get(client, url, status=200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:2000])
    text = response.get_data(as_text=True)
    response.close()
    return text


def post(client, url, data=None, status=302):
    response = client.post(url, data=data or {})
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:3000])
    text = response.get_data(as_text=True)
    location = response.headers.get("Location")
    response.close()
    return text, location


def one_time_key(html: str) -> str:
    return re.search(r'name="idempotency_key"[^>]*value="([^"]+)"', html).group(1)


def milestone_id(app, contract_id: int, key: str) -> int:
    with app.app_context():
        return milestone(db.session.get(Contract, contract_id), key).id


@pytest.fixture
def people(cf):
    return {"admin": cf.admin(), "organizer": cf.organizer(), "rival": cf.organizer()}


# ------------------------------------------------------------------------------------ making a contract


def test_the_secretariat_generates_reads_and_issues_the_contract_of_the_selected_bid(app, event, people):
    with app.app_context():
        bid_id = selected_bid(event, people["organizer"]).id
        db.session.commit()
    admin = as_user(app, people["admin"])
    index = get(admin, "/contracts/")
    assert "Selected bids without a contract" in index and f"/bids/{bid_id}/contract/new" in index
    assert '<a href="/contracts/">Contracts</a>' in index  # the nav entry
    _, location = post(admin, f"/bids/{bid_id}/contract/new", {})
    contract_id = int(location.rsplit("/", 1)[1])
    page = get(admin, location)
    assert "Draft" in page and "set when issued" in page and "Issue the contract" in page
    assert "Chess Federation of Ukraine" in get(admin, f"/contracts/{contract_id}/preview")
    # the organizer does not see FIDE's draft
    organizer = as_user(app, people["organizer"])
    get(organizer, f"/contracts/{contract_id}", 404)

    form = get(admin, f"/contracts/{contract_id}/issue")
    assert "The stipend of the Chairman of the Appeals Committee (Art. 14.5), €7,500.00" in form
    # Issued after 2015, every date of the 2015 call has passed: none is proposed, and the form asks for the dates
    # the contract sets in place of those the regulations fixed (contracts.rules.past_due_dates).
    assert 'value="2015-10-29"' not in form
    assert "Art. 15.6.2 fixed 30 June 2015" in form
    later = datetime.now(UTC).date() + timedelta(days=20)
    dates = {name: later.isoformat() for name in re.findall(r'name="(due_[A-Za-z_0-9]+)"', form)}
    post(admin, f"/contracts/{contract_id}/issue", dates)
    page = get(admin, f"/contracts/{contract_id}?as_of={(later - timedelta(days=10)).isoformat()}")
    assert "Issued, awaiting countersignature" in page and f"Due in 10 days, by {format_day(later)}" in page
    assert "€306,500.00" in page  # what the organizer owes in all (fixed amounts)
    # now the organizer sees it, from its own list and from its bid
    mine = get(organizer, "/my/contracts")
    assert f"/contracts/{contract_id}" in mine
    response = organizer.get(f"/bids/{bid_id}/contract")
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/contracts/{contract_id}")
    response.close()
    own = get(organizer, f"/contracts/{contract_id}")
    assert f"Instalment 1, due {format_day(later)}" in own and "Record money received" not in own
    assert "Secretariat" not in own


def test_a_bid_that_is_not_selected_gets_no_contract_and_the_page_says_why(app, event, people):
    with app.app_context():
        bid = selected_bid(event, people["organizer"])
        bid.status = "shortlisted"
        db.session.commit()
        bid_id = bid.id
    admin = as_user(app, people["admin"])
    page = get(admin, f"/bids/{bid_id}/contract/new", 409)
    assert "Art. 15.6.1: a contract is signed with the organizer the Presidential Board selected" in page
    assert "is shortlisted, not selected" in page
    post(admin, f"/bids/{bid_id}/contract/new", {})
    with app.app_context():
        assert db.session.scalars(select(Contract)).all() == []


def test_without_a_guarantee_the_issue_form_asks_for_the_dates_citing_15_6_1(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"], issue=False,
                              bank_guarantee=NO_GUARANTEE)
    admin = as_user(app, people["admin"])
    form = get(admin, f"/contracts/{contract_id}/issue")
    assert "Art. 15.6.2 sets payment deadlines only for an organizer who puts forward a bank guarantee" in form
    assert "One date for every payment left blank" in form
    page, _ = post(admin, f"/contracts/{contract_id}/issue", {}, status=422)
    assert "Art. 15.6.1: the regulations set no deadline for prize fund for the players" in page
    assert "things need your attention" in page
    soon, later = (datetime.now(UTC).date() + timedelta(days=d) for d in (30, 60))
    post(admin, f"/contracts/{contract_id}/issue", {"same_date": soon.isoformat(), "due_travel_1": later.isoformat()})
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "issued"
        assert milestone(contract, "prize_fund").due == soon
        assert milestone(contract, "travel_1").due == later
        assert milestone(contract, "signal_blocker").due is None  # at cost: no date required


def test_the_countersigned_pdf_is_uploaded_and_a_correction_links_what_it_replaces(app, event, people, cf,
                                                                                     signing_ca):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (__import__("io").BytesIO(b"not a pdf"), "signed.pdf")}, content_type="multipart/form-data")
    assert response.status_code == 422
    assert "is not a PDF" in response.get_data(as_text=True)
    response.close()
    page = get(admin, f"/contracts/{contract_id}")
    assert "Countersignature: none yet." in page and "Gambit test signer (FIDE test)" in page
    # A rewrite (here a fresh, unsigned PDF) is refused with the reason.
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (__import__("io").BytesIO(valid_pdf()), "rewrite.pdf")}, content_type="multipart/form-data")
    assert ("rewrite.pdf does not contain the contract Gambit issued: it was made anew (printed to PDF, scanned or "
            "re-saved), so FIDE&#39;s signed version is gone and it carries no signature at all.") in \
        response.get_data(as_text=True)
    response.close()
    with app.app_context():
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
    signed = sign(issued, trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"), field="Organizer")
    # The test CA is not on the trust list here: the signature is accepted only explicitly, with a reason.
    response = admin.post(f"/contracts/{contract_id}/sign", data={
        "file": (__import__("io").BytesIO(signed), "signed.pdf"),
        "accept_untrusted": "Lviv Chess's CA is being added; the signatory confirmed by letter of 2 July."},
        content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)[-2000:]
    response.close()
    page = get(admin, f"/contracts/{contract_id}")
    assert "Countersigned PDF filed" in page
    assert ("The organizer's signature is not trusted; the secretariat accepted it explicitly" in page
            and "the signatory confirmed by letter of 2 July." in page)
    # Both signatures, in words (the test CA is not on the trust list here).
    assert re.search(r"Gambit \(FIDE secretariat\): signed by Gambit test signer \(FIDE test\) on .*, intact, not "
                     r"trusted", page)
    assert re.search(r"Countersignature: signed by Anna Organizer \(Lviv Chess\) on .*, intact, not trusted", page)
    response = admin.get(f"/contracts/{contract_id}/signed.pdf")
    assert response.status_code == 200 and response.data == signed
    response.close()

    page, _ = post(admin, f"/contracts/{contract_id}/correct", {"reason": ""}, status=422)
    assert "Say what the correction changes and why" in page
    _, location = post(admin, f"/contracts/{contract_id}/correct",
                       {"reason": "The stipends are paid at the closing ceremony"})
    new_id = int(location.rsplit("/", 1)[1])
    page = get(admin, location)
    assert f"replacing <a href=\"/contracts/{contract_id}\">" in page
    assert "The stipends are paid at the closing ceremony" in page
    post(admin, f"/contracts/{new_id}/issue", {})
    with app.app_context():
        old, new = db.session.get(Contract, contract_id), db.session.get(Contract, new_id)
        assert (old.status, new.status, new.replaces_id, new.version) == ("superseded", "issued", old.id, 2)
    assert "This version replaces" in get(admin, f"/contracts/{new_id}/preview")


# --------------------------------------------------------------------------------------------- payments


def test_a_refused_payment_reports_every_problem_at_once(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    mid = milestone_id(app, contract_id, "instalment_1")
    url = f"/contracts/{contract_id}/milestones/{mid}"
    admin = as_user(app, people["admin"])
    both = {"received_on": "2099-01-01", "amount": "900000.00", "reference": "UBS 1", "note": "",
            "idempotency_key": one_time_key(get(admin, url))}
    page, _ = post(admin, f"{url}/payments", both, status=422)
    assert "The day the money was received cannot be after today" in page
    assert "a payment of €900,000.00 would exceed it." in page
    # A day the form cannot read is reported with the amount's problem, not before it.
    unreadable = {**both, "received_on": "31/06/2015"}
    page, _ = post(admin, f"{url}/payments", unreadable, status=422)
    assert "a payment of €900,000.00 would exceed it." in page
    assert 'value="31/06/2015"' in page and 'value="900000.00"' in page
    with app.app_context():
        assert db.session.scalars(select(Payment)).all() == []


def test_a_fully_paid_milestone_offers_no_payment_form_and_says_why(app, event, people, cf):
    """Issue 36: a fully paid milestone still offered "Record money received"; its dates wrapped in the table."""
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    mid = milestone_id(app, contract_id, "instalment_1")
    url = f"/contracts/{contract_id}/milestones/{mid}"
    admin = as_user(app, people["admin"])
    page = get(admin, url)
    assert "Record money received" in page
    outstanding = re.search(r"Outstanding: €([\d,]+\.\d\d)\.", page).group(1).replace(",", "")
    post(admin, f"{url}/payments", {"received_on": "2015-06-20", "amount": outstanding, "reference": "UBS 4711",
                                    "note": "", "idempotency_key": one_time_key(page)})
    page = get(admin, url)
    assert "Record money received" not in page and f"{url}/payments" not in page
    assert ("Instalment 1, due 30 June 2015 is fully paid: nothing is outstanding, so no further payment can be "
            "recorded against it. To correct an entry, reverse it above.") in page
    assert '<td class="key nowrap" data-label="Received on">20 June 2015</td>' in page
    assert '<td data-label="Recorded"><span class="nowrap">' in page
    css = admin.get("/static/css/gambit.css")
    assert ".nowrap { white-space: nowrap; }" in css.get_data(as_text=True)
    css.close()


def test_recording_payments_part_over_twice_and_reversed(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    mid = milestone_id(app, contract_id, "instalment_1")
    url = f"/contracts/{contract_id}/milestones/{mid}"
    admin = as_user(app, people["admin"])
    key = one_time_key(get(admin, url))
    data = {"received_on": "2015-06-20", "amount": "60000.00", "reference": "UBS 4711", "note": "",
            "idempotency_key": key}
    post(admin, f"{url}/payments", data)
    recorded = get(admin, url)
    # Issue 14, item 15: the day as the rest of the app writes it, not 2015-06-20.
    # In plain words: the log's head is given as a receipt to keep, with what it is for, not as a "checkpoint".
    # Issue 36: the message ends with what was recorded; the receipt (64 hex digits) stands apart, says what it is
    # and is in a field to copy, shown this once.
    assert ("€60,000.00 received on 20 June 2015 is recorded against instalment 1, due 30 June 2015. The audit log "
            "keeps who recorded it and when.</p>") in recorded
    assert ('<label for="receipt-code">Audit receipt (shown only now): keep a copy outside Gambit. Later, '
            '<code>flask audit verify --expect</code> with it proves that the audit log was not rewritten since.'
            '</label>') in recorded
    assert "checkpoint" not in recorded.lower()
    assert 'id="receipt-code"' not in get(admin, url)  # shown once
    assert "Reason for reversing the payment of €60,000.00 received on 20 June 2015</label>" in recorded
    assert "reversing entry" not in recorded
    with app.app_context():
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "payment.record")).one()
        shown = re.search(r'id="receipt-code" class="receipt-code" readonly value="(\d+:[0-9a-f]{64})"',
                          recorded).group(1)
        assert shown == f"{entry.id}:{entry.hash}" and verify_chain(expect=Checkpoint.parse(shown)).ok
    post(admin, f"{url}/payments", data)  # a double click: the same key
    page = get(admin, url)
    assert "already recorded (the form was sent more than once); it is recorded once" in page
    with app.app_context():
        assert len(db.session.scalars(select(Payment)).all()) == 1
    assert one_time_key(page) != key  # a fresh form, a fresh key

    over = {**data, "amount": "40000.01", "idempotency_key": one_time_key(page)}
    page, _ = post(admin, f"{url}/payments", over, status=422)
    assert ("Art. 15.6.2: €40,000.00 is outstanding on instalment 1, due 30 June 2015; a payment of €40,000.01 "
            "would exceed it.") in page
    assert 'value="40000.01"' in page and 'value="UBS 4711"' in page  # nothing typed is lost

    bad, _ = post(admin, f"{url}/payments", {**data, "amount": "40,000", "idempotency_key": "x"}, status=422)
    assert "do not use thousand separators" in bad

    with app.app_context():
        payment_id = db.session.scalars(select(Payment)).one().id
    post(admin, f"/contracts/{contract_id}/payments/{payment_id}/reverse",
         {"reason": "Belongs to another milestone", "idempotency_key": "rev-1"})
    page = get(admin, url + "?as_of=2015-07-05")
    assert "Reversal of the payment of €60,000.00 received on 20 June 2015: Belongs to another milestone" in page
    assert "reversed" in page and "Reversal of entry" not in page
    assert "Overdue by 5 days" in page
    assert '/reverse"' not in page  # the payment is reversed, and a reversal is never reversed: no form offered

    organizer = as_user(app, people["organizer"])
    own = get(organizer, url)
    assert "What FIDE has recorded" in own and "UBS 4711" in own and "Record money received" not in own
    response = organizer.post(f"{url}/payments", data={**data, "idempotency_key": "o"})
    assert response.status_code == 403
    response.close()


def test_the_status_page_takes_a_day_and_explains_a_wrong_one(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    organizer = as_user(app, people["organizer"])
    assert "Overdue by 2 days" in get(organizer, f"/contracts/{contract_id}?as_of=2015-07-02")
    # Issue 14, item 15: a large count with a thousands separator, as Babel writes numbers elsewhere.
    assert "Overdue by 4,110 days" in get(organizer, f"/contracts/{contract_id}?as_of=2026-09-30")
    assert "Not yet due: due 30 June 2015, in 60 days" in get(organizer, f"/contracts/{contract_id}?as_of=2015-05-01")
    page = get(organizer, f"/contracts/{contract_id}?as_of=2015-02-30", 400)
    assert "as_of must be a date written YYYY-MM-DD, for example 2015-06-30 (you gave &#39;2015-02-30&#39;)" in page
    assert "The page shows today's status." in page


def test_the_match_result_turns_the_prize_balances_into_milestones(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    form = get(admin, f"/contracts/{contract_id}/result")
    assert "GM Hou Yifan (China)" in form and "the tie-break games (Art. 13.1: 55/45)" in form
    page, _ = post(admin, f"/contracts/{contract_id}/result",
                   {"winner": "UKR", "decided_in": "tiebreak", "completed_on": "2015-10-27", "confirm": "y"},
                   status=422)
    assert "the tie-break games are played on 28 October 2015" in page
    post(admin, f"/contracts/{contract_id}/result", {"winner": "UKR", "decided_in": "tiebreak",
                                                     "completed_on": "2015-10-28", "confirm": "y"})
    page = get(admin, f"/contracts/{contract_id}?as_of=2015-11-01")
    assert "The prize balance of Mariya Muzychuk" in page and "The prize balance of Hou Yifan" in page
    with app.app_context():
        c = db.session.get(Contract, contract_id)
        # 190,000 split 55/45 after Hou Yifan's 5% (10,000): 104,500 and 85,500 + 10,000, less the advances
        assert milestone(c, "prize_balance_UKR").amount == Decimal("54500.00")
        assert milestone(c, "prize_balance_CHN").amount == Decimal("45500.00")
        assert milestone(c, "prize_balance_UKR").due == date(2015, 11, 7)


def test_recording_the_match_result_asks_for_a_confirmation_and_the_page_is_then_titled_for_the_deductions(
        app, event, people, cf):
    """Issue 36: the result, irreversible, was recorded with no confirmation; afterwards the page that holds the
    deductions was still titled "Record the match result", and it said "won by CHN"."""
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    url = f"/contracts/{contract_id}/result"
    form = get(admin, url)
    assert "<h1>Record the match result</h1>" in form
    assert ('data-confirm="Record this result? It cannot be changed afterwards: each player\'s prize follows from '
            'it, and the balances become milestones FIDE pays."') in form
    result = {"winner": "CHN", "decided_in": "tiebreak", "completed_on": "2015-10-28"}
    page, _ = post(admin, url, result, status=422)
    assert ("Tick the box to confirm the result: once recorded it cannot be changed, and each player&#39;s prize "
            "balance becomes a milestone FIDE pays.") in page
    assert 'value="2015-10-28"' in page  # nothing typed is lost
    with app.app_context():
        assert db.session.scalars(select(MatchResult)).all() == []
    post(admin, url, {**result, "confirm": "y"})
    page = get(admin, url)
    assert "<title>Match result and deductions" in page and "<h1>Match result and deductions</h1>" in page
    assert "Record the match result" not in page
    assert "won by GM Hou Yifan (China) in the tie-break games" in page
    contract_page = get(admin, f"/contracts/{contract_id}")
    assert f'href="{url}">Match result and deductions</a>' in contract_page
    assert "won by GM Hou Yifan (China) in the tie-break games" in contract_page


# -------------------------------------------------------------------------------------------------- API


def test_the_api_gives_amounts_as_strings_and_iso_dates_to_the_organizer(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    organizer = as_user(app, people["organizer"])
    response = organizer.get(f"/api/v1/contracts/{contract_id}/milestones?as_of=2015-07-01")
    assert response.status_code == 200
    body = response.get_json()
    response.close()
    first = body["milestones"][0]
    assert body["as_of"] == "2015-07-01" and first["key"] == "instalment_1"
    assert first["amount"] == "100000.00" and first["due"] == "2015-06-30"
    assert first["status"]["state"] == "overdue" and first["status"]["outstanding"] == "100000.00"
    assert body["totals"]["organizer_amount"] == "306500.00"

    response = organizer.get(f"/api/v1/contracts/{contract_id}/milestones?as_of=yesterday")
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("as_of must be a date written YYYY-MM-DD")
    response.close()

    response = organizer.get(f"/api/v1/contracts/{contract_id}")
    body = response.get_json()
    response.close()
    assert body["prize_fund"] == "200000.00" and body["opening_date"] == "2015-10-11"
    assert body["status"] == "issued" and len(body["pdf_sha256"]) == 64
    assert body["parties"] == {"fide": "World Chess Federation (FIDE)", "organizer": "Chess Federation of Ukraine"}

    rival = as_user(app, people["rival"])
    response = rival.get(f"/api/v1/contracts/{contract_id}")
    assert response.status_code == 404 and response.get_json()["status"] == 404
    response.close()


def test_the_openapi_document_lists_the_contract_paths(client):
    response = client.get("/api/v1/openapi.json")
    paths = response.get_json()["paths"]
    response.close()
    assert "/contracts/{contract_id}" in paths and "/contracts/{contract_id}/milestones" in paths
    params = paths["/contracts/{contract_id}/milestones"]["get"]["parameters"]
    assert any(p["name"] == "as_of" and p["in"] == "query" for p in params)


def test_two_entries_reversed_from_one_page_are_two_reversals(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    mid = milestone_id(app, contract_id, "instalment_1")
    url = f"/contracts/{contract_id}/milestones/{mid}"
    admin = as_user(app, people["admin"])
    for i, amount in enumerate(("100.00", "200.00")):
        key = one_time_key(get(admin, url))
        post(admin, f"{url}/payments", {"received_on": f"2015-06-2{i}", "amount": amount, "idempotency_key": key})
    page = get(admin, url)
    forms = re.findall(r'action="/contracts/\d+/payments/(\d+)/reverse".*?name="idempotency_key" value="([^"]+)"',
                       page, re.S)
    assert len(forms) == 2 and forms[0][1] != forms[1][1]
    for payment_id, key in forms:
        post(admin, f"/contracts/{contract_id}/payments/{payment_id}/reverse",
             {"reason": "test", "idempotency_key": key})
    with app.app_context():
        kinds = sorted(p.kind for p in db.session.scalars(select(Payment)))
    assert kinds == ["payment", "payment", "reversal", "reversal"]


def test_the_organizer_following_its_bids_link_before_the_contract_is_issued_is_told_it_is_coming(app, event, people,
                                                                                                 cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"], issue=False)
    with app.app_context():
        bid_id = db.session.get(Contract, contract_id).bid_id
    organizer = as_user(app, people["organizer"])
    response = organizer.get(f"/bids/{bid_id}/contract")
    assert response.status_code == 302 and response.headers["Location"].endswith("/my/contracts")
    response.close()
    assert "FIDE is preparing the contract with you" in get(organizer, "/my/contracts")
    get(as_user(app, people["rival"]), f"/bids/{bid_id}/contract", 404)


def test_the_list_of_contracts_says_what_is_overdue_and_what_falls_due_next(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])

    def row(as_of):
        page = get(admin, f"/contracts/?as_of={as_of}")
        assert '<th scope="col">Overdue</th><th scope="col">Next due</th>' in page
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.search(
            rf'<tr><td[^>]*><a href="/contracts/{contract_id}">.*?</tr>', page, re.S).group(0))).strip()

    assert row("2015-06-15").endswith("€306,500.00 nothing overdue 30 June 2015: instalment 1, due 30 June 2015, "
                                      "€100,000.00")
    assert row("2015-07-05").endswith("€306,500.00 overdue €100,000.00 from the organizer (1 milestone) "
                                      "31 August 2015: instalment 2, due 31 August 2015, €197,500.00")


def test_a_milestones_breadcrumbs_go_through_the_contracts(app, event, people, cf):
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    mid = milestone_id(app, contract_id, "instalment_1")
    url = f"/contracts/{contract_id}/milestones/{mid}"
    crumbs = re.search(r'<nav[^>]*aria-label="Breadcrumb".*?</nav>', get(as_user(app, people["admin"]), url), re.S)
    assert '<a href="/contracts/">Contracts</a>' in crumbs.group(0)
    crumbs = re.search(r'<nav[^>]*aria-label="Breadcrumb".*?</nav>', get(as_user(app, people["organizer"]), url),
                       re.S)
    assert '<a href="/my/contracts">Contracts</a>' in crumbs.group(0)


# ------------------------------------------------------------------------------ no payment overdue at issue


def test_a_contract_is_not_issued_with_a_payment_already_overdue(app, event, people, cf):
    """Issued today, the 2015 call's dates have passed: a date the contract sets cannot be past (a sanity check),
    and each date the regulations fixed (Art. 15.6.2, 13.4) needs the contract's own date in its place."""
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"], issue=False)
    admin = as_user(app, people["admin"])
    today = datetime.now(UTC).date()
    form = get(admin, f"/contracts/{contract_id}/issue")
    names = re.findall(r'name="(due_[A-Za-z_0-9]+)"', form)
    assert {"due_instalment_1", "due_instalment_2", "due_advance_UKR"} <= set(names)
    dates = {name: (today + timedelta(days=20)).isoformat() for name in names}
    page, _ = post(admin, f"/contracts/{contract_id}/issue", {**dates, "due_instalment_1": "",
                                                               "due_stipend_payout_1": "2015-10-29"}, status=422)
    page = unescape(page)
    assert (f"Art. 15.6.2: the regulations fix 30 June 2015 for instalment 1, which is already past on "
            f"{format_day(today)}, the day the contract is issued; the payment would be overdue from the start. The "
            f"contract sets a new date in its place (Art. 15.6.1): enter the date by which it is due, from "
            f"{format_day(today)} on.") in page
    assert (f"Sanity check: the stipend of the Chairman of the Appeals Committee cannot be due on 29 October 2015 "
            f"(you entered 2015-10-29): that is before {format_day(today)}, the day the contract is issued, so it "
            f"would be overdue from the start. Enter a date from {format_day(today)} on.") in page
    with app.app_context():
        assert db.session.get(Contract, contract_id).status == "draft"
    post(admin, f"/contracts/{contract_id}/issue", dates)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "issued"
        assert min(m.due for m in contract.milestones if m.due is not None) >= today
        assert milestone(contract, "instalment_1").due == today + timedelta(days=20)
