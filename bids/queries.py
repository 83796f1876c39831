"""What the bid list and a bid's page read: only what they show, the list's columns as plain rows, each row's text
made once here.

The list shows a few columns of every visible bid; loading each bid as an ORM object (with its call, owner, room
rates, documents and versions) cost most of the page. A submitted bid's compliance is a column
(`Bid.submitted_compliant`); a draft's is the report kept with it when its services last changed it (bids.judged),
and only a draft whose report no longer holds is loaded whole and judged. A bid's page shows the report kept (or
judges the bid) and lists the bid with its room rates and documents, but of its versions shows only the number,
date and hash, and of its owner only the name when the bid has none. Nothing here changes a row.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import NamedTuple

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.orm import joinedload, lazyload, load_only, undefer

from bids import judged
from bids.lifecycle import BidStatus
from bids.models import Bid, BidDocument, BidVersion
from bids.rules import is_compliant
from core.db import db
from core.money import format_day, format_eur
from core.validators import country_name
from events.lifecycle import EventStatus
from events.models import Event

# The statements whose shape never changes are built once, their values bound at each run: SQLAlchemy caches the
# compiled SQL, but building a select() and its loader options again costs more than running it on a bid's rows.
# A draft on the list is judged with its room rates and documents; a draft has a handful of each, so joining both
# costs less than selecting each apart (the rows are made unique again). Its call is in the session already.
_DRAFTS_JUDGED = select(Bid).where(Bid.id.in_(bindparam("ids", expanding=True))).options(
    lazyload(Bid.event), lazyload(Bid.owner), joinedload(Bid.room_rates), joinedload(Bid.documents),
    lazyload(Bid.versions))
# What a draft's line needs to tell whether the report kept with it holds (bids.judged): its row's key, the report,
# and an aggregate of its documents.
_DOCUMENTS = (select(BidDocument.bid_id, func.count(BidDocument.id).label("documents"),
                     func.max(BidDocument.id).label("newest"))
              .where(BidDocument.bid_id.in_(bindparam("ids", expanding=True))).group_by(BidDocument.bid_id)
              .subquery())
_DRAFTS_KEPT = (select(Bid.id, Bid.event_id, Bid.revision, Bid.late_admitted_at, Bid.entered_by_id, Bid.judged_report,
                       Bid.judged_key, Bid.judged_on, _DOCUMENTS.c.documents, _DOCUMENTS.c.newest)
                .outerjoin(_DOCUMENTS, _DOCUMENTS.c.bid_id == Bid.id)
                .where(Bid.id.in_(bindparam("ids", expanding=True))))
# A bid's page: the bid with its call (joined, as always), room rates and documents, and its report kept.
_BID_PAGE = select(Bid).where(Bid.id == bindparam("bid_id")).options(
    lazyload(Bid.owner), joinedload(Bid.room_rates), joinedload(Bid.documents), lazyload(Bid.versions),
    undefer(Bid.judged_report))
# What the rules of access read of a bid (its owner, status, call) and of its call (its id, state and address, not
# its regulation): a revisit answered 304 reads no more.
_BID_ACCESS = select(Bid).where(Bid.id == bindparam("bid_id")).options(
    load_only(Bid.id, Bid.event_id, Bid.owner_id, Bid.status), lazyload(Bid.owner), lazyload(Bid.room_rates),
    lazyload(Bid.documents), lazyload(Bid.versions),
    joinedload(Bid.event).options(load_only(Event.id, Event.slug, Event.status), lazyload(Event.regulation_version)))
_VERSION_ROWS = (select(BidVersion.number, BidVersion.submitted_at, BidVersion.sha256)
                 .where(BidVersion.bid_id == bindparam("bid_id")).order_by(BidVersion.number))

# The columns the list shows, in the order BidRow takes them.
LIST_COLUMNS = (Bid.id, Bid.event_id, Bid.applicant_name, Bid.venue_city, Bid.venue_country, Bid.prize_fund_eur,
                Bid.status, Bid.version, Bid.submitted_compliant, Bid.updated_at)


class BidRow(NamedTuple):
    """One line of the bid list, as the page writes it (texts, not values: the page only escapes them).

    `open_findings` is None for a submitted bid (judged when it was submitted: `complies` is what it was then),
    else how many requirements still block the draft's submission."""

    id: int
    url: str
    applicant: str
    place: str
    call: str
    practice: bool
    prize: str
    status: str
    complies: bool
    open_findings: int | None
    updated: str


