"""Dossiers, votes and the decision: the only code that changes the board's rows (board.queries reads them). Never
commits; takes the actor and the time; writes the audit log."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from datetime import date, datetime

from pypdf import PdfReader
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from accounts.models import User
from bids.lifecycle import BidStatus
from bids.models import Bid
from bids.services import BidError, has_stake, mark_decided
from bids.services import record_president_ruling as record_bid_ruling
from board.documents import dossier_context, dossier_files, inputs_file, minutes_context, pack_context
from board.lifecycle import DECISION_LIFECYCLE, DecisionAction, DecisionStatus
from board.models import Decision, Dossier, DossierView, Vote
from board.notify import queue_notices
from board.queries import (
    already_corrected,
    bid_inputs,
    bids_before_board,
    bids_decided,
    counted_votes,
    current_decision,
    current_pack,
    current_tally,
    decision_checkpoint,
    dossier_dir,
    fingerprint,
    pack_inputs,
    ranking_report,
    recused_from_vote,
    reviewed_documents,
    scoring_closed_on,
    stored_by_digest,
    votes_counted,
    voting_open,
)
from board.rules import (
    Consulted,
    DecisionError,
    DecisionMethod,
    Tally,
    check_board_vote,
    check_consultation,
    check_decided_on,
    check_president_grounds,
    dossiers_open,
    inputs_sha256,
    rationale_needed,
)
from core.auth import Role
from core.db import db, swap_state
from core.hooks import Hook
from events.lifecycle import EventStatus
from events.lifecycle import TransitionError as EventTransitionError
from events.models import Event
from events.services import change_event_status, lock_call
from evidence import audit
from evidence.pdf import render_pdf, sha256
from evidence.signing import sign_issued
from evidence.storage import store_file


def _pages(data: bytes) -> int:
    return len(PdfReader(io.BytesIO(data)).pages)


@dataclass(frozen=True)
class Made:
    """A dossier or pack for the current inputs: the stored one (`pdf` None), or one rendered and signed now, its
    row built but not yet added to the session (`keep` stores both)."""

    dossier: Dossier
    pdf: bytes | None


def _find_or_render(event: Event, bid: Bid | None, inputs: dict, template: str, context, *, attachments,
                    actor: User | None, now: datetime) -> Made:
    """The one path of a stored document: looked up by the hash of its inputs (queries.stored_by_digest), else
    rendered from `template` with `context(identifier)` and the files `attachments()` gives (the data it was made
    from, embedded), signed, and its row built, without writing anything:
    every PDF is made before the transaction writes (and so before it takes the audit lock). Raises
    evidence.pdf.PdfError if rendering fails."""
    kind = "bid" if bid is not None else "pack"
    digest = inputs_sha256(inputs)
    found = stored_by_digest(event.id, kind, [digest]).get(digest)
    if found is not None:
        return Made(found, None)
    number = (db.session.scalar(select(func.max(Dossier.number)).where(
        Dossier.event_id == event.id, Dossier.kind == kind,
        Dossier.bid_id == bid.id if bid else Dossier.bid_id.is_(None))) or 0) + 1
    identifier = (f"{event.slug}-bid{bid.id}-d{number}" if bid else f"{event.slug}-pack-p{number}").upper()
    data = sign_issued(render_pdf(template, inputs_sha256=digest, attachments=attachments(), **context(identifier)),
                       document=f"{'dossier' if bid else 'board pack'} {identifier}")
    dossier = Dossier(event_id=event.id, bid_id=bid.id if bid else None, kind=kind, number=number,
                      identifier=identifier, inputs_sha256=digest, inputs=json.dumps(inputs, sort_keys=True),
                      pdf_sha256=sha256(data), pages=_pages(data), size_bytes=len(data), created_at=now,
                      created_by_id=getattr(actor, "id", None))
    if bid is not None:
        dossier.bid = bid  # the pack lists it before it is written
    return Made(dossier, data)


def _dossier(bid: Bid, report, *, actor: User | None, now: datetime) -> Made:
    inputs = bid_inputs(bid, report)
    return _find_or_render(bid.event, bid, inputs, "dossier.html",
                           lambda identifier: dossier_context(bid, report, identifier=identifier, now=now),
                           attachments=lambda: dossier_files(bid, inputs, now), actor=actor, now=now)


def _pack(event: Event, report, *, actor: User | None, now: datetime) -> list[Made]:
    """Every bid's dossier before the Board, then the pack that lists them (last)."""
    made = [_dossier(b, report, actor=actor, now=now) for b in report.data.ranked]
    dossiers = [m.dossier for m in made]
    inputs = pack_inputs(event, report, dossiers)
    return [*made, _find_or_render(
        event, None, inputs, "board_pack.html",
        lambda identifier: pack_context(event, report, dossiers, identifier=identifier, now=now),
        attachments=lambda: [inputs_file("pack", inputs, now)], actor=actor, now=now)]


