"""contracts/services.py against the database: generating and issuing contracts, frozen records and their check
constraints, corrections, payments (part, over, reversed, sent twice), the match result, the signed PDF."""

import hashlib
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from accounts.models import User
from contracts import payments as contract_payments
from contracts import queries, results, services
from contracts.models import Contract, FrozenRecordError, MatchResult, Milestone, Payment
from contracts.rules.result import MatchOutcome
from contracts.rules.tracker import MilestoneState
from core.db import db
from evidence.audit import AuditEntry
from tests.contracts.factories_contracts import (
    ISSUED_AT,
    fake_render,
    issued_contract,
    milestone,
    proposed_dates,
    selected_bid,
)
from tests.signing import sign, trusted_signer

D = Decimal
LATER = datetime(2015, 7, 15, 9, 0, tzinfo=UTC)


@pytest.fixture
def admin(ctx, make):
    return db.session.get(User, make.user(roles=("admin",), email="secretariat@example.org"))


@pytest.fixture
def bid(ctx, event, make):
    return selected_bid(event, make.user(email="organizer@example.org"))


@pytest.fixture
def contract(app, bid, admin):
    return issued_contract(bid, admin=admin, upload_dir=app.config["UPLOAD_DIR"])


def pay(m, amount, on, *, admin, key=None, now=LATER):
    return contract_payments.record_payment(m, amount=D(amount), received_on=on, reference="UBS-1", note="",
                                            idempotency_key=key or f"k-{amount}-{on}", actor=admin, now=now)


def actions():
    return [e.action for e in db.session.scalars(select(AuditEntry).order_by(AuditEntry.id))]


# ----------------------------------------------------------------------------------------------- create


@pytest.mark.parametrize("status", ["submitted", "shortlisted", "not_selected", "rejected", "withdrawn"])
def test_a_contract_is_only_generated_for_the_selected_bid(bid, admin, status):
    bid.status = status
    if status == "rejected":
        bid.rejection_reason = "Art. 15.3"
    db.session.flush()
    with pytest.raises(services.ContractError) as exc:
        services.create_contract(bid, actor=admin, now=ISSUED_AT)
    assert str(exc.value).startswith("Art. 15.6.1: a contract is signed with the organizer the Presidential Board "
                                     "selected")
    assert f"is {bid.state.label.lower()}, not selected" in str(exc.value)
    assert db.session.scalars(select(Contract)).all() == []


def test_the_draft_records_the_regulation_and_the_bids_figures(bid, admin):
    draft = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    assert draft.status == "draft" and draft.version == 1 and draft.milestones == []
    assert draft.regulation_version_id == bid.event.regulation_version_id
    terms = draft.terms
    assert terms["regulation"]["sha256"] == bid.event.regulation.sha256
    assert terms["inputs"]["prize_fund"] == "200000.00" and terms["inputs"]["venue_country"] == "UA"
    assert draft.reference == f"FWWCM-2015-{bid.id}-v1"
    assert actions()[-1] == "contract.create"


def test_a_bid_gets_one_contract_and_changes_go_through_a_correction(bid, admin, contract):
    with pytest.raises(services.ContractError, match="already has a contract .* prepare a correction"):
        services.create_contract(bid, actor=admin, now=ISSUED_AT)


def test_a_discarded_draft_leaves_room_for_a_new_one(bid, admin):
    draft = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    services.discard_contract(draft, actor=admin, now=ISSUED_AT)
    again = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    assert again.version == 2 and draft.status == "discarded" and draft.discarded_at is not None


# ------------------------------------------------------------------------------------------------ issue


def test_issuing_freezes_the_terms_stores_the_pdf_and_creates_the_milestones(app, contract):
    assert contract.status == "issued" and contract.issued_at == ISSUED_AT
    path = queries.pdf_path(app.config["UPLOAD_DIR"], contract)
    assert path.read_bytes().startswith(b"%PDF-") and len(contract.pdf_sha256) == 64
    assert path.name == contract.pdf_stored_name and path.name.endswith(".pdf") and len(path.stem) == 32
    keys = [m.key for m in contract.milestones]
    assert keys[:2] == ["instalment_1", "instalment_2"] and "advance_CHN" in keys and "signal_blocker" in keys
    first = milestone(contract, "instalment_1")
    assert (first.amount, first.due, first.article, first.payer_name) == (
        D("100000.00"), date(2015, 6, 30), "15.6.2", "Chess Federation of Ukraine")
    assert json.loads(contract.terms_json)["due_dates"]["stipend_payout_1"] == "2015-10-29"
    assert actions()[-1] == "contract.issue"


