"""A second factor for signing in: TOTP (RFC 6238) with one-time recovery codes, and passkeys (WebAuthn).

The only code that changes a person's second factor. As in accounts.services: each function checks, changes rows,
flushes and writes the audit entry; none commits or reads the request; the caller passes the actor and the time.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

import pyotp
import segno
from argon2.exceptions import InvalidHashError, VerificationError
from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import delete, select, update

from accounts import services
from accounts.models import Passkey, RecoveryCode, SecondFactor, User
from core.auth import Role
from core.db import db, rowcount
from evidence import audit

ISSUER = "Gambit"
RECOVERY_CODES = 10
# One time-step either side of now is accepted: a phone's clock a little off, a code typed as it changed.
VALID_WINDOW = 1


class TwoFactorError(services.AccountError):
    """A code or a key that does not open the second step; the message says why, for the person who entered it."""


@dataclass(frozen=True)
class Policy:
    """The settings a check of a code needs (from the app's config; see config.py)."""

    key: str
    max_failures: int
    lock_minutes: int
    contact: str


def policy_from(config) -> Policy:
    return Policy(key=config["TWO_FACTOR_KEY"], max_failures=config["TWO_FACTOR_MAX_FAILURES"],
                  lock_minutes=config["TWO_FACTOR_LOCK_MINUTES"], contact=config["SECRETARIAT_CONTACT"])


def parse_required_roles(setting: str | None) -> frozenset[Role]:
    """The roles TWO_FACTOR_REQUIRED_ROLES names ("admin,board,wcoc"). Raises ValueError naming an unknown role."""
    roles = set()
    for part in (setting or "").replace(" ", ",").split(","):
        if not part.strip():
            continue
        try:
            roles.add(Role(part.strip().lower()))
        except ValueError:
            raise ValueError(f"TWO_FACTOR_REQUIRED_ROLES names {part.strip()!r}, which is no role: use "
                             f"{', '.join(r.value for r in Role)}, comma-separated.") from None
    return frozenset(roles)


def is_required(user: User, required: frozenset[Role]) -> bool:
    """Whether the user must sign in with a second factor: one of their roles requires it (`required`, from
    TWO_FACTOR_REQUIRED_ROLES), or the secretariat requires it of them (set_required). The one place that decides."""
    return user.two_factor_required or required_by_role(user, required)


def required_by_role(user: User, required: frozenset[Role]) -> bool:
    return bool(user.role_set & required)


def why_required(user: User, required: frozenset[Role]) -> str | None:
    """Why the user must sign in with a second factor, in words for the pages and `flask users`: "role", "set for
    them", both ("role; set for them"), or None when it is optional for them."""
    reasons = [why for why, holds in (("role", required_by_role(user, required)),
                                      ("set for them", user.two_factor_required)) if holds]
    return "; ".join(reasons) or None


def _requirer(user: User, required: frozenset[Role]) -> str:
    """Who requires the factor, for the person's own messages."""
    return "Your role requires" if required_by_role(user, required) else "The secretariat requires"


# ------------------------------------------------------------------------------------------------ reading


def factor_row(user: User) -> SecondFactor | None:
    return db.session.get(SecondFactor, user.id)


def has_totp(user: User) -> bool:
    row = factor_row(user)
    return row is not None and row.totp_secret is not None


def passkeys_of(user: User) -> list[Passkey]:
    return list(db.session.scalars(select(Passkey).where(Passkey.user_id == user.id).order_by(Passkey.id)))


def has_second_factor(user: User) -> bool:
    """Whether the user has enrolled an authenticator app or a passkey (recovery codes alone are not a factor)."""
    return has_totp(user) or db.session.scalars(select(Passkey.id).where(Passkey.user_id == user.id)
                                                .limit(1)).first() is not None


def recovery_codes_left(user: User) -> int:
    return len(db.session.scalars(select(RecoveryCode.id).where(RecoveryCode.user_id == user.id,
                                                                RecoveryCode.used_at.is_(None))).all())


# ------------------------------------------------------------------------------------------------ TOTP


def _fernet(key: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(key.encode()).digest()))


def seal(secret: str, key: str) -> str:
    """The TOTP secret sealed (Fernet) for the database or the session cookie."""
    return _fernet(key).encrypt(secret.encode()).decode()


def unseal(sealed: str, key: str) -> str:
    """The TOTP secret. Raises TwoFactorError when TWO_FACTOR_KEY is not the key it was sealed with."""
    try:
        return _fernet(key).decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise TwoFactorError("The authenticator app's secret cannot be read with this site's TWO_FACTOR_KEY: ask "
                             "the secretariat to reset your second factor.") from None


