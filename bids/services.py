"""The only code that changes bids: each function checks the rules, changes rows, flushes and writes the audit
entry. None commits; none reads the request. Each takes the actor and the time."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import func, select, update

from accounts.models import User
from accounts.rules import REVIEWER_ROLES
from bids import judged, lifecycle
from bids.consultation import CONSULTATION, CONSULTATION_LABELS, FEDERATION_ONLY, RULING_GROUNDS, check_acceptance
from bids.data import BidData
from bids.lifecycle import BidAction, BidSituation, BidStatus, TransitionError
from bids.models import (
    DOCUMENT_KINDS,
    EVALUATION_KEYS,
    Bid,
    BidDocument,
    BidJudgement,
    BidRoomRate,
    BidVersion,
)
from bids.notify import queue_rejection
from bids.rules import SIGNED_KINDS, SignatureNote, check_bid, is_compliant, signature_notes
from bids.sections import SECTIONS
from bids.shape import bid_to_json
from core.auth import Role
from core.db import db, rowcount
from events.models import Event
from events.services import lock_call
from evidence import audit, trust
from evidence.hashing import canonical_sha256
from evidence.pdf import pdf_problem
from evidence.signing import inspect_pdf
from evidence.storage import display_name, store_file


class BidError(ValueError):
    """A request about a bid that cannot be met; the message is for the person who asked."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class StaleBidError(BidError):
    """The bid changed since the page was loaded (another tab, another person)."""


# Columns each section writes (the form sends exactly these).
SECTION_COLUMNS: dict[str, tuple[str, ...]] = {
    "applicant": ("applicant_type", "applicant_name", "host_federation", "contact_name", "contact_email",
                  "ioc_conflict_free"),
    "dates_venue": ("opening_date", "closing_date", "venue_name", "venue_city", "venue_country"),
    "money": ("prize_fund_eur", "fide_contribution_eur", "amounts_net_of_taxes"),
    "commitments": ("commits_fide_obligations", "commits_organisational_costs", "accepts_regulations"),
    "hotel": ("hotel_name", "hotel_stars"),
    "inspection": ("wcoc_inspectors_invited", "inspection_expenses_covered"),
    "guarantee": ("guarantee_offered", "guarantee_bank", "guarantee_amount_eur", "guarantee_valid_until"),
    "signature": ("signatory_name", "signatory_position", "signed_on"),
    "evaluation": tuple(f"eval_{k}" for k in EVALUATION_KEYS),
}
assert set(SECTION_COLUMNS) == set(SECTIONS)


def _audit_value(value):
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def situation(bid_or_event, actor: User | None, now: datetime, *, paper: bool | None = None,
              by_decision: bool = False) -> BidSituation:
    """What the bid lifecycle's guard judges besides the status: who acts, the call's state, the deadline, whether
    the bid is a paper bid and whether it was admitted late. `bid_or_event` is a Bid, or the Event of a bid not
    made yet (then `paper` says which kind it will be)."""
    bid = bid_or_event if isinstance(bid_or_event, Bid) else None
    event = bid.event if bid is not None else bid_or_event
    roles: set[Role] = getattr(actor, "role_set", set())
    return BidSituation(
        event_status=event.state, deadline=event.regulation.event.bid_deadline, now=now,
        by_owner=bid is not None and actor is not None and actor.id == bid.owner_id,
        by_admin=Role.ADMIN in roles,
        paper=bool(paper) if bid is None else bid.entered_by_id is not None,
        late_admitted=bid is not None and bid.late_admitted_at is not None, by_decision=by_decision,
        deadline_source=str(event.regulation.citation("bid_deadline")))


def offered_actions(bid: Bid, actor: User | None, now: datetime) -> list[BidAction]:
    """The moves of the bid's lifecycle this actor can make now, for the page to offer (decision moves excepted)."""
    return lifecycle.offered_actions(bid.state, situation(bid, actor, now))


def refusal(bid: Bid, action: BidAction, actor: User | None, now: datetime) -> str | None:
    """Why the guard refuses `action` on the bid by this actor now (None: it would allow it), for the page to say
    why a button is missing."""
    try:
        lifecycle.check_transition(bid.state, action, situation(bid, actor, now))
    except TransitionError as exc:
        return _sentence(exc)
    return None


