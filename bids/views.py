"""Bid pages: thin views that load, authorize, validate, call one service, commit and redirect."""

from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    get_template_attribute,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required
from sqlalchemy import select
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response

from accounts.models import User, UserRole
from bids import judged, services
from bids.forms import (
    ROOM_RATES_FULL,
    SECTION_DOCUMENTS,
    SECTION_FORMS,
    ConsultationForm,
    DocumentForm,
    LateAdmissionForm,
    PaperBidForm,
    RejectForm,
)
from bids.lifecycle import BidAction, BidStatus, allowed_actions
from bids.models import DOCUMENT_KINDS, Bid, BidDocument
from bids.presenters import (
    bid_cost,
    consultation_of,
    cost_inputs,
    data_as_entered,
    document_kind_label,
    form_data_for,
    values_from_form,
    version_sections,
)
from bids.queries import bid_for_access, bid_for_page, bid_rows, version_rows
from bids.rules import (
    check_bid,
    failures,
    findings_by_field,
    home_match,
    home_match_consequences,
    is_compliant,
    pending,
)
from bids.sections import SECTION_TITLES, SECTIONS, findings_by_section
from core.auth import Role, roles_required
from core.db import db, utcnow, writes_on_get
from core.forms import choices
from core.hooks import Hook
from core.paging import ordered, page_request, sql_page
from core.templating import id_url, kept_fragment, register_nav
from events.models import Event
from events.rules import schedule_shown_for
from events.views import event_or_404
from evidence.audit_views import pages_of, register_audit_actions, register_audit_link
from evidence.storage import send_verified
from operations.page_cache import versioned_page

# The bid pages (the list and a bid) show the bid, its checks, scores and decision, and only a link to its contract:
# nothing of the contract's own changes and its money, or of mail, so those keep their versions
# (tests/test_page_versions.py holds them to that after every kind of step). A change of the trust list ("trust")
# is shown: it re-judges the signatures of the bid's documents, which the bid's page shows.
NOT_SHOWN = ("contract", "payment", "match", "prize", "mail")

bp = Blueprint("bids", __name__)
register_nav(10, None, "Bids", "bids.index")

# Scoring's declaration gate (scoring.queries.declaration_required), provided by app.py: scoring comes later in the
# flow. Called as (user, event, owner_id=...); what to tell a WCOC member who has not declared, or None.
declaration_required: Hook[..., str | None] = Hook("bids.views.declaration_required")

SORTS = {"updated": Bid.updated_at, "status": Bid.status, "applicant": Bid.applicant_name,
         "prize": Bid.prize_fund_eur, "city": Bid.venue_city}


def load_bid(bid_id: int, *, for_page: bool = False, for_access: bool = False) -> Bid:
    """The bid, or 404 when it does not exist or is not the caller's to see (never 403: ids reveal nothing).
    `for_page`: loaded with only what its page reads (bids.queries.bid_for_page); `for_access`: with only what the
    rules of access read (bids.queries.bid_for_access)."""
    bid = (bid_for_page(bid_id) if for_page else bid_for_access(bid_id) if for_access
           else db.session.get(Bid, bid_id))
    if bid is None or not services.can_see(current_user, bid):
        abort(404)
    return bid


def declaration_gate(bid: Bid):
    """Every page showing a bid (the bid, its versions, its documents) sends a WCOC member who has not confirmed
    a declaration of conflicts covering every bid of the call to that declaration first; None lets them in."""
    message = declaration_required(current_user, bid.event, owner_id=bid.owner_id)
    if message is None:
        return None
    flash(message, "info")
    return redirect(url_for("scoring.conflicts", slug=bid.event.slug))


def may_edit(bid: Bid) -> bool:
    return bid.owner_id == current_user.id or current_user.has_role(Role.ADMIN)


def load_own_bid(bid_id: int) -> Bid:
    bid = load_bid(bid_id)
    if not may_edit(bid):
        abort(403)
    return bid


