"""The WCOC's pages (conflicts, scorecards, ranking, export) and the secretariat's (weights, admission). Thin:
load, authorize, validate, call one service, commit, redirect. The ranking in the JSON API is api.ranking.

Bidders never see a score: every page here answers 403 to an account holding the bidder role (unless it is
also the secretariat's), and the API does the same (scoring.visibility).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial, wraps
from typing import NamedTuple

from flask import Blueprint, Response, abort, flash, get_template_attribute, redirect, render_template, request, url_for
from flask_login import current_user
from markupsafe import Markup
from sqlalchemy import select
from werkzeug.routing import BuildError

from accounts.forms import EmptyForm
from accounts.models import User
from bids.data import EVALUATION_FIELDS
from bids.models import Bid
from core.auth import Role, roles_required
from core.db import db, reads_first, utcnow, writes_on_get
from core.paging import ASC, DESC, list_page, page_request
from core.templating import id_url, register_nav, register_todo
from events.lifecycle import EventStatus
from events.models import Event
from events.services import event_exists, get_event
from evidence.audit_views import register_audit_actions
from operations.page_cache import versioned_page
from scoring import reading, services
from scoring.charts import criteria_chart, first_places_chart
from scoring.forms import AdmitForm, ConflictsForm, scale, score_text, scorecard_form, weights_form
from scoring.gates import record_first_showing
from scoring.lifecycle import scoring_is_open
from scoring.queries import (
    ScoringData,
    build_ranking,
    declaration_required,
    load_scoring,
    scorecard_of,
    scores_csv,
    weights_of,
    weights_versions,
)
from scoring.rules import (
    BidResult,
    admission_open,
    agreement_sentence,
    prize_fund_hint,
    weight_shares,
    weights_change_needs_reason,
    weights_may_change,
)
from scoring.visibility import REVIEWERS, is_bidder

bp = Blueprint("scoring", __name__)


@bp.record_once
def _nav(state) -> None:
    register_todo(Role.WCOC, _scorecards_due)
    register_nav(40, (Role.WCOC, Role.BOARD), "Scoring", "scoring.index")
    register_nav(41, Role.ADMIN, "Scoring", "scoring.admin_index")


def bid_url(bid_id: int) -> str:
    """The bid's own page (bids.view), or its path while that page is not registered."""
    try:
        return url_for("bids.view", bid_id=bid_id)
    except BuildError:
        return f"/bids/{bid_id}"


@bp.context_processor
def _helpers() -> dict:
    return {"bid_url": bid_url, "score_text": score_text}


def scoring_roles(*roles: Role):
    """roles_required, and 403 for a bidder account whatever else it holds: bidders never see scores."""

    def decorator(view):
        @roles_required(*roles)
        @wraps(view)
        def wrapped(*args, **kwargs):
            if is_bidder(current_user):
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    return decorator


def _event(slug: str) -> Event:
    event = get_event(slug)
    if event is None:
        abort(404)
    return event


def _me():
    return current_user._get_current_object()


def _declaration_gate(data: ScoringData):
    """Before seeing any bid a member confirms a declaration of conflicts that covers every bid
    (scoring.queries.declaration_required, the gate every page showing a bid uses)."""
    message = declaration_required(_me(), data.event, data=data)
    if message is None:
        return None
    flash(message, "info")
    return redirect(url_for("scoring.conflicts", slug=data.event.slug))


def _scored_bid(data: ScoringData, bid_id: int) -> Bid:
    for bid in data.ranked:
        if bid.id == bid_id:
            return bid
    abort(404)


# ----------------------------------------------------------------------------------------------- index


@bp.route("/scoring/")
@scoring_roles(*REVIEWERS)
def index():
    events = db.session.scalars(select(Event).order_by(Event.created_at.desc(), Event.id.desc())).all()
    return render_template("scoring/index.html", events=events, scoring_is_open=scoring_is_open)


bp.add_url_rule("/admin/scoring", endpoint="admin_index", view_func=index)


def _scorecards_due(member: User) -> list[tuple[str, str]]:
    """A WCOC member's to-do on arrival, for each call in scoring: the declaration of conflicts to confirm first,
    or the scorecards still to submit."""
    out = []
    for event in db.session.scalars(select(Event).where(Event.status == EventStatus.SCORING.value)
                                    .order_by(Event.id)):
        data = load_scoring(event)
        if declaration_required(member, event, data=data):
            out.append((f"{event.title}: declare your conflicts of interest, then score the bids",
                        url_for("scoring.conflicts", slug=event.slug)))
            continue
        due = data.due(member)
        left = [b for b in due if not ((c := data.card(b, member)) and c.is_submitted)]
        if left:
            out.append((f"{event.title}: {len(left)} of {len(due)} scorecard{'s' if len(due) != 1 else ''} to "
                        f"submit ({', '.join(b.title for b in left)})",
                        url_for("scoring.my_scorecards", slug=event.slug)))
    return out


