"""Dossiers, votes and the decision: the only code that changes the board's rows. Never commits; takes the
actor and the time; writes the audit log."""

from __future__ import annotations

import io
import json
import secrets
from datetime import date, datetime
from pathlib import Path

from sqlalchemy import func, select, update

from bids.models import Bid
from bids.rules import BidAction, BidStatus, next_status
from bids.services import has_stake
from board.models import Decision, Dossier, DossierView, Vote
from board.rules import DecisionError, dossiers_open, inputs_sha256, rationale_needed, tally, vote_recusal
from core import audit
from core.auth import Role
from core.db import db
from core.pdf import render_pdf, sha256
from events.models import Event
from events.rules import EventStatus
from events.services import change_event_status


def dossier_dir(upload_dir: str) -> Path:
    path = Path(upload_dir) / "dossiers"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ranking_report(event: Event):
    """The WCOC's ranking and its sensitivity for the call, as the dossiers and the decision use them."""
    from scoring.queries import build_ranking, load_scoring

    return build_ranking(load_scoring(event))


def bid_inputs(bid: Bid, report) -> dict:
    """What a bid's dossier is made of: change any of these and a new dossier is made."""
    version = bid.last_version
    cards = sorted([member_id, card.version, card.revision, card.status]
                   for (bid_id, member_id), card in report.data.cards.items() if bid_id == bid.id)
    return {"kind": "bid", "bid": bid.id, "bid_version": version.number if version else 0,
            "bid_version_sha256": version.sha256 if version else "", "bid_status": bid.status,
            "admitted": bid.admitted_reason, "scorecards": cards,
            "weights": report.weights_version_dict()["number"],
            "recusals": sorted([r.member.id, r.reason] for r in report.recusals if r.bid.id == bid.id),
            "regulation": bid.event.regulation_version.sha256}


def pack_inputs(event: Event, report, dossiers: list[Dossier]) -> dict:
    return {"kind": "pack", "event": event.id, "regulation": event.regulation_version.sha256,
            "dossiers": sorted([d.bid_id, d.pdf_sha256] for d in dossiers),
            "weights": report.weights_version_dict()["number"]}


def _store(data: bytes, upload_dir: str) -> str:
    name = f"{secrets.token_hex(16)}.pdf"
    (dossier_dir(upload_dir) / name).write_bytes(data)
    return name


def _pages(data: bytes) -> int:
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(data)).pages)


def _new_dossier(event: Event, bid: Bid | None, kind: str, inputs: dict, digest: str, render, *, actor,
                 now: datetime, upload_dir: str) -> Dossier:
    number = (db.session.scalar(select(func.max(Dossier.number)).where(
        Dossier.event_id == event.id, Dossier.kind == kind,
        Dossier.bid_id == bid.id if bid else Dossier.bid_id.is_(None))) or 0) + 1
    identifier = (f"{event.slug}-bid{bid.id}-d{number}" if bid else f"{event.slug}-pack-p{number}").upper()
    data = render(identifier)
    dossier = Dossier(event_id=event.id, bid_id=bid.id if bid else None, kind=kind, number=number,
                      identifier=identifier, inputs_sha256=digest, inputs=json.dumps(inputs, sort_keys=True),
                      stored_name=_store(data, upload_dir), pdf_sha256=sha256(data), pages=_pages(data),
                      size_bytes=len(data), created_at=now, created_by_id=getattr(actor, "id", None))
    db.session.add(dossier)
    db.session.flush()
    audit.record(f"dossier.{kind}", dossier, actor=actor, now=now,
                 data={"identifier": identifier, "sha256": dossier.pdf_sha256, "inputs": digest})
    return dossier


def stored_current(event: Event, bid: Bid | None) -> tuple[str, Dossier | None]:
    """The inputs hash of the dossier (bid) or pack (None) as things stand, and the stored file for it if any.
    Cheap: no rendering. The pack's hash depends on the bids' current dossiers, so for the pack a missing
    dossier gives (hash, None)."""
    report = ranking_report(event)
    if bid is not None:
        digest = inputs_sha256(bid_inputs(bid, report))
        kind = "bid"
    else:
        dossiers = []
        for b in report.data.ranked:
            found = db.session.scalars(select(Dossier).where(
                Dossier.event_id == event.id, Dossier.kind == "bid",
                Dossier.inputs_sha256 == inputs_sha256(bid_inputs(b, report)))).first()
            if found is None:
                return "", None
            dossiers.append(found)
        digest = inputs_sha256(pack_inputs(event, report, dossiers))
        kind = "pack"
    return digest, db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == kind,
                                                            Dossier.inputs_sha256 == digest)).first()


