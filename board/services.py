"""Dossiers, votes and the decision: the only code that changes the board's rows. Never commits; takes the
actor and the time; writes the audit log."""

from __future__ import annotations

import io
import json
from datetime import date, datetime
from pathlib import Path

from pypdf import PdfReader
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from accounts.models import User, UserRole
from bids.lifecycle import BidStatus
from bids.models import Bid
from bids.services import BidError, document_signatures, has_stake, mark_decided
from bids.services import record_president_ruling as record_bid_ruling
from board.documents import dossier_context, minutes_context, pack_context
from board.models import Decision, Dossier, DossierView, Vote
from board.notify import queue_notices
from board.rules import (
    DECISION_LIFECYCLE,
    Consulted,
    DecisionAction,
    DecisionError,
    DecisionMethod,
    DecisionStatus,
    Tally,
    check_board_vote,
    check_consultation,
    check_decided_on,
    check_president_grounds,
    dossiers_open,
    inputs_sha256,
    rationale_needed,
    tally,
    vote_recusal,
)
from core import audit
from core.auth import Role
from core.db import db, swap_state
from core.hooks import Hook
from core.pdf import render_pdf, sha256
from core.signing import sign_issued
from core.storage import store_file
from events.models import Event
from events.rules import EventStatus
from events.rules import TransitionError as EventTransitionError
from events.services import change_event_status, lock_call
from scoring.queries import build_ranking, load_scoring


def dossier_dir(upload_dir: str) -> Path:
    """The folder of the stored dossiers, packs and minutes (store_file makes it when it stores the first one)."""
    return Path(upload_dir) / "dossiers"


def ranking_report(event: Event, *, full: bool = False):
    """The WCOC's ranking and its sensitivity for the call, as the dossiers and the decision use them (`full`:
    with every bid's owner, room rates, documents and versions loaded at once, for rendering)."""
    return build_ranking(load_scoring(event, full=full))


def scoring_rows(event: Event):
    """The call's scoring rows (scoring.queries.ScoringData), without scores or ranking: all that the inputs of
    a dossier or pack are made of, so finding a stored one is a lookup by its key, not a recomputation."""
    return load_scoring(event)


def _recusals_by_bid(data) -> dict[int, list]:
    cached = getattr(data, "_recusals_by_bid", None)
    if cached is None:
        cached = {}
        for r in data.recusals():
            cached.setdefault(r.bid.id, []).append([r.member.id, r.reason])
        data._recusals_by_bid = cached
    return cached


def bid_inputs(bid: Bid, source) -> dict:
    """What a bid's dossier is made of: change any of these and a new dossier is made. `source`: the call's
    ScoringData, or a ranking report built on it. Reads rows only (no score, no ranking)."""
    data = getattr(source, "data", source)
    cards = sorted([member_id, card.version, card.revision, card.status]
                   for (bid_id, member_id), card in data.cards.items() if bid_id == bid.id)
    return {"kind": "bid", "bid": bid.id, "bid_version": bid.version,
            "bid_version_sha256": data.version_sha256.get(bid.id, ""), "bid_status": bid.status,
            "admitted": bid.admitted_reason, "scorecards": cards,
            "weights": data.weights_version.number if data.weights_version else 0,
            "recusals": sorted(_recusals_by_bid(data).get(bid.id, [])),
            "regulation": bid.event.regulation_version.sha256,
            # what its letter's and guarantee's signatures amount to (they change with the trust list)
            "signatures": [note.as_text() for note in document_signatures(bid)],
            "consultation": [bid.consultation, bid.consultation_note, bid.consultation_accepted_at is not None,
                             bid.consultation_ruling_grounds, bid.consultation_ruling_reason],
            "signal_blocker_required": bid.event.signal_blocker_required}


def pack_inputs(event: Event, source, dossiers: list[Dossier]) -> dict:
    data = getattr(source, "data", source)
    return {"kind": "pack", "event": event.id, "regulation": event.regulation_version.sha256,
            "dossiers": sorted([d.bid_id, d.pdf_sha256] for d in dossiers),
            "weights": data.weights_version.number if data.weights_version else 0}


