"""What the board's pages, the API and the services read: the call's scoring rows and ranking, the inputs of a
dossier or pack and the stored file for them, the bids before the Board, the votes and their tally, the decision
in force. Nothing here changes a row (board.services does)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from accounts.models import User, UserRole
from bids.lifecycle import BidStatus
from bids.models import Bid
from bids.services import document_signatures
from board.documents import minutes_context
from board.lifecycle import DecisionStatus
from board.models import Decision, Dossier, Vote
from board.rules import Tally, inputs_sha256, tally, vote_recusal
from core.auth import Role
from core.db import db
from events.lifecycle import EventStatus
from events.models import Event
from evidence import audit
from evidence.pdf import render_pdf, sha256
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
    """What the board pack is made of: the call's regulation, the weights, and each bid's dossier (by its PDF's
    hash). `source`: the call's ScoringData, or a ranking report built on it."""
    data = getattr(source, "data", source)
    return {"kind": "pack", "event": event.id, "regulation": event.regulation_version.sha256,
            "dossiers": sorted([d.bid_id, d.pdf_sha256] for d in dossiers),
            "weights": data.weights_version.number if data.weights_version else 0}


def stored_by_digest(event_id: int, kind: str, digests: Iterable[str]) -> dict[str, Dossier]:
    """The stored dossiers ("bid") or packs ("pack") of the call `event_id` whose inputs hash is one of `digests`,
    by that hash: the one lookup of a stored document (one query, whatever the number of hashes). Raises nothing."""
    wanted = sorted(set(digests))
    if not wanted:
        return {}
    return {d.inputs_sha256: d for d in db.session.scalars(select(Dossier).where(
        Dossier.event_id == event_id, Dossier.kind == kind, Dossier.inputs_sha256.in_(wanted)))}


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


def stored_bid_dossiers(event: Event, data) -> list[Dossier] | None:
    """The stored dossier of every bid before the Board for its current inputs (one lookup), or None when one is
    missing. `data`: the call's scoring rows (or a ranking report built on them)."""
    data = getattr(data, "data", data)
    digests = bid_digests(event, data)
    found = stored_by_digest(event.id, "bid", digests.values())
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
        digest, kind = inputs_sha256(bid_inputs(bid, data)), "bid"
    else:
        dossiers = stored_bid_dossiers(event, data)
        if dossiers is None:
            return "", None
        digest, kind = inputs_sha256(pack_inputs(event, data, dossiers)), "pack"
    return digest, stored_by_digest(event.id, kind, [digest]).get(digest)


def missing_dossiers(event: Event) -> list[tuple[Bid, str]]:
    """The bids before the Board whose current dossier is not stored yet, with its inputs hash (one lookup)."""
    data = scoring_rows(event)
    digests = bid_digests(event, data)
    stored = stored_by_digest(event.id, "bid", digests.values())
    return [(b, digests[b.id]) for b in data.ranked if digests[b.id] not in stored]


def current_pack(event: Event) -> tuple[Dossier, list[Dossier]] | None:
    """The stored board pack and dossiers for the call as things stand, or None when one is missing (nothing is
    rendered: the decision records what the Board had, made beforehand by ensure_pack)."""
    data = scoring_rows(event)
    dossiers = stored_bid_dossiers(event, data)
    if dossiers is None:
        return None
    digest = inputs_sha256(pack_inputs(event, data, dossiers))
    pack = stored_by_digest(event.id, "pack", [digest]).get(digest)
    return (pack, dossiers) if pack is not None else None


def bids_before_board(event: Event) -> list[Bid]:
    """The bids the Board votes on (submitted, shortlisted), in the order they were made."""
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


def current_decision(event: Event) -> Decision | None:
    """The decision in force (at most one per call: a unique index)."""
    return db.session.scalars(select(Decision).where(
        Decision.event_id == event.id, Decision.status == DecisionStatus.IN_FORCE.value)).first()


def board_members(event: Event):
    """The active accounts holding the Board's role, by name."""
    return db.session.scalars(select(User).where(User.active.is_(True),
                                                 User.roles.any(UserRole.role == Role.BOARD.value))
                              .order_by(User.name)).all()


def members_not_voted(event: Event, bids: list[Bid] | None = None) -> tuple[list[User], int]:
    """(the board members who may vote and have not, how many may vote): active members not recused from the bids
    before the Board (or `bids`)."""
    bids = bids_before_board(event) if bids is None else bids
    eligible = [m for m in board_members(event) if not recused_from_vote(event, m, bids)]
    voted = set(db.session.scalars(select(Vote.member_id).where(Vote.event_id == event.id)))
    return [m for m in eligible if m.id not in voted], len(eligible)


def counted_votes(event: Event, bids: list[Bid]) -> tuple[list[Vote], list[str]]:
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
    votes, _ = counted_votes(event, bids)
    return fingerprint(votes_counted(votes))


def fingerprint(counted: list[dict]) -> str:
    """The SHA-256 of the votes counted (votes_counted), ids and choices."""
    return sha256(json.dumps([[c["vote"], c["member"], c["bid"]] for c in counted]).encode())


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
    votes, recused = counted_votes(event, bids)
    return tally(((v.member.name, v.bid_id) for v in votes), [b.id for b in bids], recused)


def scoring_closed_on(event: Event) -> date | None:
    """The day the WCOC's scoring was last closed, from the audit log (None when never recorded there)."""
    at = db.session.scalar(select(audit.AuditEntry.at).where(
        audit.AuditEntry.action == "event.close_scoring", audit.AuditEntry.object_type == "Event",
        audit.AuditEntry.object_id == str(event.id)).order_by(audit.AuditEntry.id.desc()).limit(1))
    return at.date() if at is not None else None


def decision_checkpoint(decision: Decision) -> audit.Checkpoint | None:
    """The audit chain's head right after the entry that recorded `decision` (decision.record, or
    decision.correct for a correction): printed in its minutes and shown on the decision page. None only for a
    decision recorded before the log held such entries."""
    return audit.checkpoint_of(decision, "decision.record", "decision.correct")


def minutes_copy(decision: Decision, seen, *, reader: str, now: datetime) -> bytes:
    """The minutes of `decision` as `reader` may see them (`seen`, a scoring.visibility.Sight that withholds some
    of the record's scores): rendered for them and not stored, the stored minutes staying the record. Raises
    evidence.pdf.PdfError if rendering fails."""
    return render_pdf("minutes.html", **minutes_context(decision, now=now, checkpoint=decision_checkpoint(decision),
                                                        seen=seen, reader=reader))


def call_slugs(model, ids: list[int]) -> dict[int, str]:
    """{id: its call's slug} of the rows of `model` (Decision, Dossier: whatever has an event_id) among `ids`: one
    statement, for links to their call's pages. (A list of rows, not the Result: dict() reads anything with keys()
    as a mapping, and a Result has keys().)"""
    return dict(db.session.execute(select(model.id, Event.slug).join(Event, model.event_id == Event.id)
                                   .where(model.id.in_(ids))).all())
