"""The secretariat's audit log page: every state change Gambit recorded, a page at a time, filtered and sorted,
each entry told as a sentence ("Anna Ushenina submitted bid 4."), with the chain's head to keep outside Gambit.

core knows no domain, so each package says how its objects are linked, its actions told and its people named:
`register_audit_link` (a function from the ids of a page's objects of one type to their pages' paths, one statement
at most), `register_audit_actions` (what each action it records did, as the rest of a sentence that starts with who
acted), `register_audit_people` (the names of users, one statement) and `register_audit_sign_ins` (which entries are
sign-ins and sign-outs, left out unless asked for). An action nobody told is shown from its own words
("bid.late_admission" as "Bid: late admission"); an object nobody links is shown without a link.

A page costs a COUNT, the page's entries with LIMIT/OFFSET, the head, one statement for the names of the people on
the page, and one per kind of object on the page whose link needs a lookup, whatever the size of the log. The chain
is never verified here: that reads every entry (`flask audit verify`).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from flask import Blueprint, render_template, request
from sqlalchemy import Select, and_, func, not_, or_, select

from core.auth import Role, roles_required
from core.db import db
from core.money import format_eur
from core.paging import DESC, Page, PageRequest, ordered, page_request, sql_page
from core.templating import id_url, register_nav
from core.validators import NotADateError, parse_day
from evidence.audit import AuditEntry, checkpoint, data_text

bp = Blueprint("audit", __name__, url_prefix="/admin/audit")
register_nav(96, Role.ADMIN, "Audit log", "audit.index")

# ------------------------------------------------------------------------------------- what packages register

# object type -> resolve(ids) -> {id: path}; one statement at most per call.
LINKS: dict[str, Callable[[list[int]], Mapping[int, str]]] = {}
# action -> what it did, as the rest of a sentence that starts with who acted ("submitted {object}").
ACTIONS: dict[str, str] = {}
# The entries that are sign-ins or sign-outs: (action, its data as recorded, or None for any data).
SIGN_INS: list[tuple[str, str | None]] = []


@dataclass
class _People:
    """Who names users: `resolve` takes user ids and returns each one's name (one statement); `object_type` is the
    type of the entries whose object is a user (named the same way, in the same statement)."""

    object_type: str | None = None
    resolve: Callable[[list[int]], Mapping[int, str]] | None = None


PEOPLE = _People()


def register_audit_link(object_type: str, resolve: Callable[[list[int]], Mapping[int, str]]) -> None:
    """Link the audit log's entries about `object_type` (a model's class name, as evidence.audit.record writes it) to
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


_FIELDS = string.Formatter()


def _fields(phrase: str) -> list[tuple[str, str]]:
    """The (name, format) of each {field} of `phrase`. Raises ValueError when the phrase is not a valid template."""
    return [(name, spec or "") for _, name, spec, _ in _FIELDS.parse(phrase) if name is not None]


def register_audit_actions(phrases: Mapping[str, str]) -> None:
    """Tell what each action did, as the rest of a sentence that starts with who acted: {"bid.submit": "submitted
    {object}"} reads "Anna Ushenina submitted bid 4." `{object}` is the entry's object (linked to its page where one
    is registered); any other `{key}` is the value of that key in the entry's data, `{key:eur}` an amount in euros.
    Raises ValueError for a phrase that names no field by name ({}) or formats one in a way other than eur, so a
    mistake shows when the package is imported rather than on the page."""
    for action, phrase in phrases.items():
        for name, spec in _fields(phrase):
            if not name or spec not in ("", "eur"):
                raise ValueError(f"the audit phrase of {action} ({phrase!r}) has a field {{{name}:{spec}}} that "
                                 "is neither {object}, {key} nor {key:eur}")
    ACTIONS.update(phrases)


def register_audit_people(object_type: str, resolve: Callable[[list[int]], Mapping[int, str]]) -> None:
    """Name the people in the audit log: `resolve` takes user ids and returns each one's name, in one statement; the
    entries about `object_type` (users) name their object the same way."""
    PEOPLE.object_type, PEOPLE.resolve = object_type, resolve