# ------------------------------------------------------------------------------------------- conflicts


@bp.route("/events/<slug>/scoring/conflicts", methods=["GET", "POST"])
@scoring_roles(Role.WCOC)
def conflicts(slug: str):
    event = _event(slug)
    data = load_scoring(event)
    me = _me()
    listed = data.bids
    listed_ids = ",".join(str(b.id) for b in listed)
    form = ConflictsForm(bid_choices=[(b.id, f"{b.title} (host federation {b.host_federation or 'not given'})")
                                      for b in listed])
    decl = data.declaration(me)
    notice = None
    if request.method == "POST":
        if request.form.get("listed", "") != listed_ids:
            notice = "The list of bids changed since you opened this page: check it and confirm again."
        elif form.validate_on_submit():
            try:
                services.declare_conflicts(
                    event, me, has_conflict=form.has_conflict.data == "yes",
                    conflicted=[b for b in listed if b.id in (form.bids.data or [])], reason=form.reason.data or "",
                    listed=listed, actor=me, now=utcnow())
            except services.ScoringError as exc:
                db.session.rollback()
                if exc.field in form._fields:
                    form[exc.field].errors = [*form[exc.field].errors, str(exc)]
                else:
                    notice = str(exc)
            else:
                db.session.commit()
                flash("Your declaration of conflicts of interest is recorded.", "success")
                return redirect(url_for("scoring.my_scorecards", slug=slug))
    elif decl is not None:
        form.has_conflict.data = "yes" if decl.has_conflict else "no"
        form.bids.data = sorted(data.declared.get(me.id, set()))
        form.reason.data = decl.reason
    automatic = [(b, data.recusal(me, b)) for b in listed if data.recusal(me, b)
                 and b.id not in data.declared.get(me.id, set())]
    status = 422 if request.method == "POST" else 200
    return render_template("scoring/conflicts.html", event=event, form=form, decl=decl, listed=listed,
                           listed_ids=listed_ids, automatic=automatic, notice=notice,
                           current=data.declaration_current(me)), status


# ------------------------------------------------------------------------------------------ scorecards


@bp.route("/events/<slug>/scoring/")
@writes_on_get
@scoring_roles(Role.WCOC)
def my_scorecards(slug: str):
    event = _event(slug)
    data = load_scoring(event)
    gate = _declaration_gate(data)
    if gate:
        return gate
    me = _me()
    rows = [(b, data.card(b, me), data.recusal(me, b)) for b in data.ranked]
    due = data.due(me)
    done = data.submitted_count(me)
    return render_template("scoring/my_scorecards.html", event=event, rows=rows, due=due, done=done,
                           excluded=data.excluded, ranking_closed=data.ranking_closed_to(me),
                           decl=data.declaration(me), scoring_open=scoring_is_open(event.state))


def _particulars(bid: Bid) -> dict:
    """The submitted version's particulars, with its days as dates (the JSON keeps them ISO) for the page to
    write them as the rest of the app does."""
    version = bid.last_version
    data = dict(version.data_dict) if version else {}
    for key in ("opening_date", "closing_date"):
        data[key] = date.fromisoformat(data[key]) if data.get(key) else None
    if data.get("bank_guarantee") and data["bank_guarantee"].get("valid_until"):
        data["bank_guarantee"] = {**data["bank_guarantee"],
                                  "valid_until": date.fromisoformat(data["bank_guarantee"]["valid_until"])}
    return data


def _render_scorecard(event, bid, data: ScoringData, form, *, card, stale=None, notice=None, status=200):
    reg = event.regulation
    particulars = _particulars(bid)
    reference = prize_fund_hint(reg, services.PRIZE_FUND_CRITERION, particulars.get("prize_fund_eur"))
    evaluation = particulars.get("evaluation") or {}
    texts = {f.criterion: (f.label, evaluation.get(f.key)) for f in EVALUATION_FIELDS}
    me = _me()
    data.load_scores(bid)  # the member's own scorecard and the others' beside it, in one query
    others = data.others_on(bid, me)
    refused = record_first_showing(data, me) if others else None
    if refused:
        flash(refused, "error")
        others = []
    return render_template(
        "scoring/scorecard.html", event=event, reg=reg, bid=bid, form=form, card=card, stale=stale, notice=notice,
        particulars=particulars, reference=reference, texts=texts, others=others,
        hidden_because=data.ranking_closed_to(me),
        scale=scale(reg), anchors=reg.scoring.anchors, reopen_form=EmptyForm(),
        scoring_open=scoring_is_open(event.state),
        weights={w.key: w for w in weight_shares(reg, data.weights)}), status