def _pages(data: bytes) -> int:
    return len(PdfReader(io.BytesIO(data)).pages)


def _render_dossier(event: Event, bid: Bid | None, kind: str, inputs: dict, digest: str, render, *, actor: User | None,
                    now: datetime) -> tuple[Dossier, bytes]:
    """Render a new dossier (or pack) and build its row, without adding it to the session: every PDF is made
    before the transaction writes anything (and so before it takes the audit lock)."""
    number = (db.session.scalar(select(func.max(Dossier.number)).where(
        Dossier.event_id == event.id, Dossier.kind == kind,
        Dossier.bid_id == bid.id if bid else Dossier.bid_id.is_(None))) or 0) + 1
    identifier = (f"{event.slug}-bid{bid.id}-d{number}" if bid else f"{event.slug}-pack-p{number}").upper()
    data = sign_issued(render(identifier), document=f"{'dossier' if bid else 'board pack'} {identifier}")
    dossier = Dossier(event_id=event.id, bid_id=bid.id if bid else None, kind=kind, number=number,
                      identifier=identifier, inputs_sha256=digest, inputs=json.dumps(inputs, sort_keys=True),
                      pdf_sha256=sha256(data), pages=_pages(data), size_bytes=len(data), created_at=now,
                      created_by_id=getattr(actor, "id", None))
    if bid is not None:
        dossier.bid = bid  # the pack lists it before it is written
    return dossier, data


def _keep(dossier: Dossier, data: bytes, *, actor: User | None, now: datetime, upload_dir: str) -> Dossier:
    """Store a rendered dossier and its row, and audit it. Made at the same moment by someone else (the unique
    inputs hash): theirs is kept and returned."""
    dossier.stored_name = store_file(dossier_dir(upload_dir), data)
    try:
        with db.session.begin_nested():
            db.session.add(dossier)
            db.session.flush()
    except IntegrityError:
        (dossier_dir(upload_dir) / dossier.stored_name).unlink(missing_ok=True)
        return db.session.scalars(select(Dossier).where(
            Dossier.event_id == dossier.event_id, Dossier.kind == dossier.kind,
            Dossier.inputs_sha256 == dossier.inputs_sha256)).one()
    audit.record(f"dossier.{dossier.kind}", dossier, actor=actor, now=now,
                 data={"identifier": dossier.identifier, "sha256": dossier.pdf_sha256, "inputs": dossier.inputs_sha256})
    return dossier


def _stored(event: Event, kind: str, digest: str) -> Dossier | None:
    return db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == kind,
                                                    Dossier.inputs_sha256 == digest)).first()


def bid_digests(event: Event, data) -> dict[int, str]:
    """{bid id: the inputs hash of its dossier as things stand} for every bid before the Board. The bids' documents
    (whose signatures are an input) are loaded for all of them in one query, not one per bid."""
    if data.ranked:
        db.session.scalars(select(Bid).options(selectinload(Bid.documents))
                           .where(Bid.id.in_([b.id for b in data.ranked]))).all()
    return {b.id: inputs_sha256(bid_inputs(b, data)) for b in data.ranked}


def reviewed_documents(event: Event) -> tuple[Dossier | None, dict[int, Dossier]] | None:
    """The board pack and the dossiers (by bid id) the decision in force records as reviewed, or None before the
    decision. After it, these are the call's documents: the bids' statuses change with the decision (selected,
    not selected), which would otherwise make a new dossier and pack nobody reviewed."""
    decision = current_decision(event)
    if decision is None:
        return None
    identifiers = [r["identifier"] for r in decision.loads("reviewed")]
    rows = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id,
                                                    Dossier.identifier.in_(identifiers))).all()
    return (next((d for d in rows if d.kind == "pack"), None),
            {d.bid_id: d for d in rows if d.kind == "bid" and d.bid_id is not None})


def _stored_bid_dossiers(event: Event, data, digests: dict[int, str] | None = None) -> list[Dossier] | None:
    """The stored dossier of every bid before the Board for its current inputs (one query), or None when one is
    missing."""
    digests = bid_digests(event, data) if digests is None else digests
    if not digests:
        return []
    found = {d.inputs_sha256: d for d in db.session.scalars(select(Dossier).where(
        Dossier.event_id == event.id, Dossier.kind == "bid", Dossier.inputs_sha256.in_(sorted(set(digests.values())))))}
    dossiers = [found.get(digests[b.id]) for b in data.ranked]
    return None if any(d is None for d in dossiers) else [d for d in dossiers if d is not None]