def register_audit_sign_ins(entries: Iterable[tuple[str, Mapping[str, Any] | None]]) -> None:
    """Say which entries are sign-ins and sign-outs, which the page leaves out unless asked: each is an action and
    the data an entry of it holds to be one (None: any entry of that action). Registering one twice adds it once."""
    for action, data in entries:
        key = (action, None if data is None else data_text(data))
        if key not in SIGN_INS:
            SIGN_INS.append(key)


def action_label(action: str) -> str:
    """What `action` did, for the list of actions to filter by: its phrase with each field shown as "…"
    ("submitted …"), else its own words: "bid.late_admission" reads "Bid: late admission"."""
    if action in ACTIONS:
        text = "".join(literal + ("…" if name is not None else "") for literal, name, _, _ in
                       _FIELDS.parse(ACTIONS[action]))
        return text[:1].upper() + text[1:]
    family, _, rest = action.partition(".")
    words = family.replace("_", " ").capitalize()
    return f"{words}: {rest.replace('_', ' ').replace('.', ', ')}" if rest else words


def object_label(object_type: str, object_id: str) -> str:
    """"Bid 12", "Prize deduction 3"; "—" for an entry about no object."""
    if object_type == "-":
        return "—"
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", object_type).lower().capitalize()
    return words if object_id in ("-", "") else f"{words} {object_id}"


def _value(data: Mapping[str, Any], name: str, spec: str) -> str:
    """A field of an action's phrase from the entry's data: "…" when the entry does not hold it (an entry written
    before the key was), the amount in euros for "eur" (as recorded when it is not a number)."""
    value = data.get(name)
    if value is None or value == "":
        return "…"
    if spec == "eur":
        try:
            return format_eur(str(value))
        except ValueError:
            pass
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def told(action: str, data: Mapping[str, Any]) -> tuple[str, bool, str]:
    """What the entry did, split around its object: (the words before it, whether the object is named, the words
    after it). An action no package told reads "recorded “Bid: late admission” on" the object. Raises nothing."""
    phrase = ACTIONS.get(action)
    if phrase is None:
        return f"recorded “{action_label(action)}” on ", True, ""
    before, named, after = phrase.partition("{object}")

    def fill(part: str) -> str:
        return "".join(literal + ("" if name is None else _value(data, name, spec or ""))
                       for literal, name, spec, _ in _FIELDS.parse(part))

    return fill(before), bool(named), fill(after)


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
    sign_ins: bool = False  # sign-ins and sign-outs shown
    problems: list[str] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # the fields whose value could not be read

    @property
    def any(self) -> bool:
        return any(self.typed.values())

    @property
    def hides_sign_ins(self) -> bool:
        """Whether sign-ins and sign-outs are left out: unless asked for, or unless the action asked for is one (who
        types user.login wants to see the logins)."""
        return not self.sign_ins and not any(self.action == a for a, _ in SIGN_INS)


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


def _read_action(typed: str, f: Filters) -> None:
    """The action filter typed: one action (bid.submit) or a family of them (bid., bid.* or bid); a sentence in
    f.problems when it is neither."""
    raw = typed.lower()
    if not raw:
        return
    if not _ACTION.fullmatch(raw) or len(raw) > 80:
        f.problems.append(f"“{typed}” is not an action: write one as bid.submit, or bid. for every "
                          "action on bids. The list is shown for every action.")
    elif raw.endswith(("*", ".")) or "." not in raw:
        f.action_prefix = raw.rstrip("*").rstrip(".") + "."
    else:
        f.action = raw


def _read_object_type(typed: str, f: Filters) -> None:
    """The kind of object typed (spaces ignored, spelt as the audit's links spell it when it is one of theirs); a
    sentence in f.problems when it cannot be one."""
    if not typed:
        return
    known = {t.lower(): t for t in LINKS}
    if _TYPE.fullmatch(typed.replace(" ", "")):
        name = typed.replace(" ", "")
        f.object_type = known.get(name.lower(), name)
    else:
        f.problems.append(f"“{typed}” is not a kind of object: write one as Bid, Contract or Payment. "
                          "The list is shown for every kind.")