def test_without_a_guarantee_the_issue_asks_for_every_date_citing_15_6_1(app, ctx, event, make, admin):
    from bids.data import NO_GUARANTEE

    bid = selected_bid(event, make.user(), bank_guarantee=NO_GUARANTEE)
    draft = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    with pytest.raises(services.ContractError) as exc:
        services.issue_contract(draft, due_dates=proposed_dates(draft), actor=admin, now=ISSUED_AT,
                                upload_dir=app.config["UPLOAD_DIR"], render=fake_render)
    errors = exc.value.errors
    assert set(errors) >= {"due_prize_fund", "due_fide_contribution", "due_travel_1", "due_home_compensation"}
    assert errors["due_prize_fund"] == (
        "Art. 15.6.1: the regulations set no deadline for prize fund for the players, net of any local taxes; FIDE "
        "pays out the prizes (no bank guarantee is offered, so the deadlines of Art. 15.6.2 do not apply); the "
        "contract must set it. Enter the date by which it is due.")
    assert draft.status == "draft"
    dates = {**proposed_dates(draft), **{k[len("due_"):]: date(2015, 7, 31) for k in errors}}
    services.issue_contract(draft, due_dates=dates, actor=admin, now=ISSUED_AT, upload_dir=app.config["UPLOAD_DIR"],
                            render=fake_render)
    prize = milestone(draft, "prize_fund")
    assert prize.due == date(2015, 7, 31) and prize.amount == D("200000.00") and prize.kind == "to_fide"
    assert "as this contract sets it" in prize.due_rule


def test_an_issued_contract_never_changes(contract):
    contract.terms_json = contract.terms_json.replace("200000.00", "100000.00")
    with pytest.raises(FrozenRecordError, match="cannot change"):
        db.session.flush()
    db.session.rollback()


@pytest.mark.parametrize("column, value", [("pdf_sha256", "0" * 64), ("issued_at", LATER),
                                           ("regulation_version_id", 999)])
def test_the_hash_the_time_and_the_regulation_of_an_issued_contract_are_frozen(contract, column, value):
    setattr(contract, column, value)
    with pytest.raises(FrozenRecordError):
        db.session.flush()
    db.session.rollback()


def test_milestones_and_payments_are_never_edited_or_deleted(contract, admin):
    m = milestone(contract, "instalment_1")
    with pytest.raises(FrozenRecordError), db.session.begin_nested():
        m.amount = D("1.00")
        db.session.flush()
    payment, _ = pay(m, "1000.00", date(2015, 6, 20), admin=admin)
    with pytest.raises(FrozenRecordError, match="Reverse it"), db.session.begin_nested():
        payment.amount = D("10.00")
        db.session.flush()
    with pytest.raises(FrozenRecordError, match="never deleted"), db.session.begin_nested():
        db.session.delete(payment)
        db.session.flush()
    with pytest.raises(FrozenRecordError), db.session.begin_nested():
        db.session.delete(contract)
        db.session.flush()
    assert m.amount == D("100000.00") and payment.amount == D("1000.00")


@pytest.mark.parametrize("sql", [
    "UPDATE contract SET pdf_sha256 = NULL WHERE id = :id",
    "UPDATE contract SET status = 'signed' WHERE id = :id",
    "UPDATE contract SET status = 'superseded' WHERE id = :id",
    "UPDATE contract SET replaces_id = NULL, correction_reason = 'x' WHERE id = :id",
])
def test_the_database_ties_each_state_to_the_columns_it_needs(contract, sql):
    with pytest.raises(IntegrityError), db.session.begin_nested():
        db.session.execute(text(sql), {"id": contract.id})


