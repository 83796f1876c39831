"""The Presidential Board's pages: dossiers, the pack, the vote, the decision record."""

from __future__ import annotations

import re
from datetime import date

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select
from sqlalchemy.orm import lazyload

from accounts.models import User, UserRole
from bids.consultation import RULING_GROUNDS
from bids.lifecycle import BidStatus
from bids.models import Bid
from bids.presenters import consultation_of
from bids.services import BidError, kept_from_rivals
from board import jobs, queries, services
from board.documents import tally_names
from board.forms import (
    CorrectionForm,
    DecisionForm,
    PresidentRulingForm,
    VoteForm,
    advice_field_name,
    consulted_on_field_name,
    method_choices,
)
from board.models import Decision, Dossier, DossierView, Vote
from board.rules import DecisionError, dossiers_open, not_voted_sentence
from core.auth import Role, roles_required
from core.db import db, utcnow, writes_on_get
from core.forms import choices
from core.templating import register_nav
from events.models import Event
from events.views import event_or_404
from evidence.audit_views import register_audit_actions, register_audit_link
from evidence.pdf import PdfError
from evidence.storage import StoredFileError, read_verified, refused, send_bytes, send_verified
from finance.rules import contract_article
from operations import outbox
from operations.page_cache import versioned_page
from scoring.visibility import DECISION_RECORD_READERS, sight

bp = Blueprint("board", __name__, url_prefix="/board")
register_nav(30, (Role.BOARD, Role.ADMIN), "Board", "board.index")

BOARD = (Role.BOARD, Role.ADMIN)


def _upload_dir() -> str:
    return current_app.config["UPLOAD_DIR"]


def _require_no_stake(event):
    """Whoever owns or entered a bid in the call reads no rival's dossier (bids.services.kept_from_rivals)."""
    if kept_from_rivals(current_user, event):
        abort(403, description="You own or entered a bid in this call: you neither read its dossiers nor vote in it.")


def _require_open(event):
    _require_no_stake(event)
    if not dossiers_open(event.state):
        abort(403, description="The dossiers open to the Board once the WCOC's scoring is closed.")


def _sight(event):
    """What the caller may see of the call's scores (scoring.visibility; the call's rows are read only when their
    roles alone do not open every score)."""
    return sight(lambda: queries.scoring_rows(event), current_user._get_current_object())


def _require_sight(event, bid_id: int | None):
    """A dossier (`bid_id`) or the pack (None) carries scores, totals and ranks: a reader from whom some are
    withheld (a WCOC member's recusal, on an account that also sits on the Board) is not given it."""
    refused = _sight(event).refusal(None if bid_id is None else [bid_id])
    if refused:
        abort(403, description=refused)


@bp.route("/")
@roles_required(*BOARD)
def index():
    events = db.session.scalars(select(Event).order_by(Event.id)).all()
    return render_template("board/index.html", events=events, dossiers_open=dossiers_open)


def call_page_access(slug: str) -> None:
    """The Board's page of a call, its load-and-authorize step (its versioned page's access hook, run before a 304 is
    given). Raises NotFound (404) for a call that does not exist, Forbidden (403) for a caller with a stake in it."""
    _require_no_stake(event_or_404(slug))


@bp.route("/<slug>")
@writes_on_get
@roles_required(*BOARD)
# The Board's page of a call: nothing of the contract and its money, of mail or of the trust list.
@versioned_page(access=call_page_access, not_shown=("contract", "payment", "match", "prize", "mail", "trust"))
def call(slug: str):
    event = event_or_404(slug)
    _require_no_stake(event)
    return _render_call(event)


