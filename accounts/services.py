"""The only code that changes accounts: each function checks, changes rows, flushes and writes the audit entry.

None of them commits or reads the request; the caller passes the actor and the time.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadSignature, SignatureExpired, TimestampSigner, URLSafeTimedSerializer
from sqlalchemy import and_, select, update
from sqlalchemy.exc import IntegrityError

from accounts.models import ApiToken, User, UserRole, UserSession
from accounts.rules import (
    FEDERATION_CODE,
    SESSION_ENDED,
    SESSION_UNKNOWN,
    SESSIONS_BEFORE_UPGRADE,
    SIGNED_IN_AGAIN,
    SIGNED_OUT_ELSEWHERE,
    browser_summary,
    normalise_email,
    password_problem,
    role_combination_problem,
)
from core.auth import Role
from core.db import db, rowcount
from core.validators import one_line_problem
from evidence import audit

# argon2id with the library's defaults (RFC 9106 low-memory profile); tests may lower the cost.
hasher = PasswordHasher()
TOKEN_PREFIX = "gbt_"


class AccountError(ValueError):
    """A request about an account that cannot be met; the message says why, for the person who asked."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def configure_hasher(time_cost: int | None = None, memory_cost: int | None = None) -> None:
    global hasher
    kwargs: dict[str, Any] = {}
    if time_cost:
        kwargs["time_cost"] = time_cost
    if memory_cost:
        kwargs["memory_cost"] = memory_cost
    hasher = PasswordHasher(**kwargs)


def _new_nonce() -> str:
    return secrets.token_hex(16)


def find_user_by_email(email: str) -> User | None:
    return db.session.scalars(select(User).where(User.email == normalise_email(email))).first()


def _check_role_combination(role_set) -> None:
    problem = role_combination_problem(role_set)
    if problem:
        raise AccountError(problem, "roles")


def _check_one_line(**texts: str | None) -> None:
    """Names are one line wherever they come from (a form, `flask users create`): a line break stored in a name
    would reach every message and document that prints it. Raises AccountError for the first that is not."""
    for field, value in texts.items():
        problem = one_line_problem(value, what=field.capitalize())
        if problem:
            raise AccountError(problem, field)


def _check_one_president(user: User | None, is_president: bool) -> None:
    """There is one FIDE President at a time (Gambit's rule: the President alone may decide for the Board)."""
    if not is_president:
        return
    query = select(User).where(User.is_president.is_(True))
    if user is not None and user.id is not None:
        query = query.where(User.id != user.id)
    other = db.session.scalars(query.limit(1)).first()
    if other is not None:
        raise AccountError(f"{other.email} is already the FIDE President, and there is one President at a time. "
                           "Remove the title from that account first.", "is_president")


def create_user(*, email: str, password: str, name: str, roles: Iterable[Role | str], actor: User | None, now: datetime,
                organisation: str = "", federation: str | None = None, applicant_type: str | None = None,
                is_president: bool = False, min_password_length: int = 12, confirmed: bool = True) -> User:
    """Create an account. Raises AccountError (with the field) for a taken email, a weak password, an unknown
    role, a malformed federation code, a name or organisation with a line break or a control character, or a
    President who is not a board member or not the only one. With
    `confirmed=False` (self-registration) the account stays inactive until its address is confirmed."""
    _check_one_line(name=name, organisation=organisation)
    email = normalise_email(email)
    if find_user_by_email(email):
        raise AccountError(f"An account with the email {email} already exists; log in instead.", "email")
    problem = password_problem(password, min_length=min_password_length, email=email)
    if problem:
        raise AccountError(problem, "password")
    try:
        role_set = {Role(r) for r in roles}
    except ValueError as exc:
        raise AccountError(f"Unknown role: {exc}", "roles") from None
    if not role_set:
        raise AccountError("Give the account at least one role.", "roles")
    if federation is not None and federation != "" and not FEDERATION_CODE.match(federation):
        raise AccountError(f"A FIDE federation code is three capital letters (you entered {federation!r}).",
                           "federation")
    if is_president and Role.BOARD not in role_set:
        raise AccountError("The FIDE President sits on the Presidential Board: give the account the board role.",
                           "is_president")
    _check_role_combination(role_set)
    _check_one_president(None, is_president)
    user = User(email=email, password_hash=hasher.hash(password), name=name, organisation=organisation,
                federation=federation or None, applicant_type=applicant_type, is_president=is_president,
                active=confirmed, session_nonce=_new_nonce(), created_at=now, password_changed_at=now,
                email_confirmed_at=now if confirmed else None,
                roles=[UserRole(role=r.value) for r in sorted(role_set)])
    try:
        with db.session.begin_nested():
            db.session.add(user)
    except IntegrityError:
        # Two registrations of one address (or two Presidents) at the same moment: the database's unique index
        # decides, and the loser gets the same refusal as the check above.
        _check_one_president(None, is_president)
        raise AccountError(f"An account with the email {email} already exists; log in instead.", "email") from None
    audit.record("user.create", user, actor=actor or user, now=now,
                 data={"email": email, "roles": sorted(r.value for r in role_set), "president": is_president,
                       "federation": user.federation})
    return user