@pytest.mark.parametrize("values", [
    {"kind": "reversal", "amount": D("-5.00")},                       # no payment reversed, no reason
    {"kind": "payment", "amount": D("-5.00")},                        # a payment is positive
    {"kind": "payment", "amount": D("0.00")},
    {"kind": "carried_over", "amount": D("5.00")},                    # carried from nowhere
])
def test_the_database_refuses_an_entry_that_breaks_the_ledger(contract, values):
    m = milestone(contract, "instalment_1")
    with pytest.raises(IntegrityError), db.session.begin_nested():
        db.session.add(Payment(milestone_id=m.id, received_on=date(2015, 6, 1), idempotency_key="raw",
                               recorded_at=LATER, **values))
        db.session.flush()


def test_only_an_at_cost_item_goes_without_a_date(contract):
    with pytest.raises(IntegrityError), db.session.begin_nested():
        db.session.add(Milestone(contract_id=contract.id, key="x", kind="to_fide", title="x", article="13.1",
                                 description="x", payer_kind="organizer", payer_name="x", payee_kind="fide",
                                 payee_name="x", amount=D("1.00"), is_cap=False, due=None, created_at=LATER))
        db.session.flush()


# --------------------------------------------------------------------------------------------- payments


def test_part_payments_add_up_and_an_overpayment_is_refused_with_the_figures(contract, admin):
    m = milestone(contract, "instalment_1")
    pay(m, "60000.00", date(2015, 6, 20), admin=admin)
    with pytest.raises(services.ContractError) as exc:
        pay(m, "40000.01", date(2015, 6, 25), admin=admin)
    assert str(exc.value) == ("Art. 15.6.2: €40,000.00 is outstanding on instalment 1, due 30 June 2015; a payment "
                              "of €40,000.01 would exceed it.")
    assert exc.value.field == "amount"
    pay(m, "40000.00", date(2015, 6, 29), admin=admin)
    st = queries.status_of(m, date(2015, 7, 1), 14)
    assert st.state is MilestoneState.PAID and st.completed_on == date(2015, 6, 29) and m.outstanding == 0
    with pytest.raises(services.ContractError, match=r"€0.00 is outstanding"):
        pay(m, "0.01", date(2015, 7, 1), admin=admin)


def test_a_payment_cannot_be_received_in_the_future(contract, admin):
    with pytest.raises(services.ContractError, match="cannot be after today"):
        pay(milestone(contract, "instalment_1"), "1.00", date(2015, 7, 16), admin=admin)


def test_the_same_form_sent_twice_is_recorded_once(contract, admin):
    m = milestone(contract, "instalment_1")
    first, created = pay(m, "1000.00", date(2015, 6, 20), admin=admin, key="form-abc")
    again, created_again = pay(m, "1000.00", date(2015, 6, 20), admin=admin, key="form-abc")
    assert created and not created_again and again.id == first.id
    assert [p.id for p in m.payments] == [first.id] and m.paid_total == D("1000.00")
    assert actions().count("payment.record") == 1


def test_the_database_itself_refuses_a_second_entry_with_the_same_key(contract, admin):
    m = milestone(contract, "instalment_1")
    pay(m, "1000.00", date(2015, 6, 20), admin=admin, key="form-abc")
    with pytest.raises(IntegrityError), db.session.begin_nested():
        db.session.add(Payment(milestone_id=m.id, kind="payment", amount=D("1.00"), received_on=date(2015, 6, 20),
                               idempotency_key="form-abc", recorded_at=LATER))
        db.session.flush()