@bp.route("/bids/")
@login_required
# every logged-in caller has a list: of the bids they may see
@versioned_page(access=None, not_shown=NOT_SHOWN)
def index():
    ask = page_request(request.args, list(SORTS), default_sort="updated", default_dirs={"updated": "desc"})
    query = services.bids_visible_to(current_user)
    status = request.args.get("status")
    if status in {s.value for s in BidStatus}:
        query = query.where(Bid.status == status)
    # Only what the list shows, as plain rows (bids.queries), one page of them; every call is loaded for the "start a
    # bid" buttons.
    now = utcnow()
    events = db.session.scalars(select(Event).order_by(Event.id)).all()
    open_events = [e for e in events if e.takes_bids(now)]
    by_id = {e.id: e for e in events}
    page = sql_page(query, ask, [ordered(SORTS[ask.sort], ask.dir), Bid.id], fetch=lambda q: bid_rows(
        q, by_id, today=now.date(), url=id_url("bids.view", "bid_id"), now=now))
    return render_template("bids/index.html", rows=page.items, page=page, sort=ask.sort, dir=ask.dir,
                           status=status, statuses=list(BidStatus), open_events=open_events)


@bp.route("/events/<slug>/bids/new", methods=["POST"])
@roles_required(Role.BIDDER)
def new(slug: str):
    event = event_or_404(slug)
    try:
        bid = services.create_bid(event, owner=current_user, actor=current_user, now=utcnow())
    except services.BidError as exc:
        flash(str(exc), "error")
        return redirect(url_for("events.public", slug=slug))
    db.session.commit()
    flash("Your draft bid is started. Fill it in section by section; each section saves on its own.", "success")
    return redirect(url_for("bids.edit", bid_id=bid.id, section="applicant"))


def bid_page_access(bid_id: int):
    """The bid page's load-and-authorize step (its versioned page's access hook, run before a 304 is given): None
    when the caller is shown the page, the declaration gate's redirect for a WCOC member who must declare first.
    Raises NotFound (404) when the bid does not exist or is not the caller's to see."""
    return declaration_gate(load_bid(bid_id, for_access=True))


@bp.route("/bids/<int:bid_id>")
@login_required
@versioned_page(access=bid_page_access, not_shown=NOT_SHOWN)
def view(bid_id: int):
    bid = load_bid(bid_id, for_page=True)
    return declaration_gate(bid) or _render_view(bid)


def _render_view(bid: Bid, *, reject_form=None, consultation_form=None, late_form=None, status: int = 200):
    """The bid's page; the secretariat's forms come back with what was typed when they were refused. The page is
    given the actions the lifecycle's guard allows this user now (`can`), and why the next one is refused. The
    secretariat's forms are made only for the secretariat, each only when the page shows it."""
    reg = bid.event.regulation
    now = utcnow()
    actions = services.offered_actions(bid, current_user, now)
    secretariat = current_user.has_role(Role.ADMIN)
    late_admission_possible = services.late_admission_refusal(bid, current_user, now) is None
    consultation = consultation_of(bid)
    if consultation is None:  # Art. 15.1's rule decides the offer: no consultation, no form (a refused one neither)
        consultation_form = None
    if secretariat:
        if reject_form is None and BidAction.REJECT in actions:
            reject_form = _reject_form(bid)
        if late_form is None and late_admission_possible:
            late_form = LateAdmissionForm()
        # Art. 15.1: offered on a sponsor's bid only, where FIDE consults the host federation.
        if consultation_form is None and consultation is not None:
            consultation_form = ConsultationForm(reg=reg, data={
                "outcome": bid.consultation, "note": bid.consultation_note,
                "fide_accepts": bid.consultation_accepted_at is not None})
    following = BidAction.SUBMIT if bid.state.is_editable else BidAction.REOPEN
    why_not = None if following in actions or following not in allowed_actions(bid.state) else (
        services.refusal(bid, following, current_user, now))
    data = bid.to_data()
    findings = judged.findings_of(bid, today=now.date())  # the report kept with the bid while it holds
    by_section = findings_by_section(findings)
    blocker = bid.event.signal_blocker_required
    # The report's table, what the bid costs and its schedule are drawn from the findings, the figures and the
    # regulation alone: each is rendered once per process for those values (core.templating.kept_fragment).
    compliance_html = kept_fragment(("bid compliance", *findings), lambda: get_template_attribute(
        "_macros/bids.html", "compliance_table")(by_section, SECTION_TITLES))
    cost_html = kept_fragment(("bid cost", *cost_inputs(reg, data, signal_blocker_required=blocker)),
                              lambda: _view_part("cost_section")(
                                  bid_cost(reg, data, signal_blocker_required=blocker), reg))
    schedule_html = kept_fragment(("bid schedule", reg.sha256, data.opening_date, data.closing_date),
                                  lambda: _view_part("schedule_section")(
                                      schedule_shown_for(data.opening_date, data.closing_date, reg.programme), reg))
    return render_template(
        "bids/view.html", bid=bid, reg=reg, data=data, by_section=by_section, sections=SECTIONS,
        titles=SECTION_TITLES, compliant=is_compliant(findings), failed=len(failures(findings)),
        to_attach=len(pending(findings)), compliance_html=compliance_html, cost_html=cost_html,
        schedule_html=schedule_html, home=home_match(reg, data), home_consequences=home_match_consequences(reg, data),
        documents=bid.current_documents(), versions=version_rows(bid.id), may_edit=may_edit(bid),
        signature_notes=services.document_signatures(bid), secretariat=secretariat,
        reject_form=reject_form, late_form=late_form, consultation_form=consultation_form,
        can={a.value: True for a in actions}, why_not=why_not, rejection=reg.citation("rejection"),
        draft_refusal=services.draft_refusal(bid, current_user, now),
        late_admission_possible=late_admission_possible,
        consultation=consultation, now=now), status


