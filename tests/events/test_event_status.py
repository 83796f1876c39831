"""The groups of the call's states, on the enum, the bid deadline, and the sanity check on the span of a bid's dates."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from events.lifecycle import EventStatus, takes_online_bids
from events.rules import SCHEDULE_SHOWN_BELOW_DAYS, bid_deadline_passed, schedule_shown_for

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

S = EventStatus

# status -> (accepts bids, before scoring, in scoring, scoring over, decided)
TABLE = {
    S.OPEN: (True, True, False, False, False),
    S.CLOSED: (False, True, False, False, False),
    S.SCORING: (False, False, True, False, False),
    S.DELIBERATION: (False, False, False, True, False),
    S.DECIDED: (False, False, False, True, True),
}


def test_the_table_covers_every_status():
    assert set(TABLE) == set(EventStatus)


@pytest.mark.parametrize("status", list(EventStatus))
def test_what_each_status_of_the_call_allows(status):
    assert (status.accepts_bids, status.before_scoring, status.in_scoring, status.scoring_over,
            status.is_decided) == TABLE[status]


@pytest.mark.parametrize("status", list(EventStatus))
def test_each_status_is_before_during_or_after_scoring_exactly_once(status):
    assert [status.before_scoring, status.in_scoring, status.scoring_over].count(True) == 1


@pytest.mark.parametrize("status", list(EventStatus))
def test_online_bids_are_taken_while_the_call_accepts_them_and_the_deadline_has_not_passed(status):
    deadline = DEADLINE
    assert takes_online_bids(status, now=deadline, deadline=deadline) is status.accepts_bids
    assert takes_online_bids(status, now=deadline + timedelta(seconds=1), deadline=deadline) is False


DEADLINE = datetime(2015, 5, 31, 23, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize(("now", "passed"), [
    (DEADLINE - timedelta(days=1), False),
    (DEADLINE, False),                          # on time up to and including the deadline's instant
    (DEADLINE + timedelta(seconds=1), True),
    (DEADLINE + timedelta(days=365), True),
])
def test_the_bid_deadline_has_passed_only_after_its_instant(now, passed):
    assert bid_deadline_passed(now, DEADLINE) is passed


def test_the_bid_deadline_refuses_a_naive_time():
    with pytest.raises(ValueError, match="now must be timezone-aware"):
        bid_deadline_passed(datetime(2015, 5, 1), DEADLINE)


def _days(opening, closing):
    return [opening, closing]


OPENING = date(2015, 10, 12)


@pytest.mark.parametrize(("opening", "closing", "shown"), [
    (OPENING, OPENING + timedelta(days=19), True),
    (OPENING, OPENING + timedelta(days=SCHEDULE_SHOWN_BELOW_DAYS - 1), True),
    (OPENING, OPENING + timedelta(days=SCHEDULE_SHOWN_BELOW_DAYS), False),    # a slip in a date, not a match
    (OPENING, OPENING + timedelta(days=365), False),
    (OPENING, OPENING, False),
    (OPENING, OPENING - timedelta(days=3), False),
    (None, OPENING, False),
    (OPENING, None, False),
])
def test_the_schedule_of_a_bid_is_shown_only_for_a_plausible_span(opening, closing, shown):
    assert schedule_shown_for(opening, closing, _days) == ([opening, closing] if shown else None)
