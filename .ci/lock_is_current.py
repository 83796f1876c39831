"""Fails when a lock file lags its requirements file: every `name==version` pinned in requirements.txt and
requirements-dev.txt must be pinned, at that version, in requirements.lock and requirements-dev.lock (regenerate
them with `make lock`). Run by `make lint`."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\#]+)")


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """{normalised name: version} for every `name==version` line of `path` (a requirements or lock file)."""
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[_name(match.group(1))] = match.group(2)
    return found


def main() -> int:
    problems = []
    for source, lock in (("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock")):
        locked = pins(ROOT / lock)
        wanted = pins(ROOT / source)
        if source == "requirements-dev.txt":
            wanted |= pins(ROOT / "requirements.txt")  # included with -r
        for name, version in sorted(wanted.items()):
            if locked.get(name) != version:
                problems.append(f"{lock}: {name} is {locked.get(name, 'missing')}, {source} pins {version}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print("The lock files are out of date: run `make lock`.", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
