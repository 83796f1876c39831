"""The contract's own life: made from the selected bid, corrected, issued, countersigned, its signatures checked again,
its calendar feed. The rest of what changes a contract's rows lives beside it: payments (contracts.payments), the
match result and prize deductions (contracts.results), reminders (contracts.reminders); what all of them check first
is contracts.guards. Each function checks the rules, changes rows, flushes and writes the audit entry; none commits,
none reads the request. Each takes the actor and the time."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from accounts.models import User
from bids.lifecycle import BidStatus
from bids.models import Bid
from board import queries as board_queries
from contracts import queries
from contracts.guards import ContractError, bookkeeping, check_day, lock_contract, milestone_row
from contracts.lifecycle import ContractAction, ContractStatus, next_status
from contracts.models import Contract, Milestone, Payment, Reminder
from contracts.rules.countersigning import countersign_problem, countersign_trust_problem
from contracts.rules.result import (
    MatchOutcome,
    result_milestones,
)
from contracts.rules.terms import (
    ContractInputs,
    ContractRuleError,
    ContractTerms,
    MilestoneTerm,
    contract_terms,
    missing_bid_facts,
    missing_due_dates,
    past_due_dates,
)
from core.db import db, swap_state
from core.money import format_day, format_eur
from events.models import RegulationVersion
from evidence import audit, trust
from evidence.pdf import EmbeddedFile, looks_like_pdf, pdf_problem, render_pdf
from evidence.signing import Inspection, SigningError, inspect_pdf, load_identity, sign_issued
from evidence.storage import StoredFileError, display_name, read_verified, store_file
from finance.rules import contract_article

Renderer = Callable[..., bytes]


def _transition(contract: Contract, action: ContractAction) -> ContractStatus:
    try:
        return next_status(contract.status, action)
    except ContractRuleError as exc:
        raise ContractError(f"{exc} (contract {contract.reference}, version {contract.version})") from None


def _move(contract: Contract, action: ContractAction, **values) -> ContractStatus:
    """The contract's one guarded transition: the lifecycle's table, then a compare-and-swap on the status read
    (pending changes are flushed first), so that two changes at the same moment give one change and one refusal.
    Raises ContractError."""
    before = contract.state
    after = _transition(contract, action)
    db.session.flush()
    if not swap_state(contract, expected=before, values={"status": after, **values}):
        raise ContractError(f"{contract.reference} changed at the same moment (it is now "
                            f"{contract.state.label.lower()}); reload the page.")
    return after


def _check_selected(bid: Bid) -> None:
    if bid.status != BidStatus.SELECTED.value:
        raise ContractError(
            f"Art. {contract_article(bid.event.regulation)}: a contract is signed with the organizer the Presidential "
            f"Board selected; bid {bid.id} ({bid.title}) is {bid.state.label.lower()}, not selected. No contract was "
            "generated.")


def contract_inputs(bid: Bid) -> ContractInputs:
    """The facts of a selected bid a contract is generated from, with the call's answer on the signal blocker
    (Art. 14.3, "if required by FIDE": Event.signal_blocker_required, as the secretariat recorded it). Raises
    ContractError naming what is missing."""
    values = {name: getattr(bid, name) for name in ("applicant_name", "opening_date", "closing_date", "venue_city",
                                                    "venue_country", "prize_fund_eur", "fide_contribution_eur")}
    missing = missing_bid_facts(values, bid.event.regulation)
    if missing:
        raise ContractError(f"Art. {contract_article(bid.event.regulation)}: bid {bid.id} does not state "
                            f"{', '.join(missing)}; a contract cannot be generated without it.")
    # missing_bid_facts refused each of these being empty
    assert bid.applicant_name is not None and bid.venue_city is not None and bid.venue_country is not None
    assert bid.opening_date is not None and bid.closing_date is not None
    assert bid.prize_fund_eur is not None and bid.fide_contribution_eur is not None
    offered = bool(bid.guarantee_offered)
    return ContractInputs(
        bid_id=bid.id, applicant_name=bid.applicant_name, applicant_type=bid.applicant_type or "",
        host_federation=bid.host_federation or "", signatory_name=bid.signatory_name or "",
        signatory_position=bid.signatory_position or "", contact_name=bid.contact_name or "",
        contact_email=bid.contact_email or bid.owner.email, venue_name=bid.venue_name or "",
        venue_city=bid.venue_city, venue_country=bid.venue_country, opening_date=bid.opening_date,
        closing_date=bid.closing_date, prize_fund=bid.prize_fund_eur, fide_contribution=bid.fide_contribution_eur,
        guarantee_offered=offered, guarantee_bank=(bid.guarantee_bank or "") if offered else "",
        guarantee_amount=bid.guarantee_amount_eur if offered else None,
        guarantee_valid_until=bid.guarantee_valid_until if offered else None,
        signal_blocker_required=bid.event.signal_blocker_required, **_selected_by(bid))


def _selected_by(bid: Bid) -> dict[str, str]:
    """How the decision in force selected the bid: `selected_by` ("board_vote" or "president"; "" when none is
    recorded) and, for the President's decision, its `selection_grounds` (why no Board meeting could be held, the
    WCOC consulted and when). Raises nothing."""
    decision = board_queries.current_decision(bid.event)
    if decision is None or decision.selected_bid_id != bid.id:
        return {"selected_by": "", "selection_grounds": ""}
    return {"selected_by": decision.method, "selection_grounds": decision.grounds}


def _terms(reg, inputs: ContractInputs, due_dates: Mapping[str, date] | None = None, *,
           issued_on: date | None = None) -> ContractTerms:
    try:
        return contract_terms(reg, inputs, due_dates, issued_on=issued_on)
    except ContractRuleError as exc:
        raise ContractError(str(exc)) from None


def build_terms(contract: Contract, due_dates: Mapping[str, date] | None = None, *,
                issued_on: date | None = None) -> ContractTerms:
    """The terms of a contract, rebuilt from its stored inputs and regulation version (`due_dates` replaces
    the stored dates when given; `issued_on`, see contracts.rules.contract_terms). Raises ContractError if they no
    longer make a contract."""
    return _terms(contract.regulation, contract.inputs, contract.due_dates if due_dates is None else due_dates,
                  issued_on=issued_on)


def _snapshot(terms: ContractTerms) -> str:
    return json.dumps(terms.as_dict(), sort_keys=True, ensure_ascii=False)


def _regulation_version_id(bid: Bid) -> int:
    """The regulation version that judged the bid's last submission, else the one in force for the call."""
    last = bid.last_version
    return last.regulation_version_id if last is not None else bid.event.regulation_version.id


