"""What the scoring pages read about one call, loaded in a fixed number of queries, and the ranking built on it.

`load_scoring(event)` issues the same queries for 2 bids and 2 members as for 60 bids and 15 members: every
relationship a page reads is loaded on purpose (`selectinload`), never lazily per bid or per member. Nothing
here changes a row; the changes are in `scoring.services`.
"""

from __future__ import annotations

import csv
import functools
import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Any, TypeVar

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import joinedload, lazyload, load_only, selectinload
from sqlalchemy.orm.interfaces import LoaderOption

from accounts.models import User, UserRole
from bids.lifecycle import BidStatus
from bids.models import Bid, BidVersion
from core.auth import Role
from core.db import db
from core.exports import csv_cell
from core.money import format_day
from events.models import Event
from events.regulation import Regulation
from scoring import visibility
from scoring.models import (
    ConflictDeclaration,
    Scorecard,
    ScorecardFacts,
    ScorecardScore,
    WeightsVersion,
    conflict_declaration_bid,
)
from scoring.rules import (
    BidId,
    MemberId,
    Ranking,
    Scorecards,
    conflicted_by_federation,
    default_weights,
    passes_gate,
    rank_bids,
    score_table,
)
from scoring.sensitivity import Sensitivity, assess_sensitivity

T = TypeVar("T")
REVIEWED_STATUSES = tuple(s.value for s in BidStatus if s.visible_to_reviewers)


@dataclass(frozen=True)
class Recusal:
    """A member whose scores on a bid never count, and why."""

    member: User
    bid: Bid
    reason: str

    def as_dict(self) -> dict:
        return {"member_id": self.member.id, "member": self.member.name, "bid_id": self.bid.id,
                "bid": self.bid.title, "reason": self.reason}


_SCORES = select(ScorecardScore.scorecard_id, ScorecardScore.criterion, ScorecardScore.score,
                 ScorecardScore.comment).join(Scorecard, Scorecard.id == ScorecardScore.scorecard_id)
FEW_SCORECARDS = 500  # at most this many scorecards' scores are asked for by their ids; more, by the call's