def register_bidder(*, email: str, password: str, name: str, organisation: str, applicant_type: str,
                    federation: str, now: datetime, min_password_length: int = 12,
                    confirm_window: timedelta = timedelta(hours=48)) -> tuple[User, bool]:
    """A federation or a sponsor registers itself (Art. 15.1). Returns (account, True) for an account waiting
    for its address to be confirmed (email it `confirmation_token`), or (the existing account, False) when the
    address already has one: the caller answers the same either way, so the form does not tell which addresses
    have accounts, and emails the owner a note instead. An account never confirmed within `confirm_window` is
    registered afresh. Raises AccountError for input wrong whoever owns the address (weak password, federation
    code, applicant type, a name or organisation that is not one line)."""
    _check_one_line(name=name, organisation=organisation)
    if applicant_type not in ("federation", "sponsor"):
        raise AccountError("Choose whether you bid as a member federation or as a sponsor.",
                           "applicant_type")
    email = normalise_email(email)
    problem = password_problem(password, min_length=min_password_length, email=email)
    if problem:
        raise AccountError(problem, "password")
    if federation and not FEDERATION_CODE.match(federation):
        raise AccountError(f"A FIDE federation code is three capital letters (you entered {federation!r}).",
                           "federation")
    existing = find_user_by_email(email)
    if existing is None:
        try:
            return create_user(email=email, password=password, name=name, organisation=organisation,
                               federation=federation, applicant_type=applicant_type, roles=[Role.BIDDER],
                               actor=None, now=now, min_password_length=min_password_length,
                               confirmed=False), True
        except AccountError as exc:  # registered at the same moment by another request
            if exc.field != "email":
                raise
            existing = find_user_by_email(email)
            assert existing is not None  # the account the other request made
    password_hash = hasher.hash(password)  # the same work as a new account, so the time does not tell either
    if existing.email_confirmed_at is None and existing.created_at <= now - confirm_window and not existing.active:
        # Never confirmed and its link expired: whoever holds the address may register it again.
        existing.password_hash, existing.name, existing.organisation = password_hash, name, organisation
        existing.federation, existing.applicant_type = federation or None, applicant_type
        existing.created_at = existing.password_changed_at = now
        existing.session_nonce = _new_nonce()
        db.session.flush()
        audit.record("user.register_again", existing, actor=existing, now=now, data={"email": email})
        return existing, True
    audit.record("user.register_taken", existing, actor=None, now=now, data={"email": email})
    return existing, False


CONFIRM_SALT = "gambit-confirm-email"


def confirmation_token(user: User, *, secret: str) -> str:
    """A signed, timed token for the link that confirms `user`'s address. It names the account, the address and
    a fingerprint of the password hash, so a registration made again since makes the older links void."""
    return URLSafeTimedSerializer(secret, salt=CONFIRM_SALT).dumps(
        {"user": user.id, "email": user.email, "pw": hashlib.sha256(user.password_hash.encode()).hexdigest()[:16]})


