"""The verdict's own words: what each outcome means (blocks submission, repeats the entry, its badge)."""

from __future__ import annotations

import pytest

from core.findings import Finding, Outcome

# Pure: no application, no database session.
pytestmark = pytest.mark.no_db

OC = Outcome

# outcome -> (blocks submission, repeats what was entered, badge words, badge class)
TABLE = {
    OC.PASS: (False, False, "Passes", "pass"),
    OC.FAIL: (True, True, "Fails", "fail"),
    OC.NOT_APPLICABLE: (False, False, "Does not apply", "na"),
    OC.PENDING: (True, False, "To attach", "pending"),
    OC.WARNING: (False, True, "Check the figure", "warning"),
}


def test_the_table_covers_every_outcome():
    assert set(TABLE) == set(Outcome)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_what_each_outcome_means(outcome):
    blocks, shows, label, css = TABLE[outcome]
    assert outcome.blocks_submission is blocks
    assert outcome.shows_entered_value is shows
    assert outcome.label == label
    assert outcome.css_class == css


def _finding(outcome: Outcome, value: str = "€150,000.00") -> Finding:
    return Finding(code="15.2c.minimum", article="15.2(c)", field="prize_fund_eur", outcome=outcome,
                   message="The prize fund must be at least €200,000.00.", value=value)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_finding_blocks_submission_as_its_outcome_does(outcome):
    f = _finding(outcome)
    assert f.blocks_submission is outcome.blocks_submission
    assert f.failed is (outcome is OC.FAIL)
    assert f.pending is (outcome is OC.PENDING)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_finding_repeats_the_entry_only_when_there_is_one_and_its_outcome_says_so(outcome):
    assert _finding(outcome).shows_entered_value is outcome.shows_entered_value
    assert _finding(outcome, value="").shows_entered_value is False
    assert ("(you entered €150,000.00)" in _finding(outcome).as_text()) is outcome.shows_entered_value


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_stored_finding_reads_back_the_same(outcome):
    procedure = Finding(code="guarantee.terms", article="", field="guarantee_bank", outcome=outcome,
                        message="The guarantee is issued by a bank.", source="Bidding procedure: bank guarantee terms",
                        kind="procedure")
    for f in (_finding(outcome), procedure):
        again = Finding.from_dict(f.as_dict())
        assert again.cite == f.cite and again.outcome is f.outcome
        assert (again.blocks_submission, again.shows_entered_value) == (f.blocks_submission, f.shows_entered_value)


def test_a_stored_finding_with_an_unknown_outcome_is_refused():
    with pytest.raises(ValueError):
        Finding.from_dict({"code": "x", "article": "", "field": "", "outcome": "maybe", "message": "?"})


@pytest.mark.parametrize(("outcome", "value", "shown"), [
    (Outcome.FAIL, "€150,000.00", "€150,000.00"),
    (Outcome.FAIL, "", "nothing entered"),
    (Outcome.WARNING, "", "nothing entered"),
    (Outcome.PENDING, "", "not attached yet"),
    (Outcome.PASS, "", "—"),
    (Outcome.NOT_APPLICABLE, "", "—"),
])
def test_the_entered_cell_is_never_blank(outcome, value, shown):
    finding = Finding("x", "15.2(c)", "prize_fund_eur", outcome, "The prize fund.", value)
    assert finding.entered_text == shown