def late_admission_refusal(bid: Bid, actor: User | None, now: datetime) -> str | None:
    """Why this actor cannot admit the bid late now (None: the page may offer the form)."""
    return lifecycle.late_admission_refusal(bid.state, situation(bid, actor, now))


def draft_refusal(bid: Bid, actor: User | None, now: datetime) -> str | None:
    """Why this actor cannot change the draft now (None: they can), for the page to say before a form is filled."""
    if not bid.state.is_editable:
        return None
    return lifecycle.draft_refusal(situation(bid, actor, now))


def create_bid(event: Event, *, owner, actor: User, now: datetime, entered_by=None) -> Bid:
    """Start a draft for a call, pre-filled from the owner's account.

    A paper bid (`entered_by`, who must be the secretariat) is keyed in on the owner's behalf while the call is
    open or closed; an online draft only while the call takes bids. Raises BidError otherwise.
    """
    paper = entered_by is not None
    refusal = lifecycle.draft_refusal(situation(event, entered_by if paper else actor, now, paper=paper),
                                      creating=True)
    if refusal:
        raise BidError(refusal)
    if paper and Role.ADMIN not in entered_by.role_set:
        raise BidError("Only the FIDE secretariat keys in a paper bid.")
    bid = Bid(event_id=event.id, owner_id=owner.id, status=BidStatus.DRAFT.value, version=0, revision=1,
              created_at=now, updated_at=now, entered_by_id=getattr(entered_by, "id", None),
              applicant_type=owner.applicant_type, applicant_name=owner.organisation or None,
              host_federation=owner.federation, contact_name=owner.name if entered_by is None else None,
              contact_email=owner.email if entered_by is None else None, consultation="pending")
    db.session.add(bid)
    db.session.flush()
    judged.keep(bid, now=now)
    audit.record("bid.create", bid, actor=actor, now=now,
                 data={"event": event.slug, "owner": owner.email, "paper": paper,
                       "entered_by": getattr(entered_by, "id", None)})
    return bid


def _check_editable(bid: Bid, revision: int | None, *, actor: User, now: datetime) -> None:
    if not bid.state.is_editable:
        raise BidError(f"This bid is {bid.state.label.lower()} and can no longer be changed"
                       + (": reopen it as a new version first." if bid.state is BidStatus.SUBMITTED else "."))
    refusal = lifecycle.draft_refusal(situation(bid, actor, now))
    if refusal:
        raise BidError(refusal)
    if revision is not None and revision != bid.revision:
        raise StaleBidError("This bid was changed in another window or by another person since you opened this "
                            "page. Your input is shown below but was not saved: check the bid, then save again.")


def save_section(bid: Bid, section: str, values: dict, *, actor: User, now: datetime, revision: int | None,
                 room_rates: list[tuple[str | None, Decimal | None]] | None = None) -> list[str]:
    """Save one section of a draft, without the submission rules (the form has checked types and formats).

    Returns the names of the fields that changed. Raises BidError if the bid is not a draft, StaleBidError if
    it changed since `revision`, KeyError for an unknown section or field.
    """
    columns = SECTION_COLUMNS[section]
    _check_editable(bid, revision, actor=actor, now=now)
    unknown = set(values) - set(columns)
    if unknown:
        raise KeyError(f"fields not in section {section}: {sorted(unknown)}")
    changed = {}
    for name, value in values.items():
        if getattr(bid, name) != value:
            changed[name] = _audit_value(value)
            setattr(bid, name, value)
    if room_rates is not None:
        before = [(r.room_type, r.eur_per_night) for r in bid.room_rates]
        after = [(t, a) for t, a in room_rates if t or a is not None]
        if before != after:
            bid.room_rates = [BidRoomRate(position=i, room_type=t, eur_per_night=a) for i, (t, a) in enumerate(after)]
            changed["room_rates"] = [[t, _audit_value(a)] for t, a in after]
    # The revision moves on every save, so a second tab that saved nothing new is still told to reload.
    result = db.session.execute(update(Bid).where(Bid.id == bid.id, Bid.revision == bid.revision)
                                .values(revision=Bid.revision + 1, updated_at=now)
                                .execution_options(synchronize_session=False))
    if rowcount(result) != 1:
        raise StaleBidError("This bid was changed in another window at the same moment; reload it and save again.")
    db.session.flush()
    db.session.refresh(bid)
    judged.keep(bid, now=now)
    if changed:
        audit.record("bid.save", bid, actor=actor, now=now, data={"section": section, "changed": changed})
    return sorted(changed)


