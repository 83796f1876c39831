"""The board's rules (Art. 15.3, 15.5). Pure: no Flask, no session."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from events.rules import EventStatus

# The board reads the dossiers once the WCOC's scoring is closed.
DOSSIER_STATES = frozenset({EventStatus.DELIBERATION, EventStatus.DECIDED})


class DecisionError(ValueError):
    """A decision that cannot be recorded as asked; the message says why, for the person recording it."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def dossiers_open(state: EventStatus) -> bool:
    """The board sees dossiers once scoring is closed (and after the decision)."""
    return EventStatus(state) in DOSSIER_STATES


def inputs_sha256(snapshot: dict) -> str:
    """The hash of a dossier's inputs: the same inputs give the same hash, whatever the key order."""
    canonical = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def vote_recusal(member_federation: str | None, hosts: dict[int, str | None]) -> list[int]:
    """The bids whose host federation is the member's: a member with any is recused from the vote (Art. 15.5
    read with the WCOC's rule on conflicts: no one judges a bid of their own federation)."""
    if not member_federation:
        return []
    return sorted(bid_id for bid_id, host in hosts.items() if host == member_federation)


@dataclass(frozen=True)
class Tally:
    votes: dict[int, int]            # bid id -> votes
    abstentions: int
    recused: tuple[str, ...]         # names
    voters: tuple[str, ...]          # names of those who voted or abstained

    @property
    def cast(self) -> int:
        return sum(self.votes.values()) + self.abstentions

    def leaders(self) -> list[int]:
        if not self.votes:
            return []
        top = max(self.votes.values())
        return sorted(b for b, n in self.votes.items() if n == top and n > 0)

    def as_dict(self) -> dict:
        return {"votes": {str(k): v for k, v in sorted(self.votes.items())}, "abstentions": self.abstentions,
                "recused": list(self.recused), "voters": list(self.voters), "cast": self.cast}


def tally(votes: Iterable[tuple[str, int | None]], bid_ids: Iterable[int], recused: Iterable[str]) -> Tally:
    """Count (member name, bid id or None for an abstention) over the bids in the contest."""
    counts = dict.fromkeys(bid_ids, 0)
    abstentions = 0
    voters = []
    for name, bid_id in votes:
        voters.append(name)
        if bid_id is None:
            abstentions += 1
        elif bid_id in counts:
            counts[bid_id] += 1
    return Tally(counts, abstentions, tuple(sorted(recused)), tuple(sorted(voters)))


def rationale_needed(selected: int, *, ranking_leaders: Iterable[int], flagged: Iterable[int]) -> str | None:
    """Why the decision must give its reasons, or None: when the choice is not the top of the WCOC's ranking, or
    when it carries a red flag (Art. 15.5: the criteria are "viewed as a whole", so the board may depart from the
    ranking, but says why)."""
    reasons = []
    leaders = set(ranking_leaders)
    if leaders and selected not in leaders:
        reasons.append("the selected bid is not the top of the WCOC's ranking")
    if selected in set(flagged):
        reasons.append("the selected bid carries a red flag")
    return " and ".join(reasons) or None
