"""The life of a bid: its states, the one table of moves, and the guard that says who may make a move and when.

Pure: no Flask, no session. `bids.services` is the only caller that changes a bid's status, and every path (web,
paper, import, demo, the decision of the Board) goes through `check_transition` with a `BidSituation` that says
who acts, the call's state, the bid deadline and whether the bid is a paper bid or was admitted late. Pages ask
`offered_actions` which buttons to show; they never compare a status or a date themselves.

What the guard applies, and where it comes from:
* The bid deadline and the call's state are the call's bidding procedure (`reg.event.bid_deadline`), not an
  article of the regulations: a bid is submitted, withdrawn or reopened only while the call is open and before the
  deadline. Whether the deadline has passed is `events.rules.bid_deadline_passed`, the one deadline rule, and
  every bidder's move meets it in `_call_refusal`.
* A paper bid is keyed in and submitted by the secretariat on the bidder's behalf; an online bid is submitted by
  its bidder. Either one can be submitted after the deadline only through a late admission the secretariat records
  with a reason while the call is open or closed — never once scoring has opened.
* Art. 15.3 ("FIDE may reject any bid application"): the secretariat rejects; not once the call is decided.
* Selection (Art. 15.5) happens only as part of the decision, while the call is before the Board or, for a
  correction, decided.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from core.lifecycle import Lifecycle
from core.money import format_day
from events.lifecycle import EventStatus, takes_online_bids
from events.rules import bid_deadline_passed


class BidStatus(enum.StrEnum):
    DRAFT = "draft"
    SUBMITTED = "submitted"
    WITHDRAWN = "withdrawn"
    REJECTED = "rejected"
    SHORTLISTED = "shortlisted"
    SELECTED = "selected"
    NOT_SELECTED = "not_selected"

    @property
    def label(self) -> str:
        return _STATUS_LABELS[self]

    @property
    def is_editable(self) -> bool:
        """Only a draft can be changed; a submitted bid is reopened as a new draft version first."""
        return self is BidStatus.DRAFT

    @property
    def is_submitted(self) -> bool:
        """The bid reached FIDE at some point (everything but a draft)."""
        return self is not BidStatus.DRAFT

    @property
    def visible_to_reviewers(self) -> bool:
        """The WCOC and the Board see bids in the contest and their outcome, not drafts, withdrawn or rejected ones."""
        return self in _VISIBLE_TO_REVIEWERS

    @property
    def in_contest(self) -> bool:
        """Still to be decided on: can be scored, shortlisted, selected or rejected."""
        return self in _IN_CONTEST

    @property
    def is_final(self) -> bool:
        """No action leads out of it."""
        return self in _FINAL

    @property
    def is_selected(self) -> bool:
        """The bid the decision in force names."""
        return self is BidStatus.SELECTED

    @property
    def is_decided(self) -> bool:
        """Selected or not selected by the decision."""
        return self in (BidStatus.SELECTED, BidStatus.NOT_SELECTED)


class BidAction(enum.StrEnum):
    SUBMIT = "submit"
    WITHDRAW = "withdraw"
    REOPEN = "reopen"
    REJECT = "reject"
    SHORTLIST = "shortlist"
    SELECT = "select"
    NOT_SELECT = "not_select"


_STATUS_LABELS = {
    BidStatus.DRAFT: "Draft", BidStatus.SUBMITTED: "Submitted", BidStatus.WITHDRAWN: "Withdrawn",
    BidStatus.REJECTED: "Rejected", BidStatus.SHORTLISTED: "Shortlisted", BidStatus.SELECTED: "Selected",
    BidStatus.NOT_SELECTED: "Not selected",
}
_VISIBLE_TO_REVIEWERS = frozenset({BidStatus.SUBMITTED, BidStatus.SHORTLISTED, BidStatus.SELECTED,
                                   BidStatus.NOT_SELECTED})
_IN_CONTEST = frozenset({BidStatus.SUBMITTED, BidStatus.SHORTLISTED})
_FINAL = frozenset({BidStatus.WITHDRAWN, BidStatus.REJECTED})  # a decided bid changes only by a correction

# (status, action) -> new status. Anything not listed is refused.
TRANSITIONS: dict[tuple[BidStatus, BidAction], BidStatus] = {
    (BidStatus.DRAFT, BidAction.SUBMIT): BidStatus.SUBMITTED,
    (BidStatus.SUBMITTED, BidAction.WITHDRAW): BidStatus.WITHDRAWN,
    # The submitted version stays on record; the bidder edits a new draft version.
    (BidStatus.SUBMITTED, BidAction.REOPEN): BidStatus.DRAFT,
    # Art. 15.3: FIDE may reject any bid application. A draft is not an application yet, so it cannot be
    # rejected; a shortlisted bid still is one.
    (BidStatus.SUBMITTED, BidAction.REJECT): BidStatus.REJECTED,
    (BidStatus.SHORTLISTED, BidAction.REJECT): BidStatus.REJECTED,
    (BidStatus.SUBMITTED, BidAction.SHORTLIST): BidStatus.SHORTLISTED,
    (BidStatus.SUBMITTED, BidAction.SELECT): BidStatus.SELECTED,
    (BidStatus.SHORTLISTED, BidAction.SELECT): BidStatus.SELECTED,
    (BidStatus.SUBMITTED, BidAction.NOT_SELECT): BidStatus.NOT_SELECTED,
    (BidStatus.SHORTLISTED, BidAction.NOT_SELECT): BidStatus.NOT_SELECTED,
    # A correction of the decision (the call decided) moves the selection from one decided bid to another.
    (BidStatus.SELECTED, BidAction.NOT_SELECT): BidStatus.NOT_SELECTED,
    (BidStatus.NOT_SELECTED, BidAction.SELECT): BidStatus.SELECTED,
}

# The bidder's own actions, bound to the bid deadline and the call's state.
DEADLINE_BOUND_ACTIONS = frozenset({BidAction.SUBMIT, BidAction.WITHDRAW, BidAction.REOPEN})
# The actions the decision of the Board makes (board.services), never offered as buttons on a bid.
DECISION_ACTIONS = frozenset({BidAction.SHORTLIST, BidAction.SELECT, BidAction.NOT_SELECT})

_STATUS_PHRASES = {
    BidStatus.DRAFT: "a draft bid", BidStatus.SUBMITTED: "a submitted bid", BidStatus.WITHDRAWN: "a withdrawn bid",
    BidStatus.REJECTED: "a rejected bid", BidStatus.SHORTLISTED: "a shortlisted bid",
    BidStatus.SELECTED: "a selected bid", BidStatus.NOT_SELECTED: "a bid that was not selected",
}
_ACTION_PARTICIPLES = {
    BidAction.SUBMIT: "submitted", BidAction.WITHDRAW: "withdrawn", BidAction.REOPEN: "reopened",
    BidAction.REJECT: "rejected", BidAction.SHORTLIST: "shortlisted", BidAction.SELECT: "selected",
    BidAction.NOT_SELECT: "marked as not selected",
}


class TransitionError(ValueError):
    """A change of status the lifecycle does not allow; the message says which and why."""


BID_LIFECYCLE = Lifecycle("bid", BidStatus, BidAction, TRANSITIONS, _STATUS_PHRASES, _ACTION_PARTICIPLES,
                          error=TransitionError)


def allowed_actions(current: BidStatus | str) -> list[BidAction]:
    """The actions TRANSITIONS allows from a status, in BidAction order; raises TransitionError if unknown."""
    return BID_LIFECYCLE.allowed(current)


def next_status(current: BidStatus | str, action: BidAction | str) -> BidStatus:
    """The status an action leads to from `current`.

    Raises TransitionError for an unknown status or action, or a move TRANSITIONS does not allow
    ("a withdrawn bid cannot be submitted").
    """
    return BID_LIFECYCLE.next(current, action)


@dataclass(frozen=True)
class BidSituation:
    """Everything besides the bid's status that decides whether a move is allowed now, by this person.

    `by_owner`: the actor owns the bid; `by_admin`: the actor is the secretariat; `paper`: the secretariat keyed
    the bid in; `late_admitted`: the secretariat admitted it after the deadline with a recorded reason;
    `by_decision`: the move is part of recording the decision (whose service checks who records it).
    """

    event_status: EventStatus
    deadline: datetime
    now: datetime
    by_owner: bool
    by_admin: bool
    paper: bool = False
    late_admitted: bool = False
    by_decision: bool = False
    # Where the deadline comes from ("Bidding procedure: bid deadline"): the regulations set none.
    deadline_source: str = ""

    def __post_init__(self) -> None:
        if self.now.tzinfo is None:
            raise ValueError("now must be timezone-aware")

    @property
    def deadline_passed(self) -> bool:
        """The bid deadline has passed (events.rules.bid_deadline_passed, the one deadline rule)."""
        return bid_deadline_passed(self.now, self.deadline)

    @property
    def deadline_text(self) -> str:
        text = f"{format_day(self.deadline)}, {self.deadline:%H:%M} UTC"
        return f"{text}; {self.deadline_source}" if self.deadline_source else text


# What a refusal bound to the call's close or the deadline adds for a draft: the way in that is left.
_LATE_ADMISSION_HINT = "The secretariat can admit a late bid, with its reason, until scoring opens."


def _call_refusal(action: BidAction, s: BidSituation) -> str | None:
    """Why the call's state or the bid deadline refuses a bidder's move (DEADLINE_BOUND_ACTIONS) now; None: they
    allow it.

    A submission: nothing enters a call once scoring has opened; until then a late admission lifts both the call's
    close and the deadline. A withdrawal or a reopening: only while the call is open; a late admission lifts the
    deadline alone (the bid it admitted may still be withdrawn or reopened while the call is open).
    """
    what = _ACTION_PARTICIPLES[action]
    submit = action is BidAction.SUBMIT
    hint = f" {_LATE_ADMISSION_HINT}" if submit else ""
    if submit and not s.event_status.before_scoring:
        return (f"The call is '{s.event_status.label}': no bid can be {what} any more (nothing enters or leaves "
                "a call once scoring has opened).")
    if not s.event_status.accepts_bids and not (submit and s.late_admitted):
        bid = "a bid" if submit else "a submitted bid"
        return f"The call is '{s.event_status.label}': {bid} can no longer be {what}.{hint}"
    if s.deadline_passed and not s.late_admitted:
        return f"The bid deadline ({s.deadline_text}) has passed: a bid can no longer be {what}.{hint}"
    return None


def _who_refusal(action: BidAction, s: BidSituation) -> str | None:
    if action in DEADLINE_BOUND_ACTIONS:
        if s.paper:
            if not s.by_admin:
                return ("This bid was entered on paper by the FIDE secretariat: the secretariat "
                        f"{'submits' if action is BidAction.SUBMIT else action.value + 's'} it on your behalf.")
            return None
        if not s.by_owner:
            return (f"Only the bidder can {action.value} an online bid; the secretariat acts for a bidder only on a "
                    "paper bid it keyed in.")
        return None
    if action is BidAction.REJECT and not s.by_admin:
        return "Only the FIDE secretariat rejects a bid."
    if action in DECISION_ACTIONS and not s.by_decision:
        return "Bids are selected only by recording the decision."
    return None


def check_transition(current: BidStatus | str, action: BidAction | str, situation: BidSituation) -> BidStatus:
    """The status `action` leads to, if this actor may make the move now.

    Checks, in order: the table (TRANSITIONS), who acts (`_who_refusal`), and for the bidder's moves the call's
    state and the bid deadline (late admission aside, and never once scoring has opened; reopening and withdrawing
    only while the call is open); a rejection not once the call is decided; a selection only with the decision.
    Raises TransitionError with the sentence for the person who asked; ValueError for a naive `now`.
    """
    new = BID_LIFECYCLE.next(current, action)
    action = BidAction(action)
    s = situation
    refusal = _who_refusal(action, s)
    if refusal is None and action in DEADLINE_BOUND_ACTIONS:
        refusal = _call_refusal(action, s)
    elif refusal is None and action is BidAction.REJECT and s.event_status.is_decided:
        refusal = "The decision is recorded: a bid can no longer be rejected; correct the decision instead."
    elif refusal is None and action in DECISION_ACTIONS:
        decided_before = BID_LIFECYCLE.state(current).is_decided
        if decided_before and not s.event_status.is_decided:
            refusal = "Only a correction of the recorded decision changes which bid is selected."
        elif not decided_before and not s.event_status.scoring_over:
            refusal = f"The call is '{s.event_status.label}': bids are selected only once scoring has closed."
    if refusal:
        raise TransitionError(refusal)
    return new


def offered_actions(current: BidStatus | str, situation: BidSituation) -> list[BidAction]:
    """The bidder's and the secretariat's actions that would succeed now (decision actions are never offered)."""
    out = []
    for action in BID_LIFECYCLE.allowed(current):
        if action in DECISION_ACTIONS:
            continue
        try:
            check_transition(current, action, situation)
        except TransitionError:
            continue
        out.append(action)
    return out


def draft_refusal(situation: BidSituation, *, creating: bool = False) -> str | None:
    """Why a draft cannot be started or changed now (None: it can).

    The bidder starts and edits its online draft while the call is open and before the deadline (or after a late
    admission, until scoring opens); the secretariat keys a paper bid in while the call is open or closed. Nothing
    changes once scoring has opened.
    """
    s = situation
    what = "started" if creating else "changed"
    if not s.event_status.before_scoring:
        return f"The call is '{s.event_status.label}': a draft can no longer be {what}."
    if s.paper:
        return None if s.by_admin or not creating else "Only the FIDE secretariat keys in a paper bid."
    if s.late_admitted:
        return None
    if takes_online_bids(s.event_status, now=s.now, deadline=s.deadline):
        return None
    if not s.event_status.accepts_bids:
        return f"The call is '{s.event_status.label}': a draft can no longer be {what}. {_LATE_ADMISSION_HINT}"
    return (f"The bid deadline ({s.deadline_text}) has passed: a draft can no longer be {what}. "
            f"{_LATE_ADMISSION_HINT}")


def late_admission_refusal(current: BidStatus | str, situation: BidSituation) -> str | None:
    """Why the secretariat cannot admit this bid late now (None: it can). A late admission is the call's bidding
    procedure, not an article: a draft, after the deadline or once the call is closed, before scoring opens (the
    reason it needs is checked by the service: LATE_ADMISSION_NEEDS_REASON)."""
    s = situation
    if not s.by_admin:
        return "Only the FIDE secretariat admits a late bid."
    if BID_LIFECYCLE.state(current) is not BidStatus.DRAFT:
        return "Only a draft can be admitted late: a bid that was submitted already reached FIDE."
    if s.late_admitted:
        return "This bid was admitted late already."
    if not s.event_status.before_scoring:
        return f"The call is '{s.event_status.label}': no bid can be admitted once scoring has opened."
    if s.event_status.accepts_bids and not s.deadline_passed:
        return (f"The bid deadline ({s.deadline_text}) has not passed: the bid can be submitted without a late "
                "admission.")
    return None


LATE_ADMISSION_NEEDS_REASON = ("Say why the bid is admitted after the deadline; the reason is kept with the bid and "
                               "shown to the WCOC.")