def new_totp_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, email: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=ISSUER)


def qr_svg(uri: str) -> str:
    """The otpauth:// address as an inline SVG QR code (segno), titled for screen readers."""
    return segno.make(uri, error="m").svg_inline(scale=4, border=2, title="QR code for your authenticator app",
                                                 dark="#000", light="#fff")


def _matching_step(secret: str, code: str, now: datetime) -> int | None:
    totp = pyotp.TOTP(secret)
    current = totp.timecode(now)
    for step in range(current - VALID_WINDOW, current + VALID_WINDOW + 1):
        if secrets.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def normalise_code(code: str) -> str:
    return "".join(ch for ch in (code or "") if ch.isalnum()).lower()


def is_totp_shape(code: str) -> bool:
    return len(code) == 6 and code.isdigit()


def enrol_totp(user: User, *, secret: str, code: str, policy: Policy, actor: User, now: datetime) -> list[str]:
    """Enrol the authenticator app whose secret is `secret`, once `code` proves the app shows its codes; returns
    a fresh set of recovery codes (shown once, stored hashed). Raises TwoFactorError for a wrong code."""
    entered = normalise_code(code)
    step = _matching_step(secret, entered, now) if is_totp_shape(entered) else None
    if step is None:
        raise TwoFactorError(f"That is not the code your authenticator app shows for this QR code (you entered "
                             f"“{code.strip()}”): enter the 6 digits it shows now.", "code")
    row = factor_row(user) or SecondFactor(user_id=user.id, failures=0)
    row.totp_secret = seal(secret, policy.key)
    row.totp_enrolled_at = now
    row.totp_last_step = step
    db.session.add(row)
    db.session.flush()
    audit.record("user.two_factor_totp_enrolled", user, actor=actor, now=now)
    return new_recovery_codes(user, actor=actor, now=now)


def remove_totp(user: User, *, password: str, required: frozenset[Role], actor: User, now: datetime) -> None:
    """Remove the authenticator app (the password proves the person). Raises AccountError for a wrong password,
    or when a second factor is required of the user (is_required) and no passkey would remain."""
    try:
        services.hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        raise services.AccountError("Your password is not correct: the authenticator app stays.",
                                    "password") from None
    row = factor_row(user)
    if row is None or row.totp_secret is None:
        raise services.AccountError("You have no authenticator app to remove.")
    if is_required(user, required) and not passkeys_of(user):
        raise services.AccountError(f"{_requirer(user, required)} a second factor: add a passkey before you remove "
                                    "the authenticator app.")
    row.totp_secret = None
    row.totp_enrolled_at = None
    db.session.flush()
    audit.record("user.two_factor_totp_removed", user, actor=actor, now=now)


# ------------------------------------------------------------------------------------------------ recovery codes


def new_recovery_codes(user: User, *, actor: User, now: datetime) -> list[str]:
    """Replace the user's recovery codes with RECOVERY_CODES new ones, returned once; only their hashes are kept."""
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    codes = [f"{c[:5]}-{c[5:]}" for c in (secrets.token_hex(5) for _ in range(RECOVERY_CODES))]
    for code in codes:
        db.session.add(RecoveryCode(user_id=user.id, code_hash=services.hasher.hash(normalise_code(code)),
                                    created_at=now))
    db.session.flush()
    audit.record("user.recovery_codes", user, actor=actor, now=now, data={"count": RECOVERY_CODES})
    return codes


def _use_recovery_code(user: User, entered: str, now: datetime) -> str | None:
    """"used" when `entered` is one of the user's recovery codes, now spent; "spent" when it was spent before;
    None when it is none of them."""
    rows = db.session.scalars(select(RecoveryCode).where(RecoveryCode.user_id == user.id)
                              .order_by(RecoveryCode.used_at.is_not(None), RecoveryCode.id)).all()
    for row in rows:
        try:
            services.hasher.verify(row.code_hash, entered)
        except (VerificationError, InvalidHashError):
            continue
        if row.used_at is not None:
            return "spent"
        # Compare-and-swap: two sign-ins with one code at once, one wins.
        result = db.session.execute(update(RecoveryCode).where(RecoveryCode.id == row.id,
                                                               RecoveryCode.used_at.is_(None))
                                    .values(used_at=now).execution_options(synchronize_session=False))
        return "used" if rowcount(result) == 1 else "spent"
    return None


# ------------------------------------------------------------------------------------------------ the second step