def create_contract(bid: Bid, *, actor: User, now: datetime) -> Contract:
    """Generate the draft contract for the selected bid (Art. 15.6.1); the signal blocker (Art. 14.3) is in it
    only when the call records that FIDE requires it.

    Raises ContractError when the bid is not selected, when it already has a contract (prepare a correction
    instead), or when its figures cannot make one. Writes `contract.create` to the audit log.
    """
    _check_selected(bid)
    _check_no_other_in_force(bid)
    versions = queries.versions_of(bid.id)
    live = [c for c in versions if c.state not in (ContractStatus.DISCARDED, ContractStatus.CLOSED)]
    if live:
        raise ContractError(_already(bid, live[-1]))
    inputs = contract_inputs(bid)
    version_id = _regulation_version_id(bid)
    reg = db.session.get_one(RegulationVersion, version_id).regulation
    terms = _terms(reg, inputs)
    contract = Contract(bid_id=bid.id, regulation_version_id=version_id,
                        version=max((c.version for c in versions), default=0) + 1,
                        status=ContractStatus.DRAFT.value, terms_json=_snapshot(terms), created_at=now,
                        created_by_id=getattr(actor, "id", None))
    try:
        # Two secretaries at once: the second insert of the same version is refused by the unique constraint.
        with db.session.begin_nested():
            db.session.add(contract)
            db.session.flush()
    except IntegrityError:
        db.session.expire_all()
        found = [c for c in queries.versions_of(bid.id)
                 if c.state not in (ContractStatus.DISCARDED, ContractStatus.CLOSED)]
        raise ContractError(_already(bid, found[-1]) if found else
                            f"Bid {bid.id} got a contract at the same moment; reload the page.") from None
    audit.record("contract.create", contract, actor=actor, now=now,
                 data={"bid": bid.id, "version": contract.version, "regulation_sha256": reg.sha256,
                       "signal_blocker_required": inputs.signal_blocker_required})
    return contract