def confirm_email(token: str, *, secret: str, max_age: timedelta, now: datetime) -> User:
    """Confirm the address of a registration from its emailed link, and activate the account. Raises
    AccountError when the link is altered or cut short, expired, replaced by a later registration, or already
    used. Writes `user.email_confirmed` to the audit log."""
    serializer = URLSafeTimedSerializer(secret, salt=CONFIRM_SALT)
    try:
        data = serializer.loads(token, max_age=int(max_age.total_seconds()))
    except SignatureExpired:
        raise AccountError(f"This confirmation link has expired (links are valid for "
                           f"{int(max_age.total_seconds() // 3600)} hours): register again.") from None
    except BadSignature:
        raise AccountError("This confirmation link is not valid: it was changed or cut short. Open the link from "
                           "the email as it is.") from None
    user = db.session.get(User, data.get("user")) if isinstance(data, dict) else None
    if user is None or user.email != data.get("email"):
        raise AccountError("This confirmation link is not valid: its account no longer exists.")
    if user.email_confirmed_at is not None:
        raise AccountError("This address is confirmed already: log in.")
    if hashlib.sha256(user.password_hash.encode()).hexdigest()[:16] != data.get("pw"):
        raise AccountError("This confirmation link was replaced: the address was registered again since. Use the "
                           "link in the latest email.")
    user.email_confirmed_at = now
    user.active = True
    db.session.flush()
    audit.record("user.email_confirmed", user, actor=user, now=now, data={"email": user.email})
    return user


def confirm_by_secretariat(user: User, *, actor: User, now: datetime) -> User:
    """The secretariat confirms a registration whose owner cannot follow the emailed link (mail is off, or the
    message did not arrive): the address counts as confirmed and the account opens, as the link would have done.
    Two confirmations at once: one changes the account, the other is refused. Raises AccountError when the address
    is confirmed already. Writes `user.confirmed_by_secretariat` to the audit log."""
    done = rowcount(db.session.execute(
        update(User).where(User.id == user.id, User.email_confirmed_at.is_(None))
        .values(email_confirmed_at=now, active=True).execution_options(synchronize_session=False)))
    if not done:
        raise AccountError(f"{user.email} is confirmed already: nothing changed.")
    db.session.refresh(user)
    audit.record("user.confirmed_by_secretariat", user, actor=actor, now=now, data={"email": user.email})
    return user


RESET_SALT = "gambit-reset-password"
RESET_LINK_GONE = "This link to set a new password no longer works. Ask for a new one on the sign-in page."


def _password_fingerprint(user: User) -> str:
    # The link is signed over the password's hash: once a password is set (by this link or any other way), the
    # hash changes and every link sent before stops working, so a link is good for one use.
    return hashlib.sha256(f"{user.id}:{user.password_hash}".encode()).hexdigest()[:32]