def _locked_message(user: User, row: SecondFactor, policy: Policy) -> str:
    until = row.locked_until.strftime("%H:%M") if row.locked_until else ""
    return (f"Too many wrong codes: the second step of signing in to {user.email} is locked until {until} UTC. "
            f"Try again then. If you have lost your authenticator app, your passkeys and your recovery codes, ask "
            f"{policy.contact} to reset your second factor.")


def check_not_locked(user: User, *, policy: Policy, now: datetime) -> None:
    """Raises TwoFactorError while the second step is locked after too many wrong codes."""
    row = factor_row(user)
    if row is not None and row.locked_until is not None and now < row.locked_until:
        raise TwoFactorError(_locked_message(user, row, policy), "code")


def record_failure(user: User, row: SecondFactor | None, message: str, *, policy: Policy,
                   now: datetime) -> TwoFactorError:
    """Count a wrong code or key (the caller commits it even though the sign-in fails) and lock the step at the
    limit; returns the error to raise, which says how many tries are left or until when the step is locked."""
    if row is None:
        row = factor_row(user) or SecondFactor(user_id=user.id, failures=0)
        db.session.add(row)
    row.failures += 1
    if row.failures >= policy.max_failures:
        row.failures = 0
        row.locked_until = now + timedelta(minutes=policy.lock_minutes)
        db.session.flush()
        audit.record("user.two_factor_locked", user, actor=user, now=now,
                     data={"minutes": policy.lock_minutes})
        return TwoFactorError(_locked_message(user, row, policy), "code")
    db.session.flush()
    left = policy.max_failures - row.failures
    return TwoFactorError(f"{message} After {left} more wrong code{'' if left == 1 else 's'} the second step is "
                          f"locked for {policy.lock_minutes} minutes.", "code")


def verify_code(user: User, code: str, *, policy: Policy, now: datetime) -> str:
    """Check the code of the second step: a TOTP code of the enrolled app (never one of a time-step already used)
    or an unused recovery code (spent by this). Returns "totp" or "recovery". Raises TwoFactorError, counting the
    failure, for a wrong, replayed or spent code, and while the step is locked."""
    check_not_locked(user, policy=policy, now=now)
    row = factor_row(user)
    if row is None:
        row = SecondFactor(user_id=user.id, failures=0)
        db.session.add(row)
    entered = normalise_code(code)
    shown = (code or "").strip()[:40]
    if is_totp_shape(entered) and row.totp_secret is not None:
        step = _matching_step(unseal(row.totp_secret, policy.key), entered, now)
        if step is not None and row.totp_last_step is not None and step <= row.totp_last_step:
            raise record_failure(user, row, f"That code (“{shown}”) has been used already: a code works once. Wait "
                                            "for your authenticator app to show the next one.", policy=policy, now=now)
        if step is not None:
            row.totp_last_step = step
            row.failures = 0
            row.locked_until = None
            db.session.flush()
            return "totp"
    elif entered and not is_totp_shape(entered):
        found = _use_recovery_code(user, entered, now)
        if found == "used":
            row.failures = 0
            row.locked_until = None
            db.session.flush()
            audit.record("user.recovery_code_used", user, actor=user, now=now,
                         data={"left": recovery_codes_left(user)})
            return "recovery"
        if found == "spent":
            raise record_failure(user, row, f"That recovery code (“{shown}”) has been used already: each works "
                                            "once.", policy=policy, now=now)
    raise record_failure(user, row, f"That code is not right (you entered “{shown}”): enter the 6 digits your "
                                    "authenticator app shows now, or one of your recovery codes.", policy=policy,
                         now=now)


# ------------------------------------------------------------------------------------------------ passkeys


def add_passkey(user: User, *, name: str, credential_id: str, public_key: str, sign_count: int, actor: User,
                now: datetime) -> Passkey:
    """Keep a verified WebAuthn credential under the name its owner gave. Raises AccountError for an empty or
    over-long name, or a key registered already."""
    name = " ".join((name or "").split())
    if not name:
        raise services.AccountError("Give the passkey a name, such as “YubiKey” or “Laptop”.", "name")
    if len(name) > 80:
        raise services.AccountError(f"A passkey's name has at most 80 characters (this one has {len(name)}).",
                                    "name")
    if db.session.scalars(select(Passkey.id).where(Passkey.credential_id == credential_id)).first() is not None:
        raise services.AccountError("This passkey is registered already.", "name")
    row = Passkey(user_id=user.id, name=name, credential_id=credential_id, public_key=public_key,
                  sign_count=sign_count, created_at=now)
    db.session.add(row)
    db.session.flush()
    audit.record("user.passkey_added", user, actor=actor, now=now, data={"passkey": row.id, "name": name})
    return row


