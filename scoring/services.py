"""The only code that changes scoring rows: weights versions, conflict declarations, admissions and scorecards.

Each function checks the rules (scoring.rules), changes rows, flushes and writes the audit entry. None commits;
none reads the request. Each takes the actor and the time. Reading (the ranking, the progress, the export) is in
scoring.queries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from accounts.models import User
from bids.models import Bid
from bids.services import has_stake
from core.db import db, rowcount
from events.lifecycle import EventStatus
from events.models import Event
from events.services import lock_call
from evidence import audit
from scoring.lifecycle import (
    ScorecardAction,
    ScorecardStatus,
    ScoringRuleError,
    scorecard_next_status,
    scoring_closed_message,
    scoring_is_open,
)
from scoring.models import ConflictDeclaration, Scorecard, ScorecardScore, ScorecardVersion, WeightsVersion
from scoring.queries import current_weights_version, declaration_of, recusal_for, weights_of
from scoring.rules import (
    WeightShare,
    admission_open,
    check_weights,
    conflicted_by_federation,
    declaration_change_refused,
    is_scored,
    score_problems,
    weight_shares,
    weights_change_needs_reason,
    weights_may_change,
)

# Art. 15.5(a), the prize fund: the criterion beside which the reference score of `prize_fund_reference` is
# shown. The regulation file names the criteria but not which one is the prize fund.
PRIZE_FUND_CRITERION = "a"


class ScoringError(ValueError):
    """A scoring request that cannot be met; the message is for the person who asked, `field` the form field
    it belongs to (None for the whole form)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class ScorecardProblems(ScoringError):
    """A scorecard that does not pass `score_problems`: `problems` is {criterion_key: message}."""

    def __init__(self, problems: Mapping[str, str]):
        super().__init__(f"{len(problems)} criteria need your attention.")
        self.problems = dict(problems)


class StaleScorecardError(ScoringError):
    """The scorecard was saved elsewhere (another tab or window) after the form was loaded."""

    MESSAGE = ("This scorecard was saved from another tab or window after you opened this page, so your "
               "changes were not saved. Your values are shown below: check them against the saved scorecard "
               "and save again to replace it.")

    def __init__(self, current: Scorecard | None):
        super().__init__(self.MESSAGE)
        self.current = current


class Recused(ScoringError):
    """The member may not score this bid (conflict of interest)."""


# ---------------------------------------------------------------------------------------------- weights


def weights_in_force(event: Event) -> list[WeightShare]:
    """The weights of Art. 15.5 a-j in force for the call, in the regulation's order: each item has `.key`,
    `.article`, `.label`, `.weight` (relative, as set) and `.percent` (of the total, adding up to 100.00).
    The published weights until the secretariat changes them. Raises ValueError if a stored version no longer
    fits the call's criteria."""
    reg = event.regulation
    return list(weight_shares(reg, weights_of(reg, current_weights_version(event))))


def change_weights(event: Event, weights: Mapping[str, Decimal], *, reason: str = "", actor: User, now: datetime,
                   based_on: int | None = None) -> WeightsVersion:
    """Record new weights for the call as the next weights version.

    Before scoring opens (the call open or closed) the reason is optional; from then on it is required. Once
    the decision is recorded nothing changes. `based_on` is the version number the admin's form showed (0 for
    the published weights); a different current version means someone else changed them meanwhile.

    Raises ScoringError (field "reason", "weights" or None) for a missing reason, a decided call, weights that
    are the ones in force, or a change made meanwhile; ValueError/TypeError from `check_weights` for bad weights.
    """
    reg = event.regulation
    if not weights_may_change(event.state):
        raise ScoringError(f"{reg.citation('weights')}: the decision is recorded; the weights can no longer "
                           "change.")
    checked = check_weights(reg, weights)
    reason = (reason or "").strip()
    current = current_weights_version(event)
    if based_on is not None and based_on != (current.number if current else 0):
        raise ScoringError("The weights were changed by someone else after you opened this page; the page now "
                           "shows the weights in force. Make your change again if it is still needed.")
    if weights_change_needs_reason(event.state) and not reason:
        raise ScoringError(f"{reg.citation('weights')}: scoring has opened (the call is '{event.state.label}'): "
                           "say why the weights change; the reason is kept with the new version.", field="reason")
    new = {c.key: w for c, w in zip(reg.criteria, checked, strict=True)}
    if new == weights_of(reg, current):
        raise ScoringError("These are the weights in force already: nothing to change.", field="weights")
    version = WeightsVersion(event_id=event.id, number=(current.number if current else 0) + 1,
                             weights=json.dumps({k: str(w) for k, w in new.items()}), reason=reason,
                             event_status=event.status, created_by_id=getattr(actor, "id", None), created_at=now)
    db.session.add(version)
    db.session.flush()
    audit.record("scoring.weights_changed", version, actor=actor, now=now,
                 data={"event": event.slug, "number": version.number, "weights": {k: str(w) for k, w in new.items()},
                       "reason": reason, "event_status": event.status})
    return version