def store_document(bid: Bid, kind: str, *, filename: str, content: bytes, upload_dir: str, max_bytes: int,
                   actor: User, now: datetime) -> BidDocument:
    """Attach a PDF to a draft: checked by its content (not its name; see evidence.pdf.pdf_problem) and its size,
    stored under a server-made name, SHA-256 recorded; the uploaded name is kept only as display text. Raises
    BidError with a message for the person uploading."""
    if kind not in DOCUMENT_KINDS:
        raise BidError(f"Unknown kind of document: {kind!r}.", "document")
    _check_editable(bid, None, actor=actor, now=now)
    label, article = DOCUMENT_KINDS[kind]
    if not content:
        raise BidError(f"{label}: the file is empty. Choose the PDF to upload.", kind)
    if len(content) > max_bytes:
        raise BidError(f"{label}: the file is {len(content) / 1_048_576:.1f} MB, above the limit of "
                       f"{max_bytes // 1_048_576} MB. Reduce it (for example by scanning at a lower resolution) "
                       "and upload it again.", kind)
    safe_name = display_name(filename, "document.pdf")
    problem = pdf_problem(content)
    if problem:
        raise BidError(f"{label}: {safe_name} {problem}. Save or scan it as PDF and upload it again.", kind)
    digest = hashlib.sha256(content).hexdigest()
    stored = store_file(Path(upload_dir) / "bids" / str(bid.id), content)
    signatures = None
    if kind in SIGNED_KINDS:
        signatures = json.dumps(inspect_pdf(content, trust_roots=trust.trusted_roots(), now=now).as_dict())
    doc = BidDocument(bid_id=bid.id, kind=kind, original_name=safe_name, stored_name=stored, sha256=digest,
                      size_bytes=len(content), uploaded_at=now, uploaded_by_id=actor.id, signatures=signatures)
    db.session.add(doc)
    db.session.flush()
    db.session.refresh(bid)
    judged.keep(bid, now=now)
    audit.record("bid.document", bid, actor=actor, now=now,
                 data={"kind": kind, "name": safe_name, "sha256": digest, "bytes": len(content),
                       **({"signature": doc.signature_words} if signatures else {})})
    return doc


def document_signatures(bid: Bid) -> list[SignatureNote]:
    """What the signatures of the bid's current letter and guarantee amount to (see bids.rules.signature_notes)."""
    reg = bid.event.regulation
    docs = {}
    for kind, doc in bid.current_documents().items():
        found = doc.inspection
        if kind in SIGNED_KINDS and found is not None:
            label, citation_key = DOCUMENT_KINDS[kind]
            docs[kind] = (label, reg.article(citation_key), found.words(), found.good)
    return signature_notes(reg, docs)


def recheck_document_signatures(*, actor: User, now: datetime, upload_dir: str) -> int:
    """Judge the signatures of every stored letter and guarantee again against the trust list as it now is (a
    file that can no longer be read keeps its last judgement). Returns how many were checked."""
    roots = trust.trusted_roots()
    checked = 0
    for doc in db.session.scalars(select(BidDocument).where(BidDocument.kind.in_(SIGNED_KINDS))):
        try:
            content = document_path(doc, upload_dir).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(content).hexdigest() != doc.sha256 or audit.evidence_problem(doc) is not None:
            continue  # altered on disk or beneath the audit log: evidence.storage refuses it when opened, and its
            # recorded judgement stands
        doc.signatures = json.dumps(inspect_pdf(content, trust_roots=roots, now=now).as_dict())
        checked += 1
    db.session.flush()
    return checked


def document_path(doc: BidDocument, upload_dir: str) -> Path:
    return Path(upload_dir) / "bids" / str(doc.bid_id) / doc.stored_name


