"""Small URL helpers."""

from __future__ import annotations

from urllib.parse import urlsplit


def safe_next(target: str | None) -> str | None:
    """A same-site path to return to after login, or None (never an open redirect)."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    return target