def stored_current(event: Event, bid: Bid | None, data=None) -> tuple[str, Dossier | None]:
    """The inputs hash of the dossier (bid) or pack (None) as things stand, and the stored file for it if any.
    Cheap: a lookup by that key, in a fixed number of queries (the scoring rows, then the stored rows); nothing is
    ranked or rendered. The pack's hash depends on the bids' current dossiers, so for the pack a missing dossier
    gives ("", None). After the decision: the document it reviewed, when there is one."""
    reviewed = reviewed_documents(event)
    found = None if reviewed is None else (reviewed[1].get(bid.id) if bid is not None else reviewed[0])
    if found is not None:
        return found.inputs_sha256, found
    data = scoring_rows(event) if data is None else data
    if bid is not None:
        digest = inputs_sha256(bid_inputs(bid, data))
        kind = "bid"
    else:
        dossiers = _stored_bid_dossiers(event, data)
        if dossiers is None:
            return "", None
        digest = inputs_sha256(pack_inputs(event, data, dossiers))
        kind = "pack"
    return digest, _stored(event, kind, digest)


def missing_dossiers(event: Event) -> list[tuple[Bid, str]]:
    """The bids before the Board whose current dossier is not stored yet, with its inputs hash (one lookup)."""
    data = scoring_rows(event)
    digests = bid_digests(event, data)
    stored = set(db.session.scalars(select(Dossier.inputs_sha256).where(
        Dossier.event_id == event.id, Dossier.kind == "bid", Dossier.inputs_sha256.in_(sorted(set(digests.values()))))))
    return [(b, digests[b.id]) for b in data.ranked if digests[b.id] not in stored]


def _dossier_of(bid: Bid, report, *, actor: User | None, now: datetime) -> tuple[Dossier, bytes | None]:
    """The stored dossier for the bid's current inputs (bytes None), or a new one rendered now (not yet kept)."""
    event = bid.event
    inputs = bid_inputs(bid, report)
    digest = inputs_sha256(inputs)
    existing = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == "bid",
                                                        Dossier.inputs_sha256 == digest)).first()
    if existing is not None:
        return existing, None

    def render(identifier: str) -> bytes:
        return render_pdf("dossier.html", inputs_sha256=digest,
                          **dossier_context(bid, report, identifier=identifier, now=now))

    return _render_dossier(event, bid, "bid", inputs, digest, render, actor=actor, now=now)


def ensure_dossier(bid: Bid, *, actor: User | None, now: datetime, upload_dir: str, report=None) -> Dossier:
    """The current dossier of a bid: the stored one when its inputs have not changed, else a new one rendered
    (before anything is written) and stored. Raises DecisionError before scoring is closed, core.pdf.PdfError if
    rendering fails."""
    if not dossiers_open(bid.event.state):
        raise DecisionError("The dossiers open to the Board once the WCOC's scoring is closed.")
    reviewed = reviewed_documents(bid.event)
    if reviewed is not None and bid.id in reviewed[1]:
        return reviewed[1][bid.id]
    dossier, data = _dossier_of(bid, report or ranking_report(bid.event, full=True), actor=actor, now=now)
    return dossier if data is None else _keep(dossier, data, actor=actor, now=now, upload_dir=upload_dir)