def make_documents(event: Event, bid: Bid | None, *, actor: User | None, now: datetime,
                   report=None) -> list[Made]:
    """The current dossier of `bid`, or (bid None) every bid's current dossier then the board pack (last), each
    the stored one or one rendered now and not yet stored: what the request (ensure_dossier, ensure_pack) and the
    background worker (board.jobs.render_all) make alike, then store with `keep`. After the decision, the
    documents it reviewed are the call's (the bids' statuses change with it, which would otherwise make a new
    dossier and pack nobody reviewed). `report`: the ranking report with everything loaded for rendering, when
    the caller has it. Writes nothing. Raises DecisionError before the WCOC's scoring is closed,
    evidence.pdf.PdfError if rendering fails."""
    if not dossiers_open(event.state):
        raise DecisionError("The dossiers open to the Board once the WCOC's scoring is closed.")
    reviewed = reviewed_documents(event)
    if reviewed is not None:
        pack, dossiers = reviewed
        if bid is not None and bid.id in dossiers:
            return [Made(dossiers[bid.id], None)]
        if bid is None and pack is not None:
            return [*(Made(d, None) for d in sorted(dossiers.values(), key=lambda d: d.bid_id or 0)),
                    Made(pack, None)]
    report = ranking_report(event, full=True) if report is None else report
    return [_dossier(bid, report, actor=actor, now=now)] if bid is not None else _pack(event, report, actor=actor,
                                                                                        now=now)


def keep(made: list[Made], *, actor: User | None, now: datetime, upload_dir: str) -> list[Dossier]:
    """Store what make_documents rendered, file then row, each audited (`dossier.bid` / `dossier.pack`); a
    document found stored is returned as it is. One made at the same moment by someone else (the unique inputs
    hash): theirs is kept and returned, our file removed. Raises evidence.storage.StorageError when the file cannot be
    written."""
    return [m.dossier if m.pdf is None else _store(m.dossier, m.pdf, actor=actor, now=now, upload_dir=upload_dir)
            for m in made]


def _store(dossier: Dossier, data: bytes, *, actor: User | None, now: datetime, upload_dir: str) -> Dossier:
    dossier.stored_name = store_file(dossier_dir(upload_dir), data)
    try:
        with db.session.begin_nested():
            db.session.add(dossier)
            db.session.flush()
    except IntegrityError:
        (dossier_dir(upload_dir) / dossier.stored_name).unlink(missing_ok=True)
        return stored_by_digest(dossier.event_id, dossier.kind, [dossier.inputs_sha256])[dossier.inputs_sha256]
    audit.record(f"dossier.{dossier.kind}", dossier, actor=actor, now=now,
                 data={"identifier": dossier.identifier, "sha256": dossier.pdf_sha256, "inputs": dossier.inputs_sha256})
    return dossier


