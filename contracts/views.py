"""Contract pages: thin views that load, authorize, validate, call one service, commit and redirect. The secretariat
sees every contract; the organizer (the bid's owner) sees what FIDE issued to it and what FIDE recorded against its
obligations; anyone else gets 404. The contract API is api.contracts."""

from __future__ import annotations

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import RequestEntityTooLarge

from accounts.forms import EmptyForm
from bids.lifecycle import BidStatus
from bids.models import Bid
from contracts import payments as contract_payments
from contracts import queries, results, services
from contracts.exports import calendar_ics, milestones_csv, payments_csv
from contracts.forms import (
    ContractOptionsForm,
    CorrectionForm,
    DeductionForm,
    DeductionReturnForm,
    PaymentForm,
    ResultForm,
    ReverseForm,
    SignForm,
    issue_form_class,
    one_time_key,
)
from contracts.lifecycle import ContractStatus, allowed_actions
from contracts.models import Contract, Milestone, Payment, PrizeDeduction, Reminder
from contracts.rules.result import MatchOutcome
from contracts.rules.terms import fill_blank_due_dates
from contracts.rules.tracker import no_payment_taken
from core.auth import Role, roles_required
from core.db import db, utcnow, writes_on_get
from core.money import format_day, format_eur
from core.paging import DESC, page_request
from core.templating import register_nav
from core.urls import external_url
from core.validators import parse_as_of
from evidence import audit
from evidence.audit_views import pages_of, register_audit_actions, register_audit_link
from evidence.pdf import PdfError
from evidence.storage import send_verified
from finance.rules import contract_article
from operations import outbox

bp = Blueprint("contracts", __name__)
register_nav(40, Role.ADMIN, "Contracts", "contracts.index")
register_nav(41, Role.BIDDER, "Contracts", "contracts.mine")


def load_contract(contract_id: int) -> Contract:
    """The contract, or 404 when it does not exist or is not the caller's to see (never 403)."""
    contract = db.session.get(Contract, contract_id)
    if contract is None or not queries.may_view(current_user, contract):
        abort(404)
    return contract


def admin_contract(contract_id: int) -> Contract:
    contract = db.session.get(Contract, contract_id)
    if contract is None:
        abort(404)
    return contract


def _as_of():
    """(as_of, error): today when the parameter is absent or not a date (the error then says why)."""
    today = utcnow().date()
    try:
        return parse_as_of(request.args.get("as_of"), today), None
    except ValueError as exc:
        return today, str(exc)


def _tracker(contract: Contract, as_of):
    return queries.tracker(contract, as_of, due_soon_days=queries.due_soon_days(),
                           guarantee_warning_days=queries.guarantee_warning_days())


# ----------------------------------------------------------------------------------------------- lists


@bp.route("/contracts/")
@roles_required(Role.ADMIN)
def index():
    page = queries.contracts_for_admin(page_request(request.args, list(queries.CONTRACT_SORTS), default_sort="bid",
                                                    default_dirs={"bid": DESC, "issued": DESC}))
    contracts = page.items
    outstanding = queries.outstanding_totals(contracts)
    as_of, error = _as_of()
    live = [c for c in contracts if c.state.in_force]
    found = queries.statuses([m for c in live for m in c.milestones], as_of, queries.due_soon_days())
    glance = {c.id: queries.glance(c, found) for c in live}
    return render_template("contracts/index.html", contracts=contracts, page=page, outstanding=outstanding,
                           glance=glance, as_of=as_of, as_of_error=error,
                           waiting=queries.selected_without_contract()), (400 if error else 200)


@bp.route("/my/contracts")
@roles_required(Role.BIDDER)
def mine():
    page = queries.contracts_for_owner(current_user.id, page_request(request.args, ["bid"], default_sort="bid",
                                                                     default_dirs={"bid": DESC}))
    return render_template("contracts/mine.html", contracts=page.items, page=page)


@bp.route("/bids/<int:bid_id>/contract")
@login_required
def for_bid(bid_id: int):
    """The contract of a bid, for a link on the bid's page: the version in force, else the newest the caller
    may see; the secretariat is offered to prepare one for a selected bid; anyone else gets 404."""
    bid = db.session.get(Bid, bid_id)
    if bid is None:
        abort(404)
    contract = queries.latest_for(current_user, bid_id)
    if contract is not None:
        return redirect(url_for("contracts.view", contract_id=contract.id))
    if current_user.has_role(Role.ADMIN):
        return redirect(url_for("contracts.new", bid_id=bid_id))
    if bid.owner_id == current_user.id and bid.status == BidStatus.SELECTED.value:
        flash(f"FIDE is preparing the contract with you (Art. {contract_article(bid.event.regulation)}); it "
              "appears here once it is issued.", "info")
        return redirect(url_for("contracts.mine"))
    abort(404)