def test_a_reversal_cancels_a_payment_without_touching_it(contract, admin):
    m = milestone(contract, "instalment_1")
    payment, _ = pay(m, "100000.00", date(2015, 6, 20), admin=admin)
    reversal, created = contract_payments.reverse_payment(payment, reason="Recorded against the wrong milestone",
                                                          idempotency_key="rev-1", actor=admin, now=LATER)
    assert created and reversal.amount == D("-100000.00") and reversal.reverses_id == payment.id
    assert reversal.received_on == payment.received_on and reversal.kind == "reversal"
    assert payment.amount == D("100000.00") and payment.is_reversed
    assert m.paid_total == 0 and m.outstanding == D("100000.00")
    assert queries.status_of(m, date(2015, 7, 1), 14).state is MilestoneState.OVERDUE
    with pytest.raises(services.ContractError, match="already reversed"):
        contract_payments.reverse_payment(payment, reason="again", idempotency_key="rev-2", actor=admin, now=LATER)
    with pytest.raises(services.ContractError, match="cannot itself be reversed"):
        contract_payments.reverse_payment(reversal, reason="undo", idempotency_key="rev-3", actor=admin, now=LATER)
    with pytest.raises(services.ContractError, match="Give the reason"):
        contract_payments.reverse_payment(pay(m, "5.00", date(2015, 6, 21), admin=admin)[0], reason=" ",
                                          idempotency_key="rev-4", actor=admin, now=LATER)
    assert actions().count("payment.reverse") == 1


def test_an_at_cost_item_takes_spending_up_to_its_cap(contract, admin):
    m = milestone(contract, "signal_blocker")
    pay(m, "7999.99", date(2015, 7, 1), admin=admin)
    with pytest.raises(services.ContractError, match="€0.01 remains under the cap of €8,000.00"):
        pay(m, "0.02", date(2015, 7, 2), admin=admin)


def test_fide_records_what_it_pays_out_like_any_milestone(contract, admin):
    advance = milestone(contract, "advance_CHN")
    assert advance.payer_name == "World Chess Federation (FIDE)" and advance.payee_name == "Hou Yifan"
    pay(advance, "50000.00", date(2015, 10, 9), admin=admin, now=datetime(2015, 10, 9, tzinfo=UTC))
    assert queries.status_of(advance, date(2015, 10, 12), 14).state is MilestoneState.PAID


# ------------------------------------------------------------------------------------------ corrections


def test_a_correction_is_a_new_version_that_names_what_it_replaces_and_carries_the_payments(app, contract, admin):
    first = milestone(contract, "instalment_1")
    kept, _ = pay(first, "30000.00", date(2015, 6, 20), admin=admin)
    wrong, _ = pay(first, "500.00", date(2015, 6, 21), admin=admin)
    contract_payments.reverse_payment(wrong, reason="typo", idempotency_key="r", actor=admin, now=LATER)
    contract.bid.event.signal_blocker_required = False  # the secretariat records the call's new answer (Art. 14.3)
    draft = services.prepare_correction(contract, reason="FIDE no longer requires the signal blocker",
                                        actor=admin, now=LATER)
    assert draft.replaces_id == contract.id and draft.version == 2 and draft.status == "draft"
    assert contract.status == "issued"  # in force until the correction is issued
    with pytest.raises(services.ContractError, match="already being prepared"):
        services.prepare_correction(contract, reason="again", actor=admin, now=LATER)
    services.issue_contract(draft, due_dates={}, actor=admin, now=LATER, upload_dir=app.config["UPLOAD_DIR"],
                            render=fake_render)
    assert contract.status == "superseded" and contract.superseded_at == LATER
    assert draft.status == "issued" and queries.in_force(contract.bid_id).id == draft.id
    assert "signal_blocker" not in [m.key for m in draft.milestones]
    carried = milestone(draft, "instalment_1").payments
    assert [(p.kind, p.amount, p.received_on, p.carried_from_id) for p in carried] == [
        ("carried_over", D("30000.00"), date(2015, 6, 20), kept.id)]
    # the dates the first version set are kept; the old version takes no more entries
    assert milestone(draft, "stipend_payout_1").due == date(2015, 10, 29)
    with pytest.raises(services.ContractError, match="superseded"):
        pay(first, "1.00", date(2015, 6, 22), admin=admin)
    assert {"contract.correction", "contract.supersede"} <= set(actions())


def test_a_correction_that_drops_a_paid_milestone_is_refused(app, contract, admin):
    pay(milestone(contract, "signal_blocker"), "100.00", date(2015, 6, 20), admin=admin)
    contract.bid.event.signal_blocker_required = False
    draft = services.prepare_correction(contract, reason="no blocker", actor=admin, now=LATER)
    with pytest.raises(services.ContractError, match="the correction has no such milestone"):
        services.issue_contract(draft, due_dates={}, actor=admin, now=LATER, upload_dir=app.config["UPLOAD_DIR"],
                                render=fake_render)


