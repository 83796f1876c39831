"""The suite's own start: tests/conftest.py and the security figures it loads import nothing of the app (Flask,
SQLAlchemy, WeasyPrint, pyHanko) nor schemathesis, so a run of pure tests (tests/finance) does not pay for them; the
fixtures import what they use."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("flask", "sqlalchemy", "weasyprint", "pyhanko", "schemathesis", "core.db", "app")


def test_the_root_conftest_imports_nothing_of_the_app():
    code = f"import sys, tests.conftest; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


@pytest.mark.pdf_layout_once("_base.html")
def test_a_marked_test_lays_each_named_template_out_once_per_setting_of_its_switches(app):
    import evidence.pdf

    with app.test_request_context():
        first = evidence.pdf.render_pdf("_base.html")
        assert first.startswith(b"%PDF-") and evidence.pdf.render_pdf("_base.html") is first
        draft = evidence.pdf.render_pdf("_base.html", draft=True)
        assert draft.startswith(b"%PDF-") and draft is not first
        assert evidence.pdf.render_pdf("_base.html", draft=True) is draft