def _render_call(event, *, ruling_refused: dict | None = None):
    """The Board's page of a call; `ruling_refused` ({bid_id, grounds, reason, message}): a refused Art. 16
    decision of the President shown again with what was typed and why (422)."""
    is_open = dossiers_open(event.state)
    bids = queries.bids_before_board(event)
    # After the decision the bids are selected / not selected: their dossiers stay listed.
    listed = queries.bids_reviewed(event)
    dossiers = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id)
                                  .order_by(Dossier.bid_id, Dossier.number)).all()
    seen = set(db.session.scalars(select(DossierView.dossier_id).where(DossierView.user_id == current_user.id)))
    latest: dict = {}
    for d in dossiers:
        latest[(d.kind, d.bid_id)] = d
    # After the decision, what it reviewed stays the call's dossiers and pack (not whatever was made last).
    reviewed = queries.reviewed_documents(event) if is_open else None
    if reviewed is not None:
        latest.update({("bid", bid_id): d for bid_id, d in reviewed[1].items()})
        if reviewed[0] is not None:
            latest[("pack", None)] = reviewed[0]
    decision = queries.current_decision(event)
    vote = None
    recused = []
    if current_user.has_role(Role.BOARD):
        vote = db.session.scalars(select(Vote).where(Vote.event_id == event.id,
                                                     Vote.member_id == current_user.id)).first()
        recused = queries.recused_from_vote(event, current_user)
    vote_form = VoteForm()
    vote_form.choice.choices = choices([(str(b.id), b.title) for b in bids] + [("abstain", "I abstain")])
    if vote is not None:
        vote_form.choice.data = str(vote.bid_id) if vote.bid_id else "abstain"
    return render_template(
        "board/call.html", event=event, is_open=is_open, bids=bids, listed=listed, dossiers=dossiers,
        latest=latest, seen=seen, decided_documents=reviewed is not None,
        decision=decision, vote=vote, recused=recused, vote_form=vote_form, can_vote=queries.voting_open(event),
        outcome=_outcome(listed), tally=queries.current_tally(event) if is_open else None,
        not_voted=_not_voted(event, bids) if is_open and decision is None else None,
        decision_form=_decision_form(event, bids) if is_open and decision is None else None,
        wcoc=_wcoc_members(), consultations=_consultations_of(listed),
        consultation_rule=event.regulation.consultation,
        may_rule=bool(getattr(current_user, "is_president", False)) and decision is None,
        ruling_form=PresidentRulingForm(), ruling_refused=ruling_refused,
        unforeseen=event.regulation.citation("unforeseen"),
        ruling_grounds=RULING_GROUNDS), (422 if ruling_refused else 200)


def _not_voted(event, bids) -> str:
    missing, eligible = queries.members_not_voted(event, bids)
    return not_voted_sentence([m.name for m in missing], eligible)


def _consultations_of(bids) -> dict:
    """{bid: where its consultation stands} for the sponsors' bids only (Art. 15.1 consults the host federation on
    a sponsor's bid; a federation's bid has none, and is not listed)."""
    out = {}
    for b in bids:
        found = consultation_of(b)
        if found is not None:
            out[b.id] = found
    return out


@bp.route("/<slug>/bids/<int:bid_id>/consultation/president", methods=["POST"])
@roles_required(Role.BOARD)
def president_ruling(slug: str, bid_id: int):
    """Art. 16: the FIDE President's final decision on a case referred to the President about a sponsor's bid
    whose consultation has no answer (a ground not covered, or an unforeseen event)."""
    event = event_or_404(slug)
    _require_no_stake(event)
    unforeseen = event.regulation.citation("unforeseen")
    if not getattr(current_user, "is_president", False):
        abort(403, description=f"{unforeseen}: only the FIDE President decides what is referred to the President.")
    bid = db.session.get(Bid, bid_id)
    if bid is None or bid.event_id != event.id:
        abort(404)
    form = PresidentRulingForm()
    typed = {"bid_id": bid.id, "grounds": request.form.get("grounds", ""), "reason": request.form.get("reason", "")}
    if not form.validate_on_submit():
        errors = [*form.grounds.errors, *form.reason.errors]
        return _render_call(event, ruling_refused=typed | {
            "message": " ".join(errors) or "Give the President's decision and its reason."})
    try:
        services.record_president_ruling(bid, grounds=form.grounds.data, reason=form.reason.data,
                                         actor=current_user, now=utcnow())
    except BidError as exc:
        db.session.rollback()
        return _render_call(event, ruling_refused=typed | {"message": str(exc)})
    db.session.commit()
    flash(f"{bid.title}: the President's decision under {unforeseen} is recorded.", "success")
    return redirect(url_for("board.call", slug=slug))