def read_filters(args: Mapping[str, str]) -> Filters:
    """The filters of ?action=&type=&object=&actor=&from=&to=&signins=, read so that no value can fail the request:
    a value that cannot be read does not filter, and a sentence says so (what was typed is kept). `action` is an
    action (bid.submit), or a family of them written with a final dot or star (bid. or bid.*) or alone (bid).
    `signins` is "show" to show sign-ins and sign-outs, which are left out otherwise. Raises nothing."""
    typed = {k: (args.get(k) or "").strip()[:300]
             for k in ("action", "type", "object", "actor", "from", "to", "signins")}
    f = Filters(typed=typed)
    _read_action(typed["action"], f)
    _read_object_type(typed["type"], f)
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
    if typed["signins"] in ("show", "hide"):
        f.sign_ins = typed["signins"] == "show"
    elif typed["signins"]:
        f.problems.append(f"“{typed['signins']}” does not say whether to show sign-ins: write signins=show or "
                          "signins=hide. The list is shown without them.")
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
    if f.hides_sign_ins and SIGN_INS:
        # The data as recorded is compared whole: an entry is a sign-out by what it holds (user.sessions_ended
        # also records a password change or a deactivation, which the secretariat must see).
        query = query.where(not_(or_(*(AuditEntry.action == action if data is None else
                                       and_(AuditEntry.action == action, AuditEntry.data == data)
                                       for action, data in SIGN_INS))))
    return query


# -------------------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """An entry as the page shows it: a sentence "`who` `before` `object` `after`." (the object linked to `link`
    where it has a page), and the email of who acted (None for the system)."""

    seq: int
    at: datetime
    who: str
    email: str | None
    action: str
    before: str
    object: str
    after: str
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


def _object_id(entry: AuditEntry) -> int | None:
    """The entry's object id as a number a lookup can take, else None."""
    return int(entry.object_id) if entry.object_id.isdigit() and len(entry.object_id) < 18 else None


def _names(entries: list[AuditEntry]) -> Mapping[int, str]:
    """The names of the users on the page, who acted or were acted on: one statement (none when nobody is)."""
    ids = {e.actor_id for e in entries if e.actor_id is not None}
    ids |= {i for e in entries if e.object_type == PEOPLE.object_type and (i := _object_id(e)) is not None}
    return PEOPLE.resolve(sorted(ids)) if ids and PEOPLE.resolve is not None else {}


def rows_of(entries: list[AuditEntry]) -> list[Row]:
    """The page's entries as rows, each a sentence naming who acted (a user's name, "The system" for none, the
    email recorded for a user since deleted) and what they did to which object, linked where a package registered
    its pages: one call per kind of object on the page, one for the names of the people."""
    ids: dict[str, list[int]] = {}
    for e in entries:
        if e.object_type in LINKS and (i := _object_id(e)) is not None:
            ids.setdefault(e.object_type, []).append(i)
    paths = {t: LINKS[t](sorted(set(found))) for t, found in ids.items()}
    names = _names(entries)
    out = []
    for e in entries:
        items = data_items(e.data)
        i = _object_id(e)
        link = paths.get(e.object_type, {}).get(i) if i is not None else None
        try:
            data = json.loads(e.data)
        except ValueError:
            data = {}
        before, named, after = told(e.action, data if isinstance(data, dict) else {})
        obj = object_label(e.object_type, e.object_id)
        if e.object_type == PEOPLE.object_type and i is not None and i in names:
            obj = names[i]
        elif obj != "—":
            obj = obj.lower()
        if e.actor_id is None and e.actor_label == "system":
            who, email = "The system", None
        else:
            # A user since deleted (actor_id set to NULL) keeps the email the entry recorded: the only name left.
            who, email = names.get(e.actor_id or 0) or e.actor_label, e.actor_label
        out.append(Row(seq=e.id, at=e.at, who=who, email=email, action=e.action, before=before,
                       object=obj if named else "", after=after, link=link if named else None, data=items,
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
                           actions=[(a, action_label(a)) for a in sorted(ACTIONS)]), (200 if not f.problems else 400)
