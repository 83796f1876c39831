"""What a person may see of a call's scores, totals and ranks: the one rule every output that carries them follows.

Those outputs are the ranking page, the ranking API and the CSV export, the other members' scores beside a
scorecard, the dossiers and the board pack, and the decision record (its page, its API and its minutes). Each asks
`sight(data, viewer)` (or one of the two questions it answers, `closed_to` and `withheld_from`) and shows what the
answer allows; none re-decides it.

The rule, by who asks:

* the secretariat and the Board read every score at any time, unless the account also scores as a WCOC member:
  then the rules of independent scoring bind it like any member (its other roles open nothing early);
* a WCOC member reads no score until their declaration of conflicts is current and their own scorecards are in
  (independent first), or until scoring is over; and never the scores, total or rank of a bid they are recused
  from (their own, one their federation hosts, one they declared a conflict with), even after the decision;
* a bidder (without the secretariat's role) and anyone else read no score at all, their own bid's included.

An API token acts for its account: the same rule, on the same roles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from core.auth import Role
from core.money import format_day
from events.lifecycle import EventStatus
from scoring.rules import INDEPENDENCE, conflicted_by_federation, declaration_gate_message

if TYPE_CHECKING:
    from datetime import datetime

    from accounts.models import User
    from bids.models import Bid
    from events.models import Event


class _Declaration(Protocol):
    @property
    def confirmed_at(self) -> datetime: ...


class CallScoring(Protocol):
    """What this rule reads of one call's scoring (scoring.queries.ScoringData provides it, loaded once per page):
    named here so that the rule imports nothing of the queries, which ask it."""

    @property
    def event(self) -> Event: ...
    @property
    def ranked(self) -> list[Bid]: ...

    def due(self, member: User) -> list[Bid]: ...
    def outstanding(self, member: User) -> list[Bid]: ...
    def declaration(self, member: User) -> _Declaration | None: ...
    def declaration_current(self, member: User) -> bool: ...
    def recusal(self, member: User, bid: Bid) -> str | None: ...

# The roles that read the ranking; a bidder never does, whatever else it holds (see is_bidder).
REVIEWERS = (Role.WCOC, Role.BOARD, Role.ADMIN)
# The roles that read a call's decision record (reads_the_decision_record; its pages' roles_required).
DECISION_RECORD_READERS = REVIEWERS
NOT_A_REVIEWER = "Only the WCOC, the Presidential Board and the secretariat read the ranking."


def is_bidder(user) -> bool:
    """Whether the account holds the bidder role without the secretariat's: bidders never see a score.
    Raises nothing."""
    roles = user.role_set
    return Role.BIDDER in roles and Role.ADMIN not in roles


def reads_the_ranking(user) -> bool:
    """Whether the account may read the ranking at all: a reviewer's role, and not a bidder. Raises nothing."""
    return bool(user.role_set & set(REVIEWERS)) and not is_bidder(user)


def reads_the_decision_record(user) -> bool:
    """Whether the account may read a call's decision record (its page, minutes and API): a role among
    DECISION_RECORD_READERS (the pages' roles_required names the same). What of the ranking the record shows is then
    `sight`'s to say. Raises nothing."""
    return bool(user.role_set & set(DECISION_RECORD_READERS))


def declaration_gate(roles, *, owns_the_bid: bool, decided: bool,
                     declaration: Callable[[], tuple[bool, bool]]) -> str | None:
    """The declaration gate in front of every page and endpoint that shows a bid of a call (the bid page, its
    versions and documents, the API's bid endpoints, the scoring pages): what to tell a WCOC member who must
    confirm a declaration of conflicts covering every bid before seeing any, or None when they may go on.

    Who is gated: every account that holds the WCOC role (`roles`), whatever else it holds. The house rule of this
    module applies here too: a WCOC role binds the account's other roles like any member's, so the secretariat or a
    Board member who also scores declares their conflicts before seeing a bid, as every member does; a declaration
    can be made until the decision, so this costs one form and blocks no duty. Once the call is `decided` no
    declaration can be made or changed any more (scoring.services.declare_conflicts), and the secretariat's and the
    Board's duties go on (contracts, payments): from then on those roles are not held back by a declaration that can
    no longer be made. Without the WCOC role the secretariat and the Board are never gated: they declare nothing.
    Nor is the bid's own owner (`owns_the_bid`). `declaration()` reads, only for a person gated, whether their
    declaration covers every bid now before the WCOC and whether they made one at all. Raises what it raises.
    """
    if Role.WCOC not in roles or owns_the_bid or (roles & {Role.ADMIN, Role.BOARD} and decided):
        return None
    current, made = declaration()
    return None if current else declaration_gate_message(has_declaration=made)