class KeptScores:
    """The scores and comments of each scorecard as this process last read them, kept under what any write of the
    scorecard changes: its id, revision, version and times (every write of a scorecard or of its scores raises its
    revision: scoring.services, the optimistic lock). A ranking computed again after one scorecard was saved reads
    that one's scores alone, not the call's tens of thousands. One entry per scorecard (a newer revision read
    replaces the older), the `size` most recently used; what is kept is never changed once kept (CardRow's maps are
    made anew from it). Thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: OrderedDict[tuple, dict[str, tuple[Decimal | None, str]]] = OrderedDict()
        self._key_of: dict[int, tuple] = {}  # scorecard id -> the key its scores are kept under
        self._lock = threading.Lock()

    @staticmethod
    def key(card: CardRow) -> tuple:
        return (card.id, card.revision, card.version, card.updated_at, card.submitted_at)

    def get(self, card: CardRow) -> dict[str, tuple[Decimal | None, str]] | None:
        key = self.key(card)
        with self._lock:
            scores = self._kept.get(key)
            if scores is not None:
                self._kept.move_to_end(key)
            return scores

    def put(self, card: CardRow) -> None:
        if card.plain_scores is None:
            return
        key = self.key(card)
        with self._lock:
            older = self._key_of.get(card.id)
            if older is not None and older != key:
                self._kept.pop(older, None)
            self._kept[key] = card.plain_scores
            self._key_of[card.id] = key
            while len(self._kept) > self.size:
                (card_id, *_), _ = self._kept.popitem(last=False)
                del self._key_of[card_id]

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        """Forget every scorecard's scores (the tests, whose rolled-back rows' ids are handed out again)."""
        with self._lock:
            self._kept.clear()
            self._key_of.clear()


@dataclass(slots=True, eq=False)
class CardRow(ScorecardFacts):
    """A scorecard as the scoring pages read it: the columns of its row as plain values (no ORM object, which the
    ranking would otherwise build by the thousand), and its scores and comments once `ScoringData.load_scores`
    has read them. A change goes through scoring.services on the ORM object (`scorecard_of`)."""

    id: int
    bid_id: int
    member_id: int
    status: str
    revision: int
    version: int
    updated_at: datetime
    submitted_at: datetime | None
    # {criterion: (score, comment)}; None until ScoringData.load_scores read them.
    plain_scores: dict[str, tuple[Decimal | None, str]] | None = None

    def _scores(self) -> dict[str, tuple[Decimal | None, str]]:
        if self.plain_scores is None:
            raise LookupError(f"the scores of scorecard {self.id} were not read: call ScoringData.load_scores first")
        return self.plain_scores

    def score_map(self) -> dict[str, Decimal | None]:
        """{criterion: score} (None: not scored yet). Raises LookupError before `ScoringData.load_scores`."""
        return {k: score for k, (score, _) in self._scores().items()}

    def comment_map(self) -> dict[str, str]:
        """{criterion: comment}. Raises LookupError before `ScoringData.load_scores`."""
        return {k: comment for k, (_, comment) in self._scores().items()}


kept_scores = KeptScores(size=10_000)  # a call of 200 bids scored by 15 members holds 3,000 scorecards

CARD_COLUMNS = (Scorecard.id, Scorecard.bid_id, Scorecard.member_id, Scorecard.status, Scorecard.revision,
                Scorecard.version, Scorecard.updated_at, Scorecard.submitted_at)


@dataclass
class ScoringData:
    """One call's bids, WCOC members, declarations, scorecards and weights, as the scoring pages need them.

    `bids` are the bids the WCOC and the Board see (submitted or past it), by id; `ranked` those of them that
    passed the compliance gate or were admitted, sorted by title (the order the ranking keeps for ties);
    `excluded` the others with the reason. `members` are the WCOC members and every author of a scorecard.
    The scorecards themselves (`cards`) are read when first asked for, and one member's alone when only theirs are
    (`card`): a ranking found in the cache needs neither (`card_figures` tells whether it may be used).
    """

    event: Event
    reg: Regulation
    bids: list[Bid]
    members: dict[int, User]
    declarations: dict[int, ConflictDeclaration]
    declared: dict[int, set[int]]
    weights_version: WeightsVersion | None
    ranked: list[Bid] = field(default_factory=list)
    excluded: list[tuple[Bid, str]] = field(default_factory=list)
    # {bid id: title} of the ranked bids, made once (a title is worked out from the bid and its country's name; the
    # ranking, its sort and its sentences ask for every bid's).
    titles: dict[BidId, str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for bid in self.bids:
            if passes_gate(compliant=bid.submitted_compliant, admitted=bid.admitted_reason is not None):
                self.ranked.append(bid)
            else:
                # The gate is the call's bidding procedure, not an article: Art. 15.3 (FIDE's right to reject) is
                # cited only where the secretariat actually rejects a bid, which then leaves the contest.
                admission = self.event.regulation.citation("scoring_admission")
                self.excluded.append((bid, f"{admission}: it did not meet the compliance checks and was not "
                                           "admitted"))
        self.titles = {b.id: b.title for b in self.ranked}
        self.ranked.sort(key=lambda b: (self.titles[b.id].casefold(), b.id))

    # ---- members and conflicts

    @property
    def wcoc(self) -> list[User]:
        """The WCOC members (active accounts holding the role), by name."""
        return sorted((u for u in self.members.values() if u.active and Role.WCOC in u.role_set),
                      key=lambda u: (u.name.casefold(), u.id))

    @cached_property
    def _recused(self) -> dict[tuple[int, int], str]:
        """{(member id, bid id): why} for every member of `members` and every bid of `bids`, decided once for this
        data from plain values (the ranking asks for thousands of pairs: what counts, who is due, who is recused);
        only the pairs recused are held."""
        return {(member_id, bid_id): reason for member_id in self.members
                for bid_id, reason in self._recused_of(member_id).items()}

    @cached_property
    def _bid_facts(self) -> list[tuple[int, int, str | None]]:
        return [(b.id, b.owner_id, b.host_federation) for b in self.bids]

    def _recused_of(self, member_id: int) -> dict[int, str]:
        """{bid id: why} of the bids of `bids` one member of `members` is recused from, decided once per member
        (a viewer's page asks for theirs alone)."""
        known = self._recused_by_member.get(member_id)
        if known is None:
            member = self.members[member_id]
            declared = self.declared.get(member_id, set())
            decl = self.declarations.get(member_id)
            declared_reason = decl.reason if decl else ""
            known = self._recused_by_member[member_id] = {
                bid_id: reason for bid_id, owner_id, host in self._bid_facts
                if (reason := recusal_reason_of(member_id, member.federation, bid_id, owner_id, host,
                                                declared=declared, declared_reason=declared_reason)) is not None}
        return known

    @cached_property
    def _recused_by_member(self) -> dict[int, dict[int, str]]:
        return {}

    @cached_property
    def _bid_ids(self) -> frozenset[int]:
        return frozenset(b.id for b in self.bids)

    def recusal(self, member: User, bid: Bid) -> str | None:
        """Why `member`'s scores on `bid` never count, or None (see `recusal_reason`)."""
        if member.id in self.members and bid.id in self._bid_ids:
            return self._recused_of(member.id).get(bid.id)
        decl = self.declarations.get(member.id)  # a viewer who is not a member (the secretariat), or another bid
        return recusal_reason(member, bid, declared=self.declared.get(member.id, set()),
                              declared_reason=decl.reason if decl else "")

    def counting_members(self) -> dict[BidId, int]:
        """{bid id: how many WCOC members are to score it (those not recused)} for every ranked bid."""
        wcoc = [m.id for m in self.wcoc]
        recused = self._recused
        return {b.id: sum(1 for m in wcoc if (m, b.id) not in recused) for b in self.ranked}

    def recusals(self) -> list[Recusal]:
        out = []
        for member in sorted(self.members.values(), key=lambda u: (u.name.casefold(), u.id)):
            for bid in self.ranked:
                reason = self.recusal(member, bid)
                if reason and (Role.WCOC in member.role_set or (bid.id, member.id) in self.cards):
                    out.append(Recusal(member, bid, reason))
        return out

    def declaration(self, member: User) -> ConflictDeclaration | None:
        return self.declarations.get(member.id)

    def declaration_current(self, member: User) -> bool:
        """The member confirmed a declaration that covers every bid now before the WCOC."""
        decl = self.declarations.get(member.id)
        return decl is not None and {b.id for b in self.bids} <= decl.covered

    # ---- scorecards

    @cached_property
    def cards(self) -> dict[tuple[int, int], CardRow]:
        """{(bid id, member id): the scorecard as a plain row} of every scorecard on the call's bids, read in one
        query when first asked for (a member's read before, `card`, are the same objects). Raises nothing."""
        out = {}
        for row in db.session.execute(_CARDS, {"event_id": self.event.id}):
            card = CardRow(*row)
            mine = self._cards_by_member.get(card.member_id)
            early = mine.get(card.bid_id) if mine is not None else None
            if early is not None and early.revision == card.revision:
                card = early  # the same scorecard as read before: one object, whose scores load_scores fills
            elif mine is not None:
                mine[card.bid_id] = card  # changed since (a save in another tab): what is read now counts
            out[(card.bid_id, card.member_id)] = card
        return out

    @cached_property
    def _cards_by_member(self) -> dict[int, dict[int, CardRow]]:
        return {}

    def _cards_of(self, member_id: int) -> dict[int, CardRow]:
        """{bid id: scorecard} of one member: from `cards` once read, else in one query of that member's alone."""
        known = self._cards_by_member.get(member_id)
        if known is None:
            if "cards" in self.__dict__:
                known = {b: card for (b, m), card in self.cards.items() if m == member_id}
            else:
                known = {c.bid_id: c for c in (CardRow(*row) for row in db.session.execute(
                    _MEMBER_CARDS, {"event_id": self.event.id, "member_id": member_id}))}
            self._cards_by_member[member_id] = known
        return known

    @cached_property
    def card_figures(self) -> dict[int, tuple]:
        """{bid id: (how many scorecards, the sum of their revisions, the newest id, the last change)} of the call's
        bids, read as one aggregate per bid: a fingerprint of every scorecard's content without reading one. Every
        write of a scorecard or its scores raises its revision (scoring.services: the optimistic lock) and no
        scorecard is deleted but with its bid or member, so the figures of a bid change with any of its scorecards;
        the last change tells apart two histories after a restore. Raises nothing."""
        return {bid_id: tuple(rest) for bid_id, *rest in db.session.execute(_CARD_FIGURES,
                                                                           {"event_id": self.event.id})}

    def load_scores(self, bid: Bid | None = None) -> None:
        """Read the scores and comments of the call's scorecards (of `bid`'s only, for its scorecard page) as plain
        rows into each card's `plain_scores`: those of a scorecard unchanged since this process last read them are
        kept (`kept_scores`), the others read in one query. Each card's are read once, and only by what shows or
        computes scores (not by a ranking found in the cache, nor by a stored dossier's lookup). Raises nothing."""
        wanted = {card.id: card for card in self.cards.values()
                  if card.plain_scores is None and (bid is None or card.bid_id == bid.id)}
        missing = {}
        for card in wanted.values():
            card.plain_scores = kept_scores.get(card)
            if card.plain_scores is None:
                missing[card.id] = card.plain_scores = {}
        if not missing:
            return
        if len(missing) <= FEW_SCORECARDS:  # by their ids: those changed since they were kept, or one bid's
            query = _SCORES.where(ScorecardScore.scorecard_id.in_(sorted(missing)))
        elif bid is not None:
            query = _SCORES.where(Scorecard.bid_id == bid.id)
        else:
            query = _SCORES.join(Bid, Bid.id == Scorecard.bid_id).where(Bid.event_id == self.event.id)
        for card_id, criterion, score, comment in db.session.execute(query.order_by(ScorecardScore.id)):
            scores = missing.get(card_id)
            if scores is not None:
                scores[criterion] = (score, comment)
        for card_id in missing:
            kept_scores.put(wanted[card_id])

    @cached_property
    def version_sha256(self) -> dict[int, str]:
        """{bid id: the SHA-256 of the version it submitted last}, in one query of plain rows."""
        return dict(db.session.execute(
            select(BidVersion.bid_id, BidVersion.sha256).join(Bid, (Bid.id == BidVersion.bid_id)
                                                              & (Bid.version == BidVersion.number))
            .where(Bid.id.in_([b.id for b in self.bids]))).all()) if self.bids else {}

    def card(self, bid: Bid, member: User) -> CardRow | None:
        return self._cards_of(member.id).get(bid.id)

    def due(self, member: User) -> list[Bid]:
        """The bids `member` is to score: ranked, still in the contest, not recused."""
        return [b for b in self.ranked if b.state.in_contest and self.recusal(member, b) is None]

    def submitted_count(self, member: User) -> int:
        """How many of the bids due the member has a submitted scorecard on now (a reopened one is a draft)."""
        return sum(1 for b in self.due(member) if (c := self.card(b, member)) and c.is_submitted)

    def outstanding(self, member: User) -> list[Bid]:
        """The bids due that the member has not submitted a scorecard for yet (ever)."""
        return [b for b in self.due(member) if not ((c := self.card(b, member)) and c.ever_submitted)]

    def counted(self) -> dict[int, dict[int, CardRow]]:
        """{bid_id: {member_id: scorecard}}: the submitted scorecards of members not recused, per ranked bid."""
        out: dict[int, dict[int, CardRow]] = {b.id: {} for b in self.ranked}
        recused = self._recused
        for bid_id, member_id in sorted(self.cards):
            card = self.cards[(bid_id, member_id)]
            by_member = out.get(bid_id)
            if by_member is not None and card.is_submitted and (member_id, bid_id) not in recused:
                by_member[member_id] = card
        return out

    def others_on(self, bid: Bid, member: User) -> list[tuple[User, CardRow, str | None]]:
        """The other members' submitted scorecards on `bid` with their recusal (None when counted), or [] while
        `member` may not see them: scores are closed to them (`ranking_closed_to`: independent first), or they
        are recused from the bid (`bid_withheld_from`)."""
        if self.ranking_closed_to(member) or self.bid_withheld_from(member, bid):
            return []
        out = []
        for (bid_id, member_id), card in self.cards.items():
            if bid_id == bid.id and member_id != member.id and card.is_submitted:
                other = self.members[member_id]
                out.append((other, card, self.recusal(other, bid)))
        return sorted(out, key=lambda t: (t[0].name.casefold(), t[0].id))

    # ---- who may read the scores (the rule is scoring.visibility's; these ask it on this call's data)

    def ranking_closed_to(self, viewer: User) -> str | None:
        """Why `viewer` may not read any member's scores yet, or None: scoring.visibility.closed_to."""
        return visibility.closed_to(self, viewer)

    def bid_withheld_from(self, viewer: User, bid: Bid) -> str | None:
        """Why `viewer` sees nothing of the scores on `bid`, or None: scoring.visibility.withheld_from."""
        return visibility.withheld_from(self, viewer, bid)

    def scores_shown_first_time(self, viewer: User) -> ConflictDeclaration | None:
        """The viewer's declaration when the scores about to be shown to them are the first they see in this
        call (scoring.services.record_scores_shown records it), else None."""
        decl = self.declarations.get(viewer.id)
        return decl if decl is not None and decl.scores_first_shown_at is None else None

    # ---- weights

    @property
    def weights(self) -> dict[str, Decimal]:
        return weights_of(self.reg, self.weights_version)

    # ---- progress

    def not_scored(self) -> list[tuple[User, list[Bid]]]:
        """The WCOC members with a bid due (`due`) whose scorecard is not submitted, with those bids."""
        _ = self.cards  # every member's read at once (one query), not one query per member
        return [(m, missing) for m in self.wcoc
                if (missing := [b for b in self.due(m) if not ((c := self.card(b, m)) and c.is_submitted)])]

    def progress(self) -> str:
        """How many of the scorecards due are in, and who has not scored which bid: said to whoever closes
        scoring ("2 of 8 scorecards are in. Not scored yet — Bo Berg: Lviv and Tbilisi.")."""
        due = sum(len(self.due(m)) for m in self.wcoc)
        missing = self.not_scored()
        done = due - sum(len(bids) for _, bids in missing)
        text = f"{done} of {due} scorecard{'' if due == 1 else 's'} {'is' if done == 1 else 'are'} in."
        if missing:  # bid titles hold commas ("…, GE"): members are parted by semicolons, bids by "and"
            text += " Not scored yet — " + "; ".join(
                f"{m.name}: {', '.join(b.title for b in bids[:-1])}{' and ' if len(bids) > 1 else ''}{bids[-1].title}"
                for m, bids in missing) + "."
        return text


def recusal_reason(member: User, bid: Bid, *, declared: set[int], declared_reason: str) -> str | None:
    """Why `member`'s scores on `bid` never count, or None: the bid is theirs, they belong to its host
    federation (whatever they declared), or they declared a conflict with it (`declared` holds those bid ids)."""
    return recusal_reason_of(member.id, member.federation, bid.id, bid.owner_id, bid.host_federation,
                             declared=declared, declared_reason=declared_reason)


def recusal_reason_of(member_id: int, member_federation: str | None, bid_id: int, owner_id: int,
                      host_federation: str | None, *, declared: set[int], declared_reason: str) -> str | None:
    """`recusal_reason` on the plain values it reads."""
    if owner_id == member_id:
        return "submitted this bid"
    if conflicted_by_federation(member_federation, host_federation):
        return f"member of the host federation ({host_federation})"
    if bid_id in declared:
        return f"declared a conflict of interest: {declared_reason}"
    return None


def declaration_of(event: Event, member: User) -> ConflictDeclaration | None:
    return db.session.scalars(select(ConflictDeclaration).where(
        ConflictDeclaration.event_id == event.id, ConflictDeclaration.member_id == member.id)).first()


def declaration_covers_every_bid(event: Event, member: User) -> bool:
    """Whether `member` confirmed a declaration of conflicts that covers every bid now before the WCOC (two
    queries). Raises nothing."""
    decl = declaration_of(event, member)
    if decl is None:
        return False
    ids = set(db.session.scalars(select(Bid.id).where(Bid.event_id == event.id,
                                                      Bid.status.in_(REVIEWED_STATUSES))))
    return ids <= decl.covered


def declaration_required(user: User, event: Event, *, owner_id: int | None = None,
                         data: ScoringData | None = None) -> str | None:
    """The declaration gate (scoring.visibility.declaration_gate, whose docstring says who is gated) on `user`'s
    declaration for `event`, read only when the gate needs it: what to tell them, or None when they may go on.
    `owner_id` is the bid's owner; `data` (already loaded by a scoring page) saves the queries. Raises nothing."""

    def declaration() -> tuple[bool, bool]:
        if data is not None:
            return data.declaration_current(user), data.declaration(user) is not None
        decl = declaration_of(event, user)
        return decl is not None and declaration_covers_every_bid(event, user), decl is not None

    return visibility.declaration_gate(user.role_set, owns_the_bid=owner_id is not None and owner_id == user.id,
                                       decided=event.state.is_decided, declaration=declaration)


def scorecard_of(bid: Bid, member: User) -> Scorecard | None:
    """`member`'s scorecard on `bid` as the ORM object scoring.services changes, or None."""
    return db.session.scalars(select(Scorecard).where(Scorecard.bid_id == bid.id,
                                                      Scorecard.member_id == member.id)).first()


def recusal_for(bid: Bid, member: User) -> str | None:
    """`recusal_reason` for one bid and member, read from the database."""
    decl = declaration_of(bid.event, member)
    declared = decl.conflicted_bid_ids if decl else set()
    return recusal_reason(member, bid, declared=declared, declared_reason=decl.reason if decl else "")


def weights_of(reg: Regulation, version: WeightsVersion | None) -> dict[str, Decimal]:
    """The weights of a version, or the regulation's published ones when there is no version."""
    return default_weights(reg) if version is None else version.weights_dict


def weights_label(version: WeightsVersion | None, reg: Regulation) -> str:
    """"Weights version 2 (changed 3 June 2015: ...)" or "the weights published in the regulation"."""
    if version is None:
        return f"the weights published with the call ({reg.citation('weights')}), unchanged"
    why = f": {version.reason}" if version.reason else ""
    return f"weights version {version.number} (changed {format_day(version.created_at)}{why})"


def current_weights_version(event: Event) -> WeightsVersion | None:
    """The newest weights version of the call, None while the published weights are unchanged."""
    # Its author is read only by the weights page that names them (one statement then), not joined with their
    # roles on every ranking.
    return db.session.scalars(_CURRENT_WEIGHTS, {"event_id": event.id}).first()


_CURRENT_WEIGHTS = (select(WeightsVersion).where(WeightsVersion.event_id == bindparam("event_id"))
                    .options(lazyload(WeightsVersion.created_by)).order_by(WeightsVersion.number.desc()).limit(1))


def weights_versions(event: Event) -> list[WeightsVersion]:
    return list(db.session.scalars(select(WeightsVersion).where(WeightsVersion.event_id == event.id)
                                   .order_by(WeightsVersion.number.desc())))


# What the scoring pages, the API's ranking and the Board's lookup of stored dossiers read of a bid: its title, its
# state, who owns and hosts it, the compliance gate, the consultation and its versions' counter. The rest of the
# bid's particulars (its evaluation texts, amounts, hotel, guarantee, signatory) are read from the version the
# scorecard page shows, or by a dossier (`full`); any other column is still read when asked for, one at a time.
REVIEW_COLUMNS = (Bid.id, Bid.event_id, Bid.owner_id, Bid.status, Bid.version, Bid.revision, Bid.updated_at,
                  Bid.first_submitted_at, Bid.submitted_at, Bid.rejection_reason, Bid.consultation,
                  Bid.consultation_note, Bid.consultation_accepted_at, Bid.consultation_ruling_grounds,
                  Bid.consultation_ruling_reason, Bid.late_admitted_reason,
                  Bid.admitted_reason, Bid.submitted_compliant, Bid.applicant_type, Bid.applicant_name,
                  Bid.host_federation, Bid.venue_city, Bid.venue_country)


def _bids_statement(options: tuple[LoaderOption, ...]):
    return (select(Bid).where(Bid.event_id == bindparam("event_id"), Bid.status.in_(REVIEWED_STATUSES))
            .options(*options).order_by(Bid.id))


# The statements of `load_scoring`, built once with their values bound at each run: building a select() and its
# loader options again cost more than running it (SQLAlchemy caches the compiled SQL, not the statement).
_BIDS = _bids_statement((load_only(*REVIEW_COLUMNS), lazyload(Bid.event), lazyload(Bid.owner),
                         lazyload(Bid.room_rates), lazyload(Bid.documents), lazyload(Bid.versions)))
_BIDS_FULL = _bids_statement((selectinload(Bid.versions), selectinload(Bid.room_rates), selectinload(Bid.documents)))
_CARDS = select(*CARD_COLUMNS).join(Bid, Scorecard.bid_id == Bid.id).where(Bid.event_id == bindparam("event_id"))
_MEMBER_CARDS = _CARDS.where(Scorecard.member_id == bindparam("member_id"))
_CARD_FIGURES = (select(Scorecard.bid_id, func.count(Scorecard.id), func.sum(Scorecard.revision),
                        func.max(Scorecard.id), func.max(Scorecard.updated_at))
                 .join(Bid, Scorecard.bid_id == Bid.id).where(Bid.event_id == bindparam("event_id"))
                 .group_by(Scorecard.bid_id))
# The WCOC members and every author of a scorecard of the call, with their roles in the same statement.
_MEMBERS = select(User).where(
    User.id.in_(select(UserRole.user_id).where(UserRole.role == Role.WCOC.value))
    | User.id.in_(select(Scorecard.member_id).join(Bid, Scorecard.bid_id == Bid.id)
                  .where(Bid.event_id == bindparam("event_id")))).options(joinedload(User.roles))
# Each declaration with the bids it names (one row per bid, or one row with None).
_DECLARATIONS = (select(ConflictDeclaration, conflict_declaration_bid.c.bid_id)
                 .outerjoin(conflict_declaration_bid,
                            conflict_declaration_bid.c.declaration_id == ConflictDeclaration.id)
                 .where(ConflictDeclaration.event_id == bindparam("event_id")))


def bids_before_reviewers(event: Event, *, full: bool = False) -> list[Bid]:
    """The call's bids that the WCOC sees (submitted, or decided on), by id. Only the columns the scoring pages
    read (REVIEW_COLUMNS; the call is in the identity map; the gate reads `submitted_compliant`); `full` loads every
    column and what a dossier prints (room rates, documents, versions) for every bid at once."""
    return list(db.session.scalars(_BIDS_FULL if full else _BIDS, {"event_id": event.id}))


def load_scoring(event: Event, *, full: bool = False) -> ScoringData:
    """Everything the scoring pages of one call read, in a fixed number of queries (see the module docstring):
    the scores themselves are read on demand (`ScoringData.load_scores`). `full`: see bids_before_reviewers.
    Raises nothing."""
    bids = bids_before_reviewers(event, full=full)
    members = {u.id: u for u in db.session.scalars(_MEMBERS, {"event_id": event.id}).unique()}
    declarations: dict[int, ConflictDeclaration] = {}
    declared: dict[int, set[int]] = {}
    for decl, bid_id in db.session.execute(_DECLARATIONS, {"event_id": event.id}):
        declarations[decl.member_id] = decl
        if decl.has_conflict and bid_id is not None:
            declared.setdefault(decl.member_id, set()).add(bid_id)
    return ScoringData(event=event, reg=event.regulation, bids=bids, members=members, declarations=declarations,
                       declared=declared,
                       weights_version=current_weights_version(event))


# ------------------------------------------------------------------------------------------ the ranking


@dataclass(frozen=True)
class RankingReport:
    """The ranking of Art. 15.5 under the weights in force, its stability, and who was recused where.

    `withheld` are the bids whose scores the viewer may not see (they are recused from them), with why: they are
    left out of the ranking, its statistics and its sensitivity altogether, so that nothing shown is computed
    from their scores.
    """

    data: ScoringData
    ranking: Ranking
    sensitivity: Sensitivity  # imported for type checking only: scoring.sensitivity loads numpy
    recusals: list[Recusal]
    withheld: list[tuple[Bid, str]] = field(default_factory=list)
    # The cache slot of the arithmetic this report shows (arithmetic_slot): what is drawn from the results alone
    # is kept there with them (`kept`).
    slot: dict = field(default_factory=dict, repr=False, compare=False)
    # How many members are due to score each ranked bid, when the call's slot knew it (else counted again).
    expected_counts: dict[BidId, int] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def counted(self) -> dict[int, dict[int, CardRow]]:
        """{bid id: {member id: scorecard}} of the scorecards the ranking counts (ScoringData.counted, the withheld
        bids left out): read when asked for (a dossier's comments), not by a ranking found in the cache."""
        hidden = {b.id for b, _ in self.withheld}
        return {bid_id: by for bid_id, by in self.data.counted().items() if bid_id not in hidden}

    @property
    def weights_version(self) -> WeightsVersion | None:
        return self.data.weights_version

    @property
    def weights_label(self) -> str:
        return weights_label(self.data.weights_version, self.data.reg)

    @cached_property
    def _by_id(self) -> dict[BidId, Bid]:
        return {b.id: b for b in self.data.ranked}

    @cached_property
    def _wcoc(self) -> list[User]:
        return self.data.wcoc

    def bid(self, bid_id: BidId) -> Bid:
        return self._by_id[bid_id]

    @cached_property
    def _expected(self) -> dict[BidId, int]:
        return self.expected_counts if self.expected_counts is not None else self.data.counting_members()

    def expected(self, bid: Bid) -> int:
        """How many WCOC members are to score the bid (those not recused)."""
        known = self._expected.get(bid.id)
        return known if known is not None else sum(1 for m in self._wcoc if self.data.recusal(m, bid) is None)

    def kept(self, name: str, key, make: Callable[[], T]) -> T:
        """`make()`, computed once for this ranking's results and kept with them (in their cache slot) under
        (`name`, `key`): for what depends on nothing but the results, the regulation and the bids' titles, which
        the slot's fingerprint holds (a bid's chart). Raises what `make` raises."""
        kept = self.slot.setdefault(name, {})
        if key not in kept:
            kept[key] = make()
        return kept[key]

    def members_scored(self, result) -> str:
        """"1 of 4 members scored": the counted scorecards of a ranked bid against the members due to score it."""
        return f"{result.scorecards} of {self.expected(self.bid(result.bid_id))} members scored"

    @property
    def short_of_scorecards(self) -> list[tuple[Bid, str]]:
        """The ranked bids fewer members scored than were due to, with "1 of 4 members scored"."""
        return [(self.bid(r.bid_id), self.members_scored(r)) for r in self.ranking.bids
                if r.scorecards < self.expected(self.bid(r.bid_id))]

    def weights_version_dict(self) -> dict:
        v = self.data.weights_version
        return {"number": v.number if v else 0, "label": self.weights_label,
                "reason": v.reason if v else "", "created_at": v.created_at.isoformat() if v else None,
                "weights": [w.as_dict() for w in self.ranking.weights]}

    def as_dict(self) -> dict:
        """The JSON of the API: every score, weight and total as a string."""
        data = self.data
        bids = []
        for result in self.ranking.bids:
            bid = self.bid(result.bid_id)
            bids.append({**result.as_dict(), "title": bid.title, "host_federation": bid.host_federation,
                         "admitted_reason": bid.admitted_reason, "expected_scorecards": self.expected(bid)})
        return {
            "event": {"slug": data.event.slug, "title": data.event.title, "status": data.event.status},
            "statistic": self.ranking.statistic,
            "weights_version": self.weights_version_dict(),
            "leaders": list(self.ranking.leaders),
            "bids": bids,
            "notes": list(self.ranking.notes),
            "recusals": [r.as_dict() for r in self.recusals],
            "withheld": [{"bid_id": b.id, "title": b.title, "reason": why} for b, why in self.withheld],
            "excluded": [{"bid_id": b.id, "title": b.title, "reason": why} for b, why in data.excluded],
            "sensitivity": self.sensitivity.as_dict(),
        }


def build_ranking(data: ScoringData, viewer: User | None = None) -> RankingReport:
    """Rank the ranked bids on the submitted scorecards of the members not recused (scoring.rules.rank_bids),
    and assess how stable the ranking is (scoring.sensitivity.assess_sensitivity).

    For a `viewer` (None: the whole ranking, for the Board's dossiers), the bids whose scores are withheld from
    them (`ScoringData.bid_withheld_from`) are left out before anything is computed and listed in `withheld`.
    Raises ValueError when a stored weights version no longer fits the call's criteria."""
    reg = data.reg
    withheld = [] if viewer is None else [(b, why) for b in data.ranked
                                          if (why := data.bid_withheld_from(viewer, b))]
    hidden = frozenset(b.id for b, _ in withheld)
    names: dict[BidId, str] = {b.id: data.titles[b.id] for b in data.ranked if b.id not in hidden}
    member_names: dict[MemberId, str] = {m.id: m.name for m in data.members.values()}
    weights = data.weights
    # The call's slot, found from what was read already and one aggregate per bid (no scorecard read), holds the
    # fingerprint of the arithmetic's inputs and what the page shows beside it; on a miss they are worked out from
    # the scorecards, and the arithmetic itself is found by its own fingerprint or computed.
    call = arithmetic_slot(_call_key(data, hidden, names, weights))
    kept = call.get("kept")
    if kept is None:
        counted = {bid_id: by for bid_id, by in data.counted().items() if bid_id not in hidden}
        kept = (_arithmetic_key(reg, counted, weights, names, member_names),
                tuple((r.member.id, r.bid.id, r.reason) for r in data.recusals()), data.counting_members())
        # Kept under the figures only if the scorecards worked from are the ones the figures describe (another
        # request may have saved one between the two reads); set at once, so another thread sees all or nothing.
        if _figures_of(data.cards) == data.card_figures:
            call["kept"] = kept
    arithmetic, recusal_ids, expected = kept
    slot = arithmetic_slot(arithmetic)
    if "result" not in slot:
        slot["result"] = _arithmetic(data, hidden, weights, names, member_names)
    ranking, sensitivity = slot["result"]
    by_id = {b.id: b for b in data.bids}
    recusals = [Recusal(data.members[m], by_id[b], why) for m, b, why in recusal_ids]
    return RankingReport(data, ranking, sensitivity, recusals, withheld, slot, expected_counts=expected)


def _figures_of(cards: dict[tuple[int, int], CardRow]) -> dict[int, tuple]:
    """`ScoringData.card_figures` worked out from scorecard rows read (the same four figures per bid)."""
    out: dict[int, list] = {}
    for card in cards.values():
        count, revisions, newest, changed = out.get(card.bid_id, (0, 0, card.id, card.updated_at))
        out[card.bid_id] = [count + 1, revisions + card.revision, max(newest, card.id), max(changed, card.updated_at)]
    return {bid_id: tuple(figures) for bid_id, figures in out.items()}


def _arithmetic(data: ScoringData, hidden: frozenset[int], weights, names, member_names) -> tuple:
    """(the ranking, its sensitivity) computed on the counted scorecards' scores. Raises what rank_bids raises."""
    reg = data.reg
    keys = {c.key for c in reg.criteria}
    data.load_scores()
    cards: Scorecards = {bid_id: {m: {k: v for k, v in card.score_map().items() if k in keys}
                                  for m, card in by_member.items()}
                         for bid_id, by_member in data.counted().items() if bid_id not in hidden}
    table = score_table(reg, cards)  # validated once, shared by the ranking and its sensitivity
    return (rank_bids(reg, table, weights, names=names),
            assess_sensitivity(reg, table, weights, names=names, member_names=member_names))


# The ranking and its sensitivity are pure functions of the scores, weights, names and regulation: the same
# inputs give the same (immutable) results, so a worker keeps the last few instead of sampling 10,000 weightings
# on every page view. Two kinds of slot share the cache: a call's (`_call_key`: a fingerprint read without any
# scorecard, holding the arithmetic's fingerprint, the recusals and who is due to score what) and the arithmetic's
# (`_arithmetic_key`, read from the counted scorecards: several states of a call that count the same scores share
# it). Nothing from the database session is kept.
@functools.lru_cache(maxsize=64)
def arithmetic_slot(key: tuple) -> dict[str, Any]:
    """The slot kept for the inputs fingerprinted by `key` (empty until filled); the 64 most recently used are
    kept (`arithmetic_slot.cache_clear()` empties them). Raises nothing."""
    return {}


def _call_key(data: ScoringData, hidden: frozenset[int], names: dict[BidId, str], weights) -> tuple:
    """A fingerprint of everything the call's slot holds is drawn from, read from the rows already loaded and one
    aggregate of the scorecards per bid (`ScoringData.card_figures`): the regulation and the weights, the ranked
    bids (their titles, owners, host federations) and those withheld from the viewer, the members (names,
    federations, WCOC or not, active), their declarations (the bids declared, the reason), and the figures of
    every bid's scorecards."""
    members = tuple((m.id, m.name, m.federation, m.active, Role.WCOC in m.role_set)
                    for m in sorted(data.members.values(), key=lambda u: u.id))
    declared = tuple((member_id, tuple(sorted(data.declared.get(member_id, ()))), decl.reason)
                     for member_id, decl in sorted(data.declarations.items()))
    bids = tuple((b.id, b.owner_id, b.host_federation) for b in data.bids)
    return ("call", data.event.id, data.reg.sha256, tuple(sorted(weights.items())), tuple(sorted(names.items())),
            tuple(sorted(hidden)), bids, members, declared, tuple(sorted(data.card_figures.items())))


def _arithmetic_key(reg, counted, weights, names, member_names) -> tuple:
    """A cheap fingerprint of the arithmetic's inputs, read from the rows already loaded, no score needed: which
    submission of which scorecard counts where (a submitted scorecard's scores change only with a new submission,
    which raises its version and sets its time; every save raises its revision), the weights in force, the names
    and the regulation."""
    return (reg.sha256, tuple(sorted(weights.items())),
            tuple((b, m, card.id, card.version, card.revision, card.updated_at, card.submitted_at)
                  for b, by in sorted(counted.items())
                  for m, card in sorted(by.items())),
            tuple(sorted(names.items())), tuple(sorted(member_names.items())))


# ------------------------------------------------------------------------------------------- the export

CSV_HEADER = ("bid_id", "bid", "host_federation", "member", "member_federation", "scorecard_version",
              "submitted_at", "counted", "criterion", "criterion_label", "score", "comment")


def scores_csv(data: ScoringData, viewer: User) -> str:
    """Every submitted score and comment of the call, one row per member, bid and criterion; whether it counts
    (or why not). The export leaves out the bids whose scores are withheld from the viewer
    (`ScoringData.bid_withheld_from`: a WCOC member's recusals), as the ranking page and the API do."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    data.load_scores()
    by_id = {b.id: b for b in data.ranked}
    for (bid_id, member_id), card in sorted(data.cards.items()):
        bid = by_id.get(bid_id)
        if bid is None or not card.is_submitted or data.bid_withheld_from(viewer, bid):
            continue
        member = data.members[member_id]
        assert card.submitted_at is not None  # a submitted card
        recused = data.recusal(member, bid)
        scores, comments = card.score_map(), card.comment_map()
        for c in data.reg.criteria:
            score = scores.get(c.key)
            writer.writerow([bid.id, csv_cell(bid.title), bid.host_federation or "", csv_cell(member.name),
                             member.federation or "", card.version, card.submitted_at.isoformat(),
                             "yes" if recused is None else f"no: {recused}", c.key, c.label,
                             "" if score is None else f"{score.normalize():f}", csv_cell(comments.get(c.key, ""))])
    return out.getvalue()