def _already(bid: Bid, c: Contract) -> str:
    return (f"Bid {bid.id} already has a contract ({c.reference}, {c.state.label.lower()}). To change an issued "
            "contract, prepare a correction of it.")


def _check_no_other_in_force(bid: Bid, *, drafts: bool = True) -> None:
    """Only the bid of the decision in force has a contract that takes payments: another bid's contract in the
    same call (in force, or with `drafts` a draft) must be closed first (a correction of the decision does that
    in the same transaction)."""
    states = queries.IN_FORCE + ((ContractStatus.DRAFT.value,) if drafts else ())
    other = db.session.scalars(select(Contract).join(Bid, Contract.bid_id == Bid.id).where(
        Bid.event_id == bid.event_id, Contract.bid_id != bid.id, Contract.status.in_(states))).first()
    if other is not None:
        raise ContractError(
            f"Art. {contract_article(bid.event.regulation)}: the contract {other.reference} with another bid of this "
            f"call is {other.state.label.lower()}; it must be closed (by a correction of the Board's decision) "
            f"before a contract is made with bid {bid.id} ({bid.title}).")


def close_for_correction(decision, *, superseded, actor: User, now: datetime) -> list[Contract]:
    """A correction of the Board's decision selected another bid: in the same transaction, close every contract
    of the call's other bids to new payments (issued or signed: CLOSE, with the decision named; drafts:
    discarded). What was paid stays on record, and is refunded by reversing it. Each change is a
    compare-and-swap on the contract's status. Raises ContractError when a contract changed at the same moment.
    Writes `contract.close` / `contract.discard` to the audit log. app.py provides it as the board's
    after_correction hook."""
    selected = db.session.get_one(Bid, decision.selected_bid_id)
    reason = (f"Decision {superseded.id} was corrected by decision {decision.id} on {format_day(now.date())}, "
              f"which selects {selected.title}: {decision.correction_reason}")
    closed = []
    rows = db.session.scalars(select(Contract).join(Bid, Contract.bid_id == Bid.id).where(
        Bid.event_id == decision.event_id, Contract.bid_id != decision.selected_bid_id,
        Contract.status.in_(queries.IN_FORCE + (ContractStatus.DRAFT.value,))).order_by(Contract.id)).all()
    for contract in rows:
        before = contract.state
        if before is ContractStatus.DRAFT:
            after = _move(contract, ContractAction.DISCARD, discarded_at=now)
        else:
            after = _move(contract, ContractAction.CLOSE, closed_at=now, closed_reason=reason)
        audit.record("contract.close" if after is ContractStatus.CLOSED else "contract.discard", contract,
                     actor=actor, now=now, data={"reference": contract.reference, "from": before.value,
                                                 "decision": decision.id, "reason": reason})
        closed.append(contract)
    return closed


def prepare_correction(contract: Contract, *, reason: str, actor: User, now: datetime) -> Contract:
    """Start a correction of the contract in force: a new draft version that names the one it replaces and
    why. The replaced version stays in force until the correction is issued. The correction takes the call's
    answer on the signal blocker as it stands now (Art. 14.3, Event.signal_blocker_required).

    Raises ContractError when `contract` is not in force, a correction is already being prepared, or no
    reason is given. Writes `contract.correction` to the audit log.
    """
    if not contract.state.in_force:
        raise ContractError(f"Only the contract in force can be corrected; {contract.reference} is "
                            f"{contract.state.label.lower()}.")
    reason = (reason or "").strip()
    if not reason:
        raise ContractError("Say what the correction changes and why; the new version records it.", "reason")
    draft = queries.open_draft(contract.bid_id)
    if draft is not None:
        raise ContractError(f"A correction ({draft.reference}) is already being prepared; issue it or discard it "
                            "first.")
    old = contract.inputs
    selection = _selected_by(contract.bid)
    inputs = dataclasses.replace(old, signal_blocker_required=contract.bid.event.signal_blocker_required,
                                 selected_by=selection["selected_by"],
                                 selection_grounds=selection["selection_grounds"])
    terms = _terms(contract.regulation, inputs, contract.due_dates)
    versions = queries.versions_of(contract.bid_id)
    new = Contract(bid_id=contract.bid_id, regulation_version_id=contract.regulation_version_id,
                   version=max(c.version for c in versions) + 1, replaces_id=contract.id, correction_reason=reason,
                   status=ContractStatus.DRAFT.value, terms_json=_snapshot(terms), created_at=now,
                   created_by_id=getattr(actor, "id", None))
    db.session.add(new)
    db.session.flush()
    audit.record("contract.correction", new, actor=actor, now=now,
                 data={"replaces": contract.id, "replaces_reference": contract.reference, "reason": reason})
    return new