def _outcome(bids) -> dict[int, str]:
    """The badge of each bid a decision chose between: selected (pass) or not selected (na)."""
    decided = {BidStatus.SELECTED: "pass", BidStatus.NOT_SELECTED: "na"}
    return {b.id: decided[b.state] for b in bids if b.state in decided}


def _wcoc_members():
    return db.session.scalars(select(User).where(User.active.is_(True), User.roles.any(
        UserRole.role == Role.WCOC.value)).order_by(User.name)).all()


def _decision_form(event, bids, form_class=DecisionForm, **kwargs):
    form = form_class(**kwargs)
    form.method.choices = choices(method_choices(event.regulation.citation("selection")))
    form.selected.choices = choices([("", "Choose…")] + [(str(b.id), b.title) for b in bids])
    if form.decided_on.data is None and request.method == "GET":
        form.decided_on.data = utcnow().date()
    if request.method == "GET":  # what the page shows is what its form names: the votes, the decision in force
        form.votes_seen.data = queries.votes_fingerprint(event, bids)
        if "corrects" in form:
            current = queries.current_decision(event)
            form.corrects.data = str(current.id) if current is not None else ""
    return form


def _serve(dossier: Dossier):
    path = queries.dossier_dir(_upload_dir()) / dossier.stored_name
    actor, now = current_user._get_current_object(), utcnow()
    try:
        data = read_verified(path, dossier.pdf_sha256, what=f"the {dossier.identifier} PDF", obj=dossier,
                             actor=actor, now=now)
    except StoredFileError as exc:
        return refused(exc)
    services.record_view(dossier, actor, now=now)
    name, etag = f"{dossier.identifier}.pdf", dossier.pdf_sha256  # read before the commit expires the row
    db.session.commit()
    return send_bytes(data, download_name=name, as_attachment=False, etag=etag)


def _current(event, bid):
    """Serve the stored file for the current snapshot (a lookup by its inputs hash: nothing is ranked or
    rendered); when it is missing, make it: in the request when few PDFs are missing and there is no Redis,
    otherwise outside the request (RQ worker, or a background thread) while the page shows the progress."""
    what = f"the dossier of {bid.title}" if bid else "the board pack"
    digest, found = queries.stored_current(event, bid)
    if found is not None:
        return _serve(found)
    missing = [] if bid is not None else queries.missing_dossiers(event)
    to_make = len(missing) + 1
    redis = current_app.config.get("REDIS_URL")
    if not redis and to_make <= current_app.config.get("PDF_INLINE_LIMIT", 4):
        try:
            if bid is not None:
                found = services.ensure_dossier(bid, actor=current_user, now=utcnow(), upload_dir=_upload_dir())
            else:
                found, _ = services.ensure_pack(event, actor=current_user, now=utcnow(), upload_dir=_upload_dir())
        except (DecisionError, PdfError) as exc:
            db.session.rollback()
            flash(f"The {'dossier' if bid is not None else 'board pack'} could not be made: {exc}", "error")
            return redirect(url_for("board.call", slug=event.slug))
        return _serve(found)
    if redis:
        if missing:  # the pack needs every bid's dossier first: queue the first one missing, then the pack
            b, d = missing[0]
            job = jobs.enqueue(event.id, b.id, current_user.id, d)
        else:
            job = jobs.enqueue(event.id, bid.id if bid else None, current_user.id, digest)
        status = job.get_status()
        error = None
        restarted = bool((getattr(job, "meta", None) or {}).get("restarted"))  # its worker stopped half-way
    else:
        state = jobs.start_thread(event.id, bid.id if bid else None, current_user.id, digest or "new")
        status, error, restarted = state["status"], state["error"], False
    total = len(queries.scoring_rows(event).ranked) + 1 if bid is None else 1
    return render_template("board/preparing.html", event=event, what=what, status=status,
                           error=status == "failed", rendering=status == "started", reason=error,
                           done=total - to_make, total=total, restarted=restarted), 202


