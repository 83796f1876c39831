"""core.hooks is the one way an earlier step of the flow lets a later one take part, and app.py's create_app wires
every hook: nothing is registered when a module is imported, so what runs after an amendment of the call or a
correction of the decision does not depend on which modules some other code happened to import first."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.no_db

SCRIPT = textwrap.dedent("""
    import sys

    import events.services
    import board.services
    import evidence.trust

    # Only the modules that call the hooks are imported: neither is provided, and calling one says so instead of
    # silently doing nothing (an amendment recorded without its bids judged again).
    for hook in (events.services.judge_again, board.services.after_correction):
        assert hook.provided is None, f"{hook.name} was provided at import"
        try:
            hook(None, None, None, now=None)
        except LookupError as exc:
            print("refused:", exc)
        else:
            sys.exit(f"{hook.name} ran without being provided")

    # The modules whose re-checks it runs are imported too: importing them once filled a list of re-checks.
    import bids.services
    import contracts.services

    assert evidence.trust.recheck_signatures.provided is None, "the trust list's re-check was provided at import"
    try:
        evidence.trust.recheck_all(actor=None, now=None, upload_dir=sys.argv[1])
    except LookupError as exc:
        print("refused:", exc)
    else:
        sys.exit("the trust list's re-check ran without being provided")

    from app import create_app

    create_app({"SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": "sqlite://", "UPLOAD_DIR": sys.argv[1]})

    assert events.services.judge_again.provided is bids.services.judge_again
    assert board.services.after_correction.provided is contracts.services.close_for_correction
    import app

    assert evidence.trust.recheck_signatures.provided is app._recheck_signatures
    print("wired by create_app")
""")


def test_create_app_wires_the_amendment_and_correction_hooks_whatever_was_imported_first(tmp_path):
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "uploads")], cwd=ROOT,
                            capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "GAMBIT_INSTANCE": str(tmp_path / "instance"),
                                 "OUTBOX_DISPATCH": "manual"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "refused: hook events.services.judge_again has not been provided (app.create_app provides it)",
        "refused: hook board.services.after_correction has not been provided (app.create_app provides it)",
        "refused: hook evidence.trust.recheck_signatures has not been provided (app.create_app provides it)",
        "wired by create_app",
    ]