def discard_contract(contract: Contract, *, actor: User, now: datetime) -> None:
    """Discard a draft that will not be issued; it stays on record. Raises ContractError if not a draft."""
    _move(contract, ContractAction.DISCARD, discarded_at=now)
    audit.record("contract.discard", contract, actor=actor, now=now, data={"reference": contract.reference})


def render_contract_pdf(contract: Contract, terms: ContractTerms, *, draft: bool,
                        checkpoint: audit.Checkpoint | None = None) -> bytes:
    """The contract as PDF through evidence.pdf (templates/pdf/contract.html); `checkpoint`, the audit log's head as
    the issued contract is rendered, is printed in it. The PDF carries its terms and payment schedule as JSON, the
    text the issued contract freezes (Contract.terms_json). Raises evidence.pdf.PdfError."""
    terms_file = EmbeddedFile.json(
        f"contract-{contract.reference}-terms.json", _snapshot(terms),
        "the terms this contract was written from: the parties, the bid's particulars it rests on, every payment "
        "with its amount, payer, payee and due date (the payment schedule), and the regulation's version",
        contract.issued_at or contract.created_at)
    return render_pdf("contract.html", contract=contract, terms=terms, draft=draft, checkpoint=checkpoint,
                      attachments=[terms_file])


def _store(upload_dir: str, bid_id: int, content: bytes) -> str:
    return store_file(Path(upload_dir) / "contracts" / str(bid_id), content)


