"""Rate limits (Flask-Limiter): in memory by default, in Redis when REDIS_URL is set so workers share counts."""

from __future__ import annotations

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

limiter = Limiter(key_func=get_remote_address, default_limits=[], headers_enabled=True)


def init_limiter(app) -> None:
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config.get("REDIS_URL") or "memory://")
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    limiter.init_app(app)