@bp.route("/<slug>/bids/<int:bid_id>/dossier.pdf")
@writes_on_get
@roles_required(*BOARD)
def dossier(slug: str, bid_id: int):
    event = event_or_404(slug)
    _require_open(event)
    # The bid row alone: finding its stored dossier needs none of its relations (rendering loads its own).
    bid = db.session.get(Bid, bid_id, options=[lazyload(Bid.owner), lazyload(Bid.room_rates),
                                               lazyload(Bid.documents), lazyload(Bid.versions)])
    if bid is None or bid.event_id != event.id or not bid.state.visible_to_reviewers:
        abort(404)
    _require_sight(event, bid.id)
    return _current(event, bid)


@bp.route("/<slug>/pack.pdf")
@writes_on_get
@roles_required(*BOARD)
def pack(slug: str):
    event = event_or_404(slug)
    _require_open(event)
    _require_sight(event, None)
    return _current(event, None)


@bp.route("/<slug>/dossiers/<int:dossier_id>.pdf")
@writes_on_get
@roles_required(*BOARD)
def stored(slug: str, dossier_id: int):
    event = event_or_404(slug)
    _require_open(event)
    found = db.session.get(Dossier, dossier_id)
    if found is None or found.event_id != event.id:
        abort(404)
    _require_sight(event, found.bid_id)
    return _serve(found)


@bp.route("/<slug>/vote", methods=["POST"])
@roles_required(Role.BOARD)
def vote(slug: str):
    event = event_or_404(slug)
    form = VoteForm()
    bids = queries.bids_before_board(event)
    form.choice.choices = choices([(str(b.id), b.title) for b in bids] + [("abstain", "I abstain")])
    if not form.validate_on_submit():
        flash("Choose a bid, or abstain.", "error")
        return redirect(url_for("board.call", slug=slug))
    bid = None if form.choice.data == "abstain" else db.session.get(Bid, int(form.choice.data))
    try:
        services.cast_vote(event, current_user, bid, now=utcnow())
    except DecisionError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("board.call", slug=slug))
    db.session.commit()
    flash(f"Your vote is recorded: {bid.title if bid else 'abstention'}. You may change it until the decision.",
          "success")
    return redirect(url_for("board.call", slug=slug))


_CONSULTED_FIELD = re.compile(r"^(?:advice|consulted_on)_(\d{1,9})$")  # an id the database can hold


def _consultations(form_data) -> list[tuple[User, str, date | None]]:
    """The people the President names as consulted: every posted advice or day (advice_<id>, consulted_on_<id>),
    whoever it names, so that the service refuses one who is not a WCOC member of the call rather than the page
    dropping them. A day that is not a date is kept as None (the service asks for it)."""
    ids = sorted({int(m.group(1)) for key in form_data if (m := _CONSULTED_FIELD.match(key))})
    out = []
    for member_id in ids:
        advice = (form_data.get(advice_field_name(member_id)) or "").strip()
        typed = (form_data.get(consulted_on_field_name(member_id)) or "").strip()
        member = db.session.get(User, member_id)
        if member is None or not (advice or typed):
            continue
        try:
            on = date.fromisoformat(typed) if typed else None
        except ValueError:
            on = None
        out.append((member, advice[:5000], on))
    return sorted(out, key=lambda c: (c[0].name.casefold(), c[0].id))


