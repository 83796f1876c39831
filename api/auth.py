"""API authentication: the browser session, or `Authorization: Bearer <token>`."""

from __future__ import annotations

from functools import wraps

from flask import g, jsonify, request
from flask_login import current_user

from accounts.services import user_for_token
from api.shapes import Error
from core.db import db, utcnow


def api_user():
    """The caller: a bearer token wins over the session cookie; None when neither identifies a user. Raises
    nothing."""
    if "api_user" in g:
        return g.api_user
    user = None
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        user = user_for_token(header[len("Bearer "):].strip(), now=utcnow())
        if user is not None:
            db.session.commit()  # the token's last use, shown on its owner's account page
    elif current_user.is_authenticated:
        user = current_user._get_current_object()
    g.api_user = user
    return user


def api_error(status: int, message: str):
    """The JSON refusal (api.shapes.Error) with its status code. Raises nothing."""
    response = jsonify(Error(error=message, status=status).model_dump(mode="json"))
    response.status_code = status
    return response


def api_login_required(view):
    """401 as JSON (with WWW-Authenticate) unless a session or a valid bearer token identifies the caller.
    A token that was given but is not valid is refused even when a session cookie is present."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        header = request.headers.get("Authorization", "")
        if header and not header.startswith("Bearer "):
            return _unauthorised("Use 'Authorization: Bearer <token>'.")
        if api_user() is None:
            return _unauthorised("Log in, or send a valid API token as 'Authorization: Bearer <token>'.")
        return view(*args, **kwargs)

    return wrapped


def _unauthorised(message: str):
    response = api_error(401, message)
    response.headers["WWW-Authenticate"] = 'Bearer realm="gambit"'
    return response