# --------------------------------------------------------------------------------------------- admission


def admit_bid(bid: Bid, reason: str, *, actor: User, now: datetime) -> None:
    """Admit to scoring a bid that failed the compliance gate, with the secretariat's reason (Bid.admitted_reason).

    Raises ScoringError (field "reason") when the reason is blank; ScoringError when the bid is not in the
    contest, passed the gate already, was admitted already, or scoring has closed.
    """
    reason = (reason or "").strip()
    event = lock_call(bid.event)  # scoring's close waits, and the state below is the call's as it now is
    db.session.refresh(bid)
    admission = event.regulation.citation("scoring_admission")
    if not reason:
        raise ScoringError("Say why this bid is scored although it failed the compliance gate; the reason is "
                           "shown with the ranking.", field="reason")
    if not admission_open(event.state):
        raise ScoringError(f"{admission}: scoring has closed (the call is '{event.state.label}'); no bid can "
                           "be admitted.")
    if not bid.state.in_contest:
        raise ScoringError(f"{bid.title} is {bid.state.label.lower()}: only a bid in the contest can be admitted.")
    last = bid.last_version
    if last is not None and last.compliant:
        raise ScoringError(f"{bid.title} passed the compliance gate: it is scored without being admitted.")
    if bid.admitted_reason is not None:
        raise ScoringError(f"{bid.title} was admitted already ({bid.admitted_reason}).")
    bid.admitted_reason = reason
    db.session.flush()
    audit.record("scoring.bid_admitted", bid, actor=actor, now=now,
                 data={"reason": reason, "version": last.number if last else None})


# ------------------------------------------------------------------------------------------- conflicts


def declare_conflicts(event: Event, member, *, has_conflict: bool, conflicted: Sequence[Bid], reason: str,
                      listed: Sequence[Bid], actor: User, now: datetime) -> ConflictDeclaration:
    """Record (or confirm again) a member's declaration of conflicts of interest for the call.

    `listed` are the bids the form showed (the declaration covers them; a bid not among them needs a new
    declaration); `conflicted` those the member named, with `reason`. A member of a bid's host federation is
    recused from it whatever they declare (scoring.rules.conflicted_by_federation). Submitted scorecards for a
    newly conflicted bid stop counting at once; they are kept.

    Once the member was shown other members' scores (`record_scores_shown`), no conflict on a bid the old
    declaration covered may be added or withdrawn (scoring.rules.declaration_change_refused); the change is made
    with a compare-and-swap on that, and a first declaration sent twice at the same moment gives one row and
    one clear refusal.

    Raises ScoringError (field "bids" or "reason") for a conflict without a bid or a reason, a named bid that
    was not listed, a change after scores were shown, or a call already decided; ScoringError for a declaration
    recorded at the same moment from elsewhere.
    """
    reason = (reason or "").strip()
    if event.state is EventStatus.DECIDED:
        raise ScoringError("The decision is recorded; declarations can no longer change.")
    listed_ids = {b.id for b in listed}
    if any(b.event_id != event.id for b in listed):
        raise ScoringError("A listed bid belongs to another call.", field="bids")
    conflicted = list(conflicted) if has_conflict else []
    if has_conflict and not conflicted:
        raise ScoringError("Tick each bid you have a conflict of interest with.", field="bids")
    if any(b.id not in listed_ids for b in conflicted):
        raise ScoringError("You can name only the bids listed on the page.", field="bids")
    if has_conflict and not reason:
        raise ScoringError("Say what the conflict of interest is; the reason is shown with the ranking.",
                           field="reason")
    decl = declaration_of(event, member)
    before = None if decl is None else {"has_conflict": decl.has_conflict, "bids": sorted(decl.conflicted_bid_ids),
                                        "reason": decl.reason}
    conflicted_ids = {b.id for b in conflicted}
    if decl is not None:
        old_conflicts = decl.conflicted_bid_ids
        # The bids covered before and still listed (a conflict with a bid no longer before the WCOC lapses).
        kept = decl.covered & listed_ids
        refused = declaration_change_refused(
            first_shown_at=decl.scores_first_shown_at, before={b: b in old_conflicts for b in kept},
            after={b: b in conflicted_ids for b in kept}, titles={b.id: b.title for b in listed})
        if refused:
            raise ScoringError(refused, field="bids")
        if decl.scores_first_shown_at is None:
            # Changed only while no score has been shown to the member, decided by the database: a ranking
            # opened in another window at the same moment cannot slip in between the check and the change.
            changed = db.session.execute(
                update(ConflictDeclaration)
                .where(ConflictDeclaration.id == decl.id, ConflictDeclaration.scores_first_shown_at.is_(None))
                .values(confirmed_at=now).execution_options(synchronize_session=False))
            db.session.refresh(decl)
            if rowcount(changed) != 1:
                raise ScoringError(declaration_change_refused(
                    first_shown_at=decl.scores_first_shown_at, before={b: b in old_conflicts for b in kept},
                    after={b: b in conflicted_ids for b in kept},
                    titles={b.id: b.title for b in listed}) or _DECLARATION_RACE, field="bids")
    else:
        decl = ConflictDeclaration(event_id=event.id, member_id=member.id, has_conflict=bool(conflicted),
                                   reason=reason if conflicted else "", covered_bid_ids="[]", confirmed_at=now)
        try:
            with db.session.begin_nested():
                db.session.add(decl)
                db.session.flush()
        except IntegrityError:  # the first declaration, sent twice at the same moment (two tabs, a double click)
            raise ScoringError(_DECLARATION_RACE) from None
    decl.has_conflict = bool(conflicted)
    decl.reason = reason if conflicted else ""
    decl.bids = sorted(conflicted, key=lambda b: b.id)
    decl.covered_bid_ids = json.dumps(sorted(listed_ids))
    decl.confirmed_at = now
    db.session.flush()
    automatic = sorted(b.id for b in listed if conflicted_by_federation(member.federation, b.host_federation))
    audit.record("scoring.conflicts_declared", decl, actor=actor, now=now,
                 data={"event": event.slug, "member": member.id, "has_conflict": decl.has_conflict,
                       "bids": sorted(b.id for b in conflicted), "reason": decl.reason,
                       "automatic_by_federation": automatic, "covered": sorted(listed_ids), "before": before})
    return decl