def document_download_name(doc: BidDocument) -> str:
    """The name a document is served under, made by the server from the bid, the kind and the version (the n-th
    upload of that kind to that bid); the uploaded name is never a file name, only text to show."""
    version = db.session.scalar(select(func.count()).select_from(BidDocument).where(
        BidDocument.bid_id == doc.bid_id, BidDocument.kind == doc.kind, BidDocument.id <= doc.id))
    return f"bid-{doc.bid_id}-{doc.kind.replace('_', '-')}-v{version}.pdf"


def compliance(bid: Bid, *, today, documents_known: bool = True):
    """The findings of every rule for the bid as it stands."""
    return check_bid(bid.event.regulation, bid.to_data(documents_known=documents_known), today=today)


def _sentence(exc: Exception) -> str:
    """The guard's refusal as a sentence for the page ("A withdrawn bid cannot be submitted.")."""
    text = str(exc)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _transition(bid: Bid, action: BidAction, *, actor: User, now: datetime, values: dict | None = None,
                revision: int | None = None, data: dict | None = None, by_decision: bool = False) -> BidStatus:
    """The one guarded transition of a bid: `lifecycle.check_transition` (who acts, the call's state, the deadline,
    the status), then a compare-and-swap on the status read (and on `revision` when given), then the audit entry.
    Raises BidError with the guard's sentence, or when the bid changed at the same moment."""
    # The call's lock: its state (closed, scoring opened) cannot change between the guard and the swap.
    lock_call(bid.event)
    db.session.refresh(bid)
    before = bid.state
    try:
        after = lifecycle.check_transition(before, action, situation(bid, actor, now, by_decision=by_decision))
    except TransitionError as exc:
        raise BidError(_sentence(exc)) from None
    condition = [Bid.id == bid.id, Bid.status == before.value]
    if revision is not None:
        condition.append(Bid.revision == revision)
    result = db.session.execute(update(Bid).where(*condition).values(
        status=after.value, revision=Bid.revision + 1, updated_at=now, **(values or {}))
        .execution_options(synchronize_session=False))
    if rowcount(result) != 1:
        db.session.refresh(bid)
        raise BidError(f"This bid changed at the same moment (it is now {bid.state.label.lower()}); reload the page."
                       if bid.state is not before else
                       "This bid was changed in another window at the same moment; reload the page.")
    db.session.refresh(bid)
    judged.keep(bid, now=now)
    if action is not BidAction.SUBMIT:  # a submission is audited with its version (`_freeze`)
        audit.record(f"bid.{action.value}", bid, actor=actor, now=now,
                     data={"from": before.value, "to": after.value, **(data or {})})
    return after


def submit_bid(bid: Bid, *, actor: User, now: datetime, revision: int | None = None) -> BidVersion:
    """Run every rule; if all pass, freeze the bid as a new version and mark it submitted.

    The guard (`bids.lifecycle.check_transition`) applies whatever the path: the bidder submits an online bid, the
    secretariat a paper bid it keyed in, only while the call is open and before the deadline, or after a late
    admission (`admit_late_bid`) until scoring opens. A double click submits once: the status changes only where it
    is still a draft (one UPDATE), and the version number is unique per bid. Raises BidError when the guard refuses,
    when a rule fails (the message lists them), or when the bid changed meanwhile.
    """
    try:
        lifecycle.check_transition(bid.state, BidAction.SUBMIT, situation(bid, actor, now))
    except TransitionError as exc:
        if bid.state is BidStatus.SUBMITTED:
            raise BidError("This bid was already submitted.") from None
        raise BidError(_sentence(exc)) from None
    findings = compliance(bid, today=now.date())
    if not is_compliant(findings):
        problems = [f for f in findings if f.blocks_submission]
        raise BidError(f"The bid cannot be submitted yet: {len(problems)} "
                       f"{'requirement is' if len(problems) == 1 else 'requirements are'} not met. "
                       + " ".join(f.as_text() for f in problems[:3]) + (" …" if len(problems) > 3 else ""))
    blocking = [n for n in document_signatures(bid) if n.blocks]
    if blocking:
        raise BidError("The bid cannot be submitted yet. " + " ".join(n.as_text() for n in blocking))
    return _freeze(bid, findings, actor=actor, now=now, revision=revision)


