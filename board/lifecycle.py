"""The life of a decision of the Board: in force until a correction supersedes it.

Pure: no Flask, no session. `board.services` is the only caller that changes a decision's status: recording a
correction asks `DECISION_LIFECYCLE.next` for the move (only the decision in force can be corrected) and writes it
with a compare-and-swap, so that of two corrections made at the same moment one wins and the other is refused.
At most one decision per call is in force (a unique partial index on the table).
"""

from __future__ import annotations

import enum

from board.rules import DecisionError
from core.lifecycle import Lifecycle


class DecisionStatus(enum.StrEnum):
    IN_FORCE = "in_force"        # the decision of the call; at most one per call (a unique partial index)
    SUPERSEDED = "superseded"    # replaced by a correction; its record stays

    @property
    def label(self) -> str:
        return {"in_force": "In force", "superseded": "Superseded by a correction"}[self.value]


class DecisionAction(enum.StrEnum):
    SUPERSEDE = "supersede"


DECISION_LIFECYCLE = Lifecycle(
    name="decision", states=DecisionStatus, actions=DecisionAction,
    transitions={(DecisionStatus.IN_FORCE, DecisionAction.SUPERSEDE): DecisionStatus.SUPERSEDED},
    state_phrase={DecisionStatus.IN_FORCE: "the decision in force",
                  DecisionStatus.SUPERSEDED: "a decision already superseded by a correction"},
    action_participle={DecisionAction.SUPERSEDE: "corrected"},
    error=DecisionError)