def ensure_dossier(bid: Bid, *, actor: User | None, now: datetime, upload_dir: str, report=None) -> Dossier:
    """The current dossier of a bid, stored (make_documents, then keep). Raises DecisionError before scoring is
    closed, evidence.pdf.PdfError if rendering fails."""
    made = make_documents(bid.event, bid, actor=actor, now=now, report=report)
    return keep(made, actor=actor, now=now, upload_dir=upload_dir)[-1]


def ensure_pack(event: Event, *, actor: User | None, now: datetime, upload_dir: str) -> tuple[Dossier, list[Dossier]]:
    """The current board pack and the current dossier of every bid before the Board, stored (make_documents, then
    keep): every PDF is rendered first and the rows are written after, so no lock is held while WeasyPrint runs.
    Raises DecisionError before scoring is closed, evidence.pdf.PdfError if rendering fails."""
    *dossiers, pack = keep(make_documents(event, None, actor=actor, now=now), actor=actor, now=now,
                           upload_dir=upload_dir)
    return pack, dossiers


def record_president_ruling(bid: Bid, *, grounds: str, reason: str, actor: User, now: datetime) -> None:
    """Art. 16 on a sponsor's bid whose consultation has no answer: the FIDE President's final decision, with its
    ground (not covered, or an unforeseen event) and reason (bids.services checks who, which and why); only while
    no decision is in force: after it, the record is what the decision saw. Raises BidError."""
    lock_call(bid.event)  # the decision waits: it reads what the ruling changes inside the same lock
    if current_decision(bid.event) is not None:
        raise BidError("The decision is recorded: no case can be added to what it saw (a correction of the "
                       "decision starts from the record as it stands).", "reason")
    record_bid_ruling(bid, grounds=grounds, reason=reason, actor=actor, now=now)


def record_view(dossier: Dossier, user, *, now: datetime) -> bool:
    """Note that `user` opened the dossier (first time only). Returns True the first time."""
    seen = db.session.scalars(select(DossierView).where(DossierView.dossier_id == dossier.id,
                                                        DossierView.user_id == user.id)).first()
    if seen is not None:
        return False
    db.session.add(DossierView(dossier_id=dossier.id, user_id=user.id, opened_at=now))
    db.session.flush()
    audit.record("dossier.opened", dossier, actor=user, now=now, data={"identifier": dossier.identifier})
    return True


_VOTE_RACE = ("Your vote was recorded at the same moment from another page; nothing was changed by this one. "
              "Reload the page to see it; you may change it until the decision.")


def cast_vote(event: Event, member, bid: Bid | None, *, now: datetime) -> Vote:
    """A board member votes for one bid in the contest, or abstains (bid None); a later vote replaces the earlier
    one until the decision. Raises DecisionError when the member is recused, the call is not before the Board,
    the bid is not in the contest, or a first vote of the same member was recorded at the same moment."""
    if Role.BOARD not in member.role_set:
        raise DecisionError("Only members of the Presidential Board vote.")
    lock_call(event)  # a vote and the decision that counts it never interleave: the state is read inside the lock
    if not voting_open(event):
        raise DecisionError("The Board votes once the WCOC's scoring is closed and until the decision.")
    if has_stake(member, event):
        raise DecisionError("You own or entered a bid in this call: you do not vote in it.")
    recused = recused_from_vote(event, member)
    if recused:
        raise DecisionError(f"{event.regulation.citation('recusal')}: you are recused from this vote: your "
                            f"federation ({member.federation}) hosts {', '.join(b.title for b in recused)}.")
    if bid is not None and (bid.event_id != event.id or not bid.state.in_contest):
        raise DecisionError("That bid is not before the Board.")
    vote = db.session.scalars(select(Vote).where(Vote.event_id == event.id, Vote.member_id == member.id)).first()
    if vote is None:
        try:
            with db.session.begin_nested():  # two first votes at once: the unique (call, member) refuses one
                vote = Vote(event_id=event.id, member_id=member.id, bid_id=bid.id if bid else None, cast_at=now)
                db.session.add(vote)
                db.session.flush()
        except IntegrityError:
            raise DecisionError(_VOTE_RACE) from None
    else:
        vote.bid_id = bid.id if bid else None
        vote.cast_at = now
        db.session.flush()
    audit.record("board.vote", vote, actor=member, now=now,
                 data={"event": event.slug, "bid": bid.id if bid else None})
    return vote


