"""Every term a contract states, compared whole: `contract_terms(...).as_dict()` (the snapshot stored with each
contract) for four cases of the 2015 call — a home match with a bank guarantee, an away match without one, a sponsor
without the signal blocker, and an issue after the Art. 15.6.2 dates had passed, the contract setting new ones.

The other tests check the rules one by one (a figure, a date, a refusal); these compare every figure, date, article
and sentence at once, so a one-line change anywhere in contracts/rules/terms.py or in the finance it calls shows (its
mutation run found 216 mutants of terms.py no test reached, docs/mutation.md). The expected snapshots are the files
in tests/contracts/golden/, read by a person when written: a change of the call file or of the terms shows here as a
diff to read, and is written again with `GAMBIT_WRITE_GOLDEN=1 pytest tests/contracts/test_terms_golden.py`. The
regulation's fingerprints are left out of the files (they change with any edit of the call file) and checked here.
"""

import json
import os
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from contracts.rules.terms import ContractInputs, contract_terms
from tests.contracts.test_contracts_rules import REG, inputs

GOLDEN = Path(__file__).parent / "golden"

CASES = {
    "home-with-guarantee": (inputs(), {"stipend_payout_1": date(2015, 10, 30)}, None),
    "away-without-guarantee": (
        inputs(host_federation="RUS", venue_city="Sochi", venue_country="RU", guarantee_offered=False,
               guarantee_bank="", guarantee_amount=None, guarantee_valid_until=None, prize_fund=Decimal("250000.00"),
               fide_contribution=Decimal("50000.00")),
        {"stipend_payout_1": date(2015, 10, 29), "signal_blocker": date(2015, 9, 15)}, None),
    "sponsor-no-signal-blocker-by-president": (
        inputs(applicant_type="sponsor", applicant_name="Lviv Chess Foundation", signal_blocker_required=False,
               selected_by="president", selection_grounds="No Board meeting could be held; the WCOC was consulted."),
        {}, None),
    "issued-after-the-dates-had-passed": (
        inputs(opening_date=date(2015, 11, 20), closing_date=date(2015, 12, 9)),
        {"instalment_1": date(2015, 9, 20), "instalment_2": date(2015, 10, 20), "home_compensation": date(2015, 10, 20),
         "travel_1": date(2015, 10, 20), "travel_2": date(2015, 10, 20), "stipend_payout_1": date(2015, 12, 9)},
        date(2015, 9, 10)),
}


def _snapshot(case: str) -> dict:
    facts, due_dates, issued_on = CASES[case]
    snapshot = contract_terms(REG, facts, due_dates, issued_on=issued_on).as_dict()
    assert snapshot.pop("regulation") == {"title": REG.event.regulations_title, "sha256": REG.sha256,
                                          "text_sha256": REG.regulations_text.sha256}
    return snapshot


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_term_of_the_contract_is_as_written_down(case):
    path = GOLDEN / f"terms-{case}.json"
    got = json.loads(json.dumps(_snapshot(case)))
    if os.environ.get("GAMBIT_WRITE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    for part in expected:
        assert got[part] == expected[part], f"{case}: the contract's {part} differ from {path.name}"
    assert got == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_facts_a_contract_is_made_from_read_back_as_they_were(case):
    facts = CASES[case][0]
    assert ContractInputs.from_dict(json.loads(json.dumps(facts.as_dict()))) == facts
