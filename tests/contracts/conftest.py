"""Fixtures of the contract tests: `cf`, a ContractFactory (tests/contracts/factories_contracts.py)."""

import pytest

from tests.contracts.factories_contracts import ContractFactory


@pytest.fixture
def cf(app, make) -> ContractFactory:
    return ContractFactory(app, make)
