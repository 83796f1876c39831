"""Users and their roles. A user may hold several roles; the FIDE President is a board member with a flag."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, false, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from core.auth import Role
from core.db import Model, utcnow

ROLE_VALUES = ", ".join(f"'{r.value}'" for r in Role)


class User(Model):
    __tablename__ = "user"
    __table_args__ = (
        CheckConstraint("applicant_type IS NULL OR applicant_type IN ('federation', 'sponsor')",
                        name="applicant_type"),
        # One FIDE President at a time: two admins naming two at the same moment meet this index.
        Index("uq_user_one_president", "is_president", unique=True, sqlite_where=text("is_president"),
              postgresql_where=text("is_president")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(200))
    organisation: Mapped[str] = mapped_column(String(200), default="")
    applicant_type: Mapped[str | None] = mapped_column(String(20))
    federation: Mapped[str | None] = mapped_column(String(3))
    is_president: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # The secretariat requires a second factor of this person, whatever their roles (`flask users two-factor-require`
    # or their user page); read only by accounts.two_factor.is_required.
    two_factor_required: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Rotated on logout, deactivation and password change: every session cookie that names the old value dies.
    session_nonce: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    password_changed_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When the owner proved the address (the link emailed at registration); accounts the secretariat creates are
    # confirmed when made. A self-registered account stays inactive until then.
    email_confirmed_at: Mapped[datetime | None]

    roles: Mapped[list[UserRole]] = relationship(back_populates="user", cascade="all, delete-orphan",
                                                 lazy="selectin", order_by="UserRole.role")

    # ---- Flask-Login
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_active(self) -> bool:
        return self.active

    @property
    def is_anonymous(self) -> bool:
        return False

    def get_id(self) -> str:
        return f"{self.id}:{self.session_nonce}"

    # ---- roles
    @property
    def role_set(self) -> set[Role]:
        return {Role(r.role) for r in self.roles}

    def has_role(self, role: Role | str) -> bool:
        return Role(role) in self.role_set

    @property
    def role_labels(self) -> str:
        labels = [Role(r.role).label for r in self.roles]
        if self.is_president:
            labels.append("FIDE President")
        return ", ".join(labels)

    @property
    def display_name(self) -> str:
        return f"{self.name} ({self.organisation})" if self.organisation else self.name

    def __repr__(self) -> str:
        return f"<User {self.email}>"


class UserRole(Model):
    __tablename__ = "user_role"
    __table_args__ = (
        UniqueConstraint("user_id", "role", name="uq_user_role_user_role"),
        CheckConstraint(f"role IN ({ROLE_VALUES})", name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20))

    user: Mapped[User] = relationship(back_populates="roles")


class ApiToken(Model):
    """One API token of a user: only its SHA-256 is kept. Revoked one by one from the account page, and all at
    once when the password changes or the account is deactivated."""

    __tablename__ = "api_token"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    revoked_reason: Mapped[str] = mapped_column(String(80), default="")

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


class UserSession(Model):
    """One signed-in browser of a user: made at login, its reference kept in the signed session cookie (only its
    SHA-256 here), listed on the account page and ended one by one, all but the current one, or all at once (logout,
    a new password, deactivation, the secretariat). A request whose row is ended, or missing, is not let in."""

    __tablename__ = "user_session"
    __table_args__ = (
        CheckConstraint("(ended_at IS NULL) = (ended_reason = '')", name="ended_with_reason"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    ref_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    # Written at most once a minute (services.SEEN_GRANULARITY), not on every request.
    last_seen_at: Mapped[datetime]
    browser: Mapped[str] = mapped_column(String(80), default="")
    address: Mapped[str] = mapped_column(String(64), default="")
    ended_at: Mapped[datetime | None]
    ended_reason: Mapped[str] = mapped_column(String(80), default="")

    @property
    def is_live(self) -> bool:
        return self.ended_at is None
class SecondFactor(Model):
    """A person's second factor for signing in: the TOTP secret (sealed with TWO_FACTOR_KEY, never stored plain),
    the last time-step accepted (a code is never accepted twice), and the count of wrong codes in a row with the
    lock it leads to. One row per person who has enrolled or failed a code; passkeys and recovery codes beside."""

    __tablename__ = "user_second_factor"
    __table_args__ = (
        CheckConstraint("(totp_secret IS NULL) = (totp_enrolled_at IS NULL)", name="totp_enrolled"),
        CheckConstraint("failures >= 0", name="failures"),
    )

    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), primary_key=True)
    totp_secret: Mapped[str | None] = mapped_column(String(255))
    totp_enrolled_at: Mapped[datetime | None]
    totp_last_step: Mapped[int | None]
    failures: Mapped[int] = mapped_column(default=0)
    locked_until: Mapped[datetime | None]


class RecoveryCode(Model):
    """A one-time recovery code: only its hash (argon2, like a password) is kept; used once, then never again."""

    __tablename__ = "user_recovery_code"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    code_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class Passkey(Model):
    """A passkey or security key (WebAuthn credential) registered by its owner under a name they chose."""

    __tablename__ = "user_passkey"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    # base64url, as WebAuthn's JSON carries it
    credential_id: Mapped[str] = mapped_column(String(1400), unique=True)
    public_key: Mapped[str] = mapped_column(Text)
    sign_count: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