VOTES_CHANGED = ("The votes changed since this page was loaded (now: {now}); nothing was recorded. Reload the page, "
                 "read the tally again and record the decision.")


# `after_correction(decision, *, superseded, actor, now)`, run inside the transaction of a correction that selects
# another bid: contracts/ closes the old winner's contract there. A layer above the board provides it (app.py), so
# the board never imports contracts.
after_correction: Hook[..., object] = Hook("board.services.after_correction")


ALREADY_DECIDED = ("A decision is recorded once the WCOC's scoring is closed, and only once; a mistake is mended "
                   "by a correction.")


def _check_method(event: Event, method: DecisionMethod, selected: Bid, contest: list[Bid], decided_on: date,
                  consultations: list[tuple[User, str, date | None]], no_meeting_reason: str, *, actor: User,
                  now: datetime) -> Tally | None:
    """The rules of the method and the date; returns the tally of a board vote. Raises DecisionError."""
    reg = event.regulation
    selection = str(reg.citation("selection"))
    the_tally, last_vote = None, None
    if method.by_vote:
        the_tally = current_tally(event, contest)
        tie_break = reg.citation("tie_break")
        check_board_vote(the_tally, selected.id, {b.id: b.title for b in contest},
                         procedure=str(reg.citation("board_vote")), tie_break=str(tie_break),
                         tie_break_says=reg.procedure.rules[tie_break.key].says,
                         tie_break_method=reg.board_voting.tie_break)
        votes, _ = counted_votes(event, contest)
        last_cast = max((v.cast_at for v in votes), default=None)
        last_vote = last_cast.date() if last_cast else None
    else:
        if not getattr(actor, "is_president", False):
            raise DecisionError(f"{selection}: only the FIDE President decides alone, in consultation with the WCOC, "
                                "when a Presidential Board meeting cannot be held.", "method")
        tally = current_tally(event, contest)
        if tally.tied:  # the Board met and tied: the procedure's tie-break decides, never the President alone
            tie_break = reg.citation("tie_break")
            titles = {b.id: b.title for b in contest}
            raise DecisionError(
                f"{tie_break}: the Board's votes are tied ({tally.names(titles)}), and a tie is broken as the "
                f"bidding procedure says ({reg.procedure.rules[tie_break.key].says.strip()}), not by the President "
                f"deciding alone: {selection} gives the President the decision only if a Presidential Board "
                "meeting cannot be held.", "method")
        if tally.cast:  # the Board voted, so it met: the decision is the Board's, recorded by its vote
            titles = {b.id: b.title for b in contest}
            raise DecisionError(
                f"{selection}: the FIDE President decides alone only \"if a Presidential Board meeting cannot be "
                f"held\", and the Board has voted on this call ({_votes_cast(tally, titles)}): the Board met, so "
                "the decision is the Board's, recorded as a board vote.", "method")
        check_president_grounds(no_meeting_reason, [
            Consulted(member.name, advice, on, in_wcoc=_in_wcoc_of(event, member))
            for member, advice, on in consultations], selection=selection, decided_on=decided_on,
            today=now.date(), call_opened=event.created_at.date())
    check_decided_on(decided_on, today=now.date(), last_vote=last_vote, scoring_closed=scoring_closed_on(event))
    return the_tally