def ensure_pack(event: Event, *, actor: User | None, now: datetime, upload_dir: str) -> tuple[Dossier, list[Dossier]]:
    """The current board pack and the current dossier of every bid before the Board (made where missing). Every
    PDF is rendered first; the rows are written after, so no lock is held while WeasyPrint runs. Raises
    DecisionError before scoring is closed, core.pdf.PdfError if rendering fails."""
    if not dossiers_open(event.state):
        raise DecisionError("The dossiers open to the Board once the WCOC's scoring is closed.")
    reviewed = reviewed_documents(event)
    if reviewed is not None and reviewed[0] is not None:
        return reviewed[0], sorted(reviewed[1].values(), key=lambda d: d.bid_id or 0)
    report = ranking_report(event, full=True)
    made = [_dossier_of(b, report, actor=actor, now=now) for b in report.data.ranked]
    dossiers = [d for d, _ in made]
    inputs = pack_inputs(event, report, dossiers)
    digest = inputs_sha256(inputs)
    pack = db.session.scalars(select(Dossier).where(Dossier.event_id == event.id, Dossier.kind == "pack",
                                                    Dossier.inputs_sha256 == digest)).first()
    pack_data = None
    if pack is None:
        def render(identifier: str) -> bytes:
            return render_pdf("board_pack.html", inputs_sha256=digest,
                              **pack_context(event, report, dossiers, identifier=identifier, now=now))

        pack, pack_data = _render_dossier(event, None, "pack", inputs, digest, render, actor=actor, now=now)
    dossiers = [d if data is None else _keep(d, data, actor=actor, now=now, upload_dir=upload_dir)
                for d, data in made]
    if pack_data is not None:
        pack = _keep(pack, pack_data, actor=actor, now=now, upload_dir=upload_dir)
    return pack, dossiers


def pack_of(event: Event, *, actor: User | None, now: datetime) -> tuple[Dossier, bytes | None]:
    """The stored board pack for the current inputs (bytes None), or a new one rendered now (not yet kept); every
    bid's current dossier must be stored already (DecisionError otherwise)."""
    report = ranking_report(event, full=True)
    dossiers = _stored_bid_dossiers(event, report.data)
    if dossiers is None:
        raise DecisionError("A bid's dossier is missing: make the dossiers first.")
    inputs = pack_inputs(event, report, dossiers)
    digest = inputs_sha256(inputs)
    found = _stored(event, "pack", digest)
    if found is not None:
        return found, None

    def render(identifier: str) -> bytes:
        return render_pdf("board_pack.html", inputs_sha256=digest,
                          **pack_context(event, report, dossiers, identifier=identifier, now=now))

    return _render_dossier(event, None, "pack", inputs, digest, render, actor=actor, now=now)


def dossier_of(bid: Bid, *, actor: User | None, now: datetime) -> tuple[Dossier, bytes | None]:
    """The stored dossier for the bid's current inputs (bytes None), or a new one rendered now (not yet kept)."""
    return _dossier_of(bid, ranking_report(bid.event, full=True), actor=actor, now=now)


def keep(dossier: Dossier, data: bytes | None, *, actor: User | None, now: datetime, upload_dir: str) -> Dossier:
    """Store what dossier_of / pack_of rendered (nothing when `data` is None: it was stored already)."""
    return dossier if data is None else _keep(dossier, data, actor=actor, now=now, upload_dir=upload_dir)


def current_pack(event: Event) -> tuple[Dossier, list[Dossier]] | None:
    """The stored board pack and dossiers for the call as things stand, or None when one is missing (nothing is
    rendered: the decision records what the Board had, made beforehand by ensure_pack)."""
    data = scoring_rows(event)
    dossiers = _stored_bid_dossiers(event, data)
    if dossiers is None:
        return None
    pack = _stored(event, "pack", inputs_sha256(pack_inputs(event, data, dossiers)))
    return (pack, dossiers) if pack is not None else None


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


def bids_before_board(event: Event) -> list[Bid]:
    return list(db.session.scalars(select(Bid).where(
        Bid.event_id == event.id, Bid.status.in_([BidStatus.SUBMITTED.value, BidStatus.SHORTLISTED.value]))
        .order_by(Bid.id)).all())


def bids_reviewed(event: Event) -> list[Bid]:
    """The bids the Board reads: before it, or decided on (selected / not selected)."""
    return list(db.session.scalars(select(Bid).where(
        Bid.event_id == event.id, Bid.status.in_([s.value for s in BidStatus if s.visible_to_reviewers]))
        .order_by(Bid.id)).all())


def bids_decided(event: Event) -> list[Bid]:
    """The bids a decision chose between (selected / not selected): what a correction re-decides."""
    return list(db.session.scalars(select(Bid).where(
        Bid.event_id == event.id, Bid.status.in_([BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value]))
        .order_by(Bid.id)).all())


