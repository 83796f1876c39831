"""The life of a scorecard: its states, the one table of moves and when a move may be made.

Pure: no Flask, no session. `scoring.services` is the only caller that changes a scorecard's status: it asks
`scoring_is_open` for the call's state (scorecards change only while the call is in scoring, the call's evaluation
method), `scorecard_next_status` for the move (which refuses one the table does not list), and writes it with a
compare-and-swap on the scorecard's revision.
"""

from __future__ import annotations

import enum

from core.lifecycle import Lifecycle
from events.lifecycle import EventStatus
from events.regulation import Regulation


class ScorecardStatus(enum.StrEnum):
    DRAFT = "draft"          # the member's own, saved as often as they like; counts for nothing
    SUBMITTED = "submitted"  # frozen as a ScorecardVersion; counts in the ranking unless the member is recused

    @property
    def label(self) -> str:
        return {"draft": "Draft", "submitted": "Submitted"}[self.value]


class ScorecardAction(enum.StrEnum):
    SUBMIT = "submit"
    REOPEN = "reopen"


# (status, action) -> new status. A reopened scorecard is a draft again; its next submission is a new version.
SCORECARD_TRANSITIONS: dict[tuple[ScorecardStatus, ScorecardAction], ScorecardStatus] = {
    (ScorecardStatus.DRAFT, ScorecardAction.SUBMIT): ScorecardStatus.SUBMITTED,
    (ScorecardStatus.SUBMITTED, ScorecardAction.REOPEN): ScorecardStatus.DRAFT,
}


class ScoringRuleError(ValueError):
    """A scoring step the rules do not allow; the message, citing the article, is for the person who asked."""


def _scorecard_refusal(current: ScorecardStatus, action: ScorecardAction) -> str:
    done = {ScorecardAction.SUBMIT: "submitted again", ScorecardAction.REOPEN: "reopened: it is not submitted"}
    return f"a {current.label.lower()} scorecard cannot be {done[action]}"


SCORECARD_LIFECYCLE = Lifecycle("scorecard", ScorecardStatus, ScorecardAction, SCORECARD_TRANSITIONS,
                                error=ScoringRuleError, refusal=_scorecard_refusal)


def scorecard_next_status(current: ScorecardStatus | str, action: ScorecardAction | str) -> ScorecardStatus:
    """The status `action` leads to; raises ScoringRuleError for a move SCORECARD_TRANSITIONS does not list
    ("a submitted scorecard cannot be submitted again") or an unknown status or action."""
    return SCORECARD_LIFECYCLE.next(current, action)


def scoring_is_open(status: EventStatus) -> bool:
    """Scorecards are filled in, submitted and reopened only while the call is in the scoring state."""
    return status.in_scoring


def scoring_closed_message(reg: Regulation, event_status_label: str) -> str:
    """Why a scorecard cannot change now."""
    return (f"{reg.citation('evaluation_method')}: scorecards can be changed only while the call is in scoring "
            f"(it is now '{event_status_label}').")
