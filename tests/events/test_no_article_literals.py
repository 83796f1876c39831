"""No article number is written in code or templates: every citation comes from the call's file (issue 13).

A call with renumbered articles is a new data file, not a code change. Python docstrings and comments and
Jinja comments are developers' notes and are not scanned; every string a user can see is.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# demo/ holds the demo's data (what fictional users typed), like seed_data/.
SKIP_DIRS = {"tests", "seed_data", "demo", "migrations", ".venv", "node_modules", "instance", ".git", "__pycache__"}

# "Art. 15.3", "Articles 13", "Art 2.2"
ART = re.compile(r"\bArt(?:icle)?s?\.?\s*\d+")
# "15.2(c)", "15.5 (a)"
SUB = re.compile(r"(?<![\d.])[1-9]\d?\.\d{1,2}(?:\.\d{1,2})?\s*\([a-z]\)")
# an article alone in a string ("15.3", "11.1.2") or opening an f-string ("15.5(")
BARE = re.compile(r"^\s*[1-9]\d?(?:\.[1-9]\d?){1,2}(?:\((?:[a-z]\)?)?)?\s*$")
# an article alone in a table cell, or a range of particulars ("15.2 a–k")
CELL = re.compile(r">\s*[1-9]\d?(?:\.\d{1,2})+(?:\([a-z]\))?\s*[,<]")
RANGE = re.compile(r"\b[1-9]\d?\.\d\s+[a-k]\s*[–-]\s*[a-k]\b")


def _files(suffix: str):
    for path in sorted(ROOT.rglob(f"*{suffix}")):
        rel = path.relative_to(ROOT)
        if not set(rel.parts[:-1]) & SKIP_DIRS:
            yield path, rel


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def python_literals() -> list[str]:
    found = []
    for path, rel in _files(".py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "article" and isinstance(node.value, ast.Constant):
                found.append(f"{rel}:{node.lineno}: article={node.value.value!r}")
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docs:
                continue
            text = node.value
            if ART.search(text) or SUB.search(text) or BARE.match(text) or RANGE.search(text):
                found.append(f"{rel}:{node.lineno}: {text[:90]!r}")
    return found


def template_literals() -> list[str]:
    found = []
    for path, rel in _files(".html"):
        text = re.sub(r"\{#.*?#\}", lambda m: "\n" * m.group().count("\n"), path.read_text(encoding="utf-8"),
                      flags=re.S)
        for n, line in enumerate(text.splitlines(), start=1):
            if ART.search(line) or SUB.search(line) or CELL.search(line) or RANGE.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:110]}")
    return found


def test_no_article_literal_in_python_code():
    assert python_literals() == []


def test_no_article_literal_in_templates():
    assert template_literals() == []


def test_the_scan_finds_what_it_looks_for(tmp_path):
    """The patterns catch the literals the issue lists (so an empty result means something)."""
    for text in ('Art. 15.3', '(Art. 15.1)', '15.2(c)', 'Art. 15.5 a-j', 'under 15.2 a–k'):
        assert ART.search(text) or SUB.search(text) or RANGE.search(text), text
    assert BARE.match("15.3") and BARE.match("11.1.2") and BARE.match("15.5(")
    assert CELL.search("<td>15.2(b)</td>") and CELL.search("<td>12.2, 15.1</td>")
    for harmless in ("0.5", "15:00", "2015-10-11", "Decimal('0.20')", "v2 (3359bf66)", "3.0.3", "95.00"):
        assert not (ART.search(harmless) or SUB.search(harmless) or BARE.match(harmless)), harmless