def ensure_dossier(bid: Bid, *, actor, now: datetime, upload_dir: str, report=None) -> Dossier:
    """The current dossier of a bid: the stored one when its inputs have not changed, else a new one rendered
    now. Raises DecisionError before scoring is closed, core.pdf.PdfError if rendering fails."""
    event = bid.event
    if not dossiers_open(event.state):
        raise DecisionError("The dossiers open to the Board once the WCOC's scoring is closed.")
    report = report or ranking_report(event)
    inputs = bid_inputs(bid, report)
    digest = inputs_sha256(inputs)
    existing = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == "bid",
                                                        Dossier.inputs_sha256 == digest)).first()
    if existing is not None:
        return existing

    def render(identifier: str) -> bytes:
        from board.documents import dossier_context

        return render_pdf("dossier.html", inputs_sha256=digest,
                          **dossier_context(bid, report, identifier=identifier, now=now))

    return _new_dossier(event, bid, "bid", inputs, digest, render, actor=actor, now=now, upload_dir=upload_dir)


def ensure_pack(event: Event, *, actor, now: datetime, upload_dir: str) -> tuple[Dossier, list[Dossier]]:
    """The current board pack and the current dossier of every bid before the Board (made where missing)."""
    if not dossiers_open(event.state):
        raise DecisionError("The dossiers open to the Board once the WCOC's scoring is closed.")
    report = ranking_report(event)
    dossiers = [ensure_dossier(b, actor=actor, now=now, upload_dir=upload_dir, report=report)
                for b in report.data.ranked]
    inputs = pack_inputs(event, report, dossiers)
    digest = inputs_sha256(inputs)
    existing = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == "pack",
                                                        Dossier.inputs_sha256 == digest)).first()
    if existing is not None:
        return existing, dossiers

    def render(identifier: str) -> bytes:
        from board.documents import pack_context

        return render_pdf("board_pack.html", inputs_sha256=digest,
                          **pack_context(event, report, dossiers, identifier=identifier, now=now))

    return _new_dossier(event, None, "pack", inputs, digest, render, actor=actor, now=now,
                        upload_dir=upload_dir), dossiers


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


def bids_before_board(event: Event) -> list[Bid]:
    return list(db.session.scalars(select(Bid).where(
        Bid.event_id == event.id, Bid.status.in_([BidStatus.SUBMITTED.value, BidStatus.SHORTLISTED.value]))
        .order_by(Bid.id)).all())


def bids_reviewed(event: Event) -> list[Bid]:
    """The bids the Board reads: before it, or decided on (selected / not selected)."""
    return list(db.session.scalars(select(Bid).where(
        Bid.event_id == event.id, Bid.status.in_([s.value for s in BidStatus if s.visible_to_reviewers]))
        .order_by(Bid.id)).all())


def recused_from_vote(event: Event, member) -> list[Bid]:
    bids = bids_before_board(event)
    hosts = {b.id: b.host_federation for b in bids}
    ids = set(vote_recusal(member.federation, hosts))
    return [b for b in bids if b.id in ids]


def cast_vote(event: Event, member, bid: Bid | None, *, now: datetime) -> Vote:
    """A board member votes for one bid in the contest, or abstains (bid None); a later vote replaces the earlier
    one until the decision. Raises DecisionError when the member is recused, the call is not before the Board,
    or the bid is not in the contest."""
    if Role.BOARD not in member.role_set:
        raise DecisionError("Only members of the Presidential Board vote.")
    if event.state is not EventStatus.DELIBERATION:
        raise DecisionError("The Board votes once the WCOC's scoring is closed and until the decision.")
    if has_stake(member, event):
        raise DecisionError("You own or entered a bid in this call: you do not vote in it.")
    recused = recused_from_vote(event, member)
    if recused:
        raise DecisionError(f"You are recused from this vote: your federation ({member.federation}) hosts "
                            f"{', '.join(b.title for b in recused)}.")
    if bid is not None and (bid.event_id != event.id or not bid.state.in_contest):
        raise DecisionError("That bid is not before the Board.")
    vote = db.session.scalars(select(Vote).where(Vote.event_id == event.id, Vote.member_id == member.id)).first()
    if vote is None:
        vote = Vote(event_id=event.id, member_id=member.id)
        db.session.add(vote)
    vote.bid_id = bid.id if bid else None
    vote.cast_at = now
    db.session.flush()
    audit.record("board.vote", vote, actor=member, now=now,
                 data={"event": event.slug, "bid": bid.id if bid else None})
    return vote


def current_decision(event: Event) -> Decision | None:
    """The decision in force: the latest record that no other record corrects."""
    decisions = db.session.scalars(select(Decision).where(Decision.event_id == event.id)
                                   .order_by(Decision.id)).all()
    corrected = {d.corrects_id for d in decisions if d.corrects_id}
    live = [d for d in decisions if d.id not in corrected]
    return live[-1] if live else None


def board_members(event: Event):
    from accounts.models import User, UserRole

    return db.session.scalars(select(User).where(User.active.is_(True),
                                                 User.roles.any(UserRole.role == Role.BOARD.value))
                              .order_by(User.name)).all()


def current_tally(event: Event):
    bids = bids_before_board(event)
    votes = db.session.scalars(select(Vote).where(Vote.event_id == event.id)).all()
    recused = [m.name for m in board_members(event) if recused_from_vote(event, m)]
    return tally(((v.member.name, v.bid_id) for v in votes), [b.id for b in bids], recused)