def _view_part(name: str):
    """A macro of the bid page's parts (templates/bids/_view_parts.html)."""
    return get_template_attribute("bids/_view_parts.html", name)


@bp.route("/bids/<int:bid_id>/edit/<section>", methods=["GET", "POST"])
@login_required
def edit(bid_id: int, section: str):
    bid = load_own_bid(bid_id)
    if section not in SECTION_FORMS:
        abort(404)
    form_class = SECTION_FORMS[section]
    status = 200
    upload_errors: dict[str, str] = {}
    if request.method == "GET":
        form = form_class(data=form_data_for(bid, section), reg=bid.event.regulation)
    else:
        # A body above the limit cannot be read at all, so nothing typed with it can be kept (the page's script
        # refuses such a file before it is sent).
        if (request.content_length or 0) > current_app.config["MAX_CONTENT_LENGTH"]:
            flash(f"{_too_large()} Nothing on the page was saved: type your changes again.", "error")
            return redirect(url_for("bids.edit", bid_id=bid.id, section=section))
        form = form_class(reg=bid.event.regulation)
        # The section's files travel with its fields: a file chosen is attached whichever button is pressed, and
        # the fields are saved (or come back as typed) whether the file is accepted or refused.
        attached, upload_errors = _attach_chosen(bid, section, wanted=request.form.get("action") == "upload")
        for message in attached:
            flash(message, "success")
        outcome = _post_section(bid, section, form, attached=attached, upload_errors=upload_errors)
        if not isinstance(outcome, int):
            return outcome
        status = outcome
        form.form_errors.extend(upload_errors.values())  # after validate(), which starts the list afresh
    if not bid.state.is_editable:
        flash(f"This bid is {bid.state.label.lower()}: it can be read but not changed here.", "info")
    findings, by_field = _findings_shown(bid, section, form)
    # The lifecycle's guard says whether this draft can be saved now; the page offers the form only then.
    refused = services.draft_refusal(bid, current_user, utcnow())
    return render_template(
        "bids/edit.html", bid=bid, reg=bid.event.regulation, form=form, section=section, sections=SECTIONS,
        draft_refusal=refused, can_save=bid.state.is_editable and refused is None,
        on_behalf_of=None if bid.owner_id == current_user.id else (bid.owner.organisation or bid.owner.name),
        titles=SECTION_TITLES, section_findings=findings_by_section(findings)[section],
        by_field=by_field, by_section=findings_by_section(findings), as_entered=request.method == "POST",
        schedule=schedule_shown_for(bid.opening_date, bid.closing_date, bid.event.regulation.programme)
        if section == "dates_venue" else None,
        document_kinds=SECTION_DOCUMENTS.get(section, []), kinds=DOCUMENT_KINDS,
        documents=[d for d in bid.documents if d.kind in SECTION_DOCUMENTS.get(section, [])],
        upload_errors=upload_errors, max_mb=current_app.config["MAX_UPLOAD_MB"],
        max_bytes=current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024), status