def issue_contract(contract: Contract, *, due_dates: Mapping[str, date | None], actor: User, now: datetime,
                   upload_dir: str, render: Renderer | None = None) -> Contract:
    """Issue a draft: fix its terms (snapshot), render and store its PDF with the SHA-256, create the milestones
    the tracker follows, and, for a correction, supersede the version it replaces and carry its payments over.

    `due_dates` are the dates the contract sets where the regulations fix none (by milestone key; Art.
    15.6.1). Raises ContractError when the draft cannot be issued (not a draft, the bid is no longer selected,
    a date is missing: `errors` names each milestone, a payment already received would not fit the corrected
    milestone), or evidence.pdf.PdfError when the PDF cannot be made. Writes `contract.issue` (and, for a
    correction, `contract.supersede`) to the audit log; the PDF prints the log's head as of rendering, the last
    entry before these, and `contract.issue` records it as `pdf_checkpoint`. `render` is called as
    render(contract, terms, draft=False, checkpoint=Checkpoint).
    """
    _transition(contract, ContractAction.ISSUE)  # refuse early; the move itself is made below
    bid = contract.bid
    _check_selected(bid)
    _check_no_other_in_force(bid, drafts=False)
    old = contract.replaces
    if old is not None and not old.state.in_force:
        raise ContractError(f"{old.reference}, which this correction replaces, is {old.state.label.lower()}; "
                            "prepare the correction again from the version in force.")
    dates = {**contract.due_dates, **{k: v for k, v in due_dates.items() if v is not None}}
    terms = build_terms(contract, dates, issued_on=now.date())
    reg = contract.regulation
    missing = missing_due_dates(reg, terms.milestones, guarantee_offered=terms.inputs.guarantee_offered)
    # A payment overdue from the moment the contract exists is refused: a date the regulations fix that has passed
    # needs the contract's own date in its place, and a date the contract sets cannot be already past.
    missing |= past_due_dates(reg, terms.milestones, today=now.date(), kept=kept_dates(old))
    if missing:
        raise ContractError(next(iter(missing.values())), errors={f"due_{k}": v for k, v in missing.items()})
    planned = list(terms.milestones)
    result = queries.match_result(bid.event_id)
    if result is not None:
        planned += result_milestones(reg, terms.inputs, MatchOutcome(result.winner_federation, result.decided_in,
                                                                      result.completed_on))
    carried = _carry_plan(old, planned) if old is not None else []

    contract.terms_json = _snapshot(terms)
    contract.issued_at = now
    contract.issued_by_id = getattr(actor, "id", None)
    # The PDF is made before this issue's own entries: it prints the log's head as of rendering (the last entry
    # written before the issue), and the issue entry records that same checkpoint.
    head = audit.checkpoint()
    pdf = (render or render_contract_pdf)(contract, terms, draft=False, checkpoint=head)
    if not looks_like_pdf(pdf):
        raise ContractError("The contract's PDF could not be made (the renderer returned something else).")
    pdf = sign_issued(pdf, document=f"contract {contract.reference}")
    contract.pdf_sha256 = hashlib.sha256(pdf).hexdigest()
    contract.pdf_size = len(pdf)
    contract.pdf_stored_name = _store(upload_dir, bid.id, pdf)
    # The call's lock is taken once the PDF is made (no lock is held while it renders); the move and the
    # supersession below are checked against the state as it is inside it.
    lock_contract(contract)
    if old is not None:
        db.session.refresh(old)
        if not old.state.in_force:
            raise ContractError(f"{old.reference}, which this correction replaces, is {old.state.label.lower()}; "
                                "prepare the correction again from the version in force.")
    _move(contract, ContractAction.ISSUE)
    rows = {}
    for i, m in enumerate(planned):
        row = milestone_row(contract, m, i, now)
        db.session.add(row)
        rows[m.key] = row
    db.session.flush()
    if old is not None:
        _move(old, ContractAction.SUPERSEDE, superseded_at=now)
        if old.feed_token_hash and not contract.feed_token_hash:
            contract.feed_token_hash = old.feed_token_hash
        _carry_over(old, rows, carried, actor=actor, now=now)
        db.session.flush()
        audit.record("contract.supersede", old, actor=actor, now=now,
                     data={"reference": old.reference, "by": contract.id, "by_reference": contract.reference,
                           "reason": contract.correction_reason})
    db.session.refresh(contract)
    audit.record("contract.issue", contract, actor=actor, now=now,
                 data={"reference": contract.reference, "pdf_sha256": contract.pdf_sha256,
                       "milestones": len(planned), "due_dates": {k: v for k, v in sorted(dates.items())},
                       "replaces": old.id if old else None, "carried_payments": len(carried),
                       "pdf_checkpoint": str(head)})
    return contract


def kept_dates(old: Contract | None) -> dict[str, date | None]:
    """The due dates of the version a correction replaces, by milestone key ({} for a first contract)."""
    return {} if old is None else {m.key: m.due for m in old.milestones}


def _carry_plan(old: Contract, planned: list[MilestoneTerm]) -> list[Payment]:
    """The payments of the replaced version that move to the correction: every one not reversed. Raises
    ContractError when one has no milestone to go to, or would exceed the corrected amount."""
    by_key = {m.key: m for m in planned}
    out = []
    for om in old.milestones:
        live = [p for p in om.payments if p.kind != "reversal" and not p.is_reversed]
        if not live:
            continue
        total = sum((p.amount for p in live), Decimal("0.00"))
        target = by_key.get(om.key)
        if target is None:
            raise ContractError(f"{bookkeeping(old)}: {format_eur(total)} was received on {om.title} (Art. "
                                f"{om.article}) under {old.reference}, and the correction has no such milestone. "
                                "Reverse those payments first, or keep the milestone.")
        if total > target.amount:
            raise ContractError(f"{bookkeeping(old)}: {format_eur(total)} was already received on {om.title} (Art. "
                                f"{om.article}), more than the corrected amount of {format_eur(target.amount)}. "
                                "Reverse the excess first.")
        out += live
    return out