def _freeze(bid: Bid, findings, *, actor: User, now: datetime, revision: int | None) -> BidVersion:
    try:
        _transition(bid, BidAction.SUBMIT, actor=actor, now=now, revision=revision, values={
            "version": Bid.version + 1, "submitted_at": now,
            "first_submitted_at": func.coalesce(Bid.first_submitted_at, now)})
    except BidError:
        raise BidError("This bid was already submitted (or changed in another window); reload the page.") from None
    data = bid_to_json(bid.to_data())
    docs = [d.as_dict() for d in bid.current_documents().values()]
    version = BidVersion(bid_id=bid.id, number=bid.version, submitted_at=now, submitted_by_id=actor.id,
                         regulation_version_id=bid.event.regulation_version_id,
                         data=json.dumps(data, sort_keys=True), documents=json.dumps(docs),
                         compliance=json.dumps([f.as_dict() for f in findings]),
                         compliant=is_compliant(findings),
                         # the plain form every version has been fingerprinted in (evidence.hashing)
                         sha256=canonical_sha256({"data": data, "documents": docs}, compact=False))
    db.session.add(version)
    db.session.flush()
    db.session.refresh(bid)
    audit.record("bid.submit", bid, actor=actor, now=now,
                 data={"version": version.number, "sha256": version.sha256,
                       "regulation": bid.event.regulation_version.sha256,
                       "on_behalf_of": bid.owner_id if actor.id != bid.owner_id else None,
                       "late_admitted": bid.late_admitted_at is not None})
    return version


def withdraw_bid(bid: Bid, *, actor: User, now: datetime) -> None:
    """Withdraw a submitted bid while the call is open and before the deadline. Raises BidError otherwise."""
    _transition(bid, BidAction.WITHDRAW, actor=actor, now=now)


def reopen_bid(bid: Bid, *, actor: User, now: datetime) -> None:
    """Turn a submitted bid back into a draft, to be submitted again as a new version; the submitted version is
    kept. Raises BidError once the call is closed or the deadline passed, or from another state."""
    _transition(bid, BidAction.REOPEN, actor=actor, now=now, data={"from_version": bid.version})


def reject_bid(bid: Bid, *, reason: str, actor: User, now: datetime) -> None:
    """Reject a bid under Art. 15.3 with a reason the bidder will read, and write the notice telling them into the
    outbox (in this transaction: it goes out once this commits). Raises BidError without a reason, for an
    actor who is not the secretariat, or once the call is decided."""
    reason = (reason or "").strip()
    if not reason:
        raise BidError("Give the reason for the rejection; the bidder is told "
                       f"({bid.event.regulation.citation('rejection')}).", "reason")
    _transition(bid, BidAction.REJECT, actor=actor, now=now, values={"rejection_reason": reason},
                data={"reason": reason})
    queue_rejection(bid, actor=actor, now=now)


def mark_decided(bid: Bid, *, selected: bool, decision_id: int, actor: User, now: datetime) -> None:
    """Move a bid to selected (or not selected) as part of recording the decision of Art. 15.5; only
    board.services.record_decision calls it, having checked who records the decision. A correction moves a decided
    bid to the other outcome. Raises BidError when the lifecycle refuses or the bid changed at the same moment."""
    _transition(bid, BidAction.SELECT if selected else BidAction.NOT_SELECT, actor=actor, now=now,
                data={"decision": decision_id}, by_decision=True)


def admit_late_bid(bid: Bid, *, reason: str, actor: User, now: datetime) -> None:
    """Admit a draft after the deadline (or once the call is closed), with the secretariat's reason, so that it
    can be submitted until scoring opens. The call's bidding procedure, not an article of the regulations.
    Raises BidError (field "reason") with the refusal of `bids.lifecycle.late_admission_refusal`."""
    reason = (reason or "").strip()
    # The call's lock, the one scoring's opening takes: the call's state is checked as it is when admitting.
    lock_call(bid.event)
    db.session.refresh(bid)
    refusal = lifecycle.late_admission_refusal(bid.state, situation(bid, actor, now))
    if refusal:
        raise BidError(refusal)
    if not reason:
        raise BidError(lifecycle.LATE_ADMISSION_NEEDS_REASON, "reason")
    result = db.session.execute(update(Bid).where(
        Bid.id == bid.id, Bid.status == BidStatus.DRAFT.value, Bid.late_admitted_at.is_(None)).values(
        late_admitted_at=now, late_admitted_reason=reason, late_admitted_by_id=actor.id,
        revision=Bid.revision + 1, updated_at=now).execution_options(synchronize_session=False))
    db.session.refresh(bid)
    if rowcount(result) != 1:
        raise BidError("This bid changed at the same moment; reload the page.")
    judged.keep(bid, now=now)
    audit.record("bid.late_admission", bid, actor=actor, now=now, data={"reason": reason})


