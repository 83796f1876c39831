"""Bringing the stored calls forward to the code: part of every `flask db upgrade` (migrations/env.py runs it once the
schema is at its head), so no operator can forget it.

A call's regulation is stored as a snapshot of its file when the call is loaded, and the code reads it from there:
its figures, and the citations and labels every finding names. A release may ship a call file with more in it than
the stored snapshot holds (a citation the new code names, a reading now declared); the pages of a call stored by an
older release would then fail. So after the schema is migrated, each call stored from a file Gambit ships is given
that file anew, as a new regulation version, the same way `flask seed` loads a changed file:

- a call whose regulation was **amended** keeps its amendments: each amendment's changes (read from the two stored
  versions it joins, key by key) are made again on the new file, in the order they were recorded; a change that no
  longer applies (its key gone from the new file) stops the upgrade, naming the call and the key, and nothing is
  written;
- the **practice call** is made again from the new file, moved by the same number of years as before;
- every submitted bid is judged again under the new version (the `judge_again` hook, as for an amendment);
- each new version is recorded in the audit log (`event.regulation_upgraded`, with the versions and which bids'
  findings changed), in the same transaction.

A call stored from a file Gambit does not ship, or whose stored version already is the new one, is left as it is.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from core.db import db
from events.models import Amendment, Event
from events.regulation import (
    SEED_DIR,
    Regulation,
    RegulationError,
    load_regulation_file,
    regulation_from_snapshot,
)
from events.services import judge_again, load_event
from evidence import audit

_MISSING: Any = object()


class UpgradeError(Exception):
    """A stored call cannot be brought forward (an amendment no longer applies to the shipped file, or the result
    is not a valid regulation): the message names the call and the key."""


@dataclass
class BroughtForward:
    """What the upgrade did to one call."""

    slug: str
    from_version: int
    to_version: int
    amendments_kept: int = 0
    findings_changed: list[int] = field(default_factory=list)

    def line(self) -> str:
        """One line for the operator."""
        kept = f", {self.amendments_kept} amendment(s) made again on it" if self.amendments_kept else ""
        judged = (f"; findings changed for bid(s) {', '.join(map(str, self.findings_changed))}"
                  if self.findings_changed else "; no bid's findings changed")
        return (f"call {self.slug}: regulation brought forward from version {self.from_version} to "
                f"{self.to_version} (the call file this release ships{kept}){judged}")


def shipped_calls(seed_dir: Path = SEED_DIR) -> dict[str, Regulation]:
    """{slug: its Regulation} of every call file Gambit ships (seed_data/events/*.toml). Raises RegulationError
    when a shipped file cannot be read."""
    out = {}
    for path in sorted((seed_dir / "events").glob("*.toml")):
        reg = load_regulation_file(path)
        out[reg.event.slug] = reg
    return out


def _leaf_changes(old: Any, new: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """The changes from `old` to `new` (parsed JSON) as (path, new value), _MISSING for a key removed; lists are
    compared item by item, as events.rules.snapshot_changes does."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += _leaf_changes(old.get(key, _MISSING), new.get(key, _MISSING), (*path, key))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out += _leaf_changes(a, b, (*path, i))
        return out
    return [] if old == new else [(path, new)]


def _apply(data: Any, path: tuple, value: Any, *, slug: str) -> None:
    """Make one change on `data` in place. Raises UpgradeError when its place is not in `data`."""
    where = data
    for step in path[:-1]:
        try:
            where = where[step]
        except (KeyError, IndexError, TypeError):
            raise UpgradeError(_no_place(slug, path)) from None
    last = path[-1]
    if value is _MISSING:
        if isinstance(where, dict):
            where.pop(last, None)
        return
    if isinstance(where, dict) or (isinstance(where, list) and isinstance(last, int) and last < len(where)):
        where[last] = value
        return
    raise UpgradeError(_no_place(slug, path))


def _no_place(slug: str, path: tuple) -> str:
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return (f"call {slug}: an amendment changed {key}, which the call file of this release no longer has; "
            "nothing was upgraded (record the amendment again on the new file with `flask events load`)")


def _amendments(event: Event) -> list[Amendment]:
    return list(db.session.scalars(select(Amendment).where(Amendment.event_id == event.id)
                                   .order_by(Amendment.recorded_at, Amendment.id)))


def _with_amendments(event: Event, reg: Regulation, amendments: list[Amendment]) -> Regulation:
    """`reg` with the changes of each amendment of `event` made again on it. Raises UpgradeError."""
    if not amendments:
        return reg
    data = json.loads(reg.snapshot)
    versions = {v.id: v for v in event.versions}
    for amendment in amendments:
        before = json.loads(versions[amendment.from_version_id].snapshot)
        after = json.loads(versions[amendment.to_version_id].snapshot)
        for path, value in _leaf_changes(before, after):
            _apply(data, path, value, slug=event.slug)
    try:
        merged = regulation_from_snapshot(json.dumps(data, ensure_ascii=False))
    except RegulationError as exc:
        raise UpgradeError(f"call {event.slug}: its amendments made again on the call file of this release do "
                           f"not give a valid regulation ({exc}); nothing was upgraded") from None
    return dataclasses.replace(merged, text=reg.text)


def _stored(version) -> Any:
    """What the upgrade needs of a stored regulation (its slug, whether it is the practice call, its deadline), read
    from the snapshot's JSON: the Regulation of an older release's snapshot may be one this code cannot build."""
    event = json.loads(version.snapshot)["event"]
    return _Stored(slug=event["slug"], practice=bool(event.get("practice")), title=event["title"],
                   deadline_year=int(str(event["bid_deadline"])[:4]))


@dataclass(frozen=True)
class _Stored:
    slug: str
    practice: bool
    title: str
    deadline_year: int


def _practice(stored: _Stored, shipped: dict[str, Regulation]) -> Regulation | None:
    """The practice call made again from the shipped call it copies (the first one that is not itself a practice
    call, as `flask seed` makes it), moved by the years it was moved by before; None when none is shipped."""
    primary = next((r for r in shipped.values() if not r.event.practice), None)
    if primary is None:
        return None
    years = stored.deadline_year - primary.event.bid_deadline.year
    return primary.shifted(years=years, slug=stored.slug, title=stored.title)


def _shipped_for(stored: _Stored, shipped: dict[str, Regulation]) -> Regulation | None:
    """The shipped regulation a stored call is brought forward to: its own file's, the practice call's made again,
    or None for a call Gambit ships no file for."""
    if stored.slug in shipped:
        return shipped[stored.slug]
    return _practice(stored, shipped) if stored.practice else None


def bring_forward_calls(*, now: datetime, seed_dir: Path = SEED_DIR) -> list[BroughtForward]:
    """Give every stored call that Gambit ships a file for (and the practice call) the regulation of this release's
    file, keeping its amendments; judge its submitted bids again and write `event.regulation_upgraded`. Flushes,
    never commits. Raises UpgradeError (nothing should then be committed) or RegulationError for a shipped file that
    cannot be read."""
    shipped = shipped_calls(seed_dir)
    done = []
    for event in db.session.scalars(select(Event).order_by(Event.id)):
        old_version = event.regulation_version
        reg = _shipped_for(_stored(old_version), shipped) if old_version is not None else None
        if reg is None:
            continue
        amendments = _amendments(event)
        reg = _with_amendments(event, reg, amendments)
        if reg.sha256 == old_version.sha256:
            continue
        event, changed = load_event(reg, actor=None, now=now, source=f"upgrade: {old_version.source}"[:300],
                                    action="event.regulation_upgraded")
        if not changed:
            continue
        new_version = event.regulation_version
        report = judge_again(event, old_version, new_version, now=now, judge_old=False)
        result = BroughtForward(event.slug, old_version.number, new_version.number, len(amendments),
                                [entry["bid"] for entry in report])
        audit.record("event.bids_judged_again", event, actor=None, now=now,
                     data={"from": old_version.number, "to": new_version.number,
                           "findings_changed": result.findings_changed})
        done.append(result)
    return done