def _post_section(bid: Bid, section: str, form, *, attached: list[str],
                  upload_errors: dict[str, str]) -> int | Response:
    """The section's form as sent, after its files were attached: a room rate line added or removed, or the fields
    validated and saved. Returns a redirect when the page is left, else the status the page answers with."""
    action = request.form.get("action") or ""
    if section == "hotel" and (action == "add_rate" or action.startswith("remove_rate:")):
        return _room_rate_line(form, action)
    if not form.validate():
        return 422
    values, rates = values_from_form(section, form)
    try:
        revision = int(form.revision.data) if (form.revision.data or "").isdigit() else None
        changed = services.save_section(bid, section, values, actor=current_user, now=utcnow(),
                                        revision=revision, room_rates=rates)
    except services.StaleBidError as exc:
        db.session.rollback()
        form.form_errors.append(str(exc))
        return 409
    except services.BidError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("bids.view", bid_id=bid.id))
    db.session.commit()
    message, still_failing = _saved_message(bid, section, changed=bool(changed) or bool(attached))
    flash(message, "warning" if still_failing else "success")
    if upload_errors:
        # A refused file is an error like a refused field: the page answers 422 with the file's
        # message beside its input (the fields typed beside it are saved, and the flash says so).
        flash("What you typed in the fields is saved; the file below was not attached.", "error")
        db.session.refresh(bid)
        form.revision.data = str(bid.revision)  # saved: the next send continues from this revision
        return 422
    if action == "next":
        names = list(SECTIONS)
        following = names[names.index(section) + 1] if section != names[-1] else None
        if following:
            return redirect(url_for("bids.edit", bid_id=bid.id, section=following))
        return redirect(url_for("bids.view", bid_id=bid.id))
    return redirect(url_for("bids.edit", bid_id=bid.id, section=section))


def _room_rate_line(form, action: str) -> int:
    """The hotel section's buttons that add a room rate line (`add_rate`) or remove one (`remove_rate:<index>`),
    nothing saved; returns the status the page answers with (422 when no further line fits)."""
    if action == "add_rate" and form.rates_full:
        form.form_errors.append(ROOM_RATES_FULL.format(entered=len(form.room_rates.entries) + 1))
        return 422
    if action == "add_rate":
        form.room_rates.append_entry()
        flash("A line for another room rate is added below; save to keep it.", "info")
        return 200
    index = action.removeprefix("remove_rate:")
    entries = form.room_rates.entries
    if index.isdigit() and int(index) < len(entries):
        removed = entries.pop(int(index))
        if not entries:  # the form always shows one line to fill in
            form.room_rates.append_entry()
        what = removed.form.room_type.data or "an empty line"
        flash(f"The room rate line ({what}) is removed below; save to keep the change.", "info")
    return 200


def _findings_shown(bid: Bid, section: str, form) -> tuple[list, dict]:
    """The findings the edit page shows, and those beside each field."""
    if request.method == "POST":  # the page shows what was typed: the notes beside it judge that, not the saved bid
        findings = check_bid(bid.event.regulation, data_as_entered(bid, section, form), today=utcnow().date())
        return findings, {k: v for k, v in findings_by_field(findings).items() if not form.errors.get(k)}
    findings = services.compliance(bid, today=utcnow().date())
    return findings, findings_by_field(findings)


