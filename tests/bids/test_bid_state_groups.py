"""What the bid pages are given instead of comparing strings: the groups of the bid's states, whose bid it is,
and a submitted version's findings (what kept it from meeting the compliance checks)."""

from __future__ import annotations

import json

import pytest

from bids.lifecycle import BidStatus
from bids.models import Bid, BidVersion
from core.findings import Finding, Outcome

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

S = BidStatus

# status -> (editable, submitted, seen by reviewers, in the contest, final, selected, decided)
TABLE = {
    S.DRAFT: (True, False, False, False, False, False, False),
    S.SUBMITTED: (False, True, True, True, False, False, False),
    S.WITHDRAWN: (False, True, False, False, True, False, False),
    S.REJECTED: (False, True, False, False, True, False, False),
    S.SHORTLISTED: (False, True, True, True, False, False, False),
    S.SELECTED: (False, True, True, False, False, True, True),
    S.NOT_SELECTED: (False, True, True, False, False, False, True),
}


def test_the_table_covers_every_status():
    assert set(TABLE) == set(BidStatus)


@pytest.mark.parametrize("status", list(BidStatus))
def test_what_each_status_of_a_bid_means(status):
    assert (status.is_editable, status.is_submitted, status.visible_to_reviewers, status.in_contest,
            status.is_final, status.is_selected, status.is_decided) == TABLE[status]


@pytest.mark.parametrize(("applicant_type", "by_sponsor"), [("sponsor", True), ("federation", False), (None, False)])
def test_a_sponsors_bid_is_told_apart(applicant_type, by_sponsor):
    assert Bid(applicant_type=applicant_type).by_sponsor is by_sponsor


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_versions_blocking_findings_are_those_that_block_submission(outcome):
    found = Finding(code="15.2c.minimum", article="15.2(c)", field="prize_fund_eur", outcome=outcome,
                    message="The prize fund must be at least €200,000.00.", value="€150,000.00")
    passed = Finding(code="15.1.applicant", article="15.1", field="applicant_type", outcome=Outcome.PASS,
                     message="The applicant is a federation or a sponsor.")
    version = BidVersion(compliance=json.dumps([passed.as_dict(), found.as_dict()]))
    assert [f.outcome for f in version.findings] == [Outcome.PASS, outcome]
    assert [f.code for f in version.blocking_findings] == (["15.2c.minimum"] if outcome.blocks_submission else [])
    assert version.findings[1].cite == "Art. 15.2(c)"