_DECLARATION_RACE = ("Your declaration of conflicts of interest was recorded from another tab or window at the same "
                     "moment, so this one was not recorded. Reload the page to see the declaration in force.")


def record_scores_shown(event: Event, member, *, declared_at: datetime, now: datetime) -> bool:
    """Record that `member` is being shown other members' scores in the call for the first time; from then on
    their declaration of conflicts cannot change (scoring.rules.declaration_change_refused).

    `declared_at` is the `confirmed_at` of the declaration the page was built on. Returns True when this is
    the first time (and writes the audit entry), False when it was recorded before. Raises ScoringError when
    the declaration changed since the page read it (the scores about to be shown were chosen on the old one).
    """
    result = db.session.execute(
        update(ConflictDeclaration)
        .where(ConflictDeclaration.event_id == event.id, ConflictDeclaration.member_id == member.id,
               ConflictDeclaration.confirmed_at == declared_at, ConflictDeclaration.scores_first_shown_at.is_(None))
        .values(scores_first_shown_at=now).execution_options(synchronize_session=False))
    decl = declaration_of(event, member)
    if decl is not None:
        db.session.refresh(decl)
    if rowcount(result) == 1:
        audit.record("scoring.scores_first_shown", decl, actor=member, now=now,
                     data={"event": event.slug, "member": member.id})
        return True
    if decl is None or decl.confirmed_at != declared_at:
        raise ScoringError("Your declaration of conflicts of interest changed while this page was loading; "
                           "reload it.")
    return False


# ------------------------------------------------------------------------------------------- scorecards


def _check_may_score(bid: Bid, member) -> None:
    event = bid.event
    reg = event.regulation
    if not scoring_is_open(event.state):
        raise ScoringError(scoring_closed_message(reg, event.state.label))
    if has_stake(member, event):
        raise Recused("You own or entered a bid in this call: you do not score in it.")
    last = bid.last_version
    if not is_scored(in_contest=bid.state.in_contest, compliant=last.compliant if last else None,
                     admitted=bid.admitted_reason is not None):
        raise ScoringError(f"{reg.citation('scoring_admission')}: {bid.title} is not scored (it is "
                           f"{bid.state.label.lower()}, or failed the compliance gate and was not admitted).")
    decl = declaration_of(event, member)
    if decl is None or bid.id not in decl.covered:
        raise ScoringError("Declare your conflicts of interest for this call first (your declaration does not "
                           "cover this bid yet).")
    recusal = recusal_for(bid, member)
    if recusal:
        raise Recused(f"You are recused from this bid ({recusal}); your scores would not count.")


def _bump(card: Scorecard, revision: int, status: ScorecardStatus, values: dict) -> bool:
    """UPDATE scorecard ... WHERE id = :id AND revision = :revision AND status = :status: the optimistic lock,
    decided by the database so that two saves at the same moment cannot both win."""
    result = db.session.execute(
        update(Scorecard).where(Scorecard.id == card.id, Scorecard.revision == revision,
                                Scorecard.status == status.value)
        .values(revision=Scorecard.revision + 1, **values).execution_options(synchronize_session=False))
    db.session.refresh(card)
    return rowcount(result) == 1