def _carry_over(old: Contract, rows: Mapping[str, Milestone], payments: list[Payment], *, actor: User,
                now: datetime) -> None:
    by_old_id = {m.id: m for m in old.milestones}
    for p in payments:
        target = rows[by_old_id[p.milestone_id].key]
        db.session.add(Payment(milestone_id=target.id, kind="carried_over", amount=p.amount,
                               received_on=p.received_on, reference=p.reference, note=p.note,
                               carried_from_id=p.id, idempotency_key=f"carried-{p.id}", recorded_at=now,
                               recorded_by_id=getattr(actor, "id", None)))
    for om in old.milestones:
        same = rows.get(om.key)
        if same is None or same.due != om.due:
            continue  # a new deadline deserves its own reminders
        for r in om.reminders:
            db.session.add(Reminder(milestone_id=same.id, kind=r.kind, as_of=r.as_of, sent_at=r.sent_at,
                                    sent_to=r.sent_to, carried=True))


def sign_contract(contract: Contract, *, filename: str, content: bytes, max_bytes: int, upload_dir: str, actor: User,
                  now: datetime, seen: str | None = None, accept_untrusted: str = "") -> Contract:
    """File the countersigned PDF of an issued contract: checked by its content (evidence.pdf.pdf_problem) and its
    size; it must keep the PDF Gambit issued byte for byte and add at least one valid signature
    (contracts.rules.countersigning.countersign_problem); its signatures are recorded as read, stored under a
    server-made name, SHA-256 recorded. The organizer's signature must be trusted
    (contracts.rules.countersigning.countersign_trust_problem), or
    the secretariat accepts it explicitly with a reason (`accept_untrusted`), which the contract and the audit log
    keep and every showing of the signature repeats; its date must pass Gambit's sanity check of days. `seen`: the
    version of the contract the page showed (contract_version); refused when it changed since. Raises
    ContractError with a message for the person uploading. Writes `contract.sign` to the audit log."""
    lock_contract(contract)
    if seen is not None and seen != contract_version(contract):
        raise ContractError(_changed_since(contract), "file")
    _transition(contract, ContractAction.SIGN)  # refuse early; the move itself is made below
    name = display_name(filename, "signed.pdf")
    if not content:
        raise ContractError("The file is empty. Choose the countersigned contract (PDF) to upload.", "file")
    if len(content) > max_bytes:
        raise ContractError(f"The file is {len(content) / 1_048_576:.1f} MB, above the limit of "
                            f"{max_bytes // 1_048_576} MB. Reduce it (for example by scanning at a lower resolution) "
                            "and upload it again.", "file")
    problem = pdf_problem(content)
    if problem:
        raise ContractError(f"{name} {problem}. Scan or save the countersigned contract as PDF and upload it "
                            "again.", "file")
    try:
        issued = read_verified(queries.pdf_path(upload_dir, contract), contract.pdf_sha256,
                               what=f"the issued contract {contract.reference}", obj=contract, actor=actor, now=now)
    except StoredFileError as exc:
        raise ContractError(str(exc), "file") from None
    try:
        gambit_key = load_identity().public_key_der()
    except SigningError:
        raise ContractError(f"{name} cannot be checked just now: Gambit's signing identity cannot be loaded (the "
                            "server's log says why), so nothing can tell Gambit's signature from another. Nothing "
                            "was stored; upload it again once the secretariat has restored the identity.",
                            "file") from None
    inspection = inspect_pdf(content, trust_roots=trust.trusted_roots(), now=now)
    assert contract.pdf_sha256 is not None  # an issued contract's PDF is on file (read above)
    problem = countersign_problem(
        name=name, reference=contract.reference, issued_sha256=contract.pdf_sha256, issued_size=len(issued),
        content_sha256=hashlib.sha256(content).hexdigest(), keeps_issued=content.startswith(issued),
        inspection=inspection, gambit_key_sha256=hashlib.sha256(gambit_key).hexdigest())
    if problem:
        raise ContractError(problem, "file")
    ours = hashlib.sha256(gambit_key).hexdigest()
    theirs = [s for s in inspection.signatures if s.revision_end > len(issued) and s.public_key_sha256 != ours]
    accepted = (accept_untrusted or "").strip()
    problem = countersign_trust_problem(name=name, reference=contract.reference, signatures=theirs,
                                        accepted_reason=accepted)
    if problem:
        raise ContractError(problem, "accept_untrusted")
    for s in theirs:
        if s.signed_at is not None:
            # The date the signer's software wrote: checked against the call's existence only. `now` is the time
            # the file is filed, which may be entered later than the signing (a paper trail keyed in afterwards),
            # so no upper bound is drawn from it.
            check_day(contract, s.signed_at.date(), what=f"the day {s.signer} signed", now=s.signed_at,
                      field="file", days_ahead=0)
    trusted = any(s.trusted for s in theirs)
    contract.signature_accepted_reason = None if trusted else accepted
    contract.signature_accepted_at = None if trusted else now
    contract.signature_accepted_by_id = None if trusted else getattr(actor, "id", None)
    contract.signed_pdf_signatures = json.dumps(inspection.as_dict())
    contract.signed_pdf_sha256 = hashlib.sha256(content).hexdigest()
    contract.signed_pdf_size = len(content)
    contract.signed_pdf_original_name = name
    contract.signed_pdf_stored_name = _store(upload_dir, contract.bid_id, content)
    contract.signed_at = now
    contract.signed_by_id = getattr(actor, "id", None)
    _move(contract, ContractAction.SIGN)
    audit.record("contract.sign", contract, actor=actor, now=now,
                 data={"reference": contract.reference, "signed_pdf_sha256": contract.signed_pdf_sha256,
                       "name": name, "bytes": len(content), "signatures": inspection.words(),
                       "accepted_untrusted": contract.signature_accepted_reason})
    return contract