@bp.route("/events/<slug>/scoring/bids/<int:bid_id>", methods=["GET", "POST"])
@writes_on_get
@scoring_roles(Role.WCOC)
def scorecard(slug: str, bid_id: int):
    event = _event(slug)
    data = load_scoring(event)
    bid = _scored_bid(data, bid_id)
    gate = _declaration_gate(data)
    if gate:
        return gate
    me = _me()
    reason = data.recusal(me, bid)
    if reason:
        abort(403, description=f"You are recused from {bid.title}: {reason}. Your scores on it would not count.")
    card = data.card(bid, me)
    form = scorecard_form(event.regulation)
    if request.method == "GET":
        data.load_scores(bid)
        form.fill(card.score_map() if card else {}, card.comment_map() if card else {}, card.revision if card else 0)
        return _render_scorecard(event, bid, data, form, card=card)
    stale = notice = None
    if form.validate_on_submit():
        submit = request.form.get("action") == "submit"
        try:
            saved = services.save_scorecard(bid, me, scores=form.scores(), comments=form.comments(),
                                            revision=form.revision.data, submit=submit, actor=me, now=utcnow())
        except services.StaleScorecardError as exc:
            db.session.rollback()
            stale = exc.current
            # Saving again from this page is a deliberate choice to replace the saved scorecard.
            form.revision.data = stale.revision if stale else 0
            notice = str(exc)
        except services.ScorecardProblems as exc:
            db.session.rollback()
            form.add_problems(exc.problems)
        except services.Recused:
            db.session.rollback()
            abort(403)
        except services.ScoringError as exc:
            db.session.rollback()
            notice = str(exc)
        else:
            db.session.commit()
            if submit:
                flash(f"Your scorecard for {bid.title} is submitted (version {saved.version}).", "success")
                return redirect(url_for("scoring.my_scorecards", slug=slug))
            flash(f"Your draft scorecard for {bid.title} is saved.", "success")
            return redirect(url_for("scoring.scorecard", slug=slug, bid_id=bid.id))
    data = load_scoring(event)
    return _render_scorecard(event, bid, data, form, card=data.card(bid, me), stale=stale, notice=notice,
                             status=422)


@bp.route("/events/<slug>/scoring/bids/<int:bid_id>/reopen", methods=["POST"])
@scoring_roles(Role.WCOC)
def reopen(slug: str, bid_id: int):
    event = _event(slug)
    data = load_scoring(event)
    bid = _scored_bid(data, bid_id)
    me = _me()
    card = scorecard_of(bid, me)
    if card is None:
        abort(404)
    try:
        services.reopen_scorecard(card, actor=me, now=utcnow())
    except services.ScoringError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"Your scorecard for {bid.title} is a draft again; submit it to make it count (it will be "
              f"version {card.version + 1}).", "success")
    return redirect(url_for("scoring.scorecard", slug=slug, bid_id=bid.id))


# -------------------------------------------------------------------------------------------- ranking


def ranking_page_access(slug: str) -> None:
    """The ranking's load-and-authorize step (its versioned page's access hook, run before a 304 is given): the call
    exists. Who may read it is the route's decorators' (scoring_roles); a reader whose scores are not open yet is
    shown a page saying why (200). Raises NotFound (404) for a call that does not exist."""
    if not event_exists(slug):  # the call itself is read only if the page is computed
        abort(404)


@bp.route("/events/<slug>/scoring/ranking")
@reads_first  # writes only the first showing, briefly (record_first_showing)
@scoring_roles(*REVIEWERS)
# The ranking shows the bids, their scores and the call: nothing of the contract and its money, of mail, the trust
# list, the dossiers or the Board's votes (tests/test_page_versions.py holds it to that after every kind of step).
@versioned_page(access=ranking_page_access,
                not_shown=("contract", "payment", "match", "prize", "mail", "trust", "dossier", "board"))
