"""The life of a call for bids. Pure: no Flask, no session."""

from __future__ import annotations

import enum


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
        return self is EventStatus.OPEN


class TransitionError(ValueError):
    """A change of status that the table below does not allow."""


# (from, action) -> to. Re-opening is allowed one step back, for a call closed by mistake.
TRANSITIONS: dict[tuple[EventStatus, str], EventStatus] = {
    (EventStatus.OPEN, "close"): EventStatus.CLOSED,
    (EventStatus.CLOSED, "reopen"): EventStatus.OPEN,
    (EventStatus.CLOSED, "open_scoring"): EventStatus.SCORING,
    (EventStatus.SCORING, "close_scoring"): EventStatus.DELIBERATION,
    (EventStatus.DELIBERATION, "reopen_scoring"): EventStatus.SCORING,
    (EventStatus.DELIBERATION, "decide"): EventStatus.DECIDED,
}

ACTION_LABELS = {"close": "Close the call for bids", "reopen": "Re-open the call for bids",
                 "open_scoring": "Open scoring", "close_scoring": "Close scoring",
                 "reopen_scoring": "Re-open scoring", "decide": "Record the decision"}


# What the admin may do by hand on the call's page; "decide" only comes with a recorded decision (board/).
MANUAL_ACTIONS = ("close", "reopen", "open_scoring", "close_scoring", "reopen_scoring")


def next_status(current: EventStatus, action: str) -> EventStatus:
    """The status after `action`; raises TransitionError naming both when the table forbids it."""
    try:
        return TRANSITIONS[(EventStatus(current), action)]
    except KeyError:
        raise TransitionError(f"A call that is '{EventStatus(current).label}' cannot take the action "
                              f"'{ACTION_LABELS.get(action, action)}'.") from None


def actions_from(current: EventStatus, *, manual_only: bool = True) -> list[str]:
    return [action for (state, action) in TRANSITIONS
            if state == current and (not manual_only or action in MANUAL_ACTIONS)]
