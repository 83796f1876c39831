"""Writing a call file in a test: the TOML and, beside it, the regulations' text whose SHA-256 it gives."""

from __future__ import annotations

import shutil
from pathlib import Path

from events.regulation import default_event_file


def write_call(directory: Path, name: str, text: str) -> Path:
    """Write `text` as `directory/name` with the 2015 regulations' text beside it; returns the TOML's path."""
    path = directory / name
    path.write_text(text, encoding="utf-8")
    src = default_event_file().parent / "fwwcm-2015-regulations.txt"
    if not (directory / src.name).exists():
        shutil.copy(src, directory / src.name)
    return path