def _saved_message(bid: Bid, section: str, *, changed: bool) -> tuple[str, bool]:
    """What saving a section did (`changed`: a field changed or a file was attached), and the rules of the section
    that the saved draft still fails (a draft saves without passing them; each is also shown beside its field); and
    whether any does."""
    said = f"{SECTION_TITLES[section]}: {'saved' if changed else 'nothing had changed'}."
    failed = failures(findings_by_section(services.compliance(bid, today=utcnow().date()))[section])
    if not failed:
        return said, False
    rules = " ".join(f.as_text() for f in failed)
    if len(failed) == 1:
        return f"{said} 1 rule of this section still fails; the bid cannot be submitted until it passes. {rules}", True
    return (f"{said} {len(failed)} rules of this section still fail; the bid cannot be submitted until they pass. "
            f"{rules}"), True


def _too_large() -> str:
    return (f"The upload is larger than the limit of {current_app.config['MAX_UPLOAD_MB']} MB. Choose a smaller "
            "file.")


def _attach_chosen(bid: Bid, section: str, *, wanted: bool) -> tuple[list[str], dict[str, str]]:
    """Store each file chosen on a section's page (input `file-<kind>`), each in a transaction of its own so that
    a refused file leaves the others and the section's fields alone. `wanted`: the person pressed the upload
    button, so choosing no file is a mistake to point out. Returns (what was attached, {kind: why refused})."""
    attached: list[str] = []
    errors: dict[str, str] = {}
    max_bytes = current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024
    kinds = SECTION_DOCUMENTS.get(section, [])
    chosen = {k: f for k in kinds if (f := request.files.get(f"file-{k}")) is not None and f.filename}
    if wanted and not chosen:
        for kind in kinds:
            errors[kind] = f"{DOCUMENT_KINDS[kind][0]}: no file was chosen. Choose the PDF to upload."
    for kind, upload in chosen.items():
        try:
            doc = services.store_document(bid, kind, filename=upload.filename or "",
                                          content=upload.stream.read(max_bytes + 1),
                                          upload_dir=current_app.config["UPLOAD_DIR"], max_bytes=max_bytes,
                                          actor=current_user, now=utcnow())
        except services.BidError as exc:
            db.session.rollback()
            errors[kind] = str(exc)
        else:
            db.session.commit()
            attached.append(f"{doc.kind_label} attached: {doc.original_name} (SHA-256 {doc.sha256[:16]}…).")
    return attached, errors


@bp.route("/bids/<int:bid_id>/documents", methods=["POST"])
@login_required
def upload(bid_id: int):
    bid = load_own_bid(bid_id)
    too_large = _too_large()
    # Refuse by the declared length before reading the body, so nothing half-read lingers.
    if (request.content_length or 0) > current_app.config["MAX_CONTENT_LENGTH"]:
        flash(too_large, "error")
        return redirect(url_for("bids.view", bid_id=bid.id))
    try:
        form = DocumentForm()
        valid = form.validate_on_submit()
    except RequestEntityTooLarge:
        flash(too_large, "error")
        return redirect(url_for("bids.view", bid_id=bid.id))
    section = next((s for s, kinds in SECTION_DOCUMENTS.items() if form.kind.data in kinds), "signature")
    back = url_for("bids.edit", bid_id=bid.id, section=section) + "#documents"
    if not valid:
        flash("Choose the kind of document and the file to upload.", "error")
        return redirect(back)
    upload = form.file.data
    if upload is None or not getattr(upload, "filename", ""):
        flash("Choose a PDF file to upload.", "error")
        return redirect(back)
    max_bytes = current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024
    content = upload.stream.read(max_bytes + 1)
    try:
        doc = services.store_document(bid, form.kind.data, filename=upload.filename, content=content,
                                      upload_dir=current_app.config["UPLOAD_DIR"], max_bytes=max_bytes,
                                      actor=current_user, now=utcnow())
    except services.BidError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(back)
    db.session.commit()
    flash(f"{doc.kind_label} attached: {doc.original_name} (SHA-256 {doc.sha256[:16]}…).", "success")
    return redirect(back)


