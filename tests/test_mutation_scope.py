"""`make mutate`'s scope (.ci/mutate.py) and mutmut's settings (pyproject.toml) name the same files: a module moved or
split without both following makes every mutation run of it fail to import the app, or find no mutant, long after the
change (the run is not part of `make test`). Checked here, where a move is seen at once."""

from __future__ import annotations

import fnmatch
import importlib.util
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _scope():
    spec = importlib.util.spec_from_file_location("gambit_mutate", ROOT / ".ci" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up while it is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.SCOPE


MUTMUT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def _mutated(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in MUTMUT["only_mutate"])


def test_every_module_of_the_scope_is_copied_and_mutated_and_its_tests_exist():
    problems = []
    for name, scope in _scope().items():
        for glob in scope.mutants:
            module = glob.split(".x_")[0].split(".xǁ")[0].removesuffix(".*")
            path = module.replace(".", "/") + ".py"
            if (ROOT / module.replace(".", "/")).is_dir():  # a package ("contracts.rules.*"): its modules
                path = next(str(f.relative_to(ROOT)) for f in sorted((ROOT / module.replace(".", "/")).glob("*.py"))
                            if f.name != "__init__.py")
            if not (ROOT / path).exists():
                problems.append(f"{name}: {glob} names {path}, which does not exist")
            if path.split("/")[0] not in MUTMUT["source_paths"]:
                problems.append(f"{name}: {path} is outside mutmut's source_paths (it is not copied into mutants/)")
            if not _mutated(path):
                problems.append(f"{name}: {path} is not in mutmut's only_mutate (it has no mutant)")
        problems += [f"{name}: test file {t} does not exist" for t in scope.tests
                     if not (ROOT / t.split("::")[0]).exists()]
    assert not problems, "\n".join(problems)


def test_every_top_level_package_the_app_imports_is_copied_into_mutants():
    """mutmut runs the tests in its copy, with the original tree off sys.path: a package neither mutated nor copied
    makes app.py fail to import there."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    copied = set(MUTMUT["source_paths"]) | {c.rstrip("/") for c in MUTMUT["also_copy"]}
    assert packages <= copied, f"not copied into mutants/: {sorted(packages - copied)}"