def has_stake(user, event: Event) -> bool:
    """Whether the user owns or entered a bid in the call: then they neither score nor vote in it, and see no
    rival's bid (a rule of Gambit's, on conflicts of interest; not an article of the regulations)."""
    if user is None or getattr(user, "id", None) is None:
        return False
    return db.session.scalar(_staked_events(user).where(Bid.event_id == event.id).limit(1)) is not None


def kept_from_rivals(user, event: Event) -> bool:
    """Whether the user is kept from the rivals' bids, dossiers and scores of the call: they own or entered a bid in
    it (`has_stake`) and are not the secretariat, which runs the call and sees it all. Raises nothing."""
    return Role.ADMIN not in user.role_set and has_stake(user, event)


def record_consultation(bid: Bid, *, outcome: str, note: str, actor: User, now: datetime,
                        fide_accepts: bool = False) -> None:
    """Record the host federation's answer to FIDE's consultation on a sponsor's bid (Art. 15.1: "FIDE shall
    consult the federation where the sponsor proposes to hold the FWWCM. If the federation refuses or is unable to
    co-operate, FIDE may still accept a proposal from a potential sponsor"), and, after a refusal or inability,
    whether FIDE accepts the sponsor's proposal nonetheless (`fide_accepts`, with who and when). Without that
    acceptance a declined consultation keeps the bid from being selected.

    Raises BidError when the bid is not a sponsor's (the consultation does not apply), the outcome is unknown, or
    `fide_accepts` goes with an answer other than a refusal or inability. Writes `bid.consultation`."""
    if not bid.by_sponsor:
        raise BidError(FEDERATION_ONLY.format(title=bid.title), "outcome")
    if outcome not in CONSULTATION:
        raise BidError(f"Choose one of: {', '.join(CONSULTATION)}.", "outcome")
    refused = check_acceptance(outcome, fide_accepts)
    if refused:
        raise BidError(refused, "fide_accepts")
    before = {"outcome": bid.consultation, "fide_accepts": bid.consultation_accepted_at is not None}
    bid.consultation = outcome
    bid.consultation_note = (note or "").strip()
    if not fide_accepts:
        bid.consultation_accepted_at = bid.consultation_accepted_by_id = None
    elif bid.consultation_accepted_at is None:
        bid.consultation_accepted_at = now
        bid.consultation_accepted_by_id = actor.id
    db.session.flush()
    audit.record("bid.consultation", bid, actor=actor, now=now,
                 data={"from": before, "to": {"outcome": outcome, "fide_accepts": fide_accepts},
                       "note": bid.consultation_note})


