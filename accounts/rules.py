"""Account rules: the password policy and the shape of a FIDE federation code. Pure; no Flask."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

COMMON_PASSWORDS_FILE = Path(__file__).resolve().parent.parent / "seed_data" / "common-passwords.txt"
FEDERATION_CODE = re.compile(r"^[A-Z]{3}$")


@lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    lines = COMMON_PASSWORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


def password_problem(password: str, *, min_length: int, email: str = "") -> str | None:
    """Why a password is refused, or None. Length first, then the list of common passwords."""
    if len(password) < min_length:
        return f"Use at least {min_length} characters (this one has {len(password)})."
    lowered = password.lower()
    if lowered in common_passwords():
        return "This password is on a list of common passwords; choose one that is harder to guess."
    if len(set(lowered)) <= 2:
        return "This password repeats one or two characters; choose one that is harder to guess."
    local = email.split("@", 1)[0].lower()
    if local and len(local) >= 4 and local in lowered:
        return "Do not build the password from your email address."
    return None


def normalise_email(email: str) -> str:
    return email.strip().lower()
