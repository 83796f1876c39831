"""The call's own rules, pure (no Flask, no session): the bid deadline, the sanity check on the span of a bid's
dates, and what changed between two versions of the call's regulation. The call's states and moves are
`events.lifecycle`."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, TypeVar

_Day = TypeVar("_Day")

# Gambit's sanity check, not a rule of the regulations (they fix no such span): a day-by-day programme is shown for
# a bid's dates only when the closing ceremony comes less than this many days after the opening. The match takes
# under three weeks; a longer span is a slip in a date, and a programme stretched over it would only mislead.
SCHEDULE_SHOWN_BELOW_DAYS = 60


def bid_deadline_passed(now: datetime, deadline: datetime) -> bool:
    """Whether the call's bid deadline (its bidding procedure, `reg.event.bid_deadline`; the regulations set none)
    has passed at `now`: a bid is on time up to and including the deadline's instant. The one deadline rule: the
    bid lifecycle's guard (submit, withdraw, reopen, a draft's changes, a late admission), whether the call takes
    online bids, and the pages that say the deadline has passed all ask it. Raises ValueError for a naive `now`
    (instants are timezone-aware UTC)."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now > deadline


def schedule_shown_for(opening: date | None, closing: date | None,
                       schedule_for: Callable[[date, date], list[_Day]]) -> list[_Day] | None:
    """The programme for a bid's dates (`schedule_for`, e.g. Regulation.programme), or None when it is not shown:
    a date is missing, the closing does not come after the opening, or the span is not plausible (the sanity check
    SCHEDULE_SHOWN_BELOW_DAYS). Raises what `schedule_for` raises."""
    if opening is None or closing is None or closing <= opening:
        return None
    if (closing - opening).days >= SCHEDULE_SHOWN_BELOW_DAYS:
        return None
    return schedule_for(opening, closing)


def snapshot_changes(old: Any, new: Any, prefix: str = "") -> list[dict]:
    """What changed between two regulation snapshots (parsed JSON), key by key: [{"key": "prize_fund.minimum",
    "old": "200000.00", "new": "220000.00"}], a key added or removed having None on the other side. Lists are
    compared item by item ("criteria[0].weight"). Raises nothing."""
    out: list[dict] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            path = f"{prefix}.{key}" if prefix else key
            out += snapshot_changes(old.get(key), new.get(key), path)
        return out
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            out += snapshot_changes(old[i] if i < len(old) else None, new[i] if i < len(new) else None,
                                    f"{prefix}[{i}]")
        return out
    if old != new:
        out.append({"key": prefix, "old": None if old is None else json.dumps(old, ensure_ascii=False).strip('"'),
                    "new": None if new is None else json.dumps(new, ensure_ascii=False).strip('"')})
    return out