def record_president_ruling(bid: Bid, *, grounds: str, reason: str, actor: User, now: datetime) -> None:
    """Art. 16: "any grounds that are not covered or any unforeseen event shall be referred to the FIDE President,
    for final decision". The President records, on a sponsor's bid whose consultation has no answer, which of the
    two grounds it is (`grounds`: bids.consultation.RULING_GROUNDS) and the decision with its reason; the bid may
    then be selected. Not a waiver under Art. 15.1, which gives none.

    Raises BidError when the actor is not the FIDE President, the consultation does not apply or already has an
    answer (then Art. 15.1 covers it), the ground is not one of the two, or the reason is empty. Writes
    `bid.president_ruling`."""
    reason = (reason or "").strip()
    unforeseen = bid.event.regulation.citation("unforeseen")
    if not getattr(actor, "is_president", False):
        raise BidError(f"{unforeseen}: only the FIDE President decides what is referred to the President.")
    if not bid.by_sponsor:
        raise BidError(FEDERATION_ONLY.format(title=bid.title), "grounds")
    if not bid.consultation_state.may_refer_to_president:
        raise BidError(f"{bid.title}: the host federation's answer is recorded "
                       f"({CONSULTATION_LABELS.get(bid.consultation, bid.consultation)}); the consultation is covered "
                       f"by {bid.event.regulation.citation('consultation')}, not referred to the President.",
                       "grounds")
    if grounds not in RULING_GROUNDS:
        raise BidError(f"{unforeseen}: say which it is: {' or '.join(RULING_GROUNDS.values())}.", "grounds")
    if not reason:
        raise BidError("Give the President's decision and its reason; the decision record shows it.", "reason")
    bid.consultation_ruling_grounds = grounds
    bid.consultation_ruling_reason = reason
    bid.consultation_ruling_at = now
    bid.consultation_ruling_by_id = actor.id
    db.session.flush()
    audit.record("bid.president_ruling", bid, actor=actor, now=now,
                 data={"article": bid.event.regulation.article("unforeseen"), "grounds": grounds, "reason": reason})


def _judgement(bid: Bid, version, *, now: datetime) -> BidJudgement:
    """The bid's findings under `version` of the call's regulation, recorded once (the first time it is judged
    under that version)."""
    found = db.session.scalars(select(BidJudgement).where(BidJudgement.bid_id == bid.id,
                                                          BidJudgement.regulation_version_id == version.id)).first()
    if found is not None:
        return found
    day = (bid.submitted_at or bid.updated_at or now).date()
    findings = check_bid(version.regulation, bid.to_data(), today=day)
    row = BidJudgement(bid_id=bid.id, regulation_version_id=version.id, judged_at=now,
                       compliant=is_compliant(findings), findings=json.dumps([f.as_dict() for f in findings]))
    db.session.add(row)
    db.session.flush()
    return row


def judge_again(event: Event, old_version, new_version, *, now: datetime, judge_old: bool = True) -> list[dict]:
    """Every submitted bid of the call judged again under the amended regulation; its findings under the old version
    are recorded first (if they were not), so both stay on record. Returns one report entry per bid whose findings
    changed: which checks changed outcome, and whether it complies before and after. `judge_old=False` (an
    upgrade: this release's code cannot read what an older release stored) compares with the findings recorded
    under the old version only, and reports a bid never judged under it as not changed. Raises nothing of its
    own."""
    report = []
    bids = db.session.scalars(select(Bid).where(Bid.event_id == event.id, Bid.status != BidStatus.DRAFT.value)
                              .order_by(Bid.id)).all()
    for bid in bids:
        before = _judgement(bid, old_version, now=now) if judge_old else db.session.scalars(
            select(BidJudgement).where(BidJudgement.bid_id == bid.id,
                                       BidJudgement.regulation_version_id == old_version.id)).first()
        after = _judgement(bid, new_version, now=now)
        if before is None:
            continue
        old = {f["code"]: f for f in before.loads()}
        new = {f["code"]: f for f in after.loads()}
        changed = sorted(code for code in set(old) | set(new)
                         if (old.get(code) or {}).get("outcome") != (new.get(code) or {}).get("outcome")
                         or (old.get(code) or {}).get("message") != (new.get(code) or {}).get("message"))
        if changed:
            report.append({"bid": bid.id, "title": bid.title, "compliant_before": before.compliant,
                           "compliant_after": after.compliant,
                           "changed": [{"code": c, "article": (new.get(c) or old[c])["article"],
                                        # what the finding cites, as said everywhere ("Art. 13.1", "Bidding
                                        # procedure: …", "Sanity check: …")
                                        "cite": (new.get(c) or old[c]).get("cite", ""),
                                        "before": (old.get(c) or {}).get("outcome"),
                                        "after": (new.get(c) or {}).get("outcome"),
                                        "message": (new.get(c) or old[c])["message"]} for c in changed]})
    return report