@bp.route("/<slug>/decision", methods=["POST"])
@roles_required(*BOARD)
def decide(slug: str):
    event = event_or_404(slug)
    _require_open(event)
    if not (current_user.has_role(Role.ADMIN) or current_user.is_president):
        abort(403, description="The secretariat or the FIDE President records the decision.")
    bids = queries.bids_before_board(event)
    form = _decision_form(event, bids)
    if form.validate_on_submit():
        selected = db.session.get(Bid, int(form.selected.data)) if form.selected.data.isdigit() else None
        actor = current_user._get_current_object()
        try:
            if selected is None:
                raise DecisionError("Choose the selected bid.", "selected")
            # The pack the Board reviewed is made (rendered) and committed first: the transaction that records
            # the decision renders nothing, so it never holds the audit lock while WeasyPrint runs.
            services.ensure_pack(event, actor=actor, now=utcnow(), upload_dir=_upload_dir())
            db.session.commit()
            decision = services.record_decision(
                event, method=form.method.data, selected=selected, rationale=form.rationale.data or "",
                decided_on=form.decided_on.data, consultations=_consultations(request.form),
                no_meeting_reason=form.no_meeting_reason.data or "", actor=actor, now=utcnow(),
                votes_seen=form.votes_seen.data or None)
        except (DecisionError, PdfError) as exc:
            db.session.rollback()
            _form_error(form, exc)
        else:
            db.session.commit()
            _make_minutes(decision, actor)
            _notify(decision)
            return redirect(url_for("board.decision", slug=slug))
    return _call_with(event, form), 422


def _form_error(form, exc) -> None:
    target = getattr(exc, "field", None)
    (form[target].errors.append(str(exc)) if target in form else form.form_errors.append(str(exc)))


def _make_minutes(decision: Decision, actor) -> None:
    """The minutes of a decision just committed, rendered after the transaction that recorded it. If they
    cannot be made now, the decision stands and its minutes page makes them when first opened."""
    try:
        services.store_minutes(decision, actor=actor, now=utcnow(), upload_dir=_upload_dir())
    except PdfError as exc:
        db.session.rollback()
        flash(f"The minutes could not be made yet ({exc}); they are made when first opened.", "warning")
    else:
        db.session.commit()


def _call_with(event, form):
    bids = queries.bids_before_board(event)
    vote_form = VoteForm()
    vote_form.choice.choices = choices([(str(b.id), b.title) for b in bids] + [("abstain", "I abstain")])
    return render_template("board/call.html", event=event, is_open=True, bids=bids, listed=bids,
                           dossiers=[], latest={}, seen=set(), decision=None, vote=None, recused=[],
                           can_vote=queries.voting_open(event), outcome={},
                           vote_form=vote_form, tally=queries.current_tally(event), decision_form=form,
                           wcoc=_wcoc_members())


def _notify(decision: Decision, done: str = "The decision is recorded; the call is decided.") -> None:
    """Say at once what became of the bidders' notices: written into the outbox with the decision (or the
    correction), they go out from there whatever the mail server does now."""
    counts = outbox.counts(about=("decision", decision.id))
    flash(f"{done} " + outbox.written_sentence(
        counts, what="notices to the bidders", mail_enabled=bool(current_app.config.get("MAIL_ENABLED"))), "success")


@bp.route("/<slug>/decision")
@writes_on_get
@roles_required(*DECISION_RECORD_READERS)  # scoring.visibility.reads_the_decision_record
def decision(slug: str):
    event = event_or_404(slug)
    return _decision_page(event)




def _decision_page(event, form=None, status: int = 200):
    current = queries.current_decision(event)
    if current is None:
        abort(404, description="No decision is recorded for this call yet.")
    history = db.session.scalars(select(Decision).where(Decision.event_id == event.id).order_by(Decision.id)).all()
    if form is None and (current_user.has_role(Role.ADMIN) or current_user.is_president):
        form = _decision_form(event, queries.bids_decided(event), CorrectionForm)
    notified = next((d for d in reversed(history) if d.bidders_notified), None)  # the latest record's notices
    notices = outbox.counts(about=("decision", notified.id)) if notified is not None else {}
    return render_template("board/decision.html", event=event, decision=current, history=history,
                           names=tally_names(current), notices=notices, notified=notified,
                           form=form, wcoc=_wcoc_members(), checkpoint=queries.decision_checkpoint(current),
                           contract_article=contract_article(event.regulation)), status


