"""Rate limits (Flask-Limiter): in memory by default, in Redis when REDIS_URL is set so workers share counts
(in memory again, per process, while that Redis cannot be reached).

One Limiter per app (several apps live side by side in the tests); views name their limit with `rate_limited`
and create_app applies them: each blueprint holding a limited view gets one limit whose value is a callable
(Flask-Limiter reads it per request) returning the requested endpoint's limit from the app's settings.
"""

from __future__ import annotations

import hashlib

from flask import current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse_many

MEMORY_STORE_WARNING = (
    "Rate limits are counted in this process's memory (no REDIS_URL): if the app runs in several worker "
    "processes (gunicorn --workers N), each worker counts alone and every limit allows N times its tries. Set "
    "REDIS_URL (make serve uses redis://127.0.0.1:6379/0) so that every worker shares one count.")

# endpoint -> (config key holding the limit, methods)
LIMITS: dict[str, tuple[str, tuple[str, ...]]] = {}


def rate_limited(endpoint: str, config_key: str, methods=("POST",)):
    """Mark a view for a limit read from the app's settings; the decorator leaves the function unchanged."""
    LIMITS[endpoint] = (config_key, tuple(methods))

    def decorator(view):
        return view

    return decorator


def requested_limit() -> str:
    """The limit of the endpoint and method being requested ("5 per minute", from the app's settings), or ""
    (no limit) for the others. Raises KeyError if a limited view's setting is missing."""
    found = LIMITS.get(request.endpoint or "")
    if found is None or request.method not in found[1]:
        return ""
    return current_app.config[found[0]]


def hit_limit(scope: str, key: str, limit: str) -> bool:
    """Count one try against `limit` ("3 per hour;10 per day", from the settings) for `key` (an email address:
    what no client address identifies) in the app's limiter, so the count is shared as the others are (Redis).
    Returns False when a window is full (the caller refuses); True, counting nothing, when limits are off. The key
    is stored as a digest only."""
    limiter: Limiter = current_app.extensions["gambit_limiter"]
    if not limiter.enabled or not limit:
        return True
    digest = hashlib.sha256(key.encode()).hexdigest()
    return all([limiter.limiter.hit(item, scope, digest) for item in parse_many(limit)])


def init_limiter(app) -> Limiter:
    """Apply the named limits to their views (call it once the blueprints are registered). Counts go to
    RATELIMIT_STORAGE_URI, else REDIS_URL, else memory; outside tests, a memory store is logged as a warning at
    start (MEMORY_STORE_WARNING). Raises KeyError if a limited view's blueprint is not registered."""
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config.get("REDIS_URL") or "memory://")
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    # Redis gone (REDIS_URL set, the server down): the limits are counted in this process's memory instead, with
    # one warning from Flask-Limiter ("Rate limit storage unreachable - falling back to in-memory storage"), and
    # Redis is used again once it answers (checked with a growing pause, up to half a minute); pages never fail
    # for it. A connection that cannot be made within a second counts as down, rather than holding the request.
    app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    if str(app.config["RATELIMIT_STORAGE_URI"]).startswith("redis"):
        app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", {"socket_connect_timeout": 1, "socket_timeout": 1})
    limiter = Limiter(key_func=get_remote_address, app=app, default_limits=[], headers_enabled=True)
    for blueprint in sorted({endpoint.partition(".")[0] for endpoint in LIMITS}):
        # Counted per endpoint (the limit is not shared), as a limit decorating each view would be.
        limiter.limit(requested_limit)(app.blueprints[blueprint])
    app.extensions["gambit_limiter"] = limiter  # the app holds it; Flask-Limiter keeps only weak references
    if (app.config.get("RATELIMIT_ENABLED", True) and not app.config.get("TESTING")
            and str(app.config["RATELIMIT_STORAGE_URI"]).startswith("memory")):
        app.logger.warning(MEMORY_STORE_WARNING)
    return limiter