def ranking(slug: str):
    event = _event(slug)
    data = load_scoring(event)
    closed = data.ranking_closed_to(_me()) or record_first_showing(data, _me())
    if closed:
        return render_template("scoring/ranking_closed.html", event=event, reason=closed)
    report = build_ranking(data, _me())
    reg = data.reg
    sensitivity = report.sensitivity
    # The bids that come first under some sampled weighting; the others are counted in a sentence, not drawn as
    # bars of 0.00% (at 200 bids, some 185 of them).
    first_places = ([(report.bid(bid_id).title, share) for bid_id, share in sensitivity.first_places.leaders]
                    if sensitivity.first_places else [])
    # The criterion-by-criterion tables of every bid are the bulk of the page: shown on demand (one bid, or all).
    asked = request.args.get("details", "")
    details = int(asked) if asked.isdigit() else ("all" if asked == "all" else None)
    # Each bid's line made here, its card rendered once per ranking computed and kept with it (a card is a pure
    # function of the result, which the slot holds, and of the values in its key), its links from one url_for each.
    # One page of the ranked bids (the leading ones first): their lines in the table and their cards; the ranking
    # itself is computed over every bid once and kept, so a page costs its own bids' cards only.
    ask = page_request(request.args, RANKING_SORTS, default_sort="rank")
    ranked = list(report.ranking.bids)
    if ask.sort == "bid":
        ranked.sort(key=lambda b: (report.bid(b.bid_id).title.casefold(), b.bid_id), reverse=ask.dir == DESC)
    elif ask.dir == DESC:
        ranked.reverse()
    page = list_page(ranked, ask)
    bid_link = _bid_links()
    kept = {k: v for k, v in (("page", page.page if page.page > 1 else None),
                              ("sort", ask.sort if ask.sort != "rank" else None),
                              ("dir", ask.dir if ask.dir != ASC else None)) if v is not None}
    details_link = id_url("scoring.ranking", "details", slug=event.slug, **kept)
    bid_card = get_template_attribute("scoring/_ranking_card.html", "bid_card")
    out_of = score_text(reg.scoring.scale_max)
    rows = []
    for b in page.items:
        bid = report.bid(b.bid_id)
        scored = report.members_scored(b)
        shown = details == "all" or details == bid.id
        values = (bid.id, bid.title, bid.admitted_reason, scored[:1].upper() + scored[1:])
        links = (bid_link(bid.id), details_link(bid.id))
        card = report.kept("bid_card", (*values, *links, shown), partial(
            bid_card, b, *values, _chart(report, b, reg, bid.title), reading.disagreements(b),
            agreement_sentence(b, report.expected(bid)), *links, shown, out_of))
        rows.append(RankedRow(result=b, bid=bid, scored=scored, card=card))
    places = sensitivity.first_places
    places_chart = None if places is None else report.kept(
        "first_places_chart", None, partial(first_places_chart, first_places, places.samples))
    # The notes on near ties and bids without a total, and the bids fewer members scored than were due to: this
    # page's (at 200 bids the notes alone were 78 sentences on every page), the others counted.
    on_page = {b.bid_id for b in page.items}
    notes = report.ranking.notes_about(on_page, data.titles)
    short = report.short_of_scorecards
    short_here = [(bid, scored) for bid, scored in short if bid.id in on_page]
    page_of = {b.bid_id: i // page.size + 1 for i, b in enumerate(ranked)}
    return render_template("scoring/ranking.html", event=event, reg=reg, report=report, data=data, notes=notes,
                           details=details, rows=rows, page=page, details_kept=kept, short=short_here,
                           short_elsewhere=len(short) - len(short_here),
                           short_pages=sorted({page_of[bid.id] for bid, _ in short if bid.id not in on_page}),
                           verdict=reading.verdict(report), first_places_svg=places_chart, first_places=first_places,
                           criterion_names={c.key: f"({c.key}) {c.label}" for c in reg.criteria},
                           csv_offered=bool(_me().role_set & set(CSV_READERS)))


RANKING_SORTS = ("rank", "bid")


class RankedRow(NamedTuple):
    """A ranked bid as the ranking page shows it: its result, the bid, "2 of 3 members scored" for its line in the
    table, and its card (scoring/_ranking_card.html)."""

    result: BidResult
    bid: Bid
    scored: str
    card: Markup


def _chart(report, result: BidResult, reg, title: str) -> Markup | None:
    """A bid's chart of its means (None without a total), drawn once per ranking computed."""
    if result.total is None:
        return None
    return report.kept("criteria_chart", result.bid_id, partial(criteria_chart, result, reg, bid_name=title))


def _bid_links() -> Callable[[int], str]:
    """A bid's own page (bids.view) from its id (`bid_url` for many bids), or its path while that page is not
    registered."""
    try:
        return id_url("bids.view", "bid_id")
    except BuildError:
        return lambda bid_id: f"/bids/{bid_id}"


# Who downloads every score and comment: the WCOC and the secretariat (the ranking's link is offered to them alone).
CSV_READERS = (Role.WCOC, Role.ADMIN)


@bp.route("/events/<slug>/scoring/scores.csv")
@reads_first  # writes only the first showing, briefly (record_first_showing)
@scoring_roles(*CSV_READERS)
def export_csv(slug: str):
    event = _event(slug)
    data = load_scoring(event)
    closed = data.ranking_closed_to(_me()) or record_first_showing(data, _me())
    if closed:
        flash(closed, "info")
        return redirect(url_for("scoring.ranking", slug=slug))
    return Response(scores_csv(data, _me()), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{event.slug}-scores.csv"'})


# ----------------------------------------------------------------------------------------- secretariat


@bp.route("/events/<slug>/scoring/weights", methods=["GET", "POST"])
@scoring_roles(Role.ADMIN)
def weights(slug: str):
    event = _event(slug)
    reg = event.regulation
    versions = weights_versions(event)
    current = versions[0] if versions else None
    form = weights_form(reg)
    notice = None
    if request.method == "POST":
        if form.validate_on_submit():
            try:
                version = services.change_weights(event, form.weights(), reason=form.reason.data or "",
                                                  based_on=form.based_on.data, actor=_me(), now=utcnow())
            except services.ScoringError as exc:
                db.session.rollback()
                if exc.field == "reason":
                    form.reason.errors = [*form.reason.errors, str(exc)]
                else:
                    notice = str(exc)
            except (ValueError, TypeError) as exc:
                db.session.rollback()
                notice = str(exc)
            else:
                db.session.commit()
                flash(f"Weights version {version.number} is in force; every ranking from now on uses it.", "success")
                return redirect(url_for("scoring.weights", slug=slug))
    else:
        form.fill(weights_of(reg, current), current.number if current else 0)
    shares = weight_shares(reg, weights_of(reg, current))
    return render_template("scoring/weights.html", event=event, reg=reg, form=form, versions=versions,
                           current=current, shares=shares, notice=notice, may_change=weights_may_change(event.state),
                           needs_reason=weights_change_needs_reason(event.state)), \
        (422 if request.method == "POST" else 200)


def _render_admission(event, forms=None, status=200):
    data = load_scoring(event)
    forms = forms or {}
    rows = []
    for bid in data.bids:
        last = bid.last_version
        failed = last.blocking_findings if last else []
        rows.append((bid, last, failed, forms.get(bid.id) or AdmitForm(prefix=f"bid{bid.id}")))
    return render_template("scoring/admission.html", event=event, rows=rows,
                           admission_open=admission_open(event.state)), status


@bp.route("/events/<slug>/scoring/admission")
@scoring_roles(Role.ADMIN)
def admission(slug: str):
    return _render_admission(_event(slug))


@bp.route("/events/<slug>/scoring/bids/<int:bid_id>/admit", methods=["POST"])
@scoring_roles(Role.ADMIN)
def admit(slug: str, bid_id: int):
    event = _event(slug)
    bid = db.session.get(Bid, bid_id)
    if bid is None or bid.event_id != event.id:
        abort(404)
    form = AdmitForm(prefix=f"bid{bid.id}")
    if form.validate_on_submit():
        try:
            services.admit_bid(bid, form.reason.data, actor=_me(), now=utcnow())
        except services.ScoringError as exc:
            db.session.rollback()
            form.reason.errors = [*form.reason.errors, str(exc)]
        else:
            db.session.commit()
            flash(f"{bid.title} is admitted to scoring; the reason is shown with the ranking.", "success")
            return redirect(url_for("scoring.admission", slug=slug))
    return _render_admission(event, {bid.id: form}, 422)


# ------------------------------------------------------------------------------------- the audit log's words

register_audit_actions({
    "scoring.weights_changed": "changed the scoring weights ({object})",
    "scoring.bid_admitted": "admitted {object} to scoring",
    "scoring.conflicts_declared": "declared conflicts of interest ({object})",
    "scoring.scores_first_shown": "was first shown the other members' scores ({object})",
    "scoring.scorecard_saved": "saved {object} of bid {bid}",
    "scoring.scorecard_submitted": "submitted {object} of bid {bid}",
    "scoring.scorecard_reopened": "reopened {object} of bid {bid}"})