def record_decision(event: Event, *, method: str, selected: Bid, rationale: str, decided_on: date,
                    consultations: list[tuple[object, str]], actor, now: datetime, upload_dir: str,
                    corrects: Decision | None = None, correction_reason: str = "") -> Decision:
    """Record the decision of Art. 15.5, move the call to "decided", the selected bid to "selected" and the
    others before the Board to "not selected", store the minutes PDF, and audit it.

    `method` is "board_vote" (the tally of the board's votes) or "president" (the FIDE President decides alone
    "in consultation with the WCOC" when no board meeting can be held; `consultations` names the WCOC members
    consulted and what each advised). Raises DecisionError when a rule is not met; the message says which.
    """
    rationale = (rationale or "").strip()
    if method not in ("board_vote", "president"):
        raise DecisionError("Choose how the decision was taken.", "method")
    if corrects is None and event.state is not EventStatus.DELIBERATION:
        raise DecisionError("A decision is recorded once the WCOC's scoring is closed, and only once; "
                            "a mistake is mended by a correction.")
    if corrects is not None and not correction_reason.strip():
        raise DecisionError("Say what the correction mends.", "correction_reason")
    contest = bids_before_board(event) if corrects is None else [
        b for b in db.session.scalars(select(Bid).where(Bid.event_id == event.id)).all()
        if b.status in (BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value)]
    if selected.id not in {b.id for b in contest}:
        raise DecisionError("The selected bid must be one before the Board.", "selected")
    if method == "president":
        if not getattr(actor, "is_president", False):
            raise DecisionError("Only the FIDE President decides alone, in consultation with the WCOC "
                                f"(Art. {event.regulation.scoring.article}).",
                                "method")
        if not consultations:
            raise DecisionError("Name the WCOC members consulted and what each advised "
                                f"(Art. {event.regulation.scoring.article}).",
                                "consultations")
        for member, advice in consultations:
            if Role.WCOC not in member.role_set:
                raise DecisionError(f"{member.name} is not a WCOC member.", "consultations")
            if not advice.strip():
                raise DecisionError(f"Say what {member.name} advised.", "consultations")
    report = ranking_report(event)
    flagged = [r.bid_id for r in report.ranking.bids if r.red_flags]
    needed = rationale_needed(selected.id, ranking_leaders=report.ranking.leaders, flagged=flagged)
    if needed and not rationale:
        raise DecisionError(f"Give the reasons for the decision: {needed}.", "rationale")
    pack, dossiers = ensure_pack(event, actor=actor, now=now, upload_dir=upload_dir) if corrects is None else (
        None, [])
    reviewed = [{"identifier": d.identifier, "sha256": d.pdf_sha256, "bid": d.bid_id} for d in dossiers]
    if pack is not None:
        reviewed.append({"identifier": pack.identifier, "sha256": pack.pdf_sha256, "bid": None})
    if corrects is not None:
        reviewed = corrects.loads("reviewed")
    the_tally = current_tally(event) if method == "board_vote" else None
    decision = Decision(
        event_id=event.id, method=method, selected_bid_id=selected.id, decided_on=decided_on,
        tally=json.dumps(the_tally.as_dict() if the_tally else {}),
        consultations=json.dumps([{"member": m.name, "member_id": m.id, "advice": a.strip()}
                                  for m, a in consultations]),
        rationale=rationale, ranking=json.dumps({"weights": report.weights_label, "bids": [
            {"bid": r.bid_id, "title": report.bid(r.bid_id).title, "rank": r.rank_label,
             "total": str(r.total) if r.total is not None else None,
             "red_flags": len(r.red_flags)} for r in report.ranking.bids]}),
        reviewed=json.dumps(reviewed), recorded_at=now, recorded_by_id=actor.id,
        corrects_id=corrects.id if corrects else None, correction_reason=correction_reason.strip())
    db.session.add(decision)
    db.session.flush()
    if corrects is None:
        change_event_status(event, "decide", actor=actor, now=now, reason=f"decision {decision.id}",
                            by_decision=True)
    for bid in contest:
        action = BidAction.SELECT if bid.id == selected.id else BidAction.NOT_SELECT
        if corrects is not None:
            bid.status = BidStatus.SUBMITTED.value  # a correction re-decides between the same bids
        after = next_status(bid.state, action)
        db.session.execute(update(Bid).where(Bid.id == bid.id).values(status=after.value, updated_at=now))
        db.session.refresh(bid)
    minutes = _minutes(decision, now=now)
    decision.minutes_stored_name = _store(minutes, upload_dir)
    decision.minutes_sha256 = sha256(minutes)
    db.session.flush()
    audit.record("decision.correct" if corrects else "decision.record", decision, actor=actor, now=now,
                 data={"method": method, "selected": selected.id, "reviewed": reviewed,
                       "corrects": corrects.id if corrects else None, "minutes_sha256": decision.minutes_sha256})
    return decision


def _minutes(decision: Decision, *, now: datetime) -> bytes:
    from board.documents import minutes_context

    return render_pdf("minutes.html", **minutes_context(decision, now=now))


def mark_notified(decision: Decision, *, now: datetime) -> None:
    decision.bidders_notified = True
    db.session.flush()
    audit.record("decision.notified", decision, actor=None, now=now)
