"""Jinja filters and globals shared by every template (pages and PDFs)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from flask import current_app, has_app_context, request, url_for
from flask_login import current_user
from markupsafe import Markup

from core.auth import Role
from core.federations import federation_name
from core.money import format_day, format_eur, format_instant, format_share, format_since
from core.validators import country_name

# (order, role or None for anyone logged in, label, endpoint): each package adds its pages.
NAV: list[tuple[int, tuple[Role, ...] | None, str, str]] = []


def register_nav(order: int, role: Role | tuple[Role, ...] | None, label: str, endpoint: str) -> None:
    """Add a page to the navigation of the users holding `role` (one of several roles; None: anyone logged in)."""
    if not any(n[3] == endpoint for n in NAV):
        roles = None if role is None else (role if isinstance(role, tuple) else (role,))
        NAV.append((order, roles, label, endpoint))
        NAV.sort(key=lambda n: n[0])


def nav_items(user) -> list[dict]:
    held = user.role_set
    return [{"label": label, "url": url_for(endpoint)} for _, roles, label, endpoint in NAV
            if roles is None or held.intersection(roles)]


# (roles, provider): each package says what a user holding one of `roles` has to do now, as (sentence, url) pairs,
# shown on the home page where they arrive after logging in.
TODO: list[tuple[tuple[Role, ...], Callable[[Any], list[tuple[str, str]]]]] = []


def register_todo(role: Role | tuple[Role, ...], provider: Callable[[Any], list[tuple[str, str]]]) -> None:
    """Add what `provider(user)` says a user holding `role` (one of several) has to do now. Registering the same
    provider twice adds it once."""
    if not any(p is provider for _, p in TODO):
        TODO.append((role if isinstance(role, tuple) else (role,), provider))


def todo_items(user) -> list[dict]:
    """The user's to-do on arrival: every registered provider of a role they hold, in the order registered."""
    held = user.role_set
    return [{"text": text, "url": url} for roles, provider in TODO if held.intersection(roles)
            for text, url in provider(user)]


# An id no row has, standing in for the ids while a URL is built once (`id_url`).
_MARKER = 918_273_645_546_372_819


def id_url(endpoint: str, key: str, **values: Any) -> Callable[[int], str]:
    """url_for(endpoint, **{key: id}, **values) for many ids at the cost of one url_for: a page listing rows builds
    its links with this instead of a url_for per row. Raises what url_for raises (BuildError)."""
    marked: dict[str, Any] = {**values, key: _MARKER}
    head, found, tail = url_for(endpoint, **marked).partition(str(_MARKER))
    if not found:  # a converter that does not write the id as its digits: one url_for per id after all
        return lambda ident: url_for(endpoint, **{**values, key: ident})
    return lambda ident: f"{head}{ident}{tail}"


def _sort_url(key: str, current: str, direction: str) -> str:
    """The page sorted by `key` (the other way round when it is sorted by `key` already), from its first page, with
    every other parameter of the query string kept (filters, ?as_of=)."""
    args: dict[str, Any] = dict(request.args)
    args.pop("page", None)
    args["sort"] = key
    args["dir"] = "desc" if (key == current and direction == "asc") else "asc"
    view_args: dict[str, Any] = request.view_args or {}
    assert request.endpoint is not None  # a table is sorted only on a routed page
    return url_for(request.endpoint, **view_args, **args)


def _page_url(number: int) -> str:
    """This page's page `number`, with every other parameter of the query string kept (sort, filters, ?as_of=)."""
    args: dict[str, Any] = dict(request.args)
    args["page"] = number
    view_args: dict[str, Any] = request.view_args or {}
    assert request.endpoint is not None  # a list is paged only on a routed page
    return url_for(request.endpoint, **view_args, **args)


def _kept_args(*dropped: str) -> list[tuple[str, str]]:
    """The query string's parameters but `dropped`, for the hidden fields of a GET form that must keep them."""
    return [(k, v) for k, v in request.args.items(multi=True) if k not in dropped]


# ---------------------------------------------------------------------------------------------- kept fragments

# A part of a page that is a pure function of a few values (a bid's compliance table of its findings, what it costs
# of its figures and the regulation) is rendered once per process and kept under those values: a page computed
# again after a change elsewhere (any audited step gives every page a new version) renders only what may differ.
FRAGMENTS_KEPT = 1024  # the most recently used are kept: a few KB each
_fragments: OrderedDict[Hashable, Markup] = OrderedDict()
_fragments_lock = threading.Lock()


def kept_fragment(key: Hashable, render: Callable[[], Markup]) -> Markup:
    """`render()`, kept under `key` and given again for an equal key. The key must hold every value the fragment is
    drawn from (plain values compared exactly: strings, dates, numbers, enums; never an object of the database
    session) and name the fragment itself (its first item). A key that cannot be hashed is not kept (the fragment is
    rendered every time), and nothing is kept while templates are reloaded when edited (TEMPLATES_AUTO_RELOAD, debug).
    Fragments may carry no CSRF token, user or time of the request. Raises what `render` raises."""
    try:
        hash(key)
    except TypeError:
        return render()
    if has_app_context() and current_app.jinja_env.auto_reload:  # templates edited while it runs: nothing kept
        return render()
    with _fragments_lock:
        kept = _fragments.get(key)
        if kept is not None:
            _fragments.move_to_end(key)
            return kept
    made = render()
    with _fragments_lock:
        _fragments[key] = made
        while len(_fragments) > FRAGMENTS_KEPT:
            _fragments.popitem(last=False)
    return made


def forget_fragments() -> None:
    """Empty the kept fragments (tests that change a template or its inputs beneath the key). Raises nothing."""
    with _fragments_lock:
        _fragments.clear()


def init_templating(app) -> None:
    app.jinja_env.filters["eur"] = format_eur
    app.jinja_env.filters["share"] = format_share
    app.jinja_env.filters["day"] = format_day
    app.jinja_env.filters["instant"] = format_instant
    app.jinja_env.filters["since"] = format_since
    # Names where people read names: "Norway", not NO; "China", not CHN.
    app.jinja_env.filters["country"] = country_name
    app.jinja_env.filters["federation"] = federation_name
    app.jinja_env.globals["Role"] = Role
    app.jinja_env.globals["sort_url"] = _sort_url
    app.jinja_env.globals["page_url"] = _page_url
    app.jinja_env.globals["kept_args"] = _kept_args
    app.jinja_env.globals["nav_items"] = nav_items
    app.jinja_env.globals["todo_items"] = todo_items
    register_nav(90, Role.ADMIN, "Users", "accounts.users")
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True

    @app.context_processor
    def _nav():
        return {"user": current_user}
