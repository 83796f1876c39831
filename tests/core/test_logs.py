"""Logs: one JSON object per line in production, each record of a request carrying the id the response sends back
in X-Request-ID (operations.logs). The lines are read from stderr, where the app's handler writes them."""

import json
import logging

import pytest
from flask import current_app

from app import ConfigurationError
from operations.logs import REQUEST_ID
from tests.conftest import login


def _json_lines(err: str) -> list[dict]:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "nothing was logged"
    return [json.loads(line) for line in lines]  # each line alone is one JSON object


def _logging_app(another_app):
    app = another_app(LOG_FORMAT="json", WTF_CSRF_ENABLED=False)

    @app.get("/_test/log")
    def _log():
        current_app.logger.warning("something worth a line")
        logging.getLogger("core.somewhere").info("and another, from a module's logger")
        return "ok"

    return app


def test_every_line_of_a_request_is_json_with_the_id_sent_back(another_app, make, capsys):
    app = _logging_app(another_app)
    client = app.test_client()
    user_id = make.user(roles=("admin",))
    with app.app_context():
        from accounts.models import User
        from core.db import db

        email = db.session.get(User, user_id).email
    assert login(client, email).status_code == 302
    capsys.readouterr()

    response = client.get("/_test/log")
    records = _json_lines(capsys.readouterr().err)

    request_id = response.headers["X-Request-ID"]
    assert REQUEST_ID.fullmatch(request_id)
    assert [r["message"] for r in records] == ["something worth a line", "and another, from a module's logger",
                                               "GET /_test/log 200"]
    for record in records:
        assert record["request_id"] == request_id
        assert record["method"] == "GET" and record["path"] == "/_test/log"
        assert record["user_id"] == user_id
        assert "timestamp" in record and record["level"] in ("WARNING", "INFO")
    closing = records[-1]
    assert closing["logger"] == "gambit.request" and closing["status"] == 200
    assert isinstance(closing["duration_ms"], float) and closing["duration_ms"] >= 0


def test_each_request_gets_its_own_id_and_an_anonymous_one_names_no_user(another_app, capsys):
    client = _logging_app(another_app).test_client()
    capsys.readouterr()
    first = client.get("/_test/log").headers["X-Request-ID"]
    second = client.get("/_test/log").headers["X-Request-ID"]
    records = _json_lines(capsys.readouterr().err)
    assert first != second
    assert [r["request_id"] for r in records] == [first] * 3 + [second] * 3
    assert not any("user_id" in r for r in records)


def test_a_well_formed_incoming_request_id_is_kept(another_app, capsys):
    client = _logging_app(another_app).test_client()
    capsys.readouterr()
    response = client.get("/_test/log", headers={"X-Request-ID": "nginx-7f3a9c.01:2"})
    assert response.headers["X-Request-ID"] == "nginx-7f3a9c.01:2"
    assert {r["request_id"] for r in _json_lines(capsys.readouterr().err)} == {"nginx-7f3a9c.01:2"}


@pytest.mark.parametrize("hostile", ["forged\n{\"level\": \"CRITICAL\"}", "a" * 1000, "two words", 'quote"d', ""])
def test_a_hostile_request_id_is_replaced(another_app, capsys, hostile):
    client = _logging_app(another_app).test_client()
    capsys.readouterr()
    # Passed through the WSGI environ: the test client itself refuses a header with a newline.
    response = client.get("/_test/log", environ_overrides={"HTTP_X_REQUEST_ID": hostile})
    err = capsys.readouterr().err
    request_id = response.headers["X-Request-ID"]
    assert request_id != hostile and REQUEST_ID.fullmatch(request_id) and len(request_id) == 32
    assert {r["request_id"] for r in _json_lines(err)} == {request_id}
    assert len(err.splitlines()) == 3  # the newline did not split a line in two
    if hostile:
        assert hostile not in err


def test_a_refused_request_is_logged_with_its_status(another_app, capsys):
    client = _logging_app(another_app).test_client()
    capsys.readouterr()
    response = client.get("/no/such/page")
    (record,) = _json_lines(capsys.readouterr().err)
    assert response.status_code == 404
    assert record["status"] == 404 and record["request_id"] == response.headers["X-Request-ID"]


def test_text_logs_outside_production_and_json_in_production(another_app, capsys):
    capsys.readouterr()
    another_app().test_client().get("/healthz")
    line = capsys.readouterr().err.strip()
    assert not line.startswith("{") and " INFO gambit.request [" in line and line.endswith("GET /healthz 200")

    production = another_app(GAMBIT_ENV="production", BASE_URL="https://gambit.example.org")
    assert production.config["LOG_FORMAT"] == "json"
    production.test_client().get("/healthz")
    (record,) = _json_lines(capsys.readouterr().err)
    assert record["message"] == "GET /healthz 200"


def test_an_unknown_log_format_stops_the_start_with_the_reason(another_app):
    with pytest.raises(ConfigurationError, match="LOG_FORMAT is 'xml': it must be one of json, text"):
        another_app(LOG_FORMAT="xml")
    with pytest.raises(ConfigurationError, match="LOG_LEVEL is 'LOUD'"):
        another_app(LOG_LEVEL="LOUD")


def test_a_second_app_replaces_the_handler_instead_of_doubling_every_line(another_app, capsys):
    another_app(LOG_FORMAT="json")
    client = another_app(LOG_FORMAT="json").test_client()
    capsys.readouterr()
    client.get("/healthz")
    assert len(_json_lines(capsys.readouterr().err)) == 1


def test_a_newline_in_the_path_cannot_forge_a_text_line(another_app, capsys):
    client = another_app(LOG_FORMAT="text").test_client()
    capsys.readouterr()
    client.get("/nothing%0A2026-12-03 00:00:00,000 INFO gambit.request [forged] GET /admin 200")
    (line,) = capsys.readouterr().err.splitlines()
    assert "GET /nothing\\x0a2026-12-03" in line and line.endswith(" 404")


def test_the_schedulers_lines_come_out_once_each_as_json(another_app):
    """`flask scheduler` writes through the app's handler: a second handler of its own wrote every line twice, the
    second time as text among the JSON lines."""
    from operations.scheduler import Daily, registry
    from tests.scheduling import working

    app = another_app(LOG_FORMAT="json")
    registry(app).add("test.working", Daily(hour=7), working)
    result = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    assert result.exit_code == 0, result.output
    records = [r for r in _json_lines(result.stderr) if r["logger"] == "gambit.scheduler"]
    assert len([r for r in records if r["message"].startswith("test.working ")]) == 1