def apply_data(bid: Bid, data: BidData) -> None:
    """Write every value of a BidData onto the bid's columns and room rates (no checks, no audit: callers do)."""
    g = data.bank_guarantee
    values = {
        "applicant_type": data.applicant_type, "applicant_name": data.applicant_name,
        "host_federation": data.host_federation, "contact_name": data.contact_name,
        "contact_email": data.contact_email, "ioc_conflict_free": data.ioc_conflict_free,
        "opening_date": data.opening_date, "closing_date": data.closing_date, "venue_name": data.venue_name,
        "venue_city": data.venue_city, "venue_country": data.venue_country, "prize_fund_eur": data.prize_fund_eur,
        "fide_contribution_eur": data.fide_contribution_eur, "amounts_net_of_taxes": data.amounts_net_of_taxes,
        "commits_fide_obligations": data.commits_fide_obligations,
        "commits_organisational_costs": data.commits_organisational_costs,
        "accepts_regulations": data.accepts_regulations, "hotel_name": data.hotel_name,
        "hotel_stars": data.hotel_stars, "wcoc_inspectors_invited": data.wcoc_inspectors_invited,
        "inspection_expenses_covered": data.inspection_expenses_covered,
        "guarantee_offered": None if g is None else g.offered,
        "guarantee_bank": g.bank if g else None, "guarantee_amount_eur": g.amount_eur if g else None,
        "guarantee_valid_until": g.valid_until if g else None, "signatory_name": data.signatory_name,
        "signatory_position": data.signatory_position, "signed_on": data.signed_on,
        **{f"eval_{k}": getattr(data.evaluation, k) for k in EVALUATION_KEYS},
    }
    for name, value in values.items():
        setattr(bid, name, value)
    bid.room_rates = [BidRoomRate(position=i, room_type=r.room_type, eur_per_night=r.eur_per_night)
                      for i, r in enumerate(data.room_rates)]


def import_bid(event: Event, data: BidData, *, owner, actor: User, now: datetime) -> Bid:
    """Key in a paper bid from the JSON shape (flask bids import): a draft holding every value of the file, entered
    by `actor` (the secretariat) on the owner's behalf. Documents are attached later in the web form; the secretariat
    submits it. Raises BidError when `actor` is not the secretariat or the call no longer takes paper bids."""
    bid = create_bid(event, owner=owner, actor=actor, now=now, entered_by=actor)
    apply_data(bid, data)
    judged.keep(bid, now=now)
    audit.record("bid.import", bid, actor=actor, now=now, data={"event": event.slug})
    return bid


def _staked_events(user):
    """The calls in which the user owns or entered a bid (a select of event ids)."""
    return select(Bid.event_id).where((Bid.owner_id == user.id) | (Bid.entered_by_id == user.id))


def _opened_by_roles(user) -> tuple[bool, bool]:
    """What a person's roles open of the bids, the one rule both `bids_visible_to` (a list) and `can_see` (one bid)
    apply: (every bid: the secretariat; the bids in or past the contest, outside the calls where the person owns
    or entered a bid (`has_stake`): the WCOC and the Board). Everyone sees their own bids, in any state, besides."""
    roles = user.role_set
    return Role.ADMIN in roles, bool(roles & REVIEWER_ROLES)


def bids_visible_to(user, event: Event | None = None):
    """The select() of bids a user may see (`_opened_by_roles`): their own (any state); reviewers see bids in or past
    the contest, but none of a rival's in a call where they own or entered a bid (`has_stake`); admins see all."""
    query = select(Bid)
    if event is not None:
        query = query.where(Bid.event_id == event.id)
    everything, reviewed = _opened_by_roles(user)
    if everything:
        return query
    visible = [s.value for s in BidStatus if s.visible_to_reviewers]
    if reviewed:
        return query.where((Bid.owner_id == user.id)
                           | (Bid.status.in_(visible) & Bid.event_id.not_in(_staked_events(user))))
    return query.where(Bid.owner_id == user.id)


def can_see(user, bid: Bid) -> bool:
    """Whether `user` may see `bid`, already loaded: the rule of bids_visible_to (`_opened_by_roles`), asked of one
    bid without a query for the list."""
    everything, reviewed = _opened_by_roles(user)
    if everything or bid.owner_id == user.id:
        return True
    return reviewed and bid.state.visible_to_reviewers and not kept_from_rivals(user, bid.event)