def bid_rows(query: Select, events: dict[int, Event], *, today: date, url: Callable[[int], str],
             now: datetime | None = None) -> list[BidRow]:
    """The rows of the bids that `query` (a select() of Bid, filtered and ordered: bids.services.bids_visible_to)
    selects, in its order: the listed columns as plain rows, each draft's compliance judged on the draft loaded with
    its room rates and documents (one more query, only when there is a draft). `events` are every call by id (the
    page loads them anyway); `url` gives a bid's page from its id. A draft that can no longer be submitted at `now`
    (its call takes no more bids, and it was neither admitted late nor keyed in from paper) says so in its status.
    Raises nothing."""
    rows = db.session.execute(query.with_only_columns(*LIST_COLUMNS)).all()
    drafts = {r.id for r in rows if BidStatus(r.status).is_editable}
    judged_now: dict[int, tuple[bool, int]] = {}
    locked: dict[int, str] = {}
    if drafts:
        # Each draft's report kept with it (bids.judged) while it holds; the others loaded and judged.
        stale = set()
        for bid_id, event_id, revision, late, entered, report, key, judged_on, documents, newest in \
                db.session.execute(_DRAFTS_KEPT, {"ids": sorted(drafts)}):
            its_call = events[event_id]
            findings = judged.kept_findings(report, key, judged_on, today=today, key=judged.key_of(
                revision, its_call.regulation_version_id, documents or 0, newest))
            if findings is None:
                stale.add(bid_id)
            else:
                judged_now[bid_id] = (is_compliant(findings), sum(f.blocks_submission for f in findings))
            if now is not None and late is None and entered is None and not its_call.takes_bids(now):
                locked[bid_id] = ("the call is closed" if its_call.state is not EventStatus.OPEN else
                                  f"the deadline passed on {format_day(its_call.regulation.event.bid_deadline)}")
        if stale:
            for bid in db.session.scalars(_DRAFTS_JUDGED, {"ids": sorted(stale)}).unique():
                findings = judged.judge(bid, today=today)  # its call is in the identity map: no query
                judged_now[bid.id] = (is_compliant(findings), sum(f.blocks_submission for f in findings))
    calls = {e.id: (e.regulation.event.short_title, e.regulation.event.practice) for e in events.values()}
    out = []
    for (bid_id, event_id, applicant, city, country, prize, status, version, submitted_compliant,
         updated) in rows:
        state = BidStatus(status)
        complies, open_findings = judged_now.get(bid_id, (bool(submitted_compliant), None))
        call, practice = calls[event_id]
        out.append(BidRow(
            id=bid_id, url=url(bid_id), applicant=applicant or "(no name yet)",
            place=(city or "—") + (f" ({country_name(country)})" if country else ""), call=call, practice=practice,
            prize=format_eur(prize) or "—",
            status=f"{state.label} — not submitted, {locked[bid_id]}" if bid_id in locked else
            state.label + (f" (v{version})" if version else ""),
            complies=complies, open_findings=open_findings, updated=format_day(updated)))
    return out


class VersionRow(NamedTuple):
    """A submitted version as a bid's page lists it (not its frozen data, documents or compliance report)."""

    number: int
    submitted_at: datetime
    sha256: str


def bid_for_page(bid_id: int) -> Bid | None:
    """The bid its page shows, or None: with its call (joined, as always), its room rates and documents (the rules
    judge them, the page lists the documents) in one statement; not its versions (`version_rows`) nor its owner
    (loaded only if the title needs the owner's name: a bid with no applicant's name yet). Raises nothing."""
    return db.session.scalars(_BID_PAGE, {"bid_id": bid_id}).unique().one_or_none()


def bid_for_access(bid_id: int) -> Bid | None:
    """The bid with only what the rules of access read (its owner, status and call), or None; the page, if it is
    computed, loads the rest into the same object (`bid_for_page`). Raises nothing."""
    return db.session.scalars(_BID_ACCESS, {"bid_id": bid_id}).unique().one_or_none()


def version_rows(bid_id: int) -> list[VersionRow]:
    """The bid's submitted versions, oldest first, as plain rows. Raises nothing."""
    return [VersionRow(*row) for row in db.session.execute(_VERSION_ROWS, {"bid_id": bid_id})]


def call_bid_counts(event_id: int) -> tuple[int, int]:
    """(drafts not submitted, bids submitted and still in the call) of a call, counted in one query: what closing
    the call or opening scoring does to them. Late-admitted and paper drafts count as drafts. Raises nothing."""
    rows = dict(db.session.execute(select(Bid.status, func.count()).where(Bid.event_id == event_id)
                                   .group_by(Bid.status)).all())
    in_call = (BidStatus.SUBMITTED, BidStatus.SHORTLISTED, BidStatus.SELECTED, BidStatus.NOT_SELECTED)
    return rows.get(BidStatus.DRAFT.value, 0), sum(rows.get(s.value, 0) for s in in_call)