def test_only_the_contract_in_force_is_corrected_and_a_reason_is_required(bid, admin, contract):
    with pytest.raises(services.ContractError, match="Say what the correction changes"):
        services.prepare_correction(contract, reason="", actor=admin, now=LATER)
    draft = services.prepare_correction(contract, reason="dates", actor=admin, now=LATER)
    with pytest.raises(services.ContractError, match="Only the contract in force"):
        services.prepare_correction(draft, reason="x", actor=admin, now=LATER)


# ------------------------------------------------------------------------------------------- signature


def test_the_countersigned_pdf_is_checked_stored_and_hashed(app, contract, admin, signing_ca):
    upload = app.config["UPLOAD_DIR"]
    with pytest.raises(services.ContractError, match="is not a PDF"):
        services.sign_contract(contract, filename="scan.pdf", content=b"GIF89a...", max_bytes=10**6,
                               upload_dir=upload, actor=admin, now=LATER)
    with pytest.raises(services.ContractError, match="above the limit of 1 MB"):
        services.sign_contract(contract, filename="scan.pdf", content=b"%PDF-" + b"0" * 2**20, max_bytes=2**20,
                               upload_dir=upload, actor=admin, now=LATER)
    content = sign(queries.pdf_path(upload, contract).read_bytes(), trusted_signer(signing_ca), field="Organizer")
    from evidence import signing, trust

    trust.add_certificate(signing.pem(signing_ca.ca), actor=admin, now=LATER)  # the organizer's CA is trusted
    services.sign_contract(contract, filename="../../etc/signed.pdf", content=content, max_bytes=10**6,
                           upload_dir=upload, actor=admin, now=LATER)
    assert contract.signature_accepted_reason is None
    assert contract.status == "signed" and contract.signed_pdf_original_name == "signed.pdf"
    assert queries.pdf_path(upload, contract, signed=True).read_bytes() == content
    assert contract.signed_pdf_sha256 == hashlib.sha256(content).hexdigest()
    with pytest.raises(services.ContractError, match="A signed contract cannot be signed"):
        services.sign_contract(contract, filename="x.pdf", content=content, max_bytes=10**6, upload_dir=upload,
                               actor=admin, now=LATER)


def test_the_countersign_rule_is_wired_into_the_service(app, contract, admin, signing_ca):
    upload = app.config["UPLOAD_DIR"]
    issued = queries.pdf_path(upload, contract).read_bytes()
    with pytest.raises(services.ContractError, match="exactly as Gambit issued it: it carries no countersignature"):
        services.sign_contract(contract, filename="same.pdf", content=issued, max_bytes=10**6, upload_dir=upload,
                               actor=admin, now=contract.issued_at)
    assert contract.status == "issued"


