"""The ranking and its sensitivity give exactly what the Fraction-based code before issue 15 gave: stored digests of
seeded cases (ties, recusals, missing scores and scorecards, one member, one bid, weights of 0), and a property test
against a plain reference implementation of Art. 15.5's arithmetic kept here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.rules import rank_bids
from scoring.sensitivity import assess_sensitivity
from tests.scoring.golden_cases_scoring import GOLDEN_CASES, golden

# Pure arithmetic: no application, no database session.
pytestmark = pytest.mark.no_db

GOLDEN = json.loads((Path(__file__).parent / "golden_arithmetic_scoring.json").read_text())


def test_seeded_cases_give_the_outputs_stored_from_the_code_before():
    assert set(GOLDEN) == set(GOLDEN_CASES)
    now = golden(rank_bids, assess_sensitivity)
    for name in GOLDEN_CASES:
        assert now[name] == GOLDEN[name], name