def recused_from_vote(event: Event, member, bids: list[Bid] | None = None) -> list[Bid]:
    """The bids (before the Board, or `bids`) whose host federation is the member's."""
    bids = bids_before_board(event) if bids is None else bids
    hosts = {b.id: b.host_federation for b in bids}
    ids = set(vote_recusal(member.federation, hosts))
    return [b for b in bids if b.id in ids]


def voting_open(event: Event) -> bool:
    """Whether the Board votes now: once the WCOC's scoring is closed and until the decision."""
    return event.state is EventStatus.DELIBERATION


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


def current_decision(event: Event) -> Decision | None:
    """The decision in force (at most one per call: a unique index)."""
    return db.session.scalars(select(Decision).where(
        Decision.event_id == event.id, Decision.status == DecisionStatus.IN_FORCE.value)).first()


def board_members(event: Event):
    return db.session.scalars(select(User).where(User.active.is_(True),
                                                 User.roles.any(UserRole.role == Role.BOARD.value))
                              .order_by(User.name)).all()


def _counted_votes(event: Event, bids: list[Bid]) -> tuple[list[Vote], list[str]]:
    """The votes that count (members not recused from `bids`) and the names of the recused members."""
    recused = {m.id: m.name for m in board_members(event) if recused_from_vote(event, m, bids)}
    votes = db.session.scalars(select(Vote).where(Vote.event_id == event.id).order_by(Vote.id)
                               .execution_options(populate_existing=True)).all()
    return [v for v in votes if v.member_id not in recused], list(recused.values())


def votes_counted(votes: list[Vote]) -> list[dict]:
    """The votes a tally counts, as the decision stores them: [{vote, member, name, bid}] (bid None: abstained)."""
    return [{"vote": v.id, "member": v.member_id, "name": v.member.name, "bid": v.bid_id}
            for v in sorted(votes, key=lambda v: v.id)]


def votes_fingerprint(event: Event, bids: list[Bid] | None = None) -> str:
    """What the page that records the decision shows of the votes, as one string its form sends back (the
    SHA-256 of the votes counted, ids and choices): the decision is refused when the votes changed since."""
    bids = bids_before_board(event) if bids is None else bids
    votes, _ = _counted_votes(event, bids)
    return _fingerprint(votes_counted(votes))


def _fingerprint(counted: list[dict]) -> str:
    return sha256(json.dumps([[c["vote"], c["member"], c["bid"]] for c in counted]).encode())


VOTES_CHANGED = ("The votes changed since this page was loaded (now: {now}); nothing was recorded. Reload the page, "
                 "read the tally again and record the decision.")


def already_corrected(decision: Decision) -> str:
    """The refusal of a correction of a decision that is no longer in force: when and by whom it was corrected."""
    by = db.session.scalars(select(Decision).where(Decision.corrects_id == decision.id)).first()
    if by is None:
        return (f"Decision {decision.id} is no longer in force; nothing was recorded by this correction. Reload the "
                "page to see the decision in force.")
    return (f"This decision was already corrected at {by.recorded_at:%H:%M} UTC on {by.recorded_at:%-d %B %Y} by "
            f"{by.recorded_by.name} (decision {by.id}); nothing was recorded by this correction. Reload the page to "
            "see the correction.")


def current_tally(event: Event, bids: list[Bid] | None = None) -> Tally:
    """The votes over the bids before the Board (or `bids`), counting only members not recused."""
    bids = bids_before_board(event) if bids is None else bids
    votes, recused = _counted_votes(event, bids)
    return tally(((v.member.name, v.bid_id) for v in votes), [b.id for b in bids], recused)


