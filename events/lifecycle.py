"""The life of a call for bids: its states, the one table of moves, and the guard that says who moves it.

Pure: no Flask, no session. `events.services.change_event_status` is the only code that changes a call's status:
it asks `check_transition` (the table, and who acts: the secretariat by hand through MANUAL_ACTIONS, "decide" only
with the Board's recorded decision) and writes the move with a compare-and-swap. The states' groups on
`EventStatus` (`accepts_bids`, `before_scoring`, `scoring_over`, ...) are what every other lifecycle asks of the
call; `takes_online_bids` adds the bid deadline (`events.rules.bid_deadline_passed`) for the "start a bid" button.
"""

from __future__ import annotations

import enum
from datetime import datetime

from core.lifecycle import Lifecycle
from events.rules import bid_deadline_passed


class EventStatus(enum.StrEnum):
    OPEN = "open"              # bids may be drafted and submitted until the deadline
    CLOSED = "closed"          # no more bids; the compliance gate is applied
    SCORING = "scoring"        # the WCOC scores eligible bids (Art. 15.5)
    DELIBERATION = "deliberation"  # scoring closed; the Presidential Board reads the dossiers
    DECIDED = "decided"        # the organiser is chosen (Art. 15.5); contracts follow (15.6)

    @property
    def label(self) -> str:
        return {"open": "Open for bids", "closed": "Closed for bids", "scoring": "Scoring by the WCOC",
                "deliberation": "Before the Presidential Board", "decided": "Decided"}[self.value]

    @property
    def accepts_bids(self) -> bool:
        """Bids may be started and submitted (until the bid deadline)."""
        return self is EventStatus.OPEN

    @property
    def before_scoring(self) -> bool:
        """Scoring has not opened: bids still enter the call (late admissions, paper bids) and weights change freely."""
        return self in _BEFORE_SCORING

    @property
    def in_scoring(self) -> bool:
        """The WCOC fills in, submits and reopens scorecards (Art. 15.5)."""
        return self is EventStatus.SCORING

    @property
    def scoring_over(self) -> bool:
        """Scoring is closed: the call is before the Presidential Board or decided; the dossiers are open."""
        return self in _SCORING_OVER

    @property
    def is_decided(self) -> bool:
        """The decision is recorded: only a correction of it changes which bid is selected."""
        return self is EventStatus.DECIDED


_BEFORE_SCORING = frozenset({EventStatus.OPEN, EventStatus.CLOSED})
_SCORING_OVER = frozenset({EventStatus.DELIBERATION, EventStatus.DECIDED})


def takes_online_bids(status: EventStatus | str, *, now: datetime, deadline: datetime) -> bool:
    """Whether a bidder may start or submit an online bid now: the call is open and its bid deadline has not passed
    (`bid_deadline_passed`). The bid lifecycle's guard (bids.lifecycle) applies the same rule, with the reasons;
    pages use this to offer the "start a bid" button. Raises ValueError for a naive `now`."""
    return EventStatus(status).accepts_bids and not bid_deadline_passed(now, deadline)


class EventAction(enum.StrEnum):
    CLOSE = "close"
    REOPEN = "reopen"
    OPEN_SCORING = "open_scoring"
    CLOSE_SCORING = "close_scoring"
    REOPEN_SCORING = "reopen_scoring"
    DECIDE = "decide"


class TransitionError(ValueError):
    """A change of status that the table below does not allow."""


# (from, action) -> to. Re-opening is allowed one step back, for a call closed by mistake.
TRANSITIONS: dict[tuple[EventStatus, EventAction], EventStatus] = {
    (EventStatus.OPEN, EventAction.CLOSE): EventStatus.CLOSED,
    (EventStatus.CLOSED, EventAction.REOPEN): EventStatus.OPEN,
    (EventStatus.CLOSED, EventAction.OPEN_SCORING): EventStatus.SCORING,
    (EventStatus.SCORING, EventAction.CLOSE_SCORING): EventStatus.DELIBERATION,
    (EventStatus.DELIBERATION, EventAction.REOPEN_SCORING): EventStatus.SCORING,
    (EventStatus.DELIBERATION, EventAction.DECIDE): EventStatus.DECIDED,
}

ACTION_LABELS = {"close": "Close the call for bids", "reopen": "Re-open the call for bids",
                 "open_scoring": "Open scoring", "close_scoring": "Close scoring",
                 "reopen_scoring": "Re-open scoring", "decide": "Record the decision"}


# What the admin may do by hand on the call's page; "decide" only comes with a recorded decision (board/).
MANUAL_ACTIONS = ("close", "reopen", "open_scoring", "close_scoring", "reopen_scoring")

EVENT_LIFECYCLE = Lifecycle(
    "call", EventStatus, EventAction, TRANSITIONS, error=TransitionError,
    refusal=lambda current, action: (f"A call that is '{current.label}' cannot take the action "
                                     f"'{ACTION_LABELS.get(action.value, action.value)}'."))


def next_status(current: EventStatus, action: str) -> EventStatus:
    """The status after `action`; raises TransitionError naming both when the table forbids it."""
    return EVENT_LIFECYCLE.next(current, action)


def check_transition(current: EventStatus | str, action: EventAction | str, *, by_admin: bool,
                     by_decision: bool = False) -> EventStatus:
    """The call's guard: the table, and who acts. The secretariat (or a command run on the server) moves the call
    by hand through MANUAL_ACTIONS; "decide" happens only as part of recording the decision (board.services).
    Raises TransitionError with the sentence for the person who asked."""
    after = EVENT_LIFECYCLE.next(current, action)
    action = EventAction(action)
    if action is EventAction.DECIDE and not by_decision:
        raise TransitionError("A call is decided only by recording the Board's decision on the Board's page.")
    if action is not EventAction.DECIDE and not by_admin:
        raise TransitionError("Only the FIDE secretariat moves the call from one stage to the next.")
    return after


def actions_from(current: EventStatus, *, manual_only: bool = True) -> list[str]:
    return [a.value for a in EVENT_LIFECYCLE.allowed(current)
            if not manual_only or a.value in MANUAL_ACTIONS]