def _votes_cast(tally: Tally, titles: dict[int, str]) -> str:
    """"2 votes cast: Lviv: 2; Tbilisi: 0" (abstentions named when there are any)."""
    abstained = f", {tally.abstentions} abstaining" if tally.abstentions else ""
    return f"{tally.cast} vote{'s' if tally.cast != 1 else ''} cast{abstained}: {tally.names(titles)}"


def _in_wcoc_of(event: Event, member: User) -> bool:
    """A member of the WCOC of the call: an active account holding the WCOC role, with no bid in the call."""
    return bool(member.active) and Role.WCOC in member.role_set and not has_stake(member, event)


def _move_bids(contest: list[Bid], selected: Bid, decision: Decision, *, actor: User, now: datetime) -> None:
    """Each bid of the contest to selected / not selected through the bid lifecycle's one guarded transition
    (bids.services.mark_decided); a bid already where the decision puts it, in a correction, stays."""
    for bid in contest:
        chosen = bid.id == selected.id
        if bid.state is (BidStatus.SELECTED if chosen else BidStatus.NOT_SELECTED):
            continue
        try:
            mark_decided(bid, selected=chosen, decision_id=decision.id, actor=actor, now=now)
        except BidError as exc:
            raise DecisionError(f"{bid.title}: {exc} Nothing was recorded; reload the page and record the decision "
                                "again.") from None


def _check_decidable(event: Event, corrects: Decision | None, correction_reason: str) -> None:
    """A first decision: the call is in deliberation. A correction: `corrects` is still the decision in force of
    this decided call, and the correction says what it mends."""
    if corrects is None:
        if event.state is not EventStatus.DELIBERATION:
            raise DecisionError(ALREADY_DECIDED)
        return
    db.session.refresh(corrects)
    if corrects.event_id != event.id:
        raise DecisionError("Only the decision in force of a decided call can be corrected.")
    if corrects.state is not DecisionStatus.IN_FORCE:
        raise DecisionError(already_corrected(corrects))
    if event.state is not EventStatus.DECIDED:
        raise DecisionError("Only the decision in force of a decided call can be corrected.")
    DECISION_LIFECYCLE.next(corrects.state, DecisionAction.SUPERSEDE)
    if not correction_reason.strip():
        raise DecisionError("Say what the correction mends.", "correction_reason")


def _check_rationale(event: Event, selected: Bid, rationale: str, report) -> None:
    """The duty of reasons: a decision that departs from the WCOC's ranking (`report`), chooses between bids tied
    at its top or selects a bid with a red flag gives its reasons (board.rules.rationale_needed)."""
    flagged = [r.bid_id for r in report.ranking.bids if r.red_flags]
    needed = rationale_needed(selected.id, ranking_leaders=report.ranking.leaders, flagged=flagged)
    if needed and not rationale:
        raise DecisionError(f"{event.regulation.citation('duty_of_reasons')}: give the reasons for the decision: "
                            f"{needed}.", "rationale")


def _decide_call(event: Event, *, actor: User, now: datetime) -> list[dict]:
    """A first decision: the call moves from deliberation to decided; returns the documents the Board reviewed
    (the current board pack and its dossiers)."""
    found = current_pack(event)
    if found is None:
        raise DecisionError("The board pack is not up to date with the scores: open the board pack (it is made "
                            "again), then record the decision.")
    pack, dossiers = found
    reviewed = [{"identifier": d.identifier, "sha256": d.pdf_sha256, "bid": d.bid_id} for d in dossiers]
    reviewed.append({"identifier": pack.identifier, "sha256": pack.pdf_sha256, "bid": None})
    try:  # the call's one guarded transition, a compare-and-swap: of two decisions at once, one is refused
        change_event_status(event, "decide", actor=actor, now=now, reason="the decision of the Board",
                            by_decision=True)
    except EventTransitionError:
        raise DecisionError(ALREADY_DECIDED) from None
    return reviewed