@bp.route("/bids/<int:bid_id>/documents/<int:doc_id>")
@writes_on_get
@login_required
def document(bid_id: int, doc_id: int):
    bid = load_bid(bid_id)
    if gate := declaration_gate(bid):
        return gate
    doc = db.session.get(BidDocument, doc_id)
    if doc is None or doc.bid_id != bid.id:
        abort(404)
    return send_verified(services.document_path(doc, current_app.config["UPLOAD_DIR"]), doc.sha256,
                         what=f"{doc.kind_label.lower()} of bid {bid.id}", obj=doc,
                         actor=current_user._get_current_object(), now=utcnow(),
                         download_name=services.document_download_name(doc))


def _lifecycle(bid_id: int, action: str):
    bid = load_own_bid(bid_id)
    now = utcnow()
    try:
        if action == "submit":
            revision = request.form.get("revision")
            version = services.submit_bid(bid, actor=current_user, now=now,
                                          revision=int(revision) if revision and revision.isdigit() else None)
            message = f"Your bid is submitted as version {version.number}. FIDE has received it."
        elif action == "withdraw":
            services.withdraw_bid(bid, actor=current_user, now=now)
            message = "Your bid is withdrawn."
        else:
            services.reopen_bid(bid, actor=current_user, now=now)
            message = (f"Your bid is a draft again. Version {bid.version} stays on record; submit again before the "
                       "deadline, or FIDE keeps no submitted bid from you.")
    except services.BidError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("bids.view", bid_id=bid.id))
    db.session.commit()
    flash(message, "success")
    return redirect(url_for("bids.view", bid_id=bid.id))


@bp.route("/bids/<int:bid_id>/submit", methods=["POST"])
@login_required
def submit(bid_id: int):
    return _lifecycle(bid_id, "submit")


@bp.route("/bids/<int:bid_id>/withdraw", methods=["POST"])
@login_required
def withdraw(bid_id: int):
    return _lifecycle(bid_id, "withdraw")


@bp.route("/bids/<int:bid_id>/reopen", methods=["POST"])
@login_required
def reopen(bid_id: int):
    return _lifecycle(bid_id, "reopen")


@bp.route("/bids/<int:bid_id>/versions/<int:number>")
@login_required
def version(bid_id: int, number: int):
    bid = load_bid(bid_id)
    if gate := declaration_gate(bid):
        return gate
    v = next((v for v in bid.versions if v.number == number), None)
    if v is None:
        abort(404)
    return render_template("bids/version.html", bid=bid, v=v,
                           sections=version_sections(v.data_dict, bid.event.regulation),
                           kind_label=document_kind_label)


def _secretariat_reason_form(bid_id: int, form, form_key: str, act):
    """The secretariat's one-reason forms on a bid's page (reject, admit late): validate, call the one service
    `act(bid, reason)`, commit. Returns (bid, None) when done, else (None, the page again with what was typed and
    the refusal beside the field)."""
    bid = load_bid(bid_id)
    form = form(bid) if callable(form) else form
    if not form.validate_on_submit():
        return None, _render_view(bid, **{form_key: form}, status=422)
    try:
        act(bid, form.reason.data)
    except services.BidError as exc:
        db.session.rollback()
        form.reason.errors.append(str(exc))
        return None, _render_view(bid, **{form_key: form}, status=422)
    db.session.commit()
    return bid, None


def _reject_form(bid) -> RejectForm:
    """The rejection form, its message citing the call's article on rejection."""
    return RejectForm(rejection=str(bid.event.regulation.citation("rejection")))


@bp.route("/bids/<int:bid_id>/reject", methods=["POST"])
@roles_required(Role.ADMIN)
def reject(bid_id: int):
    bid, refused = _secretariat_reason_form(bid_id, _reject_form, "reject_form", lambda b, reason: services.reject_bid(
        b, reason=reason, actor=current_user, now=utcnow()))
    if refused:
        return refused
    flash(f"The bid is rejected under {bid.event.regulation.citation('rejection')}. The notice to the bidder is "
          "queued in the outbox; the bidder also sees the reason on the bid's page.", "success")
    return redirect(url_for("bids.view", bid_id=bid.id))