def contract_version(contract: Contract) -> str:
    """The version of a contract a page shows, which its forms send back (status and the issued PDF's SHA-256):
    a countersignature from a stale page, or sent twice, is refused."""
    return f"{contract.id}:{contract.status}:{contract.pdf_sha256 or ''}"


def _changed_since(contract: Contract) -> str:
    when = contract.signed_at or contract.superseded_at or contract.closed_at
    at = f" at {when:%H:%M} UTC on {format_day(when)}" if when else ""
    return (f"{contract.reference} changed since this page was loaded: it is now {contract.state.label.lower()}"
            f"{at}. Nothing was stored; reload the page to see it.")


def recheck_contract_signatures(*, actor: User, now: datetime, upload_dir: str) -> int:
    """Judge the signatures of every countersigned contract again against the trust list as it now is (a file
    that can no longer be read, or was altered on disk, keeps its last judgement). Returns how many were checked."""
    roots = trust.trusted_roots()
    checked = 0
    for contract in db.session.scalars(select(Contract).where(Contract.signed_pdf_signatures.is_not(None))):
        path = queries.pdf_path(upload_dir, contract, signed=True)
        try:
            content = path.read_bytes() if path is not None else b""
        except OSError:
            continue
        if hashlib.sha256(content).hexdigest() != contract.signed_pdf_sha256 or audit.evidence_problem(contract):
            continue  # altered on disk or beneath the audit log: refused when opened; its judgement stands
        contract.signed_pdf_signatures = json.dumps(inspect_pdf(content, trust_roots=roots, now=now).as_dict())
        checked += 1
    db.session.flush()
    return checked


def signed_pdf_inspection(contract: Contract) -> Inspection | None:
    """The signatures read from the countersigned PDF (Gambit's, then the organizer's), or None."""
    return Inspection.from_dict(json.loads(contract.signed_pdf_signatures)) if contract.signed_pdf_signatures else None


def new_feed_token(contract: Contract, *, actor: User, now: datetime) -> str:
    """A new calendar feed token for the contract (the old one stops working); only its SHA-256 is stored, the
    token is returned once. Raises ContractError for a draft. Writes `contract.feed_token` to the audit log."""
    if not contract.state.is_frozen:
        raise ContractError("A draft has no deadlines to subscribe to yet; issue the contract first.")
    token = secrets.token_urlsafe(32)
    digest = queries.token_hash(token)
    for c in queries.versions_of(contract.bid_id):
        if c.state.is_frozen:
            c.feed_token_hash = digest
    db.session.flush()
    audit.record("contract.feed_token", contract, actor=actor, now=now, data={"reference": contract.reference})
    return token