@bp.route("/<slug>/decision/correct", methods=["POST"])
@roles_required(*BOARD)
def correct(slug: str):
    event = event_or_404(slug)
    if not (current_user.has_role(Role.ADMIN) or current_user.is_president):
        abort(403)
    current = queries.current_decision(event)
    if current is None:
        abort(404)
    form = _decision_form(event, queries.bids_decided(event), CorrectionForm)
    if not (form.validate_on_submit() and form.selected.data.isdigit()):
        return _decision_page(event, form, 422)
    # The decision the page showed in force, named by the form: sent twice, or from a stale page, it is refused.
    named = db.session.get(Decision, int(form.corrects.data)) if (form.corrects.data or "").isdigit() else None
    if named is None or named.event_id != event.id:
        form.form_errors.append("The form does not say which decision it corrects (the page is out of date); "
                                "nothing was recorded. Reload the page and enter the correction again.")
        return _decision_page(event, form, 409)
    actor = current_user._get_current_object()
    try:
        decision = services.record_decision(
            event, method=form.method.data, selected=db.session.get_one(Bid, int(form.selected.data)),
            rationale=form.rationale.data or "", decided_on=form.decided_on.data,
            consultations=_consultations(request.form), no_meeting_reason=form.no_meeting_reason.data or "",
            actor=actor, now=utcnow(), corrects=named,
            correction_reason=form.correction_reason.data or "", votes_seen=form.votes_seen.data or None)
    except DecisionError as exc:
        db.session.rollback()
        _form_error(form, exc)
        return _decision_page(event, form, 422)
    db.session.commit()
    _make_minutes(decision, actor)
    _notify(decision, "The correction is recorded as a new decision record linked to the one it corrects.")
    return redirect(url_for("board.decision", slug=slug))


@bp.route("/<slug>/decision/<int:decision_id>/minutes.pdf")
@writes_on_get
@roles_required(*DECISION_RECORD_READERS)  # scoring.visibility.reads_the_decision_record
def minutes(slug: str, decision_id: int):
    event = event_or_404(slug)
    found = db.session.get(Decision, decision_id)
    if found is None or found.event_id != event.id:
        abort(404)
    if not found.minutes_stored_name:
        try:
            services.store_minutes(found, actor=current_user._get_current_object(), now=utcnow(),
                                   upload_dir=_upload_dir())
        except PdfError as exc:
            db.session.rollback()
            return render_template("error.html", code=503, message=f"The minutes could not be made: {exc}"), 503
        db.session.commit()
    assert found.minutes_stored_name is not None  # stored just above if it was not already
    seen = _sight(event)
    if seen.refusal(row.get("bid") for row in found.loads("ranking").get("bids") or []):
        try:
            copy = queries.minutes_copy(found, seen, reader=current_user.name, now=utcnow())
        except PdfError as exc:
            return render_template("error.html", code=503, message=f"The minutes could not be made: {exc}"), 503
        return send_bytes(copy, download_name=f"decision-{found.id}-minutes-copy.pdf", as_attachment=False)
    path = queries.dossier_dir(_upload_dir()) / found.minutes_stored_name
    return send_verified(path, found.minutes_sha256, what=f"the minutes of decision {found.id}", obj=found,
                         actor=current_user._get_current_object(), now=utcnow(),
                         download_name=f"decision-{found.id}-minutes.pdf")




# ------------------------------------------------------------------------------------- the audit log's words

# A decision links to its call's decision page (which shows every record of it, corrections included); a dossier
# to its stored PDF. A vote links nowhere: the secretariat reads votes on the board's pages, not one by one.
register_audit_link("Decision", lambda ids: {i: url_for("board.decision", slug=s)
                                             for i, s in queries.call_slugs(Decision, ids).items()})
register_audit_link("Dossier", lambda ids: {i: url_for("board.stored", slug=s, dossier_id=i)
                                            for i, s in queries.call_slugs(Dossier, ids).items()})
register_audit_actions({
    "dossier.bid": "made the dossier {identifier} of a bid ({object})",
    "dossier.pack": "made the board pack {identifier} ({object})",
    "dossier.opened": "opened the dossier {identifier} ({object})", "board.vote": "cast a board vote ({object})",
    "decision.record": "recorded the Board's decision ({object})",
    "decision.correct": "corrected the Board's decision ({object})",
    "decision.supersede": "marked {object} as superseded by decision {by}",
    "decision.minutes": "stored the minutes of {object}",
    "decision.notified": "notified the bidders of {object}"})