# ------------------------------------------------------------------------------------ making a contract


@bp.route("/bids/<int:bid_id>/contract/new", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def new(bid_id: int):
    bid = db.session.get(Bid, bid_id)
    if bid is None:
        abort(404)
    form = ContractOptionsForm(reg=bid.event.regulation)
    if request.method == "POST" and form.validate_on_submit():
        try:
            contract = services.create_contract(bid, actor=current_user, now=utcnow())
        except services.ContractError as exc:
            db.session.rollback()
            flash(str(exc), "error")
            return redirect(url_for("contracts.new", bid_id=bid_id))
        db.session.commit()
        flash(f"The draft contract {contract.reference} is ready. Read it through, then issue it.", "success")
        return redirect(url_for("contracts.view", contract_id=contract.id))
    refusal = None
    try:
        services._check_selected(bid)
        services.contract_inputs(bid)
    except services.ContractError as exc:
        refusal = str(exc)
    existing = [c for c in queries.versions_of(bid_id) if c.state is not ContractStatus.DISCARDED]
    status = 409 if (refusal or existing) else (422 if request.method == "POST" else 200)
    return render_template("contracts/new.html", bid=bid, form=form, refusal=refusal,
                           existing=existing[-1] if existing else None), status


@bp.route("/contracts/<int:contract_id>")
@login_required
def view(contract_id: int):
    return _render_view(load_contract(contract_id))


def _render_view(contract, sign_form: SignForm | None = None, status: int | None = None):
    """The contract's page; `sign_form`: a refused countersignature shown again with what was typed."""
    if sign_form is None:
        sign_form = SignForm()
        sign_form.seen.data = services.contract_version(contract)
    as_of, error = _as_of()
    is_admin = current_user.has_role(Role.ADMIN)
    terms = services.build_terms(contract) if contract.state is ContractStatus.DRAFT else None
    return render_template(
        "contracts/view.html", contract=contract, tracker=_tracker(contract, as_of), as_of_error=error,
        is_admin=is_admin, versions=queries.versions_of(contract.bid_id) if is_admin else
        [c for c in queries.versions_of(contract.bid_id) if c.state.visible_to_organizer],
        in_force=queries.in_force(contract.bid_id), result=queries.match_result(contract.bid.event_id),
        draft_terms=terms, form=EmptyForm(), sign_form=sign_form, max_mb=current_app.config["MAX_UPLOAD_MB"],
        due_soon_days=queries.due_soon_days(), actions=allowed_actions(contract.status),
        countersigned=services.signed_pdf_inspection(contract),
        reminders=outbox.counts(about=("contract", contract.id)) if is_admin else {}), \
        (status or (400 if error else 200))


@bp.route("/contracts/<int:contract_id>/preview")
@login_required
def preview(contract_id: int):
    contract = load_contract(contract_id)
    return render_template("contracts/preview.html", contract=contract, terms=services.build_terms(contract),
                           draft=contract.state is ContractStatus.DRAFT)


def _send_pdf(data: bytes, name: str) -> Response:
    return Response(data, mimetype="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="{name}"', "Cache-Control": "private"})


@bp.route("/contracts/<int:contract_id>/contract.pdf")
@writes_on_get
@login_required
def pdf(contract_id: int):
    """A draft is rendered on the spot (marked DRAFT); an issued contract is the PDF stored when it was issued,
    served only if its bytes still have the SHA-256 recorded then."""
    contract = load_contract(contract_id)
    if contract.state is ContractStatus.DRAFT:
        try:
            data = services.render_contract_pdf(contract, services.build_terms(contract), draft=True)
        except PdfError as exc:
            return render_template("error.html", code=503, message=f"The draft PDF could not be made: {exc}"), 503
        return _send_pdf(data, f"{contract.reference}-DRAFT.pdf")
    if contract.state is ContractStatus.DISCARDED:
        abort(404)
    return send_verified(queries.pdf_path(current_app.config["UPLOAD_DIR"], contract), contract.pdf_sha256,
                         what=f"contract {contract.reference}", obj=contract,
                         actor=current_user._get_current_object(), now=utcnow(),
                         download_name=f"{contract.reference}.pdf", as_attachment=False)


@bp.route("/contracts/<int:contract_id>/signed.pdf")
@writes_on_get
@login_required
def signed_pdf(contract_id: int):
    contract = load_contract(contract_id)
    if not contract.signed_pdf_stored_name:
        abort(404)
    return send_verified(queries.pdf_path(current_app.config["UPLOAD_DIR"], contract, signed=True),
                         contract.signed_pdf_sha256, what=f"the countersigned contract {contract.reference}",
                         obj=contract, actor=current_user._get_current_object(), now=utcnow(),
                         download_name=f"{contract.reference}-signed.pdf")


@bp.route("/contracts/<int:contract_id>/issue", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def issue(contract_id: int):
    contract = admin_contract(contract_id)
    if contract.state is not ContractStatus.DRAFT:
        flash(f"{contract.reference} is {contract.state.label.lower()}: only a draft is issued.", "error")
        return redirect(url_for("contracts.view", contract_id=contract.id))
    terms = services.build_terms(contract)
    today = utcnow().date()
    form_class = issue_form_class(contract.regulation, list(terms.milestones), today=today,
                                  kept=services.kept_dates(contract.replaces))
    status = 200
    if request.method == "GET":
        # Nothing already past is proposed: issued today, the payment would be overdue from the start.
        form = form_class(data={name: d if (d := (m.due or m.default_due)) and d >= today else None
                                for m, name in form_class.fields_for})
    else:
        form = form_class()
        if form.validate():
            dates = fill_blank_due_dates([m for m, _name in form_class.fields_for],
                                         {m.key: form[name].data for m, name in form_class.fields_for},
                                         form.same_date.data if "same_date" in form else None, today=today)
            try:
                services.issue_contract(contract, due_dates=dates, actor=current_user, now=utcnow(),
                                        upload_dir=current_app.config["UPLOAD_DIR"])
            except services.ContractError as exc:
                db.session.rollback()
                for name, message in exc.errors.items():
                    if name in form:
                        form[name].errors.append(message)
                if not exc.errors:
                    form.form_errors.append(str(exc))
                status = 422
            except PdfError as exc:
                db.session.rollback()
                form.form_errors.append(f"The PDF could not be made, so nothing was issued: {exc}")
                status = 503
            else:
                db.session.commit()
                assert contract.pdf_sha256 is not None  # issued just above
                flash(f"{contract.reference} is issued: its PDF and terms are frozen (SHA-256 "
                      f"{contract.pdf_sha256[:16]}…) and its payment milestones are tracked.", "success")
                return redirect(url_for("contracts.view", contract_id=contract.id))
        else:
            status = 422
    return render_template("contracts/issue.html", contract=contract, terms=terms, form=form,
                           fields=form_class.fields_for, today=today), status


@bp.route("/contracts/<int:contract_id>/discard", methods=["POST"])
@roles_required(Role.ADMIN)
def discard(contract_id: int):
    contract = admin_contract(contract_id)
    try:
        services.discard_contract(contract, actor=current_user, now=utcnow())
    except services.ContractError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("contracts.view", contract_id=contract.id))
    db.session.commit()
    flash(f"The draft {contract.reference} is discarded; it stays on record.", "success")
    return redirect(url_for("contracts.index"))


@bp.route("/contracts/<int:contract_id>/sign", methods=["POST"])
@roles_required(Role.ADMIN)
def sign(contract_id: int):
    contract = admin_contract(contract_id)
    back = url_for("contracts.view", contract_id=contract.id)
    max_bytes = current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024
    too_large = (f"The upload is larger than the limit of {current_app.config['MAX_UPLOAD_MB']} MB. "
                 "Choose a smaller file.")
    if (request.content_length or 0) > current_app.config["MAX_CONTENT_LENGTH"]:
        flash(too_large, "error")
        return redirect(back)
    try:
        form = SignForm()
        valid = form.validate_on_submit()
    except RequestEntityTooLarge:
        flash(too_large, "error")
        return redirect(back)
    upload = form.file.data
    if not valid or upload is None or not getattr(upload, "filename", ""):
        form.file.errors = [*form.file.errors, "Choose the countersigned contract (PDF) to upload."]
        return _render_view(contract, sign_form=form, status=422)  # what was typed is kept
    content = upload.stream.read(max_bytes + 1)
    try:
        services.sign_contract(contract, filename=upload.filename, content=content, max_bytes=max_bytes,
                               upload_dir=current_app.config["UPLOAD_DIR"], actor=current_user, now=utcnow(),
                               seen=form.seen.data or None, accept_untrusted=form.accept_untrusted.data or "")
    except services.ContractError as exc:
        db.session.rollback()
        # shown again with the reason typed (a file input cannot be refilled: choose it again)
        contract = load_contract(contract_id)
        (form[exc.field].errors.append(str(exc)) if exc.field in form else form.form_errors.append(str(exc)))
        return _render_view(contract, sign_form=form, status=422)
    db.session.commit()
    assert contract.signed_pdf_sha256 is not None  # stored just above
    flash(f"{contract.reference} is signed: the countersigned PDF is on file (SHA-256 "
          f"{contract.signed_pdf_sha256[:16]}…).", "success")
    return redirect(back)


@bp.route("/contracts/<int:contract_id>/correct", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def correct(contract_id: int):
    contract = admin_contract(contract_id)
    if request.method == "GET":
        form = CorrectionForm(reg=contract.regulation)
        return render_template("contracts/correct.html", contract=contract, form=form)
    form = CorrectionForm(reg=contract.regulation)
    if form.validate_on_submit():
        try:
            new = services.prepare_correction(contract, reason=form.reason.data, actor=current_user, now=utcnow())
        except services.ContractError as exc:
            db.session.rollback()
            form.form_errors.append(str(exc))
            return render_template("contracts/correct.html", contract=contract, form=form), 409
        db.session.commit()
        flash(f"The correction {new.reference} is a draft that replaces {contract.reference} once issued; until "
              "then the current version stays in force.", "success")
        return redirect(url_for("contracts.view", contract_id=new.id))
    return render_template("contracts/correct.html", contract=contract, form=form), 422


# ----------------------------------------------------------------------------------------------- payments


def _milestone_of(contract: Contract, milestone_id: int) -> Milestone:
    m = db.session.get(Milestone, milestone_id)
    if m is None or m.contract_id != contract.id:
        abort(404)
    return m


def _milestone_page(contract: Contract, m: Milestone, *, form=None, status: int = 200, refused=None):
    """The milestone's page; `refused` = (payment id, typed reason, message) brings back a refused reversal, on the
    page of entries that holds it. Its status and figures come from aggregates of the entries (queries.ledgers) and
    only a page of the entries is read: the page costs the same whatever the number of entries."""
    if form is None:
        form = PaymentForm(data={"idempotency_key": one_time_key()})
    as_of, error = _as_of()
    ask = page_request(request.args, list(queries.PAYMENT_SORTS), default_sort="received")
    # A link to one entry (the audit log's) opens the page that holds it, until a page is asked for.
    entry = "" if "page" in request.args else request.args.get("entry", "")
    holding = refused[0] if refused is not None else int(entry) if entry.isdigit() and len(entry) < 10 else None
    payments = queries.entries_page(m.id, ask, holding=holding)
    ledger, deductions = queries.ledger_of(m.id), queries.deductions_of(m.id)
    left = queries.still_recordable(m, ledger, deductions)
    page = render_template(
        "contracts/milestone.html", contract=contract, m=m, as_of_error=error, form=form,
        st=queries.status_of(m, as_of, queries.due_soon_days(), ledger=ledger, deductions=deductions),
        left=left, no_payment=no_payment_taken(title=m.title, outstanding=left, is_cap=m.is_cap),
        has_entries=ledger.entries > 0,
        reverse_form=ReverseForm(data={"idempotency_key": one_time_key()}),
        is_admin=current_user.has_role(Role.ADMIN), refused=refused, deductions=deductions, payments=payments)
    return page, (400 if error and status == 200 else status)


@bp.route("/contracts/<int:contract_id>/milestones/<int:milestone_id>")
@login_required
def milestone(contract_id: int, milestone_id: int):
    contract = load_contract(contract_id)
    return _milestone_page(contract, _milestone_of(contract, milestone_id))


def _field_errors(form, errors) -> None:
    """Each message beside its field ({field: message}); a message of no field of the form above it."""
    for name, message in errors.items():
        target = form[name].errors if name in form else form.form_errors
        if message not in target:
            target.append(message)


@bp.route("/contracts/<int:contract_id>/milestones/<int:milestone_id>/payments", methods=["POST"])
@roles_required(Role.ADMIN)
def record_payment(contract_id: int, milestone_id: int):
    contract = admin_contract(contract_id)
    m = _milestone_of(contract, milestone_id)
    form = PaymentForm()
    if not form.validate_on_submit():
        # What the form could read is checked too, so that every problem is reported at once.
        readable = {name: form[name].data if not form[name].errors else None for name in ("amount", "received_on")}
        _field_errors(form, contract_payments.payment_problems(m, **readable, now=utcnow()))
        return _milestone_page(contract, m, form=form, status=422)
    key = form.idempotency_key.data
    amount, received_on = form.amount.data, form.received_on.data
    assert amount is not None and received_on is not None  # the form's Present() refused a blank
    try:
        payment, created = contract_payments.record_payment(
            m, amount=amount, received_on=received_on, reference=form.reference.data,
            note=form.note.data, idempotency_key=key, actor=current_user, now=utcnow())
        db.session.commit()
    except services.ContractError as exc:
        db.session.rollback()
        _field_errors(form, exc.errors or {exc.field or "": str(exc)})
        return _milestone_page(contract, m, form=form, status=422)
    except IntegrityError:
        # Most likely the same form sent twice at once, and the other request recorded it; say so only if it did.
        db.session.rollback()
        if queries.payment_by_key(m.id, key) is None:
            flash("The payment could not be recorded because another change was made at the same moment. Nothing "
                  "was saved; enter it again.", "error")
            return redirect(url_for("contracts.milestone", contract_id=contract.id, milestone_id=m.id))
        created = False
    if created:
        # The log's head right after the payment's entry, kept outside the database, later proves the log was not
        # rewritten behind it (`flask audit verify --expect`).
        head = audit.checkpoint_of(payment, "payment.record")
        flash(f"{format_eur(payment.amount)} received on {format_day(payment.received_on)} is recorded against "
              f"{m.title}. The audit log keeps who recorded it and when.", "success")
        if head is not None:
            flash(str(head), "receipt")
    else:
        flash("This payment was already recorded (the form was sent more than once); it is recorded once.", "info")
    return redirect(url_for("contracts.milestone", contract_id=contract.id, milestone_id=m.id))


@bp.route("/contracts/<int:contract_id>/payments/<int:payment_id>/reverse", methods=["POST"])
@roles_required(Role.ADMIN)
def reverse_payment(contract_id: int, payment_id: int):
    contract = admin_contract(contract_id)
    payment = db.session.get(Payment, payment_id)
    if payment is None or payment.milestone.contract_id != contract.id:
        abort(404)
    m = payment.milestone
    form = ReverseForm()
    back = url_for("contracts.milestone", contract_id=contract.id, milestone_id=m.id)
    if not form.validate_on_submit():
        message = " ".join(msg for errors in form.errors.values() for msg in errors)
        return _milestone_page(contract, m, status=422, refused=(payment.id, form.reason.data or "", message))
    try:
        _, created = contract_payments.reverse_payment(payment, reason=form.reason.data,
                                                       idempotency_key=form.idempotency_key.data, actor=current_user,
                                                       now=utcnow())
        db.session.commit()
    except services.ContractError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(back)
    except IntegrityError:
        db.session.rollback()
        created = False
    flash(f"The payment of {format_eur(payment.amount)} is reversed; both entries stay on record." if created else
          "This reversal was already recorded; it is recorded once.", "success" if created else "info")
    return redirect(back)


@bp.route("/contracts/<int:contract_id>/result", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def result(contract_id: int):
    contract = admin_contract(contract_id)
    reg = contract.regulation
    recorded = queries.match_result(contract.bid.event_id)
    form = ResultForm.for_regulation(reg)
    status = 200
    if request.method == "POST":
        if form.validate_on_submit():
            completed_on = form.completed_on.data
            assert completed_on is not None  # the form's Present() refused a blank
            outcome = MatchOutcome(form.winner.data, form.decided_in.data, completed_on)
            try:
                results.record_result(contract, outcome=outcome, actor=current_user, now=utcnow())
            except services.ContractError as exc:
                db.session.rollback()
                field_names = {"winner": "winner", "decided_in": "decided_in", "completed_on": "completed_on"}
                for name, message in exc.errors.items():
                    form[field_names.get(name, name)].errors.append(message)
                if not exc.errors:
                    form.form_errors.append(str(exc))
                status = 422
            else:
                db.session.commit()
                flash("The result is recorded; each player's prize balance is now a milestone FIDE pays.", "success")
                return redirect(url_for("contracts.view", contract_id=contract.id))
        else:
            status = 422
    return _result_page(contract, form=form, recorded=recorded, status=status)


def _result_page(contract, *, form=None, deduction_form=None, return_form=None, return_for=None, recorded=None,
                 status: int = 200):
    reg = contract.regulation
    schedule = reg.schedule_for(contract.inputs.opening_date, contract.inputs.closing_date)
    balances = [m for m in (results.prize_balance_milestone(contract, p.federation) for p in reg.players) if m]
    deductions = [(m, d) for m in balances for d in queries.deductions_of(m.id)]
    returnable = {d.key for d in reg.deductions if d.returned_if}
    # A form for each deduction the regulations return and that is not returned yet (the one sent, with its errors).
    return_forms = {d.id: (return_form if return_form is not None and return_for == d.id
                           else DeductionReturnForm.for_deduction(d.id))
                    for _, d in deductions if d.rule_key in returnable and not d.returned}
    return render_template("contracts/result.html", contract=contract, form=form or ResultForm.for_regulation(reg),
                           recorded=recorded, schedule=schedule, deductions=deductions, balances=balances,
                           deduction_form=deduction_form or DeductionForm.for_regulation(reg),
                           return_forms=return_forms if contract.state.in_force else {},
                           may_deduct=bool(balances) and contract.state.in_force), status


@bp.route("/contracts/<int:contract_id>/deductions", methods=["POST"])
@roles_required(Role.ADMIN)
def deduction(contract_id: int):
    contract = admin_contract(contract_id)
    reg = contract.regulation
    recorded = queries.match_result(contract.bid.event_id)
    form = DeductionForm.for_regulation(reg)
    if not form.validate_on_submit():
        return _result_page(contract, deduction_form=form, recorded=recorded, status=422)
    amount, decided_on = form.amount.data, form.decided_on.data
    assert amount is not None and decided_on is not None  # the form's Present() refused a blank
    try:
        results.record_deduction(contract, federation=form.player.data, rule_key=form.rule.data,
                                 amount=amount, reason=form.reason.data or "",
                                 decided_on=decided_on, actor=current_user, now=utcnow())
    except services.ContractError as exc:
        db.session.rollback()
        for name, message in exc.errors.items():
            (form[name].errors.append(message) if name in form else form.form_errors.append(message))
        if not exc.errors:
            form.form_errors.append(str(exc))
        return _result_page(contract, deduction_form=form, recorded=recorded, status=422)
    db.session.commit()
    flash("The deduction is recorded against the prize balance; FIDE pays the balance less it.", "success")
    return redirect(url_for("contracts.result", contract_id=contract.id))


@bp.route("/contracts/<int:contract_id>/deductions/<int:deduction_id>/return", methods=["POST"])
@roles_required(Role.ADMIN)
def deduction_return(contract_id: int, deduction_id: int):
    contract = admin_contract(contract_id)
    recorded = queries.match_result(contract.bid.event_id)
    form = DeductionReturnForm.for_deduction(deduction_id)
    if not form.validate_on_submit():
        return _result_page(contract, return_form=form, return_for=deduction_id, recorded=recorded, status=422)
    try:
        results.return_deduction(contract, deduction_id, decided_on=form.decided_on.data,
                                 reason=form.reason.data or "", actor=current_user, now=utcnow())
    except services.ContractError as exc:
        db.session.rollback()
        for name, message in exc.errors.items():
            (form[name].errors.append(message) if name in form else form.form_errors.append(message))
        if not exc.errors:
            form.form_errors.append(str(exc))
        if not exc.errors.keys() & {"decided_on", "reason"}:  # no form of this deduction on the page to show it
            flash(str(exc), "error")
        return _result_page(contract, return_form=form, return_for=deduction_id, recorded=recorded, status=422)
    db.session.commit()
    flash("The deduction is returned: FIDE pays the player's balance with it again.", "success")
    return redirect(url_for("contracts.result", contract_id=contract.id))


# ---------------------------------------------------------------------------------------------- exports


@bp.route("/contracts/<int:contract_id>/calendar-link", methods=["POST"])
@login_required
def calendar_link(contract_id: int):
    contract = load_contract(contract_id)
    try:
        token = services.new_feed_token(contract, actor=current_user, now=utcnow())
    except services.ContractError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("contracts.view", contract_id=contract.id))
    db.session.commit()
    url = external_url("contracts.calendar", contract_id=contract.id, token=token)
    return render_template("contracts/calendar_link.html", contract=contract, url=url)


@bp.route("/contracts/<int:contract_id>/calendar.ics")
def calendar(contract_id: int):
    """The deadlines as an iCalendar feed a calendar program subscribes to: no login, the contract's feed token
    instead (a wrong or missing token answers 404, like a contract that does not exist)."""
    contract = queries.feed_contract(contract_id, request.args.get("token"))
    if contract is None:
        abort(404)
    found = queries.statuses(contract.milestones, utcnow().date(), queries.due_soon_days())
    rows = [(m, found[m.id]) for m in contract.milestones]
    body = calendar_ics(contract, rows, now=utcnow(),
                        url=external_url("contracts.view", contract_id=contract.id))
    return Response(body, mimetype="text/calendar",
                    headers={"Content-Disposition": f'inline; filename="{contract.reference}.ics"',
                             "Cache-Control": "private, max-age=900"})


@bp.route("/contracts/<int:contract_id>/milestones.csv")
@login_required
def export_milestones(contract_id: int):
    contract = load_contract(contract_id)
    as_of, error = _as_of()
    if error:
        return Response(error + "\n", status=400, mimetype="text/plain")
    body = milestones_csv(contract, _tracker(contract, as_of).rows)
    return Response(body, mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{contract.reference}-milestones-{as_of.isoformat()}.csv"'})


@bp.route("/contracts/<int:contract_id>/payments.csv")
@login_required
def export_payments(contract_id: int):
    contract = load_contract(contract_id)
    queries.with_payments(contract.milestones)
    return Response(payments_csv(contract), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{contract.reference}-payments.csv"'})


# ------------------------------------------------------------------------------------- the audit log's words


def _milestone_links(places: dict[int, tuple[int, int]], anchor: str | None = None) -> dict[int, str]:
    """{row id: its milestone's page} from {row id: (contract id, milestone id)}; with `anchor`, at the row (an
    entry: on the page of entries that holds it, ?entry=)."""
    if anchor is None:
        return {i: url_for("contracts.milestone", contract_id=c, milestone_id=m) for i, (c, m) in places.items()}
    return {i: url_for("contracts.milestone", contract_id=c, milestone_id=m, entry=i, _anchor=f"{anchor}-{i}")
            if anchor == "payment" else
            url_for("contracts.milestone", contract_id=c, milestone_id=m, _anchor=f"{anchor}-{i}")
            for i, (c, m) in places.items()}


register_audit_link("Contract", pages_of(Contract, "contracts.view", "contract_id"))
register_audit_link("Payment", lambda ids: _milestone_links(queries.places_of(Payment, ids), "payment"))
register_audit_link("PrizeDeduction", lambda ids: _milestone_links(queries.places_of(PrizeDeduction, ids),
                                                                   "deduction"))
register_audit_link("Reminder", lambda ids: _milestone_links(queries.places_of(Reminder, ids)))
register_audit_actions({
    "contract.create": "drafted {object} for bid {bid}", "contract.issue": "issued {object}",
    "contract.sign": "recorded the countersigned {object}",
    "contract.correction": "drafted {object} to correct contract {replaces}",
    "contract.supersede": "marked {object} as superseded by contract {by}",
    "contract.discard": "discarded the draft {object}", "contract.close": "closed {object}",
    "contract.feed_token": "made a calendar link for {object}",
    "payment.record": "recorded a payment of {amount:eur} ({object}) on contract {contract}",
    "payment.reverse": "reversed payment {reverses} with {object} of {amount:eur}",
    "payment.reminder": "sent a payment reminder ({object})",
    "match.result": "recorded the match result ({object}) on contract {contract}",
    "prize.deduction": "recorded a prize deduction of {amount:eur} ({object}) on contract {contract}",
    "prize.deduction_returned": "returned the prize deduction of {amount:eur} ({object}) on contract {contract}"})