def _supersede(corrects: Decision, *, now: datetime) -> list[dict]:
    """A correction: `corrects` moves from in force to superseded; returns the documents it reviewed, which the
    correction reviewed too."""
    reviewed = corrects.loads("reviewed")
    if not swap_state(corrects, expected=DecisionStatus.IN_FORCE, values={
            "status": DECISION_LIFECYCLE.next(corrects.state, DecisionAction.SUPERSEDE), "superseded_at": now}):
        raise DecisionError(f"Decision {corrects.id} was corrected at the same moment by someone else; nothing "
                            "was recorded by this correction. Reload the page to see the decision in force.")
    return reviewed


def record_decision(event: Event, *, method: str, selected: Bid, rationale: str, decided_on: date,
                    consultations: list[tuple[User, str, date | None]], actor: User, now: datetime,
                    no_meeting_reason: str = "", corrects: Decision | None = None,
                    correction_reason: str = "", votes_seen: str | None = None) -> Decision:
    """Record the decision of Art. 15.5 (or, with `corrects`, a correction of the decision in force): the one
    decision in force for the call.

    First decision: a compare-and-swap of the call from "deliberation" to "decided" (two at once: one is
    recorded, the other refused), the selected bid to "selected" and the others before the Board to "not
    selected". Correction: a compare-and-swap of `corrects` from "in force" to "superseded", the bids moved where
    the correction puts them and, when it selects another bid, the after_correction hook runs in the same transaction
    (contracts/ closes the old winner's contract to new payments).

    `method` "board_vote": the selected bid must be the one with the most votes of the members not recused (no
    vote is refused; a tie is refused citing the call's bidding procedure, whose tie-break says how it is
    broken, never as a case for the President); "president": the FIDE President decides alone, which Art. 15.5
    allows only "if a Presidential Board meeting cannot be held" and "in consultation with the WCOC": the
    President gives `no_meeting_reason` (why no meeting could be held) and `consultations`, (WCOC member of the
    call, advice, day consulted) each, the day not in the future, not before the call, not after the decision.
    The date of the decision cannot be in the future, before the close of scoring, or (board vote) before the
    last vote.

    Nothing is rendered here: the board pack must be current (ensure_pack, in an earlier transaction), and the
    minutes are made after the commit (store_minutes).

    Everything is checked inside the call's lock (events.services.lock_call, the one cast_vote takes), and the
    record stores the votes it counted (ids and choices). `votes_seen`: the fingerprint of the votes the page
    showed (votes_fingerprint); the decision is refused when they changed since. A correction of a decision that
    is no longer in force (corrected already: a form sent twice, or a stale page) is refused saying when and by
    whom it was corrected. Raises DecisionError when a rule is not met; the message says which.
    """
    rationale = (rationale or "").strip()
    try:
        how = DecisionMethod(method)
    except ValueError:
        raise DecisionError("Choose how the decision was taken.", "method") from None
    # One lock with the votes (cast_vote): no vote changes between the tally read here and the commit.
    lock_call(event)
    _check_decidable(event, corrects, correction_reason)
    contest = bids_before_board(event) if corrects is None else bids_decided(event)
    if selected.id not in {b.id for b in contest}:
        raise DecisionError("The selected bid must be one before the Board.", "selected")
    if event.regulation.consultation is not None:
        check_consultation(selected.consultation_state, selected.title,
                           article=event.regulation.consultation.article)
    no_meeting_reason = (no_meeting_reason or "").strip()
    counted = votes_counted(counted_votes(event, contest)[0])
    if votes_seen is not None and votes_seen != fingerprint(counted):
        raise DecisionError(VOTES_CHANGED.format(now=current_tally(event, contest).names(
            {b.id: b.title for b in contest}) or "no votes"))
    the_tally = _check_method(event, how, selected, contest, decided_on, consultations, no_meeting_reason,
                              actor=actor, now=now)
    report = ranking_report(event)
    _check_rationale(event, selected, rationale, report)
    reviewed = _decide_call(event, actor=actor, now=now) if corrects is None else _supersede(corrects, now=now)
    decision = Decision(
        event_id=event.id, method=how.value, selected_bid_id=selected.id, decided_on=decided_on,
        tally=json.dumps(the_tally.as_dict() if the_tally else {}), votes=json.dumps(counted),
        no_meeting_reason="" if how.by_vote else no_meeting_reason,
        consultations=json.dumps([] if how.by_vote else [
            {"member": m.name, "member_id": m.id, "advice": a.strip(), "on": on.isoformat() if on else None}
            for m, a, on in consultations]),
        rationale=rationale, ranking=json.dumps({"weights": report.weights_label, "bids": [
            {"bid": r.bid_id, "title": report.bid(r.bid_id).title, "rank": r.rank_label,
             "total": str(r.total) if r.total is not None else None,
             "red_flags": len(r.red_flags)} for r in report.ranking.bids]}),
        reviewed=json.dumps(reviewed), recorded_at=now, recorded_by_id=actor.id,
        corrects_id=corrects.id if corrects else None, correction_reason=correction_reason.strip(),
        status=DecisionStatus.IN_FORCE.value, regulation_version_id=event.regulation_version_id)
    try:
        with db.session.begin_nested():  # the unique index: one decision in force per call
            db.session.add(decision)
            db.session.flush()
    except IntegrityError:
        raise DecisionError(ALREADY_DECIDED) from None
    if corrects is not None:
        audit.record("decision.supersede", corrects, actor=actor, now=now, data={"by": decision.id})
    _move_bids(contest, selected, decision, actor=actor, now=now)
    if corrects is not None and corrects.selected_bid_id != selected.id:
        after_correction(decision, superseded=corrects, actor=actor, now=now)
    audit.record("decision.correct" if corrects else "decision.record", decision, actor=actor, now=now,
                 data={"method": how.value, "selected": selected.id, "reviewed": reviewed,
                       "no_meeting_reason": decision.no_meeting_reason,
                       "consultations": decision.loads("consultations"), "decided_on": decided_on,
                       "corrects": corrects.id if corrects else None, "votes": counted})
    # Every record tells every bidder of the call, a correction as much as the first decision: a correction may
    # change the selected bid, and a bidder learns what is in force from the notice, not by watching the page.
    mark_notified(decision, messages=queue_notices(decision, actor=actor, now=now), now=now)
    return decision


