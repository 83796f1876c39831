"""The secretariat's audit log page: every state change Gambit recorded, a page at a time, filtered and sorted,
with the chain's head to keep outside Gambit.

core knows no domain, so each package says how its objects are linked and its actions named: `register_audit_link`
(a function from the ids of a page's objects of one type to their pages' paths, one statement at most) and
`register_audit_actions` (a readable label for each action it records). An action nobody named is shown from its
own words ("bid.late_admission" as "Bid: late admission"); an object nobody links is shown without a link.

A page costs a COUNT, the page's entries with LIMIT/OFFSET, the head, and one statement per kind of object on the
page whose link needs a lookup, whatever the size of the log. The chain is never verified here: that reads every
entry (`flask audit verify`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from flask import Blueprint, render_template, request
from sqlalchemy import Select, func, select

from core.audit import AuditEntry, checkpoint
from core.auth import Role, roles_required
from core.db import db
from core.paging import DESC, Page, PageRequest, ordered, page_request, sql_page
from core.templating import id_url, register_nav
from core.validators import NotADateError, parse_day

bp = Blueprint("audit", __name__, url_prefix="/admin/audit")
register_nav(96, Role.ADMIN, "Audit log", "audit.index")

# ------------------------------------------------------------------------------------- what packages register

# object type -> resolve(ids) -> {id: path}; one statement at most per call.
LINKS: dict[str, Callable[[list[int]], Mapping[int, str]]] = {}
# action -> readable label
ACTIONS: dict[str, str] = {}


def register_audit_link(object_type: str, resolve: Callable[[list[int]], Mapping[int, str]]) -> None:
    """Link the audit log's entries about `object_type` (a model's class name, as core.audit.record writes it) to
    their pages: `resolve` takes the ids of a page's objects of that type and returns the path of each that has a
    page the secretariat may open (leaving out the others), with one statement at most."""
    LINKS[object_type] = resolve


def pages_of(model: Any, endpoint: str, key: str, **values: Any) -> Callable[[list[int]], Mapping[int, str]]:
    """A resolver for `register_audit_link`: the page `endpoint` (its id argument named `key`) of each row of `model`
    that still exists among the ids asked for (one statement)."""
    def resolve(ids: list[int]) -> Mapping[int, str]:
        url = id_url(endpoint, key, **values)
        return {i: url(i) for i in db.session.scalars(select(model.id).where(model.id.in_(ids)))}
    return resolve


def register_audit_actions(labels: Mapping[str, str]) -> None:
    """Name actions as the audit log page shows them ({"bid.submit": "Bid submitted"})."""
    ACTIONS.update(labels)


def action_label(action: str) -> str:
    """The registered label of `action`, else its own words: "bid.late_admission" reads "Bid: late admission"."""
    if action in ACTIONS:
        return ACTIONS[action]
    family, _, rest = action.partition(".")
    words = family.replace("_", " ").capitalize()
    return f"{words}: {rest.replace('_', ' ').replace('.', ', ')}" if rest else words


def object_label(object_type: str, object_id: str) -> str:
    """"Bid 12", "Prize deduction 3"; "—" for an entry about no object."""
    if object_type == "-":
        return "—"
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", object_type).lower().capitalize()
    return words if object_id in ("-", "") else f"{words} {object_id}"


# ------------------------------------------------------------------------------------------------ filters

SORTS = {"seq": AuditEntry.id, "at": AuditEntry.at, "action": AuditEntry.action, "actor": AuditEntry.actor_label,
         "object": AuditEntry.object_type}
_ACTION = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)*\.?\*?")
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,39}")


@dataclass
class Filters:
    """The filters asked for, as typed (`typed`, shown back in the form), the ones that apply, and a sentence for
    each value that could not be read (which then does not filter)."""

    typed: dict[str, str]
    action: str | None = None
    action_prefix: str | None = None
    object_type: str | None = None
    object_id: str | None = None
    actor: str | None = None
    since: date | None = None
    until: date | None = None
    problems: list[str] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # the fields whose value could not be read

    @property
    def any(self) -> bool:
        return any(self.typed.values())


def _day(raw: str, what: str, problems: list[str]) -> date | None:
    """The day typed as YYYY-MM-DD, or None (with a sentence in `problems` when something unreadable was typed)."""
    if not raw:
        return None
    try:
        return parse_day(raw)
    except NotADateError:
        pass
    problems.append(f"The {what} day “{raw}” is not a date: write it as YYYY-MM-DD, for example 2015-06-30. The list "
                    "is shown without it.")
    return None


def read_filters(args: Mapping[str, str]) -> Filters:
    """The filters of ?action=&type=&object=&actor=&from=&to=, read so that no value can fail the request: a value
    that cannot be read does not filter, and a sentence says so (what was typed is kept). `action` is an action
    (bid.submit), or a family of them written with a final dot or star (bid. or bid.*) or alone (bid). Raises
    nothing."""
    typed = {k: (args.get(k) or "").strip()[:300] for k in ("action", "type", "object", "actor", "from", "to")}
    f = Filters(typed=typed)
    raw = typed["action"].lower()
    if raw:
        if not _ACTION.fullmatch(raw) or len(raw) > 80:
            f.problems.append(f"“{typed['action']}” is not an action: write one as bid.submit, or bid. for every "
                              "action on bids. The list is shown for every action.")
        elif raw.endswith(("*", ".")) or "." not in raw:
            f.action_prefix = raw.rstrip("*").rstrip(".") + "."
        else:
            f.action = raw
    if typed["type"]:
        known = {t.lower(): t for t in LINKS}
        if _TYPE.fullmatch(typed["type"].replace(" ", "")):
            name = typed["type"].replace(" ", "")
            f.object_type = known.get(name.lower(), name)
        else:
            f.problems.append(f"“{typed['type']}” is not a kind of object: write one as Bid, Contract or Payment. "
                              "The list is shown for every kind.")
    if typed["object"]:
        if len(typed["object"]) <= 64:
            f.object_id = typed["object"]
        else:
            f.problems.append("An object's number is at most 64 characters. The list is shown for every object.")
    if typed["actor"]:
        if len(typed["actor"]) <= 255:
            f.actor = typed["actor"].lower()
        else:
            f.problems.append("Who acted is an email address or “system”, at most 255 characters. The list is "
                              "shown for everyone.")
    f.since = _day(typed["from"], "first", f.problems)
    f.until = _day(typed["to"], "last", f.problems)
    f.unreadable = {k for k, day in (("from", f.since), ("to", f.until)) if typed[k] and day is None}
    if f.since and f.until and f.since > f.until:
        f.problems.append(f"The range ends ({typed['to']}) before it starts ({typed['from']}): the list is shown "
                          "without the dates.")
        f.since = f.until = None
    return f


def _next_after(prefix: str) -> str:
    """The first string after every string that starts with `prefix` (for a range an index can serve)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def filtered(f: Filters) -> Select:
    """The entries the filters select. An action family is a range on the indexed action column (action >= "bid."
    AND action < "bid/"), which both databases serve from the index, where LIKE 'bid.%' would not always be."""
    query = select(AuditEntry)
    if f.action:
        query = query.where(AuditEntry.action == f.action)
    if f.action_prefix:
        query = query.where(AuditEntry.action >= f.action_prefix, AuditEntry.action < _next_after(f.action_prefix))
    if f.object_type:
        query = query.where(AuditEntry.object_type == f.object_type)
    if f.object_id:
        query = query.where(AuditEntry.object_id == f.object_id)
    if f.actor:
        query = query.where(func.lower(AuditEntry.actor_label) == f.actor)
    if f.since:
        query = query.where(AuditEntry.at >= datetime.combine(f.since, time(), tzinfo=UTC))
    if f.until:
        query = query.where(AuditEntry.at < datetime.combine(f.until + timedelta(days=1), time(), tzinfo=UTC))
    return query