def reads_all_scores(roles) -> bool:
    """The secretariat and the Board read every score at any time, unless the account also scores as a WCOC member:
    then the rules of independent scoring bind it like any member (its other roles open nothing early).
    Raises nothing."""
    return bool(roles & {Role.ADMIN, Role.BOARD}) and Role.WCOC not in roles


def scores_withheld_reason(*, reads_all: bool, wcoc: bool, declared: bool, due: Sequence[str],
                           outstanding: Sequence[str], status: EventStatus) -> str | None:
    """Why a reader sees no member's scores in the call yet, or None when they may read them.

    The secretariat and the Board (`reads_all`) read them at any time. A WCOC member reads them once their
    declaration of conflicts is current (`declared`) and they have submitted their own scorecard on every bid they
    are to score (`due`, the titles of the bids they are not recused from; `outstanding`, those of them not
    submitted yet), or once scoring is over (the call's `status`: no score can change any more). A member recused
    from every bid has nothing to submit: they read no score until scoring closes, otherwise recusing oneself from
    everything would open the others' scores at once. Raises nothing.
    """
    if reads_all:
        return None
    if not wcoc:
        return NOT_A_REVIEWER
    if status.scoring_over:  # no score can change any more: nothing left to keep independent (recusals still hide)
        return None
    if not declared:
        return "Declare your conflicts of interest first; the ranking opens to you once your scorecards are in."
    if outstanding:
        return (f"The ranking opens to you once you have submitted your own scorecards (independent first): "
                f"{len(outstanding)} to go ({', '.join(outstanding)}).")
    if not due:
        return (f"{INDEPENDENCE}: you are recused from every bid, so you have no scorecard to submit; the other "
                "members' scores stay closed to you until scoring closes.")
    return None


def may_see_scores_on_bid(*, reads_all: bool, recused: bool) -> bool:
    """Whether a reader to whom scores are open (`scores_withheld_reason` is None) sees the scores of one bid.

    A recused member sees nothing of the scores of the bid they are recused from: no total, rank, per-criterion
    statistic, red flag or scorecard, in any output (with two other members, a minimum and a maximum are their
    exact scores). The secretariat and the Board read every bid. Raises nothing.
    """
    return reads_all or not recused


# ------------------------------------------------------------------------------------ on one call's data


def closed_to(data: CallScoring, viewer: User) -> str | None:
    """Why `viewer` may not read any member's scores in the call yet, or None (`scores_withheld_reason` on the
    call's data). Raises nothing."""
    roles = viewer.role_set
    if is_bidder(viewer):
        return NOT_A_REVIEWER
    due = data.due(viewer) if Role.WCOC in roles else []
    return scores_withheld_reason(
        reads_all=reads_all_scores(roles), wcoc=Role.WCOC in roles,
        declared=data.declaration_current(viewer), due=[b.title for b in due],
        outstanding=[b.title for b in data.outstanding(viewer)] if due else [],
        status=data.event.state)


def withheld_from(data: CallScoring, viewer: User, bid: Bid) -> str | None:
    """Why `viewer` sees nothing of the scores on `bid` (they are recused from it), or None: what the ranking page,
    its API and the CSV give as the reason a bid is left out. Raises nothing."""
    reason = data.recusal(viewer, bid)
    if may_see_scores_on_bid(reads_all=reads_all_scores(viewer.role_set), recused=reason is not None):
        return None
    return f"you are recused from this bid ({reason}): its scores are not shown to you"


def _grounds(data: CallScoring, viewer: User, bid: Bid) -> str:
    """The recusal of `viewer` from `bid` as the sentence of a withheld bid says it (the precedence of
    scoring.queries.recusal_reason_of: their own bid, their federation's, a declared conflict)."""
    if bid.owner_id == viewer.id:
        return "it is your own bid"
    if conflicted_by_federation(viewer.federation, bid.host_federation):
        return f"your federation, {bid.host_federation}, hosts it"
    decl = data.declaration(viewer)
    return f"declaration of {format_day(decl.confirmed_at)}" if decl is not None else "declared conflict"


