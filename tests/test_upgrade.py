"""Upgrades from the last releases, as the README tells an operator to make them, on the suite's kind of database.

For each release CHANGELOG.md names with its commit (the newest ones, `UPGRADED_FROM`): that release's code,
taken from git, builds a database with the demo's whole flow in it (`flask db upgrade`, `flask seed --demo`); the
README's "Upgrading" blocks are then run word for word with bash, the first in the old release's folder, the
second in this one's; then every page is crawled as every person (tests/crawl.py) on the upgraded database, and
`flask audit verify --expect` with the checkpoint taken before has already passed inside the second block.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crawl import ROLES, crawl
from tests.crawl_world import ROOT, app_config, fresh_database

# How many of the newest releases each run upgrades from.
UPGRADED_FROM = 2
_RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) .*\(commit `([0-9a-f]{7,40})`\)", re.MULTILINE)
_BLOCK = "<!-- upgrade: {} -->\n```sh\n(.*?)\n```"


def releases() -> list[tuple[str, str]]:
    """(version, commit) of each release CHANGELOG.md names with its commit, newest first."""
    return _RELEASE.findall((ROOT / "CHANGELOG.md").read_text())


def readme_block(name: str) -> str:
    """The README's shell block marked `<!-- upgrade: NAME -->`."""
    found = re.search(_BLOCK.format(name), (ROOT / "README.md").read_text(), re.DOTALL)
    assert found, f"README.md has no block marked <!-- upgrade: {name} -->"
    return found.group(1)


def run(command: list[str] | str, *, cwd: Path, env: dict, what: str) -> str:
    """Run a command as an operator would; its output, or a failure that shows it."""
    done = subprocess.run(command if isinstance(command, list) else ["bash", "-euo", "pipefail", "-c", command],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
    return done.stdout


def test_the_changelog_names_the_releases_upgraded_from():
    named = releases()
    assert len(named) >= UPGRADED_FROM, named
    assert ("0.31.0", "95120ff") in named  # the release issue 34's upgrade broke from


@pytest.mark.no_db
@pytest.mark.parametrize("version, commit", releases()[:UPGRADED_FROM])
def test_an_upgrade_from_a_release_as_the_readme_says_leaves_every_page_working(
        version, commit, database_url, tmp_path, signing_ca):
    if not (ROOT / ".git").exists() or subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                                                      capture_output=True).returncode:
        pytest.fail(f"release {version} ({commit}) is not in this clone's history: the suite runs from a full git "
                    "clone (as CI makes it)")
    old = tmp_path / "old"
    old.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    instance = tmp_path / "instance"
    with fresh_database(database_url, tmp_path, "upgrade") as url:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "UPLOAD_DIR", "FLASK_APP")}
        env |= {"PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}", "FLASK_APP": "app",
                "GAMBIT_INSTANCE": str(instance), "MAIL_ENABLED": "false", "OUTBOX_DISPATCH": "manual"}
        if url.startswith("postgresql"):
            env["DATABASE_URL"] = url.replace("postgresql+psycopg://", "postgresql://", 1)
        else:  # an operator's SQLite database: the default, in the instance folder
            url = f"sqlite:///{instance / 'gambit.sqlite3'}"
        run(["flask", "db", "upgrade"], cwd=old, env=env, what=f"{version}: flask db upgrade")
        run(["flask", "seed", "--demo"], cwd=old, env=env, what=f"{version}: flask seed --demo")

        run(readme_block("before"), cwd=old, env=env, what=f"the README's steps before the upgrade, on {version}")
        # The new release's code in place: this folder, with the operator's backups beside it.
        new = tmp_path / "new"
        shutil.copytree(old / "backups", new / "backups")
        after = readme_block("after").replace("make venv", f"make -C {ROOT} venv")
        upgraded = run(after, cwd=_linked(ROOT, new), env=env,
                       what=f"the README's steps of the upgrade from {version}")
        assert "audit log intact" in upgraded

        from app import create_app
        from core.db import db

        application = create_app(app_config(
            url, instance, signing_ca, SECRET_KEY=(instance / "secret_key").read_text().strip(),
            AUDIT_KEY=(instance / "audit_key").read_text().strip()))
        try:
            report = crawl(application, ROLES)
        finally:
            with application.app_context():
                db.session.remove()
                db.engine.dispose()
        said = "\n".join(report.failures[:40])
        assert not report.failures, f"after the upgrade from {version}:\n{said}\n({report.summary()})"


def _linked(root: Path, folder: Path) -> Path:
    """`folder` made into this release's code: every top-level entry of the repository linked in (the code, the
    locks, the Makefile, the installed .venv), beside the operator's own backups/ copied there."""
    for entry in root.iterdir():
        if entry.name in (".git", "backups", "instance") or (folder / entry.name).exists():
            continue
        (folder / entry.name).symlink_to(entry)
    return folder