def save_scorecard(bid: Bid, member, *, scores: Mapping[str, Decimal | None], comments: Mapping[str, str],
                   revision: int, submit: bool, actor: User, now: datetime) -> Scorecard:
    """Save the member's scorecard for a bid as a draft, or save and submit it (`submit`).

    `revision` is the scorecard's revision when the form was loaded (0 for a scorecard not created yet); a
    save from an older revision is refused. A draft is checked only for scores on the scale; a submission also
    needs every score and a comment for each score listed in `comment_required_for` (scoring.rules.score_problems).
    Submitting freezes a ScorecardVersion numbered 1, 2, ... .

    Raises StaleScorecardError when the scorecard changed since `revision`; ScorecardProblems for scores or
    comments that do not pass; Recused for a recused member (scoring.queries.recusal_for); ScoringError outside
    the scoring state, without a declaration covering the bid, for a bid that is not scored, or for a submitted
    scorecard (reopen it first).
    """
    reg = bid.event.regulation
    _check_may_score(bid, member)
    keys = [c.key for c in reg.criteria]
    scores = {k: scores.get(k) for k in keys}
    comments = {k: (comments.get(k) or "").strip() for k in keys}
    problems = score_problems(reg, scores, comments, final=submit)
    if problems:
        raise ScorecardProblems(problems)
    card = db.session.scalars(select(Scorecard).where(Scorecard.bid_id == bid.id,
                                                      Scorecard.member_id == member.id)).first()
    if card is None:
        if revision != 0:
            raise StaleScorecardError(None)
        card = Scorecard(bid_id=bid.id, member_id=member.id, status=ScorecardStatus.DRAFT.value, revision=1,
                         version=0, created_at=now, updated_at=now)
        try:
            with db.session.begin_nested():
                db.session.add(card)
                db.session.flush()
        except IntegrityError:  # created in another tab at the same moment
            current = db.session.scalars(select(Scorecard).where(Scorecard.bid_id == bid.id,
                                                                 Scorecard.member_id == member.id)).first()
            raise StaleScorecardError(current) from None
    elif not _bump(card, revision, ScorecardStatus.DRAFT, {"updated_at": now}):
        if card.revision != revision:
            raise StaleScorecardError(card)
        raise ScoringError("This scorecard is submitted; reopen it to change it.")
    rows = {s.criterion: s for s in card.scores}
    for k in keys:
        row = rows.get(k)
        if row is None:
            row = ScorecardScore(criterion=k)
            card.scores.append(row)
        row.score, row.comment = scores[k], comments[k]
    frozen = {k: {"score": None if scores[k] is None else str(scores[k]), "comment": comments[k]} for k in keys}
    if submit:
        card.status = scorecard_next_status(card.status, ScorecardAction.SUBMIT).value
        card.version += 1
        card.submitted_at = now
        last = bid.last_version
        card.versions.append(ScorecardVersion(number=card.version, submitted_at=now,
                                              submitted_by_id=getattr(actor, "id", None),
                                              bid_version_id=last.id if last else None,
                                              scores=json.dumps(frozen)))
    db.session.flush()
    audit.record("scoring.scorecard_submitted" if submit else "scoring.scorecard_saved", card, actor=actor, now=now,
                 data={"bid": bid.id, "member": member.id, "version": card.version if submit else None,
                       "scores": frozen})
    return card


def reopen_scorecard(card: Scorecard, *, actor: User, now: datetime) -> None:
    """Turn the author's submitted scorecard back into a draft; its next submission is a new version, and the
    submitted versions are kept. Until then it does not count in the ranking.

    Raises ScoringError when the actor is not its author, scoring is not open (it closed: the call left the
    scoring state), or the scorecard is not submitted (or was reopened at the same moment).
    """
    event = card.bid.event
    reg = event.regulation
    if getattr(actor, "id", None) != card.member_id:
        raise ScoringError("Only its author can reopen a scorecard.")
    if not scoring_is_open(event.state):
        raise ScoringError(f"{reg.citation('evaluation_method')}: scoring is closed (the call is "
                           f"'{event.state.label}'); a "
                           "submitted scorecard can no longer be reopened.")
    try:
        after = scorecard_next_status(card.status, ScorecardAction.REOPEN)
    except ScoringRuleError as exc:
        raise ScoringError(f"This scorecard cannot be reopened: {exc}.") from None
    if not _bump(card, card.revision, ScorecardStatus.SUBMITTED, {"status": after.value, "updated_at": now}):
        raise ScoringError("This scorecard changed at the same moment in another window; reload the page.")
    audit.record("scoring.scorecard_reopened", card, actor=actor, now=now,
                 data={"bid": card.bid_id, "member": card.member_id, "from_version": card.version})
