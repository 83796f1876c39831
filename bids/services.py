"""The only code that changes bids: each function checks the rules, changes rows, flushes and writes the audit
entry. None commits; none reads the request. Each takes the actor and the time."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import func, select, update

from bids.models import CONSULTATION, DOCUMENT_KINDS, EVALUATION_KEYS, Bid, BidDocument, BidRoomRate, BidVersion
from bids.rules import (
    SECTIONS,
    BidAction,
    BidData,
    BidStatus,
    TransitionError,
    bid_to_json,
    check_bid,
    is_compliant,
    next_status,
)
from core import audit
from core.db import db
from core.money import format_day
from core.pdf import pdf_problem
from core.storage import display_name
from events.models import Event


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


def create_bid(event: Event, *, owner, actor, now: datetime, entered_by=None) -> Bid:
    """Start a draft for a call, pre-filled from the owner's account. Raises BidError when the call does not
    take bids (closed, or past its deadline) — except for a paper bid keyed in by an admin."""
    reg = event.regulation
    if entered_by is None and (not event.state.accepts_bids or now > reg.event.bid_deadline):
        raise BidError(f"The call {event.title} no longer takes bids (the deadline was "
                       f"{format_day(reg.event.bid_deadline)}).")
    bid = Bid(event_id=event.id, owner_id=owner.id, status=BidStatus.DRAFT.value, version=0, revision=1,
              created_at=now, updated_at=now, entered_by_id=getattr(entered_by, "id", None),
              applicant_type=owner.applicant_type, applicant_name=owner.organisation or None,
              host_federation=owner.federation, contact_name=owner.name if entered_by is None else None,
              contact_email=owner.email if entered_by is None else None, consultation="pending")
    db.session.add(bid)
    db.session.flush()
    audit.record("bid.create", bid, actor=actor, now=now,
                 data={"event": event.slug, "owner": owner.email, "paper": entered_by is not None})
    return bid


def _check_editable(bid: Bid, revision: int | None) -> None:
    if not bid.state.is_editable:
        raise BidError(f"This bid is {bid.state.label.lower()} and can no longer be changed"
                       + (": reopen it as a new version first." if bid.state is BidStatus.SUBMITTED else "."))
    if revision is not None and revision != bid.revision:
        raise StaleBidError("This bid was changed in another window or by another person since you opened this "
                            "page. Your input is shown below but was not saved: check the bid, then save again.")


def save_section(bid: Bid, section: str, values: dict, *, actor, now: datetime, revision: int | None,
                 room_rates: list[tuple[str | None, Decimal | None]] | None = None) -> list[str]:
    """Save one section of a draft, without the submission rules (the form has checked types and formats).

    Returns the names of the fields that changed. Raises BidError if the bid is not a draft, StaleBidError if
    it changed since `revision`, KeyError for an unknown section or field.
    """
    columns = SECTION_COLUMNS[section]
    _check_editable(bid, revision)
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
    if result.rowcount != 1:
        raise StaleBidError("This bid was changed in another window at the same moment; reload it and save again.")
    db.session.flush()
    db.session.refresh(bid)
    if changed:
        audit.record("bid.save", bid, actor=actor, now=now, data={"section": section, "changed": changed})
    return sorted(changed)


def store_document(bid: Bid, kind: str, *, filename: str, content: bytes, upload_dir: str, max_bytes: int,
                   actor, now: datetime) -> BidDocument:
    """Attach a PDF to a draft: checked by its content (not its name; see core.pdf.pdf_problem) and its size,
    stored under a server-made name, SHA-256 recorded; the uploaded name is kept only as display text. Raises
    BidError with a message for the person uploading."""
    if kind not in DOCUMENT_KINDS:
        raise BidError(f"Unknown kind of document: {kind!r}.", "document")
    _check_editable(bid, None)
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
    stored = f"{secrets.token_hex(16)}.pdf"
    folder = Path(upload_dir) / "bids" / str(bid.id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / stored
    path.write_bytes(content)
    doc = BidDocument(bid_id=bid.id, kind=kind, original_name=safe_name, stored_name=stored, sha256=digest,
                      size_bytes=len(content), uploaded_at=now, uploaded_by_id=actor.id)
    db.session.add(doc)
    db.session.flush()
    db.session.refresh(bid)
    audit.record("bid.document", bid, actor=actor, now=now,
                 data={"kind": kind, "name": safe_name, "sha256": digest, "bytes": len(content)})
    return doc


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


def _deadline_check(bid: Bid, now: datetime, what: str) -> None:
    reg = bid.event.regulation
    if now > reg.event.bid_deadline:
        raise BidError(f"The deadline for bids was {format_day(reg.event.bid_deadline)} "
                       f"{reg.event.bid_deadline.strftime('%H:%M')} UTC: a bid can no longer be {what}.")


def submit_bid(bid: Bid, *, actor, now: datetime, revision: int | None = None) -> BidVersion:
    """Run every rule; if all pass, freeze the bid as a new version and mark it submitted.

    A paper bid (keyed in by the secretariat) is not refused for the calendar: it arrived in time on paper.

    A double click submits once: the status changes only where it is still a draft (one UPDATE), and the
    version number is unique per bid. Raises BidError when the call is closed or past its deadline, when a rule
    fails (the message lists them), or when the bid is not a draft.
    """
    event = bid.event
    if bid.state is not BidStatus.DRAFT:
        raise BidError("This bid was already submitted." if bid.state is BidStatus.SUBMITTED
                       else f"A {bid.state.label.lower()} bid cannot be submitted.")
    # A paper bid keyed in by the secretariat arrived in time on paper: the calendar does not judge it.
    paper = bid.entered_by_id is not None
    if not paper:
        if not event.state.accepts_bids:
            raise BidError(f"The call is {event.state.label.lower()}: bids can no longer be submitted.")
        _deadline_check(bid, now, "submitted")
    findings = compliance(bid, today=now.date())
    if not is_compliant(findings):
        problems = [f for f in findings if f.outcome.value in ("fail", "pending")]
        raise BidError(f"The bid cannot be submitted yet: {len(problems)} "
                       f"{'requirement is' if len(problems) == 1 else 'requirements are'} not met. "
                       + " ".join(f.as_text() for f in problems[:3]) + (" …" if len(problems) > 3 else ""))
    return _freeze(bid, findings, actor=actor, now=now, revision=revision)


def _freeze(bid: Bid, findings, *, actor, now: datetime, revision: int | None) -> BidVersion:
    condition = [Bid.id == bid.id, Bid.status == BidStatus.DRAFT.value]
    if revision is not None:
        condition.append(Bid.revision == revision)
    result = db.session.execute(
        update(Bid).where(*condition).values(
            status=BidStatus.SUBMITTED.value, version=Bid.version + 1, revision=Bid.revision + 1,
            submitted_at=now, first_submitted_at=func.coalesce(Bid.first_submitted_at, now), updated_at=now)
        .execution_options(synchronize_session=False))
    if result.rowcount != 1:
        raise BidError("This bid was already submitted (or changed in another window); reload the page.")
    db.session.refresh(bid)
    data = bid_to_json(bid.to_data())
    docs = [d.as_dict() for d in bid.current_documents().values()]
    body = json.dumps({"data": data, "documents": docs}, sort_keys=True)
    version = BidVersion(bid_id=bid.id, number=bid.version, submitted_at=now, submitted_by_id=actor.id,
                         regulation_version_id=bid.event.regulation_version_id,
                         data=json.dumps(data, sort_keys=True), documents=json.dumps(docs),
                         compliance=json.dumps([f.as_dict() for f in findings]),
                         compliant=is_compliant(findings), sha256=hashlib.sha256(body.encode()).hexdigest())
    db.session.add(version)
    db.session.flush()
    db.session.refresh(bid)
    audit.record("bid.submit", bid, actor=actor, now=now,
                 data={"version": version.number, "sha256": version.sha256,
                       "regulation": bid.event.regulation_version.sha256})
    return version


def _transition(bid: Bid, action: BidAction, *, actor, now: datetime, data: dict | None = None) -> BidStatus:
    try:
        after = next_status(bid.state, action)
    except TransitionError as exc:
        raise BidError(str(exc)) from None
    before = bid.status
    result = db.session.execute(update(Bid).where(Bid.id == bid.id, Bid.status == before).values(
        status=after.value, revision=Bid.revision + 1, updated_at=now).execution_options(synchronize_session=False))
    if result.rowcount != 1:
        raise BidError("This bid changed at the same moment; reload the page.")
    db.session.refresh(bid)
    audit.record(f"bid.{action.value}", bid, actor=actor, now=now,
                 data={"from": before, "to": after.value, **(data or {})})
    return after


def withdraw_bid(bid: Bid, *, actor, now: datetime) -> None:
    """Withdraw a submitted bid before the deadline. Raises BidError after the deadline or from another state."""
    _deadline_check(bid, now, "withdrawn")
    _transition(bid, BidAction.WITHDRAW, actor=actor, now=now)


def reopen_bid(bid: Bid, *, actor, now: datetime) -> None:
    """Turn a submitted bid back into a draft, to be submitted again as a new version; the submitted version is
    kept. Raises BidError after the deadline or from another state."""
    _deadline_check(bid, now, "reopened")
    _transition(bid, BidAction.REOPEN, actor=actor, now=now, data={"from_version": bid.version})


def reject_bid(bid: Bid, *, reason: str, actor, now: datetime) -> None:
    """Reject a bid under Art. 15.3 with a reason the bidder will read. Raises BidError without a reason."""
    reason = (reason or "").strip()
    if not reason:
        raise BidError("Give the reason for the rejection; the bidder is told (Art. 15.3).", "reason")
    try:
        after = next_status(bid.state, BidAction.REJECT)
    except TransitionError as exc:
        raise BidError(str(exc)) from None
    before = bid.status
    result = db.session.execute(update(Bid).where(Bid.id == bid.id, Bid.status == before).values(
        status=after.value, rejection_reason=reason, revision=Bid.revision + 1, updated_at=now)
        .execution_options(synchronize_session=False))
    if result.rowcount != 1:
        raise BidError("This bid changed at the same moment (withdrawn or reopened); reload the page.")
    db.session.refresh(bid)
    audit.record("bid.reject", bid, actor=actor, now=now, data={"from": before, "to": after.value, "reason": reason})


def record_consultation(bid: Bid, *, outcome: str, note: str, actor, now: datetime) -> None:
    """Record the host federation's answer to FIDE's consultation (Art. 15.1). A refusal does not bar the bid."""
    if outcome not in CONSULTATION:
        raise BidError(f"Choose one of: {', '.join(CONSULTATION)}.", "outcome")
    before = bid.consultation
    bid.consultation = outcome
    bid.consultation_note = (note or "").strip()
    db.session.flush()
    audit.record("bid.consultation", bid, actor=actor, now=now,
                 data={"from": before, "to": outcome, "note": bid.consultation_note})


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


def import_bid(event: Event, data: BidData, *, owner, actor, now: datetime) -> Bid:
    """Key in a paper bid from the JSON shape (flask bids import): a draft holding every value of the file.
    Documents are attached later in the web form; submission still requires them."""
    bid = create_bid(event, owner=owner, actor=actor, now=now, entered_by=actor or owner)
    apply_data(bid, data)
    db.session.flush()
    audit.record("bid.import", bid, actor=actor, now=now, data={"event": event.slug})
    return bid


def bids_visible_to(user, event: Event | None = None):
    """The select() of bids a user may see: their own (any state); reviewers see bids in or past the contest;
    admins see all."""
    from core.auth import Role

    query = select(Bid)
    if event is not None:
        query = query.where(Bid.event_id == event.id)
    roles = user.role_set
    if Role.ADMIN in roles:
        return query
    visible = [s.value for s in BidStatus if s.visible_to_reviewers]
    if roles & {Role.WCOC, Role.BOARD}:
        return query.where((Bid.owner_id == user.id) | Bid.status.in_(visible))
    return query.where(Bid.owner_id == user.id)


def can_see(user, bid: Bid) -> bool:
    """The same rule as bids_visible_to, for one bid already loaded."""
    from core.auth import Role

    roles = user.role_set
    if Role.ADMIN in roles or bid.owner_id == user.id:
        return True
    return bool(roles & {Role.WCOC, Role.BOARD}) and bid.state.visible_to_reviewers
