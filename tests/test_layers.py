"""The layers of DESIGN.md (Conventions, 12) as the import contracts in pyproject.toml: a domain importing a later
step of the flow, or `api`, fails here (and in `make lint`). import-linter reads the source; nothing is imported."""

import tomllib
from pathlib import Path

import pytest
from importlinter import configuration
from importlinter.application.use_cases import lint_imports

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]

pytestmark = pytest.mark.no_db


def test_the_import_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    configuration.configure()
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    assert kept, capsys.readouterr().out


def test_the_layers_follow_the_flow_with_api_above_and_core_below():
    """The contract itself cannot be weakened unnoticed: the domains in the order of the flow, api (and demo) on
    top, accounts below the domains, then the house: operations over evidence over core at the bottom."""
    layers = next(c for c in CONTRACTS if c["id"] == "layers")
    assert layers["type"] == "layers"
    assert layers["layers"] == ["api | demo", "contracts", "board", "scoring", "bids", "finance", "events",
                                "accounts", "operations", "evidence", "core"]
    assert "ignore_imports" not in layers  # no import is excused from the layers


def test_every_package_is_in_the_layers_and_says_on_its_first_screen_what_it_holds():
    """A package added beside the others is either in the layers or the test fails: none escapes the contract. The
    house's three rooms each say in their docstring what they must not import."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench", "migrations"}
    root = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in CONTRACTS if c["id"] == "layers")
    layered = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    assert packages == set(root["root_packages"]) == layered
    for room in ("core", "evidence", "operations"):
        first_screen = (ROOT / room / "__init__.py").read_text(encoding="utf-8")
        assert "import" in first_screen.lower() and "layers contract" in first_screen, room


def test_finance_is_pure():
    finance = next(c for c in CONTRACTS if c["id"] == "finance-pure")
    assert finance["source_modules"] == ["finance"]
    assert {"flask", "sqlalchemy", "bids", "scoring", "board", "contracts", "api", "core", "events"} <= set(
        finance["forbidden_modules"])
    assert set(finance["ignore_imports"]) == {"finance.rules -> events.regulation", "finance.rules -> core.money"}


def test_each_domains_lifecycle_stands_on_its_rules_and_both_are_pure():
    """DESIGN.md's table of a domain package's files: lifecycle.py may import rules.py, never the reverse, and
    neither reaches Flask, a form, the session or a model."""
    layered = next(c for c in CONTRACTS if c["id"] == "lifecycle-over-rules")
    assert layered["layers"] == ["lifecycle", "rules"]
    assert set(layered["containers"]) == {"bids", "board", "contracts", "events", "scoring"}
    pure = next(c for c in CONTRACTS if c["id"] == "rules-pure")
    assert {f"{d}.{m}" for d in layered["containers"] for m in ("rules", "lifecycle")} <= set(pure["source_modules"])
    assert {"flask", "sqlalchemy", "wtforms", "core.db", "bids.models", "bids.services"} <= set(
        pure["forbidden_modules"])
