"""finance/ is pure: no Flask or database import, and no figure of the regulations written in its code."""

import ast
import subprocess
import sys
import tomllib
from decimal import Decimal, InvalidOperation
from pathlib import Path

from events.regulation import default_event_file

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "finance").glob("*.py"))
# Digits that are arithmetic, not regulation: nothing, a whole, a cent, and the Decimal context's precision.
ALLOWED = {Decimal(0), Decimal(1), Decimal("0.01"), Decimal(64)}


def _figures() -> set[Decimal]:
    """Every number of the money sections of the 2015 file, as written, as a percentage, and its complement."""
    data = tomllib.loads(default_event_file().read_text(encoding="utf-8"))
    out: set[Decimal] = set()
    for section in ("prize_fund", "fide_contribution", "prize_split", "obligations", "payments"):
        _walk(data[section], out)
    for inst in data["payments"]["with_guarantee"]:
        out.update({Decimal(inst["due"].year), Decimal(inst["due"].month), Decimal(inst["due"].day)})
    return out - ALLOWED


def _walk(value, out: set[Decimal]) -> None:
    """Adds to `out` every number in a value of the TOML file (tables and lists walked through)."""
    if isinstance(value, dict):
        for v in value.values():
            _walk(v, out)
    elif isinstance(value, list):
        for v in value:
            _walk(v, out)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        out.add(Decimal(value))
    elif isinstance(value, str):
        out.update(_text_figures(value))


def _text_figures(value: str) -> set[Decimal]:
    """A decimal written as text (a rate, "0.2"), as a percentage, and its complement; nothing for other text."""
    try:
        d = Decimal(value)
    except InvalidOperation:
        return set()
    if not d.is_finite():
        return set()
    if 0 < d < 1:
        return {d, d * 100, 1 - d, (1 - d) * 100}
    return {d, d * 100}


def _literals(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            if isinstance(node.value, (int, float)):
                yield node.lineno, Decimal(str(node.value))
            elif isinstance(node.value, str):
                try:
                    yield node.lineno, Decimal(node.value.strip())
                except InvalidOperation:
                    continue


def test_finance_code_writes_no_figure_of_the_regulations():
    figures = _figures()
    assert Decimal("200000") in figures and Decimal("20") in figures and Decimal("40") in figures
    found = [f"{p.name}:{line}: {value}" for p in SOURCES for line, value in _literals(p) if value in figures]
    assert not found, found


def test_finance_code_cites_no_article_by_number_except_the_documented_fallback():
    articles = ("13.1", "13.2", "13.3", "13.4", "14.1", "14.2", "14.3", "14.4", "14.5", "11.1.2", "15.6.2")
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and not node.value.count("\n"):
                assert node.value not in articles, f"{path.name}:{node.lineno} cites {node.value!r}"


def test_finance_imports_neither_flask_nor_a_database():
    code = ("import sys, finance.rules, finance.money; "
            "print(sorted(m for m in ('flask', 'flask_sqlalchemy', 'sqlalchemy', 'werkzeug') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