def _reset_serializer(secret: str, signed_at: datetime | None = None) -> URLSafeTimedSerializer:
    class Signer(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(signed_at.timestamp()) if signed_at is not None else super().get_timestamp()

    return URLSafeTimedSerializer(secret, salt=RESET_SALT, signer=Signer)


def request_password_reset(email: str, *, now: datetime) -> User | None:
    """Someone asks for a link to set a new password for `email`. Returns the account to email the link to
    (`password_reset_token`), or None for an address with no active account: the caller answers the same either
    way and sends nothing then, so the form tells nobody which addresses have accounts. Writes
    `user.password_reset_requested` for an active account. Raises nothing."""
    user = find_user_by_email(email)
    if user is None or not user.active:
        return None
    audit.record("user.password_reset_requested", user, actor=None, now=now, data={"email": user.email})
    return user


def password_reset_token(user: User, *, secret: str, now: datetime) -> str:
    """A signed link token, dated `now`, that lets its holder set `user`'s password once: it names the account
    and a fingerprint of its password hash, so setting the password makes it (and every older one) void."""
    return _reset_serializer(secret, now).dumps({"user": user.id, "pw": _password_fingerprint(user)})


def user_for_reset_token(token: str, *, secret: str, max_age: timedelta, now: datetime) -> User:
    """The active account whose password the link may set. Raises AccountError when the link was altered or cut
    short, is older than `max_age`, was used already (the password changed since), or its account is gone or
    deactivated; the last two get one neutral message, which does not say whether the account exists."""
    try:
        data, signed = _reset_serializer(secret).loads(token, return_timestamp=True)
    except BadSignature:
        raise AccountError("This link to set a new password is not valid: it was changed or cut short. Open the link "
                           "from the email as it is.") from None
    if now - signed > max_age:
        hours = max_age.total_seconds() / 3600
        raise AccountError(f"This link to set a new password has expired (links are valid for {hours:g} hour"
                           f"{'' if hours == 1 else 's'}): ask for a new one on the sign-in page.")
    user = db.session.get(User, data.get("user")) if isinstance(data, dict) and isinstance(data.get("user"), int) \
        else None
    if user is None or not user.active or not secrets.compare_digest(_password_fingerprint(user),
                                                                     str(data.get("pw"))):
        raise AccountError(RESET_LINK_GONE)
    return user


def reset_password(token: str, *, new: str, secret: str, max_age: timedelta, now: datetime,
                   min_password_length: int = 12) -> User:
    """Set a new password with an emailed link: the link stops working, every session of the account ends and
    every API token is revoked. Raises AccountError as `user_for_reset_token` does, or with the field
    `new_password` for a weak password. Writes `user.password_reset` to the audit log."""
    user = user_for_reset_token(token, secret=secret, max_age=max_age, now=now)
    problem = password_problem(new, min_length=min_password_length, email=user.email)
    if problem:
        raise AccountError(problem, "new_password")
    # A compare-and-swap on the hash the link was checked against: of two uses of one link at once, one sets the
    # password and the other is refused, as a link used before is.
    result = db.session.execute(update(User).where(User.id == user.id, User.password_hash == user.password_hash)
                                .values(password_hash=hasher.hash(new), password_changed_at=now)
                                .execution_options(synchronize_session=False))
    if rowcount(result) != 1:
        raise AccountError(RESET_LINK_GONE)
    db.session.refresh(user)
    revoke_all_tokens(user, actor=user, now=now, reason="password reset")
    end_sessions(user, actor=user, now=now, reason="password reset")
    audit.record("user.password_reset", user, actor=user, now=now, data={"email": user.email})
    return user


def authenticate(email: str, password: str) -> tuple[User | None, str | None]:
    """The active user with that email and password, else None (the same answer whichever was wrong), and the
    password's new hash when the stored one was made with other argon2 settings (else None). Only reads: the
    caller verifies outside the write lock, then stores the new hash with the login (`record_login`)."""
    user = find_user_by_email(email)
    if user is None:
        # Spend the same time as a real check, so the answer does not tell which emails exist.
        try:
            hasher.verify(_DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            pass
        return None, None
    try:
        hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None, None
    if not user.active:
        return None, None
    return user, hasher.hash(password) if hasher.check_needs_rehash(user.password_hash) else None


_DUMMY_HASH = PasswordHasher().hash("not a real password, only a timing equaliser")


def record_login(user: User, *, now: datetime, new_hash: str | None = None, verified_hash: str | None = None,
                 record: bool = True, second_factor: str | None = None) -> bool:
    """The login in the audit log; the password's hash replaced when `authenticate` made a new one. Called in the
    write transaction after the password was verified outside it (`verified_hash`: the hash it was verified
    against): when the account changed in between (its password changed, or it was deactivated), nothing is
    recorded and False is returned, so the login is refused rather than made with an old password. `record=False`:
    the password step of a sign-in that has a second step to come (recorded then, with `second_factor`)."""
    if verified_hash is not None and (user.password_hash != verified_hash or not user.active):
        return False
    if new_hash is not None:
        user.password_hash = new_hash
    if record:
        audit.record("user.login", user, actor=user, now=now,
                     data={"second_factor": second_factor} if second_factor else None)
    return True


def end_sessions(user: User, *, actor: User | None, now: datetime, reason: str, keep: int | None = None) -> int:
    """End the user's sessions: every one (logout, deactivation, a new password, the secretariat), or every one but
    the session `keep` (the owner's "sign out everywhere else"). Every one also rotates the session nonce, so that a
    cookie naming no session row dies as well. The one place sessions end in bulk: every path comes here. Returns how
    many rows ended; writes `user.sessions_ended` (with `keep`, only when one did). Raises nothing of its own."""
    query = update(UserSession).where(UserSession.user_id == user.id, UserSession.ended_at.is_(None))
    if keep is not None:
        query = query.where(UserSession.id != keep)
    else:
        user.session_nonce = _new_nonce()
    count = rowcount(db.session.execute(query.values(ended_at=now, ended_reason=reason)
                                        .execution_options(synchronize_session=False)))
    db.session.flush()
    if keep is None or count:
        audit.record("user.sessions_ended", user, actor=actor, now=now, data={"reason": reason})
    return count


def log_out(user: User, *, actor: User, now: datetime) -> int:
    """Log the user out everywhere: end every session and revoke every API token (a token must not outlive the
    logout that a user takes to end their access). Returns how many tokens were revoked. Raises nothing."""
    revoked = revoke_all_tokens(user, actor=actor, now=now, reason="logged out")
    end_sessions(user, actor=actor, now=now, reason="logout")
    return revoked


def change_password(user: User, *, current: str, new: str, actor: User, now: datetime, min_password_length: int = 12,
                    check_current: bool = True) -> None:
    """Set a new password, end every other session and revoke every API token. Raises AccountError for a wrong
    current password or a weak new one."""
    if check_current:
        try:
            hasher.verify(user.password_hash, current)
        except (VerificationError, InvalidHashError):
            raise AccountError("Your current password is not correct.", "current_password") from None
    problem = password_problem(new, min_length=min_password_length, email=user.email)
    if problem:
        raise AccountError(problem, "new_password")
    user.password_hash = hasher.hash(new)
    user.password_changed_at = now
    revoke_all_tokens(user, actor=actor, now=now, reason="password changed")
    end_sessions(user, actor=actor, now=now, reason="password changed")


def set_active(user: User, active: bool, *, actor: User, now: datetime) -> None:
    """Activate or deactivate an account; deactivation ends its sessions and revokes its API token.
    Raises AccountError when an admin tries to deactivate themselves."""
    if not active and actor is not None and actor.id == user.id:
        raise AccountError("You cannot deactivate your own account.")
    if user.active == active:
        return
    user.active = active
    if not active:
        revoke_all_tokens(user, actor=actor, now=now, reason="account deactivated")
        end_sessions(user, actor=actor, now=now, reason="deactivated")
    audit.record("user.activate" if active else "user.deactivate", user, actor=actor, now=now)


def update_roles(user: User, *, roles: Iterable[Role | str], is_president: bool, federation: str | None, actor: User,
                 now: datetime) -> None:
    """Replace a user's roles. Raises AccountError for no role, a President off the board or a second President,
    or an admin removing their own admin role."""
    role_set = {Role(r) for r in roles}
    if not role_set:
        raise AccountError("Give the account at least one role.", "roles")
    if is_president and Role.BOARD not in role_set:
        raise AccountError("The FIDE President sits on the Presidential Board: give the account the board role.",
                           "is_president")
    _check_one_president(user, is_president)
    if actor is not None and actor.id == user.id and Role.ADMIN not in role_set:
        raise AccountError("You cannot remove your own admin role.", "roles")
    _check_role_combination(role_set)
    if federation and not FEDERATION_CODE.match(federation):
        raise AccountError(f"A FIDE federation code is three capital letters (you entered {federation!r}).",
                           "federation")
    before = sorted(r.value for r in user.role_set)
    keep = {r.role: r for r in user.roles}
    try:
        # The changes are made inside the savepoint: begin_nested() flushes what is pending before it starts.
        with db.session.begin_nested():
            user.roles = [keep.get(r.value) or UserRole(role=r.value) for r in sorted(role_set)]
            user.is_president = is_president
            user.federation = federation or None
            db.session.flush()
    except IntegrityError:  # another account named President at the same moment (uq_user_one_president)
        _check_one_president(user, is_president)
        raise
    audit.record("user.roles", user, actor=actor, now=now,
                 data={"before": before, "after": sorted(r.value for r in role_set), "president": is_president,
                       "federation": user.federation})


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# A token's last use is written at most this often, so a script polling the API does not write on every call.
LAST_USED_GRANULARITY = timedelta(minutes=1)


def issue_api_token(user: User, *, actor: User, now: datetime) -> str:
    """Make a new API token beside the others and return it (shown once); only its SHA-256 is stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(user_id=user.id, token_hash=_token_digest(token), created_at=now)
    db.session.add(row)
    db.session.flush()
    audit.record("user.api_token", user, actor=actor, now=now, data={"token": row.id})
    return token


def tokens_of(user: User) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included (they show when and why they stopped)."""
    return list(db.session.scalars(select(ApiToken).where(ApiToken.user_id == user.id)
                                   .order_by(ApiToken.id.desc())))


def revoke_token(user: User, token_id: int, *, actor: User, now: datetime) -> ApiToken:
    """Revoke one of the user's tokens. Raises AccountError if it is not theirs or already revoked."""
    row = db.session.get(ApiToken, token_id)
    if row is None or row.user_id != user.id:
        raise AccountError("There is no such API token on your account.")
    result = db.session.execute(update(ApiToken).where(ApiToken.id == row.id, ApiToken.revoked_at.is_(None))
                                .values(revoked_at=now, revoked_reason="revoked by its owner")
                                .execution_options(synchronize_session=False))
    if rowcount(result) != 1:
        raise AccountError(f"API token {row.id} is revoked already.")
    db.session.refresh(row)
    audit.record("user.api_token_revoke", user, actor=actor, now=now, data={"token": row.id})
    return row


def revoke_all_tokens(user: User, *, actor: User, now: datetime, reason: str) -> int:
    """Revoke every live token of the user; returns how many. Writes the audit entry when there were any."""
    result = db.session.execute(update(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
                                .values(revoked_at=now, revoked_reason=reason)
                                .execution_options(synchronize_session=False))
    count = rowcount(result)
    if count:
        audit.record("user.api_tokens_revoked", user, actor=actor, now=now,
                     data={"count": count, "reason": reason})
    return count


def user_for_token(token: str, *, now: datetime | None = None) -> User | None:
    """The active user whose live API token this is, else None. Notes the token's last use (at most once a
    minute; the caller commits)."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    row = db.session.scalars(select(ApiToken).where(ApiToken.token_hash == _token_digest(token),
                                                    ApiToken.revoked_at.is_(None))).first()
    if row is None:
        return None
    user = db.session.get(User, row.user_id)
    if user is None or not user.active:
        return None
    if now is not None and (row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY):
        row.last_used_at = now
        db.session.flush()
    return user


@dataclass(frozen=True)
class SessionCheck:
    """What a session cookie names: the user it lets in and its session row, or neither and why (`refused`, for the
    person; None where a cookie names no one the old way: a rotated nonce, an account deactivated or gone)."""

    user: User | None = None
    row: UserSession | None = None
    refused: str | None = None


def load_session_user(session_id: str, ref: str | None) -> SessionCheck:
    """Flask-Login's loader: "<id>:<nonce>" and the session's reference, read in one statement. A rotated nonce, an
    inactive account, or a session row that is ended or missing lets no one in. Raises nothing of its own."""
    user_id, _, nonce = session_id.partition(":")
    if not user_id.isdigit() or not nonce:
        return SessionCheck()
    if not ref:  # a cookie from before the sessions were listed (or a hand-made one)
        return SessionCheck(refused=SESSIONS_BEFORE_UPGRADE)
    found = db.session.execute(
        select(User, UserSession).outerjoin(UserSession, and_(UserSession.user_id == User.id,
                                                              UserSession.ref_hash == _token_digest(ref)))
        .where(User.id == int(user_id))).first()
    if found is None:
        return SessionCheck()
    user, row = found
    if row is None:
        return SessionCheck(refused=SESSION_UNKNOWN)
    if row.ended_at is not None:
        return SessionCheck(row=row, refused=SESSION_ENDED.get(row.ended_reason, SESSION_ENDED[""]))
    if not user.active or not secrets.compare_digest(user.session_nonce, nonce):
        return SessionCheck()
    return SessionCheck(user=user, row=row)


# A session's last activity is written at most this often, so that browsing does not write on every request.
SEEN_GRANULARITY = timedelta(minutes=1)


def start_session(user: User, *, now: datetime, user_agent: str, address: str, replaces: str | None = None) -> str:
    """Record a new signed-in browser of `user`; returns the reference its cookie carries (only its SHA-256 is
    stored). `replaces`: the reference this browser's cookie held before (a login over a login, of this account or
    another), whose row ends here rather than stay listed until it times out. Flushes; raises what the database
    raises."""
    if replaces:
        db.session.execute(update(UserSession).where(UserSession.ref_hash == _token_digest(replaces),
                                                     UserSession.ended_at.is_(None))
                           .values(ended_at=now, ended_reason=SIGNED_IN_AGAIN)
                           .execution_options(synchronize_session=False))
    ref = secrets.token_urlsafe(32)
    db.session.add(UserSession(user_id=user.id, ref_hash=_token_digest(ref), created_at=now, last_seen_at=now,
                               browser=browser_summary(user_agent)[:80], address=address[:64]))
    db.session.flush()
    return ref


def note_session_seen(ref: str, *, now: datetime) -> None:
    """Note that the session `ref` was used at `now` (the caller asks at most once per SEEN_GRANULARITY). An ended
    or unknown session is left as it is. Raises what the database raises."""
    db.session.execute(update(UserSession).where(UserSession.ref_hash == _token_digest(ref),
                                                 UserSession.ended_at.is_(None), UserSession.last_seen_at < now)
                       .values(last_seen_at=now).execution_options(synchronize_session=False))


def live_sessions(user: User, *, now: datetime, idle: timedelta, absolute: timedelta) -> list[UserSession]:
    """The user's sessions still able to act at `now`: not ended, begun within `absolute` and used within `idle`
    (give or take SEEN_GRANULARITY, how often use is written); the most recently used first. Raises nothing."""
    return list(db.session.scalars(
        select(UserSession).where(UserSession.user_id == user.id, UserSession.ended_at.is_(None),
                                  UserSession.created_at > now - absolute,
                                  UserSession.last_seen_at > now - idle - SEEN_GRANULARITY)
        .order_by(UserSession.last_seen_at.desc(), UserSession.id.desc())))


class NoSuchSession(AccountError):
    """The session asked for is not one of the account's (the page answers 404)."""


def end_session(user: User, session_id: int, *, current: int | None, actor: User, now: datetime) -> UserSession:
    """End one other session of `user` ("Sign out" beside it on the account page). Raises NoSuchSession if it is not
    theirs, AccountError if it is the session asking (logging out ends that one) or has ended already."""
    row = db.session.get(UserSession, session_id)
    if row is None or row.user_id != user.id:
        raise NoSuchSession(f"There is no session {session_id} on your account.")
    if row.id == current:
        raise AccountError("That is the session you are using: log out to end it.")
    result = db.session.execute(update(UserSession).where(UserSession.id == row.id, UserSession.ended_at.is_(None))
                                .values(ended_at=now, ended_reason=SIGNED_OUT_ELSEWHERE)
                                .execution_options(synchronize_session=False))
    db.session.refresh(row)
    if rowcount(result) != 1:
        raise AccountError(f"The session of {row.browser} begun {row.created_at:%d %B %Y at %H:%M} UTC has ended "
                           f"already ({row.ended_reason}).")
    audit.record("user.session_ended", user, actor=actor, now=now,
                 data={"session": row.id, "browser": row.browser, "reason": row.ended_reason})
    return row
