"""The figures for the closing note of an attack run (issue 25): what the security and access tests did, counted as
they ran, written to test-artifacts/security-figures.json at the end of the session and summed up in one line.

Counted, for the tests in tests/security/ and tests/test_access_matrix.py only (loaded from tests/conftest.py):
* requests: every request a Flask test client made (redirects it followed included), by module and status;
* roles: the role sets of the accounts that logged in (Flask-Login's user_logged_in signal);
* races: the tests that run two things at the same moment (they use the `live` app, or their name says "at once"
  or "race"), and how many passed;
* tamperings: the tests whose name says they tamper (forged, tampered, flipped, swapped, edited, replayed, copied,
  captured, stolen), and how many passed (a tampering caught);
* hostile inputs: the requests and CLI runs made by the hostile-input modules (hostile, fuzz, schemathesis,
  mail headers);
* server errors: responses with a status of 500 or more, and CLI runs that ended in an exception (the aim is 0).
Requests made by other processes (the gunicorn workers of test_shared_limits.py) are not seen here.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test-artifacts" / "security-figures.json"
COUNTED = ("tests/security/", "tests/test_access_matrix.py")
HOSTILE_MODULES = re.compile(r"hostile|fuzz|schemathesis|mail_headers")
RACE = re.compile(r"at_once|race|same_moment|concurren")
TAMPER = re.compile(r"tamper|forge|flip|swap|edited|replay|copied|captured|stolen|signed_with_another")

_state: dict = {"module": None, "by_module": defaultdict(Counter), "roles": Counter(), "cli": Counter(),
                "tests": {}, "outcomes": {}}


def _module_of(item) -> str | None:
    path = Path(str(item.path)).resolve()
    try:
        rel = path.relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return rel if rel.startswith(COUNTED) else None


def _logged_in(sender, user, **extra):
    if _state["module"]:
        _state["roles"][",".join(sorted(r.value for r in user.role_set))] += 1


@pytest.fixture(autouse=True)
def _count_requests(request, monkeypatch):
    module = _module_of(request.node)
    if module is None:
        yield
        return
    # Imported here, not at the top: a run of tests that are not counted (loaded from tests/conftest.py) does not
    # import Flask for them.
    from flask.testing import FlaskClient, FlaskCliRunner
    from flask_login import user_logged_in

    user_logged_in.connect(_logged_in)  # held weakly by the signal; connecting it again changes nothing
    name = request.node.name
    _state["tests"][request.node.nodeid] = {
        "race": "live" in request.fixturenames or bool(RACE.search(name)),
        "tamper": bool(TAMPER.search(name)), "module": module}
    statuses = _state["by_module"][module]
    opened, invoked = FlaskClient.open, FlaskCliRunner.invoke

    def open_counted(self, *args, **kwargs):
        response = opened(self, *args, **kwargs)
        statuses[str(response.status_code)] += 1
        return response

    def invoke_counted(self, *args, **kwargs):
        result = invoked(self, *args, **kwargs)
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        _state["cli"][(module, "crashed" if crashed else f"exit {result.exit_code}")] += 1
        return result

    monkeypatch.setattr(FlaskClient, "open", open_counted)
    monkeypatch.setattr(FlaskCliRunner, "invoke", invoke_counted)
    _state["module"] = module
    try:
        yield
    finally:
        _state["module"] = None


def pytest_runtest_logreport(report):
    if report.nodeid in _state["tests"] and (report.when == "call" or report.failed):
        _state["outcomes"][report.nodeid] = report.passed and _state["outcomes"].get(report.nodeid, True)


def summary() -> dict:
    """The figures so far, as written to OUT."""
    by_module = {m: dict(sorted(c.items())) for m, c in sorted(_state["by_module"].items())}
    requests = sum(sum(c.values()) for c in _state["by_module"].values())
    errors = sum(n for c in _state["by_module"].values() for s, n in c.items() if int(s) >= 500)
    cli_runs = sum(_state["cli"].values())
    cli_crashes = sum(n for (_, how), n in _state["cli"].items() if how == "crashed")
    hostile = (sum(sum(c.values()) for m, c in _state["by_module"].items() if HOSTILE_MODULES.search(m))
               + sum(n for (m, _), n in _state["cli"].items() if HOSTILE_MODULES.search(m)))
    tests, outcomes = _state["tests"], _state["outcomes"]

    def tally(kind):
        ids = [i for i, t in tests.items() if t[kind]]
        return {"tried": len(ids), "passed": sum(bool(outcomes.get(i)) for i in ids)}

    return {"tests": len(tests), "requests": requests, "cli_runs": cli_runs,
            "roles": dict(sorted(_state["roles"].items())), "races": tally("race"),
            "tamperings": {**tally("tamper"), "caught": tally("tamper")["passed"]},
            "hostile_inputs": hostile, "server_errors": errors + cli_crashes, "by_module": by_module}


def pytest_sessionfinish(session):
    if not _state["tests"]:
        return
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(summary(), indent=2) + "\n")


def pytest_terminal_summary(terminalreporter):
    if not _state["tests"]:
        return
    s = summary()
    terminalreporter.write_line(
        f"security figures: {s['tests']} tests, {s['requests']} requests and {s['cli_runs']} CLI runs, "
        f"{len(s['roles'])} role sets, races {s['races']['passed']}/{s['races']['tried']}, tamperings caught "
        f"{s['tamperings']['caught']}/{s['tamperings']['tried']}, {s['hostile_inputs']} hostile inputs, "
        f"{s['server_errors']} server errors -> {OUT.relative_to(ROOT)}")
