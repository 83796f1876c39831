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


# (marker in the User-Agent, name shown), the first that matches wins: Edge and Opera also say "Chrome", Chrome also
# says "Safari", so the more particular come first.
_BROWSERS = (("Edg/", "Edge"), ("EdgA/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"),
             ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("Chromium/", "Chromium"), ("CriOS/", "Chrome"),
             ("HeadlessChrome/", "Chromium"), ("Chrome/", "Chrome"), ("Safari/", "Safari"), ("curl/", "curl"),
             ("python-requests/", "a Python script"))
_SYSTEMS = (("Windows", "Windows"), ("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iPadOS"),
            ("CrOS", "ChromeOS"), ("Mac OS X", "macOS"), ("Macintosh", "macOS"), ("Linux", "Linux"))


def browser_summary(user_agent: str) -> str:
    """The browser and system a User-Agent names, in plain words ("Chromium on Linux", "Safari on iOS"), for the list
    of a person's sessions; "An unknown browser" when it names neither. Only a hint: a browser may say anything."""
    browser = next((name for marker, name in _BROWSERS if marker in user_agent), None)
    system = next((name for marker, name in _SYSTEMS if marker in user_agent), None)
    if browser and system:
        return f"{browser} on {system}"
    if browser or system:
        return browser or f"A browser on {system}"
    return "An unknown browser"


# Why a session ended, as its row keeps it and the audit entry names it. The older reasons ("logout", "password
# changed", "password reset", "deactivated") are the ones the audit log held before the sessions were listed.
SIGNED_OUT_ELSEWHERE = "signed out from another session"
ENDED_BY_SECRETARIAT = "ended by the secretariat"
SIGNED_IN_AGAIN = "signed in again in the same browser"

# What a browser whose session has ended is told, by the reason its row keeps ("" for any other).
SESSION_ENDED = {
    SIGNED_OUT_ELSEWHERE: "This session was signed out from another device; please log in again.",
    ENDED_BY_SECRETARIAT: "This session was ended by the FIDE secretariat; please log in again.",
    "logout": "This session ended when you logged out on another device; please log in again.",
    "password changed": "This session ended because the account's password was changed; please log in again with "
                        "the new password.",
    "password reset": "This session ended because a new password was set for the account; please log in again with "
                      "the new password.",
    "": "Your session has ended; please log in again.",
}
SESSION_UNKNOWN = SESSION_ENDED[""]
SESSIONS_BEFORE_UPGRADE = ("Gambit now lists every place you are signed in, and this session began before it did: "
                           "please log in again.")