def remove_passkey(user: User, passkey_id: int, *, required: frozenset[Role], actor: User, now: datetime) -> Passkey:
    """Remove one of the user's passkeys. Raises AccountError when it is not theirs, or when a second factor is
    required of them (is_required) and it is the last one."""
    row = db.session.get(Passkey, passkey_id)
    if row is None or row.user_id != user.id:
        raise services.AccountError("There is no such passkey on your account.")
    if is_required(user, required) and not has_totp(user) and len(passkeys_of(user)) == 1:
        raise services.AccountError(f"{_requirer(user, required)} a second factor: this is your last one. Add "
                                    "another passkey or an authenticator app first.")
    db.session.delete(row)
    db.session.flush()
    audit.record("user.passkey_removed", user, actor=actor, now=now, data={"passkey": passkey_id, "name": row.name})
    return row


def passkey_used(row: Passkey, *, sign_count: int, now: datetime) -> None:
    """Note a passkey's sign-in: its counter (a cloned key shows an old one) and when."""
    row.sign_count = sign_count
    row.last_used_at = now
    factor = db.session.get(SecondFactor, row.user_id)
    if factor is not None:
        factor.failures = 0
    db.session.flush()


# ------------------------------------------------------------------------------------------------ the secretariat


def reset(user: User, *, actor: User | None, now: datetime) -> None:
    """The secretariat removes every factor of a person who lost them (app, passkeys, recovery codes, lock) and
    ends their sessions: they enrol again at their next sign-in. Raises AccountError when there is nothing to
    reset."""
    row = factor_row(user)
    keys = passkeys_of(user)
    codes = db.session.scalars(select(RecoveryCode.id).where(RecoveryCode.user_id == user.id)).all()
    if (row is None or (row.totp_secret is None and row.locked_until is None)) and not keys and not codes:
        raise services.AccountError(f"{user.email} has no second factor to reset.")
    had = {"totp": row is not None and row.totp_secret is not None, "passkeys": len(keys),
           "recovery_codes": len(codes)}
    if row is not None:
        db.session.delete(row)
    db.session.execute(delete(Passkey).where(Passkey.user_id == user.id))
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    db.session.flush()
    services.end_sessions(user, actor=actor, now=now, reason="second factor reset")
    audit.record("user.two_factor_reset", user, actor=actor, now=now, data=had)


def set_required(user: User, on: bool, *, required: frozenset[Role], actor: User | None, now: datetime) -> str:
    """Require a second factor of this person whatever their roles (`on`), or lift that requirement; the role's
    requirement (TWO_FACTOR_REQUIRED_ROLES) is never lifted here. From their next request a session they opened
    without a second factor ends (accounts.views._second_factor_gate) and they set one up at their next sign-in; they
    cannot remove their last one. Returns what was done, for the secretariat. Raises AccountError when nothing
    would change."""
    by_role = required_by_role(user, required)
    role_note = (f" Their role ({user.role_labels}) still requires one (TWO_FACTOR_REQUIRED_ROLES): lifting the "
                 "requirement set for them does not lift their role's." if by_role else "")
    if on == user.two_factor_required:
        if on:
            raise services.AccountError(f"A second factor is already required of {user.email}: nothing changed.")
        raise services.AccountError(f"No second factor was required of {user.email} individually: nothing to lift."
                                    f"{role_note}")
    user.two_factor_required = on
    db.session.flush()
    audit.record("user.two_factor_required" if on else "user.two_factor_requirement_lifted", user, actor=actor,
                 now=now, data={"by_role": by_role})
    if not on:
        return (f"A second factor is no longer required of {user.email} individually."
                f"{role_note or ' It is optional for them again.'}")
    done = (f"A second factor is now required of {user.email}: "
            + ("they keep the one they have and cannot remove their last one; a session they opened without it ends "
               "at its next request." if has_second_factor(user) else
               "a session they opened without one ends at its next request, and they set one up when they next sign "
               "in."))
    if by_role:
        done += f" Their role ({user.role_labels}) requires one as well; this stays if their role changes."
    return done


def report(required: frozenset[Role]) -> list[tuple[User, str | None, bool, bool]]:
    """Every active account with (user, why a second factor is required (why_required) or None, has an app,
    passkey count > 0), by email."""
    users = db.session.scalars(select(User).where(User.active.is_(True)).order_by(User.email)).all()
    apps = set(db.session.scalars(select(SecondFactor.user_id).where(SecondFactor.totp_secret.is_not(None))))
    keyed = set(db.session.scalars(select(Passkey.user_id)))
    return [(u, why_required(u, required), u.id in apps, u.id in keyed) for u in users]
