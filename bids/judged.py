"""A bid's compliance report as it stands, judged when the bid changes and kept on its row, so that the bid list and
the bid's page read it instead of judging the bid again on every view (issue 37, point 4).

The report kept is used only while it is the report the rules would give now:
- **its key** (`judged_key`) names what it was judged on: the bid's revision (every save of a section, every change
  of status and a late admission raise it: bids.services), its documents (how many, the newest: a document is
  never deleted, a new one is a new row), the regulation version in force (an amendment changes it) and the code
  that judges (`rules_code`: a release that changes a rule or a message judges every bid again);
- **any other write** of the bid's row through the session forgets it (`_forget_on_change`: a script or the demo
  setting a field directly), and so does a change of its room rates;
- **the day**: the rules read `today` only where the signing date is judged (bids.rules.judgement_turns_on names the
  days on which the report may change); a report judged before such a day is not used from that day on.
Otherwise the bid is judged as before, and the report is kept again at its next change. Services call `keep` after
every change they make; the views call `findings_of`, and the list `kept_findings` on the row's columns.
"""

from __future__ import annotations

import functools
import hashlib
import json
from datetime import date, datetime
from pathlib import Path

from sqlalchemy import event, inspect, update
from sqlalchemy.orm import Session

from bids.models import Bid, BidRoomRate
from bids.rules import check_bid, judgement_turns_on
from core.db import db
from core.findings import Finding

KEPT_COLUMNS = frozenset({"judged_report", "judged_key", "judged_on"})
# The packages whose code a bid's findings may depend on (bids.rules and all it may import: the layers below bids).
JUDGING_PACKAGES = ("bids", "finance", "events", "core")


@functools.cache
def rules_code() -> str:
    """A fingerprint of the code that judges a bid: the source of every module of JUDGING_PACKAGES, read once per
    process (the same in every process running the same release). Raises OSError if a source cannot be read."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(p for package in JUDGING_PACKAGES for p in (root / package).rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def key_of(revision: int, regulation_version_id: int | None, documents: int, newest_document: int | None) -> str:
    """The key a report is kept under: what it was judged on, read from the row and an aggregate of its documents,
    and the code that judged it."""
    return f"r{revision}/v{regulation_version_id or 0}/d{documents}:{newest_document or 0}/c{rules_code()}"


def bid_key(bid: Bid) -> str:
    """The key of the bid as it is loaded (its documents loaded with it)."""
    ids = [d.id for d in bid.documents]
    return key_of(bid.revision, bid.event.regulation_version_id, len(ids), max(ids, default=None))


def judge(bid: Bid, *, today: date) -> list[Finding]:
    """The findings of every rule for the bid as it stands (bids.rules.check_bid). Raises nothing of its own."""
    return check_bid(bid.event.regulation, bid.to_data(), today=today)


def keep(bid: Bid, *, now: datetime) -> list[Finding]:
    """Judge the bid as it now stands (its pending changes written first) and keep the report on its row, under its
    key and the day. Returns the findings. Raises nothing of its own."""
    db.session.flush()
    today = now.date()
    data = bid.to_data()
    findings = check_bid(bid.event.regulation, data, today=today)
    bid.judged_report = json.dumps({
        "findings": [f.as_dict() for f in findings],
        "turns_on": [d.isoformat() for d in judgement_turns_on(data)]})
    bid.judged_key = bid_key(bid)
    bid.judged_on = today
    db.session.flush()
    return findings


def kept_findings(report: str | None, kept_key: str | None, judged_on: date | None, *, key: str,
                  today: date) -> list[Finding] | None:
    """The findings kept in `report` when they are the bid's now (`key` is the bid's key as it is, `today` the day
    it is judged for), else None. Raises nothing: a report that cannot be read is not used."""
    if report is None or judged_on is None or kept_key != key:
        return None
    try:
        turns, findings = _read(report)
    except (ValueError, KeyError, TypeError):
        return None
    if any((today >= d) != (judged_on >= d) for d in turns):
        return None
    return list(findings)


@functools.lru_cache(maxsize=256)
def _read(report: str) -> tuple[tuple[date, ...], tuple[Finding, ...]]:
    """(the days the report may change on, its findings) read from a report kept; the same text is read once per
    process (findings are immutable). Raises ValueError, KeyError or TypeError for a report that cannot be read."""
    kept = json.loads(report)
    return (tuple(date.fromisoformat(d) for d in kept["turns_on"]),
            tuple(Finding.from_dict(d) for d in kept["findings"]))


def findings_of(bid: Bid, *, today: date) -> list[Finding]:
    """The bid's findings on `today`: the report kept when it holds, else judged now. Raises nothing of its own."""
    kept = kept_findings(bid.judged_report, bid.judged_key, bid.judged_on, key=bid_key(bid), today=today)
    return kept if kept is not None else judge(bid, today=today)


@event.listens_for(Session, "before_flush")
def _forget_on_change(session: Session, flush_context, instances) -> None:
    """A bid whose row (other than the report kept) or room rates change in this flush forgets its report: what a
    service did not judge again is judged when shown."""
    for obj in (*session.new, *session.dirty, *session.deleted):
        if isinstance(obj, Bid):
            if obj not in session.new and any(attr.history.has_changes() for attr in inspect(obj).attrs
                                              if attr.key not in KEPT_COLUMNS):
                obj.judged_key = None
        elif isinstance(obj, BidRoomRate):  # a rate changed apart from its bid's list: its bid, and a bid it left
            history = inspect(obj).attrs.bid_id.history
            for bid_id in {obj.bid_id, *history.deleted} - {None}:
                bid = session.identity_map.get(session.identity_key(Bid, bid_id))
                if bid is not None:
                    bid.judged_key = None
                else:  # not loaded: forgotten in the database, in this flush's transaction
                    session.execute(update(Bid).where(Bid.id == bid_id).values(judged_key=None))