@dataclass(frozen=True)
class Withheld:
    """A bid whose scores, total and rank are left out of what one person is shown, and why: `reason` as the
    ranking gives it, `sentence` as a record says it ("Lviv is withheld from you: you are recused from it
    (declaration of 10 June 2015).")."""

    bid_id: int
    title: str
    reason: str
    sentence: str

    def as_dict(self) -> dict:
        return {"bid_id": self.bid_id, "title": self.title, "reason": self.sentence}


@dataclass(frozen=True)
class Sight:
    """What one person may see of a call's scores: nothing at all (`closed`, why), or every bid but the ones
    `withheld` from them. `everything()` is the whole, for the documents made once for the Board."""

    closed: str | None = None
    withheld: tuple[Withheld, ...] = ()

    @classmethod
    def everything(cls) -> Sight:
        return cls()

    @property
    def whole(self) -> bool:
        """Nothing is closed or withheld: the viewer may be given the document made for the Board as it is."""
        return self.closed is None and not self.withheld

    @property
    def withheld_ids(self) -> frozenset[int]:
        return frozenset(w.bid_id for w in self.withheld)

    def shows(self, bid_id: int) -> bool:
        """Whether the scores, total and rank of the bid may be shown. Raises nothing."""
        return self.closed is None and bid_id not in self.withheld_ids

    def refusal(self, bid_ids: Iterable[int] | None = None) -> str | None:
        """Why a document carrying the scores of `bid_ids` (None: every bid) may not be given as it is, or None.
        Raises nothing."""
        if self.closed is not None:
            return self.closed
        wanted = None if bid_ids is None else set(bid_ids)
        sentences = [w.sentence for w in self.withheld if wanted is None or w.bid_id in wanted]
        return " ".join(sentences) or None

    def record_ranking(self, ranking: Mapping[str, Any]) -> dict:
        """The WCOC's ranking as a decision record keeps it ({"weights", "bids": [{"bid", "title", "rank",
        "total", "red_flags"}]}) with the rows withheld from the viewer left out and the others ranked among
        themselves (a rank kept as stored would give away the withheld bid's by elimination): ranks by the stored
        order, ties kept ("2=" stays tied with its equal), "unranked" kept. Raises nothing."""
        rows = list(ranking.get("bids") or [])
        if self.closed is not None:
            return {**ranking, "bids": [], "closed": self.closed}
        if not self.withheld:
            return {**ranking, "bids": rows}
        kept = [r for r in rows if r.get("bid") not in self.withheld_ids]
        places = {id(r): _place(r.get("rank")) for r in kept}
        shown = []
        for r in kept:
            place = places[id(r)]
            if place is None:
                shown.append(dict(r))
                continue
            rank = 1 + sum(1 for p in places.values() if p is not None and p < place)
            tied = sum(1 for p in places.values() if p == place) > 1
            shown.append({**r, "rank": f"{rank}=" if tied else str(rank)})
        return {**ranking, "bids": shown}


def _place(label) -> int | None:
    """The place of a stored rank label ("1", "2=", "unranked")."""
    text = str(label or "").rstrip("=")
    return int(text) if text.isdigit() else None


def sight(data: CallScoring | Callable[[], CallScoring], viewer: User | None) -> Sight:
    """What `viewer` may see of the scores of the call `data` holds (None: the whole, for the documents made once
    for the Board). `data` may be a function that loads it: it is called only when the viewer's roles alone do
    not open every score (a stored document's lookup stays a few statements for the Board). Only the bids ranked
    carry scores: they are the ones that can be withheld. Raises nothing."""
    if viewer is None or (not is_bidder(viewer) and reads_all_scores(viewer.role_set)):
        return Sight.everything()
    data = data() if callable(data) else data
    closed = closed_to(data, viewer)
    if closed is not None:
        return Sight(closed=closed)
    withheld = tuple(Withheld(b.id, b.title, why, f"{b.title} is withheld from you: you are recused from it "
                                                  f"({_grounds(data, viewer, b)}).")
                     for b in data.ranked if (why := withheld_from(data, viewer, b)))
    return Sight(withheld=withheld)
