"""Rate limits (Flask-Limiter): in memory by default, in Redis when REDIS_URL is set so workers share counts.

One Limiter per app (several apps live side by side in the tests); views name their limit with `rate_limited`
and create_app applies it.
"""

from __future__ import annotations

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

MEMORY_STORE_WARNING = (
    "Rate limits are counted in this process's memory (no REDIS_URL): if the app runs in several worker "
    "processes (gunicorn --workers N), each worker counts alone and every limit allows N times its tries. Set "
    "REDIS_URL (make serve uses redis://127.0.0.1:6379/0) so that every worker shares one count.")

# endpoint -> (config key holding the limit, methods)
LIMITS: dict[str, tuple[str, list[str]]] = {}


def rate_limited(endpoint: str, config_key: str, methods=("POST",)):
    """Mark a view for a limit read from the app's settings; the decorator leaves the function unchanged."""
    LIMITS[endpoint] = (config_key, list(methods))

    def decorator(view):
        return view

    return decorator


def init_limiter(app) -> Limiter:
    """Apply the named limits to their views. Counts go to RATELIMIT_STORAGE_URI, else REDIS_URL, else memory;
    outside tests, a memory store is logged as a warning at start (MEMORY_STORE_WARNING). Raises nothing."""
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config.get("REDIS_URL") or "memory://")
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    limiter = Limiter(key_func=get_remote_address, app=app, default_limits=[], headers_enabled=True)
    for endpoint, (key, methods) in LIMITS.items():
        app.view_functions[endpoint] = limiter.limit(app.config[key], methods=methods)(
            _own_copy(app.view_functions[endpoint]))
    app.extensions["gambit_limiter"] = limiter  # the app holds it; Flask-Limiter keeps only weak references
    if (app.config.get("RATELIMIT_ENABLED", True) and not app.config.get("TESTING")
            and str(app.config["RATELIMIT_STORAGE_URI"]).startswith("memory")):
        app.logger.warning(MEMORY_STORE_WARNING)
    return limiter


def _own_copy(view):
    """A fresh function per app: Flask-Limiter marks the function object, which the blueprint shares."""

    def limited_view(*args, **kwargs):
        return view(*args, **kwargs)

    limited_view.__dict__.update(view.__dict__)  # the view's marks (core.db's reads_first, writes_on_get)
    limited_view.__name__ = view.__name__
    limited_view.__qualname__ = f"{view.__qualname__}@{id(limited_view)}"
    limited_view.__module__ = view.__module__
    return limited_view
