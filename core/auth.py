"""Roles and access checks. The rules of who may see what live in each package's rules.py; this is plumbing."""

from __future__ import annotations

import enum
from collections.abc import Callable
from functools import wraps

from flask import abort
from flask_login import LoginManager, current_user

login_manager = LoginManager()
login_manager.login_view = "accounts.login"
login_manager.login_message = "Please log in to see that page."
login_manager.login_message_category = "info"
login_manager.session_protection = "strong"


class Role(enum.StrEnum):
    BIDDER = "bidder"
    WCOC = "wcoc"
    BOARD = "board"
    ADMIN = "admin"

    @property
    def label(self) -> str:
        return {"bidder": "Bidder", "wcoc": "WCOC member", "board": "Presidential Board member",
                "admin": "Administrator (FIDE secretariat)"}[self.value]


def roles_required(*roles: Role | str) -> Callable:
    """Decorator: 401 (login page) when logged out, 403 unless the user holds one of `roles`."""
    wanted = {Role(r) for r in roles}

    def decorator(view):
        @wraps(view)
        def wrapped(*args, **kwargs):
            if not current_user.is_authenticated:
                return login_manager.unauthorized()
            if not (wanted & current_user.role_set):
                abort(403)
            return view(*args, **kwargs)

        wrapped.required_roles = wanted  # type: ignore[attr-defined]  # a mark on the function, read by the access matrix
        return wrapped

    return decorator