def store_minutes(decision: Decision, *, actor: User, now: datetime, upload_dir: str) -> Decision:
    """Render the minutes of a recorded decision and store them with their SHA-256, once (a compare-and-swap on
    the empty hash: made twice at once, the first stored is kept). Run after the decision is committed, so
    WeasyPrint never runs inside the transaction that records it. Raises evidence.pdf.PdfError if rendering fails.
    Writes `decision.minutes` to the audit log."""
    if decision.minutes_sha256:
        return decision
    minutes = sign_issued(_minutes(decision, now=now), document=f"minutes of decision DECISION-{decision.id}")
    name = store_file(dossier_dir(upload_dir), minutes)
    if not swap_state(decision, expected=None, column="minutes_sha256",
                      values={"minutes_sha256": sha256(minutes), "minutes_stored_name": name}):
        (dossier_dir(upload_dir) / name).unlink(missing_ok=True)
        return decision
    audit.record("decision.minutes", decision, actor=actor, now=now,
                 data={"minutes_sha256": decision.minutes_sha256})
    return decision


def _minutes(decision: Decision, *, now: datetime) -> bytes:
    return render_pdf("minutes.html", **minutes_context(decision, now=now, checkpoint=decision_checkpoint(decision)))


def mark_notified(decision: Decision, *, messages, now: datetime) -> None:
    """The bidders' notices are written (in the outbox, delivered from there): the decision says so."""
    decision.bidders_notified = True
    db.session.flush()
    audit.record("decision.notified", decision, actor=None, now=now,
                 data={"messages": [m.id for m in messages]})