def scoring_closed_on(event: Event) -> date | None:
    """The day the WCOC's scoring was last closed, from the audit log (None when never recorded there)."""
    at = db.session.scalar(select(audit.AuditEntry.at).where(
        audit.AuditEntry.action == "event.close_scoring", audit.AuditEntry.object_type == "Event",
        audit.AuditEntry.object_id == str(event.id)).order_by(audit.AuditEntry.id.desc()).limit(1))
    return at.date() if at is not None else None


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
        votes, _ = _counted_votes(event, contest)
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
        check_president_grounds(no_meeting_reason, [
            Consulted(member.name, advice, on, in_wcoc=_in_wcoc_of(event, member))
            for member, advice, on in consultations], selection=selection, decided_on=decided_on,
            today=now.date(), call_opened=event.created_at.date())
    check_decided_on(decided_on, today=now.date(), last_vote=last_vote, scoring_closed=scoring_closed_on(event))
    return the_tally


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


def record_decision(event: Event, *, method: str, selected: Bid, rationale: str, decided_on: date,
                    consultations: list[tuple[User, str, date | None]], actor: User, now: datetime,
                    no_meeting_reason: str = "", upload_dir: str = "", corrects: Decision | None = None,
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
    minutes are made after the commit (store_minutes). `upload_dir` is unused, kept for callers.

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
    if corrects is None and event.state is not EventStatus.DELIBERATION:
        raise DecisionError(ALREADY_DECIDED)
    if corrects is not None:
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
    contest = bids_before_board(event) if corrects is None else bids_decided(event)
    if selected.id not in {b.id for b in contest}:
        raise DecisionError("The selected bid must be one before the Board.", "selected")
    if event.regulation.consultation is not None:
        check_consultation(selected.consultation_state, selected.title,
                           article=event.regulation.consultation.article)
    no_meeting_reason = (no_meeting_reason or "").strip()
    counted = votes_counted(_counted_votes(event, contest)[0])
    if votes_seen is not None and votes_seen != _fingerprint(counted):
        raise DecisionError(VOTES_CHANGED.format(now=current_tally(event, contest).names(
            {b.id: b.title for b in contest}) or "no votes"))
    the_tally = _check_method(event, how, selected, contest, decided_on, consultations, no_meeting_reason,
                              actor=actor, now=now)
    report = ranking_report(event)
    flagged = [r.bid_id for r in report.ranking.bids if r.red_flags]
    needed = rationale_needed(selected.id, ranking_leaders=report.ranking.leaders, flagged=flagged)
    if needed and not rationale:
        raise DecisionError(f"{event.regulation.citation('duty_of_reasons')}: give the reasons for the decision: "
                            f"{needed}.", "rationale")
    if corrects is None:
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
    else:
        reviewed = corrects.loads("reviewed")
        if not swap_state(corrects, expected=DecisionStatus.IN_FORCE, values={
                "status": DECISION_LIFECYCLE.next(corrects.state, DecisionAction.SUPERSEDE), "superseded_at": now}):
            raise DecisionError(f"Decision {corrects.id} was corrected at the same moment by someone else; nothing "
                                "was recorded by this correction. Reload the page to see the decision in force.")
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
    if corrects is None:
        mark_notified(decision, messages=queue_notices(decision, actor=actor, now=now), now=now)
    return decision


def decision_checkpoint(decision: Decision) -> audit.Checkpoint | None:
    """The audit chain's head right after the entry that recorded `decision` (decision.record, or
    decision.correct for a correction): printed in its minutes and shown on the decision page. None only for a
    decision recorded before the log held such entries."""
    return audit.checkpoint_of(decision, "decision.record", "decision.correct")


def minutes_copy(decision: Decision, seen, *, reader: str, now: datetime) -> bytes:
    """The minutes of `decision` as `reader` may see them (`seen`, a scoring.visibility.Sight that withholds some
    of the record's scores): rendered for them and not stored, the stored minutes staying the record. Raises
    core.pdf.PdfError if rendering fails."""
    return render_pdf("minutes.html", **minutes_context(decision, now=now, checkpoint=decision_checkpoint(decision),
                                                        seen=seen, reader=reader))


def store_minutes(decision: Decision, *, actor: User, now: datetime, upload_dir: str) -> Decision:
    """Render the minutes of a recorded decision and store them with their SHA-256, once (a compare-and-swap on
    the empty hash: made twice at once, the first stored is kept). Run after the decision is committed, so
    WeasyPrint never runs inside the transaction that records it. Raises core.pdf.PdfError if rendering fails.
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
