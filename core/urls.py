"""URL helpers: same-site paths to return to, and the absolute links that leave the site (messages, the calendar
feed, the API's links), all made from one setting, BASE_URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import current_app, has_request_context, url_for

# What `make run` serves on when nothing else is said; links made outside a request in development point there.
DEVELOPMENT_BASE_URL = "http://127.0.0.1:5000"


class BaseUrlError(ValueError):
    """BASE_URL is not an absolute http(s) address."""


def parse_base_url(value: str) -> tuple[str, str, str]:
    """BASE_URL as (scheme, host[:port], path prefix without a trailing slash); raises BaseUrlError saying what
    is wrong with it."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BaseUrlError(f"BASE_URL must be the site's public address, such as https://gambit.fide.com; "
                           f"{value!r} is not an absolute http(s) address.")
    if parts.query or parts.fragment:
        raise BaseUrlError(f"BASE_URL must be an address without a query or a fragment; {value!r} has one.")
    return parts.scheme, parts.netloc, parts.path.rstrip("/")


def external_url(endpoint: str, **values) -> str:
    """The absolute address of `endpoint`, the same in a request, a worker and the command line.

    With BASE_URL set, every link is built on it (the public address, whatever host a request came in on).
    Without it, a request's own address is used; outside a request, the app's SERVER_NAME, else the development
    address that `make run` serves on (production refuses to start without BASE_URL: see create_app)."""
    base = current_app.config.get("BASE_URL") or ""
    if not base and has_request_context():
        return url_for(endpoint, _external=True, **values)
    if not base and current_app.config.get("SERVER_NAME"):
        base = f"{current_app.config.get('PREFERRED_URL_SCHEME') or 'http'}://{current_app.config['SERVER_NAME']}"
    scheme, netloc, prefix = parse_base_url(base or DEVELOPMENT_BASE_URL)
    adapter = current_app.url_map.bind(netloc, script_name=prefix or "/", url_scheme=scheme)
    return adapter.build(endpoint, values, force_external=True)


def path_for(endpoint: str, **values) -> str:
    """The site-relative path of `endpoint` (no host), in a request or outside one: what a row keeps to link to a
    page (the outbox's "about" column)."""
    return current_app.url_map.bind("localhost").build(endpoint, values)


def safe_next(target: str | None) -> str | None:
    """A same-site path to return to after login, or None (never an open redirect)."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    return target
