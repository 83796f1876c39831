"""Fixtures of the scoring pages and services: `sf`, a ScoringFactory (tests/scoring/factories_scoring.py)."""

import pytest

from tests.scoring.factories_scoring import ScoringFactory


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    return ScoringFactory(app, make)
