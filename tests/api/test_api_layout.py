"""Issue 16: the API lives in api/ and its document cannot drift from the routes. Every /api/v1 rule is in the
generated OpenAPI document and every documented path is a rule; every /api/v1 endpoint is served by a view defined
in the api package; no domain package imports api."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from api.openapi import openapi_document
from api.routing import OPERATIONS

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ("accounts", "core", "events", "bids", "finance", "scoring", "board", "contracts")


def _api_rules(app) -> dict[str, str]:
    """{OpenAPI path: endpoint} of every rule under /api/v1."""
    out = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule[len("/api/v1"):])
            out[path] = rule.endpoint
    return out


def test_every_api_rule_is_documented_and_every_documented_path_is_a_rule(app):
    rules = _api_rules(app)
    documented = set(openapi_document()["paths"])
    assert len(rules) >= 10
    assert set(rules) - documented == set(), "routes missing from the OpenAPI document"
    assert documented - set(rules) == set(), "documented paths that no route serves"


def test_every_documented_operation_names_the_methods_the_rule_answers(app):
    doc = openapi_document()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule[len("/api/v1"):])
            assert set(doc["paths"][path]) == {m.lower() for m in rule.methods - {"HEAD", "OPTIONS"}}, rule.rule


def test_every_api_endpoint_is_served_by_a_view_of_the_api_package(app):
    declared = {op.endpoint for op in OPERATIONS}
    for path, endpoint in _api_rules(app).items():
        view = inspect.unwrap(app.view_functions[endpoint])
        assert view.__module__.split(".")[0] == "api", f"{path} is served by {view.__module__}.{view.__name__}"
        assert endpoint.startswith("api.") and endpoint in declared, endpoint


@pytest.mark.parametrize("package", DOMAINS)
def test_no_domain_package_imports_api(package):
    for source in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "api" or n.startswith("api.") for n in names), \
                f"{source.relative_to(ROOT)}:{node.lineno} imports {names}"


def test_amounts_are_two_decimal_strings_in_the_document():
    schemas = openapi_document()["components"]["schemas"]
    amounts = [(name, key, prop) for name, schema in schemas.items()
               for key, prop in schema.get("properties", {}).items()
               if prop.get("description") == "Euros, two decimals"]
    assert len(amounts) >= 10
    for name, key, prop in amounts:
        assert prop["type"] == "string" and prop["pattern"] == r"^-?\d+\.\d{2}$", (name, key)
    floats = [(name, key) for name, schema in schemas.items()
              for key, prop in schema.get("properties", {}).items() if prop.get("type") == "number"]
    assert floats == []