def test_a_countersigned_upload_while_the_signing_identity_is_broken_is_refused_not_a_500(
        app, contract, admin, signing_ca, tmp_path, monkeypatch):
    upload = app.config["UPLOAD_DIR"]
    countersigned = sign(queries.pdf_path(upload, contract).read_bytes(),
                         trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"), field="Organizer")
    bad = tmp_path / "broken.p12"
    bad.write_bytes(b"not a PKCS#12 file")
    monkeypatch.setitem(app.config, "SIGNING_PKCS12", str(bad))
    with pytest.raises(services.ContractError) as exc:
        services.sign_contract(contract, filename="signed.pdf", content=countersigned, max_bytes=10**6,
                               upload_dir=upload, actor=admin, now=contract.issued_at)
    assert str(exc.value) == (
        "signed.pdf cannot be checked just now: Gambit's signing identity cannot be loaded (the server's log says "
        "why), so nothing can tell Gambit's signature from another. Nothing was stored; upload it again once the "
        "secretariat has restored the identity.")
    assert contract.status == "issued" and contract.signed_pdf_sha256 is None


# ---------------------------------------------------------------------------------------- match result


def test_the_result_adds_each_players_balance_for_fide_to_pay(contract, admin):
    now = datetime(2015, 10, 27, 18, 0, tzinfo=UTC)
    with pytest.raises(services.ContractError) as exc:
        results.record_result(contract, outcome=MatchOutcome("CHN", "tiebreak", date(2015, 10, 27)), actor=admin,
                              now=now)
    assert "completed_on" in exc.value.errors
    results.record_result(contract, outcome=MatchOutcome("CHN", "regular", date(2015, 10, 26)), actor=admin,
                          now=now)
    # Lviv is Muzychuk's home: Hou Yifan gets 5% first (13.3); 190,000 split 60/40; advances deducted (13.4)
    chn, ukr = milestone(contract, "prize_balance_CHN"), milestone(contract, "prize_balance_UKR")
    assert chn.amount == D("10000.00") + D("114000.00") - D("50000.00")
    assert ukr.amount == D("76000.00") - D("50000.00")
    assert chn.due == ukr.due == date(2015, 11, 5) and chn.payer_name == "World Chess Federation (FIDE)"
    assert db.session.scalars(select(MatchResult)).one().winner_federation == "CHN"
    with pytest.raises(services.ContractError, match="entered once"):
        results.record_result(contract, outcome=MatchOutcome("CHN", "regular", date(2015, 10, 26)), actor=admin,
                              now=now)


# ------------------------------------------------------------------------------ no payment overdue at issue


def test_issuing_after_a_date_the_regulations_fix_needs_the_contracts_own_date_in_its_place(app, bid, admin):
    """Issued on 1 July 2015, the first instalment's 30 June 2015 (Art. 15.6.2) has passed: refused, naming it, until
    the contract sets a date from the day of issue on; a date the contract sets cannot be past either."""
    issued_on = datetime(2015, 7, 1, 9, 0, tzinfo=UTC)
    draft = services.create_contract(bid, actor=admin, now=issued_on)
    dates = proposed_dates(draft)
    with pytest.raises(services.ContractError) as refused:
        services.issue_contract(draft, due_dates=dates, actor=admin, now=issued_on,
                                upload_dir=app.config["UPLOAD_DIR"], render=fake_render)
    assert refused.value.errors == {"due_instalment_1": (
        "Art. 15.6.2: the regulations fix 30 June 2015 for instalment 1, which is already past on 1 July 2015, the day "
        "the contract is issued; the payment would be overdue from the start. The contract sets a new date in its "
        "place (Art. 15.6.1): enter the date by which it is due, from 1 July 2015 on.")}
    assert draft.status == "draft"  # refused before anything changed
    with pytest.raises(services.ContractError) as refused:
        services.issue_contract(draft, due_dates={**dates, "instalment_1": date(2015, 7, 20),
                                                  "stipend_payout_1": date(2015, 6, 30)},
                                actor=admin, now=issued_on, upload_dir=app.config["UPLOAD_DIR"], render=fake_render)
    assert list(refused.value.errors) == ["due_stipend_payout_1"]
    assert refused.value.errors["due_stipend_payout_1"].startswith(
        "Sanity check: the stipend of the Chairman of the Appeals Committee cannot be due on 30 June 2015 (you "
        "entered 2015-06-30): that is before 1 July 2015, the day the contract is issued")
    assert draft.status == "draft"  # refused before anything changed
    services.issue_contract(draft, due_dates={**dates, "instalment_1": date(2015, 7, 20)}, actor=admin,
                            now=issued_on, upload_dir=app.config["UPLOAD_DIR"], render=fake_render)
    first = milestone(draft, "instalment_1")
    assert first.due == date(2015, 7, 20)
    assert milestone(draft, "instalment_2").due == date(2015, 8, 31)  # not passed: the regulations' date stays
    assert draft.terms["milestones"][0]["title"] == "instalment 1, due 20 July 2015"
    assert draft.terms["milestones"][0]["due_rule"].startswith(
        "By 20 July 2015, as this contract sets it in place of 30 June 2015, which had passed when the contract was "
        "issued (")
