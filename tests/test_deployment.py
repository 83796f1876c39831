"""The container image (Dockerfile) and compose.yaml, read as files: no Docker engine runs here, and the docker
client has no `compose` plugin to validate them with (`docker compose config`). So compose.yaml is validated
against the Compose Specification's JSON schema (tests/deployment_data/compose-spec.json, from
github.com/compose-spec/compose-spec schema/compose-spec.json at 170098ba07d9, Apache-2.0), and these tests check
what matters for a deployment that works: every service is there, the app's processes share one image, settings
and volumes, secrets come only from the env file, health checks exist, and every `flask` command they run exists.
`make lint` runs hadolint on the Dockerfile."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import jsonschema_rs
import pytest
import yaml
from flask.cli import FlaskGroup, ScriptInfo

ROOT = Path(__file__).resolve().parents[1]
APP_SERVICES = ("migrate", "app", "worker", "scheduler")
# Secrets: never written in compose.yaml, only in the env file it reads (gambit.env, from gambit.env.example).
SECRETS = ("SECRET_KEY", "AUDIT_KEY", "SIGNING_PASSPHRASE", "MAIL_PASSWORD", "DATABASE_URL", "POSTGRES_PASSWORD")
# Settings a site must give in its env file (the rest have defaults or are fixed by compose.yaml).
SITE_SETTINGS = ("BASE_URL", "PROXY_FIX_HOPS", "DATABASE_URL", "SECRET_KEY", "AUDIT_KEY", "SIGNING_PASSPHRASE",
                 "MAIL_ENABLED", "MAIL_SERVER", "MAIL_PORT", "MAIL_USE_TLS", "MAIL_USERNAME", "MAIL_PASSWORD",
                 "MAIL_SENDER")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", "\n".join(line for line in (ROOT / "Dockerfile").read_text().splitlines()
                                          if not line.lstrip().startswith("#")))
    found = []
    for line in text.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def _dockerfile(keyword: str) -> list[str]:
    return [rest for k, rest in _instructions() if k == keyword]


def _dockerfile_env() -> dict[str, str]:
    env = {}
    for rest in _dockerfile("ENV"):
        for pair in shlex.split(rest):
            key, _, value = pair.partition("=")
            env[key] = value
    return env


def _env_file(name: str) -> dict[str, str]:
    pairs = {}
    for line in (ROOT / name).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value
    return pairs


def test_compose_yaml_follows_the_compose_specification(compose):
    schema = json.loads((ROOT / "tests" / "deployment_data" / "compose-spec.json").read_text())
    errors = [str(error) for error in jsonschema_rs.validator_for(schema).iter_errors(compose)]
    assert errors == []


def test_every_service_is_there(compose):
    assert {"db", "redis", *APP_SERVICES} <= set(compose["services"])


def test_the_apps_processes_share_one_image_settings_and_volumes(compose):
    services = compose["services"]
    first = services["app"]
    for name in APP_SERVICES:
        service = services[name]
        for key in ("image", "build", "env_file", "environment", "volumes", "secrets", "logging"):
            assert service[key] == first[key], f"{name} differs from app in {key}"
    assert first["environment"]["GAMBIT_ENV"] == "production"
    assert first["environment"]["REDIS_URL"].startswith("redis://redis:")


def test_the_volumes_are_mounted_where_the_settings_point(compose):
    env = compose["services"]["app"]["environment"]
    mounts = dict(reversed(m.split(":", 1)) for m in compose["services"]["app"]["volumes"])
    assert mounts[env["UPLOAD_DIR"]] in compose["volumes"] and mounts[env["UPLOAD_DIR"]] == "uploads"
    assert mounts[env["GAMBIT_INSTANCE"]] in compose["volumes"] and mounts[env["GAMBIT_INSTANCE"]] == "instance"
    # The image points at the same folders, made and owned by its user (a new named volume takes that ownership).
    image_env = _dockerfile_env()
    assert image_env["UPLOAD_DIR"] == env["UPLOAD_DIR"] and image_env["GAMBIT_INSTANCE"] == env["GAMBIT_INSTANCE"]
    setup = " ".join(_dockerfile("RUN"))
    assert f"mkdir -p {env['GAMBIT_INSTANCE']} {env['UPLOAD_DIR']}" in setup
    assert "chown -R gambit:gambit /var/lib/gambit" in setup
    # The backup reads the same folders.
    assert set(compose["services"]["app"]["volumes"]) <= set(compose["services"]["backup"]["volumes"])


def test_secrets_come_only_from_the_env_file(compose):
    for name, service in compose["services"].items():
        written = service.get("environment") or {}
        assert not set(written) & set(SECRETS), f"{name} writes a secret in compose.yaml"
    for name in (*APP_SERVICES, "db"):
        assert compose["services"][name]["env_file"] == ["gambit.env"]
    assert compose["secrets"]["signing.p12"]["file"] == "./secrets/signing.p12"
    assert compose["services"]["app"]["environment"]["SIGNING_PKCS12"] == "/run/secrets/signing.p12"
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "gambit.env" in ignored and "secrets/" in ignored


def test_the_example_env_file_names_every_site_setting_with_placeholders():
    example = _env_file("gambit.env.example")
    assert set(SITE_SETTINGS) <= set(example)
    for key in ("SECRET_KEY", "AUDIT_KEY", "SIGNING_PASSPHRASE", "MAIL_PASSWORD", "POSTGRES_PASSWORD", "BASE_URL"):
        assert "CHANGE-ME" in example[key], f"{key} has no clearly marked placeholder"
    assert example["POSTGRES_PASSWORD"] in example["DATABASE_URL"]
    assert example["BASE_URL"].startswith("https://")
    # Every key is one Gambit reads (a typo would be silently ignored), or one the db service or gunicorn reads.
    source = (ROOT / "config.py").read_text()
    read = set(re.findall(r"""(?:environ\.get|_int|_bool|_instance_secret)\(\s*["']([A-Z_0-9]+)["']""", source))
    assert set(example) - read <= {"POSTGRES_PASSWORD", "WEB_CONCURRENCY"}


def test_health_checks_exist(compose):
    services = compose["services"]
    for name in ("db", "redis", "app"):
        assert services[name]["healthcheck"]["test"], f"{name} has no health check"
    assert "/healthz" in " ".join(services["app"]["healthcheck"]["test"])
    for name in ("worker", "scheduler", "migrate"):  # no HTTP port: the image's probe must not mark them unhealthy
        assert services[name]["healthcheck"] == {"disable": True}
    (check,) = _dockerfile("HEALTHCHECK")
    assert '"python"' in check and "/healthz" in check and "curl" not in check


def test_nothing_starts_before_the_schema_is_up_to_date(compose):
    services = compose["services"]
    assert services["migrate"]["command"] == ["flask", "db", "upgrade"]
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("app", "worker", "scheduler"):
        waits = services[name]["depends_on"]
        assert waits["migrate"]["condition"] == "service_completed_successfully"
        assert waits["db"]["condition"] == "service_healthy" and waits["redis"]["condition"] == "service_healthy"


def test_the_image_runs_gunicorn_as_a_user_without_privileges_from_the_locked_packages(compose):
    (user,) = _dockerfile("USER")
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0
    installs = " ".join(_dockerfile("RUN"))
    assert "pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock" in installs
    (cmd,) = _dockerfile("CMD")
    assert cmd.startswith('["gunicorn", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"')
    assert compose["services"]["app"]["command"][:5] == ["gunicorn", "--config", "gunicorn.conf.py", "--bind",
                                                         "0.0.0.0:8000"]
    assert _dockerfile("EXPOSE") == ["8000"]
    froms = _dockerfile("FROM")
    assert all(f.startswith("python:3.11-slim-bookworm") for f in froms)


def test_the_image_installs_only_weasyprints_runtime_packages_of_the_makefile():
    makefile = (ROOT / "Makefile").read_text()
    listed = set(re.search(r"APT_PACKAGES := ((?:.*\\\n)*.*)", makefile).group(1).replace("\\\n", " ").split())
    installs = " ".join(_dockerfile("RUN"))
    installed = set(re.search(r"apt-get install -y --no-install-recommends ([^&]+)&&", installs).group(1).split())
    assert installed == {"libpango-1.0-0", "libpangoft2-1.0-0", "libharfbuzz-subset0", "fonts-dejavu-core",
                         "fonts-dejavu-extra"}
    assert installed <= listed


def test_the_build_context_leaves_out_local_state_and_secrets():
    ignored = set((ROOT / ".dockerignore").read_text().splitlines())
    assert {".git", ".venv", "instance", "node_modules", "test-artifacts", "secrets", "*.env"} <= ignored


def _flask_commands() -> set[tuple[str, ...]]:
    """Every `flask ...` command line the Dockerfile, compose.yaml and the README's deployment section run."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Running Gambit for real"):]
    texts = [(ROOT / "Dockerfile").read_text(), (ROOT / "compose.yaml").read_text(), section]
    found = set()
    for text in texts:
        for match in re.finditer(r"""flask["',\s]+([a-z][a-z-]*)(?:["',\s]+([a-z][a-z-]*))?""", text):
            found.add(tuple(word for word in match.groups() if word))
    for command in yaml.safe_load(texts[1])["services"].values():
        words = command.get("command") or []
        if words[:1] == ["flask"]:
            found.add(tuple(words[1:3]))
    return found


def test_every_flask_command_the_deployment_runs_exists(app):
    commands = _flask_commands()
    assert {("db", "upgrade"), ("backup", "create"), ("backup", "verify"), ("worker",), ("scheduler",),
            ("mail", "send")} <= commands
    # As `flask` finds them: the app's commands and the installed plugins' (Flask-Migrate's `db`).
    group = FlaskGroup(create_app=lambda: app, set_debug_flag=False)
    # The context is closed at the end: get_command pushes the app's context onto it, which would otherwise stay
    # pushed for every later test of the session (and their CLI runs would use this app).
    with click.Context(group, obj=ScriptInfo(create_app=lambda: app, set_debug_flag=False)) as ctx:
        for words in sorted(commands):
            command = group.get_command(ctx, words[0])
            assert command is not None, f"`flask {words[0]}` does not exist"
            if isinstance(command, click.Group) and len(words) > 1:
                assert command.get_command(ctx, words[1]) is not None, f"`flask {' '.join(words)}` does not exist"