@bp.route("/bids/<int:bid_id>/admit-late", methods=["POST"])
@roles_required(Role.ADMIN)
def admit_late(bid_id: int):
    bid, refused = _secretariat_reason_form(bid_id, LateAdmissionForm(), "late_form",
                                            lambda b, reason: services.admit_late_bid(b, reason=reason,
                                                                                      actor=current_user, now=utcnow()))
    if refused:
        return refused
    flash("The bid is admitted after the deadline; it can be submitted until scoring opens.", "success")
    return redirect(url_for("bids.view", bid_id=bid.id))


@bp.route("/bids/<int:bid_id>/consultation", methods=["POST"])
@roles_required(Role.ADMIN)
def consultation(bid_id: int):
    bid = load_bid(bid_id)
    form = ConsultationForm(reg=bid.event.regulation)
    if not form.validate_on_submit():
        return _render_view(bid, consultation_form=form, status=422)
    try:
        services.record_consultation(bid, outcome=form.outcome.data, note=form.note.data or "",
                                     fide_accepts=bool(form.fide_accepts.data), actor=current_user, now=utcnow())
    except services.BidError as exc:
        db.session.rollback()
        if not bid.by_sponsor:  # no consultation to record, and no form to show it beside
            flash(str(exc), "error")
            return _render_view(bid, status=409)
        field = form[exc.field if exc.field in ("outcome", "fide_accepts") else "outcome"]
        field.errors = [*field.errors, str(exc)]
        return _render_view(bid, consultation_form=form, status=422)
    db.session.commit()
    recorded = consultation_of(bid)
    flash(f"Consultation recorded: {recorded['text'] if recorded else ''}", "success")
    return redirect(url_for("bids.view", bid_id=bid.id))


@bp.route("/admin/events/<slug>/paper-bid", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def paper(slug: str):
    event = event_or_404(slug)
    form = PaperBidForm()
    bidders = db.session.scalars(select(User).where(User.roles.any(UserRole.role == Role.BIDDER.value))
                                 .order_by(User.organisation, User.email)).all()
    form.owner.choices = [("", "Keep it with me (no bidder account)")] + [
        (str(u.id), f"{u.organisation or u.name} ({u.email})") for u in bidders]
    form.owner.choices = choices(form.owner.choices)
    if form.validate_on_submit():
        owner = db.session.get(User, int(form.owner.data)) if (form.owner.data or "").isdigit() else current_user
        if owner is None:
            abort(404)
        try:
            bid = services.create_bid(event, owner=owner, actor=current_user, now=utcnow(),
                                      entered_by=current_user._get_current_object())
        except services.BidError as exc:
            db.session.rollback()
            form.form_errors.append(str(exc))
            return render_template("bids/paper.html", event=event, form=form), 422
        db.session.commit()
        flash("Paper bid started: key in each section, attach the scanned documents, then submit it.", "success")
        return redirect(url_for("bids.edit", bid_id=bid.id, section="applicant"))
    # A form sent with errors answers 422, as every form of Gambit does.
    return render_template("bids/paper.html", event=event, form=form), 422 if form.is_submitted() else 200


# ------------------------------------------------------------------------------------- the audit log's words

register_audit_link("Bid", pages_of(Bid, "bids.view", "bid_id"))
register_audit_actions({
    "bid.create": "started {object}", "bid.save": "saved the section {section} of {object}",
    "bid.document": "uploaded a document ({name}) to {object}", "bid.submit": "submitted {object}",
    # The bid's other moves (bids.lifecycle.BidAction), recorded as "bid.<action>".
    "bid.withdraw": "withdrew {object}", "bid.reopen": "reopened {object}", "bid.reject": "rejected {object}",
    "bid.shortlist": "shortlisted {object}", "bid.select": "selected {object}",
    "bid.not_select": "did not select {object}", "bid.late_admission": "admitted {object} after the deadline",
    "bid.consultation": "recorded the WCOC's consultation on {object}",
    "bid.president_ruling": "recorded the President's ruling on {object}", "bid.import": "imported {object}"})
