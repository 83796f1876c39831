"""Account rules: the password policy and the shape of a FIDE federation code. Pure; no Flask."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from core.auth import Role

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


# Gambit's rule on conflicts of interest (DESIGN: "never a bidder's and a reviewer's role in the same call"), not
# an article of the regulations: a bidding account reads its own bid only, so it cannot also score or vote.
REVIEWER_ROLES = frozenset({Role.WCOC, Role.BOARD})


def role_combination_problem(role_set) -> str | None:
    """Why these roles cannot be held together (None: they can)."""
    if Role.BIDDER in role_set and role_set & REVIEWER_ROLES:
        reviewer = " and ".join(r.label for r in sorted(role_set & REVIEWER_ROLES))
        return (f"An account cannot be both a bidder and a reviewer ({reviewer}): whoever bids neither scores nor "
                "votes, nor reads rival bids. Give the reviewer a separate account.")
    return None