# -------------------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """An entry as the page shows it."""

    seq: int
    at: datetime
    actor: str
    action: str
    label: str
    object: str
    link: str | None
    data: list[tuple[str, str]]
    long: bool


def data_items(raw: str) -> list[tuple[str, str]]:
    """The entry's data as (key, value) pairs to show: scalars as they are, lists and objects as compact JSON; data
    that is not a JSON object (it never should be) as one item. Raises nothing."""
    try:
        value = json.loads(raw)
    except ValueError:
        return [("data", raw)]
    if not isinstance(value, dict):
        return [("data", json.dumps(value, ensure_ascii=False))]
    out = []
    for k, v in value.items():
        shown = "—" if v is None or v == "" else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        out.append((str(k), str(shown)))
    return out


# Data longer than this (or with more items) is folded in a <details>.
_SHORT_CHARS, _SHORT_ITEMS = 160, 4


def rows_of(entries: list[AuditEntry]) -> list[Row]:
    """The page's entries as rows, each object linked where a package registered its pages: one call per kind of
    object on the page."""
    ids: dict[str, list[int]] = {}
    for e in entries:
        if e.object_type in LINKS and e.object_id.isdigit() and len(e.object_id) < 18:
            ids.setdefault(e.object_type, []).append(int(e.object_id))
    paths = {t: LINKS[t](sorted(set(found))) for t, found in ids.items()}
    out = []
    for e in entries:
        items = data_items(e.data)
        link = (paths.get(e.object_type, {}).get(int(e.object_id))
                if e.object_id.isdigit() and len(e.object_id) < 18 else None)
        out.append(Row(seq=e.id, at=e.at, actor=e.actor_label, action=e.action, label=action_label(e.action),
                       object=object_label(e.object_type, e.object_id), link=link, data=items,
                       long=len(items) > _SHORT_ITEMS or sum(len(k) + len(v) for k, v in items) > _SHORT_CHARS))
    return out


def entries_page(f: Filters, ask: PageRequest) -> Page[AuditEntry]:
    """The page `ask` asks for of the entries the filters select: a COUNT and the page's entries (LIMIT/OFFSET),
    the sequence number breaking ties so that no entry sits on two pages."""
    return sql_page(filtered(f), ask, [ordered(SORTS[ask.sort], ask.dir), ordered(AuditEntry.id, ask.dir)])


@bp.route("/")
@roles_required(Role.ADMIN)
def index():
    ask = page_request(request.args, list(SORTS), default_sort="seq", default_dirs={"seq": DESC, "at": DESC})
    f = read_filters(request.args)
    page = entries_page(f, ask)
    return render_template("audit/index.html", page=page, rows=rows_of(page.items), filters=f, sort=ask.sort,
                           dir=ask.dir, head=checkpoint(), types=sorted(LINKS),
                           actions=sorted(ACTIONS.items())), (200 if not f.problems else 400)
