"""The board's rules (Art. 15.3, 15.5). Pure: no Flask, no session."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from bids.consultation import ConsultationState
from core.money import format_day
from events.lifecycle import EventStatus
from evidence.hashing import canonical_sha256


class DecisionError(ValueError):
    """A decision that cannot be recorded as asked; the message says why, for the person recording it."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class DecisionMethod(enum.StrEnum):
    BOARD_VOTE = "board_vote"    # the Presidential Board decides (Art. 15.5, first sentence)
    PRESIDENT = "president"      # no Board meeting: the President, in consultation with the WCOC (Art. 15.5)

    @property
    def by_vote(self) -> bool:
        return self is DecisionMethod.BOARD_VOTE


def dossiers_open(state: EventStatus) -> bool:
    """The board sees dossiers once scoring is closed (and after the decision)."""
    return EventStatus(state).scoring_over


def inputs_sha256(snapshot: dict) -> str:
    """The hash of a dossier's inputs: the same inputs give the same hash, whatever the key order."""
    return canonical_sha256(snapshot, default=str)


def vote_recusal(member_federation: str | None, hosts: dict[int, str | None]) -> list[int]:
    """The bids whose host federation is the member's: a member with any is recused from the vote (Art. 15.5
    read with the WCOC's rule on conflicts: no one judges a bid of their own federation)."""
    if not member_federation:
        return []
    return sorted(bid_id for bid_id, host in hosts.items() if host == member_federation)


def not_voted_sentence(not_voted: Sequence[str], eligible: int) -> str:
    """Who of the Board has still to vote: "2 of 5 members have not voted: Ana Ruiz, Ole Berg." over the `eligible`
    members who may vote (active, not recused), `not_voted` the names of those of them without a vote. Raises
    nothing."""
    n = len(not_voted)
    if eligible == 0:
        return ("No member of the Presidential Board may vote on this call: none has an account, or every one is "
                "recused.")
    if n == 0:
        return ("The only member who may vote has voted." if eligible == 1 else
                f"Every one of the {eligible} members who may vote has voted.")
    return f"{n} of {eligible} members {'has' if n == 1 else 'have'} not voted: {', '.join(not_voted)}."


@dataclass(frozen=True)
class Tally:
    votes: dict[int, int]            # bid id -> votes
    abstentions: int
    recused: tuple[str, ...]         # names
    voters: tuple[str, ...]          # names of those who voted or abstained

    @property
    def cast(self) -> int:
        return sum(self.votes.values()) + self.abstentions

    @property
    def tied(self) -> bool:
        """Two bids or more share the most votes: not a decision of the Board (the procedure's tie-break)."""
        return len(self.leaders()) > 1

    def leaders(self) -> list[int]:
        if not self.votes:
            return []
        top = max(self.votes.values())
        return sorted(b for b, n in self.votes.items() if n == top and n > 0)

    def names(self, titles: Mapping[int, str]) -> str:
        """"Lviv: 2; Tbilisi: 0" over the bids of the tally, most votes first."""
        ordered = sorted(self.votes.items(), key=lambda kv: (-kv[1], titles.get(kv[0], "")))
        return "; ".join(f"{titles.get(b, f'bid {b}')}: {n}" for b, n in ordered)

    def as_dict(self) -> dict:
        return {"votes": {str(k): v for k, v in sorted(self.votes.items())}, "abstentions": self.abstentions,
                "recused": list(self.recused), "voters": list(self.voters), "cast": self.cast}


def tally(votes: Iterable[tuple[str, int | None]], bid_ids: Iterable[int], recused: Iterable[str]) -> Tally:
    """Count (member name, bid id or None for an abstention) over the bids in the contest."""
    counts = dict.fromkeys(bid_ids, 0)
    abstentions = 0
    voters = []
    for name, bid_id in votes:
        voters.append(name)
        if bid_id is None:
            abstentions += 1
        elif bid_id in counts:
            counts[bid_id] += 1
    return Tally(counts, abstentions, tuple(sorted(recused)), tuple(sorted(voters)))


def rationale_needed(selected: int, *, ranking_leaders: Iterable[int], flagged: Iterable[int]) -> str | None:
    """Why the decision must give its reasons, or None: when the choice is not the top of the WCOC's ranking, or
    is one of two or more bids tied at its top, or when it carries a red flag (Art. 15.5: the criteria are "viewed
    as a whole", so the board may depart from the ranking, but says why; the call's procedure asks the reasons)."""
    reasons = []
    leaders = set(ranking_leaders)
    if leaders and selected not in leaders:
        reasons.append("the selected bid is not the top of the WCOC's ranking")
    elif len(leaders) > 1:  # tied at the top: following the ranking chooses neither, so the choice says why
        reasons.append("the selected bid is tied for first place in the WCOC's ranking, which therefore does not "
                       "choose between the tied bids")
    if selected in set(flagged):
        reasons.append("the selected bid carries a red flag")
    return " and ".join(reasons) or None


# Gambit's procedure, not an article: Art. 15.5 says the Presidential Board decides, and sets no quorum, majority
# or tie-break. Gambit records a decision "by board vote" only for the bid with the most votes cast by members not
# recused (procedure.rules.board_vote); a tie is broken as the call's bidding procedure says (procedure.rules.
# tie_break, its method board_voting.tie_break). A tie is never the President's: Art. 15.5 gives the decision to
# the President only "if a Presidential Board meeting cannot be held".
VOTE_PROCEDURE = "Gambit's procedure for recording a board vote"
TIE_BREAK_PROCEDURE = "the call's tie-break"

# What each tie-break method of the procedure (events.regulation.TIE_BREAKS) asks of the Board next.
TIE_BREAK_NEXT = {
    "new_round": "The members vote again (each may change their vote on the Board's page); the decision is recorded "
                 "once one bid has the most votes.",
}


def check_board_vote(the_tally: Tally, selected: int, titles: Mapping[int, str], *, procedure: str = VOTE_PROCEDURE,
                     tie_break: str = TIE_BREAK_PROCEDURE, tie_break_says: str = "",
                     tie_break_method: str = "new_round") -> None:
    """Refuse a decision "by board vote" that the recorded votes do not give: no vote cast for any bid, a tie
    at the top (cited as the procedure's tie-break `tie_break`, which `tie_break_says`, by `tie_break_method`), or
    a selected bid other than the one with the most votes. Raises DecisionError (field "selected", "method" when
    no vote is cast, None for a tie: it is the votes', not the form's)."""
    leaders = the_tally.leaders()
    chosen = titles.get(selected, f"bid {selected}")
    if not leaders:
        raise DecisionError(f"{procedure}: no member of the Board has voted for a bid, so no decision can be "
                            f"recorded as a board vote (you chose {chosen}). Record the Board's votes first.", "method")
    if len(leaders) > 1:
        tied = " and ".join(titles.get(b, f"bid {b}") for b in leaders)
        says = f" {tie_break_says.strip()}" if tie_break_says.strip() else ""
        raise DecisionError(f"{tie_break}: the votes are tied between {tied} ({the_tally.votes[leaders[0]]} each; "
                            f"the votes: {the_tally.names(titles)}). A tie is not a decision of the Board.{says} "
                            f"{TIE_BREAK_NEXT[tie_break_method]}")
    if leaders[0] != selected:
        raise DecisionError(f"{procedure}: a board vote selects the bid with the most votes of the members not "
                            f"recused. The votes are {the_tally.names(titles)}, so it is "
                            f"{titles.get(leaders[0], leaders[0])}; you chose {chosen}.", "selected")


@dataclass(frozen=True)
class Consulted:
    """A person the FIDE President consulted before deciding alone (Art. 15.5, "in consultation with the WCOC"):
    their name, what they advised, the day they were consulted, and whether they are a member of the WCOC of the
    call (an active WCOC member with no bid in it)."""

    name: str
    advice: str
    on: date | None
    in_wcoc: bool = True


NO_MEETING_REASON_MISSING = ("{selection}: the FIDE President decides alone only \"if a Presidential Board meeting "
                             "cannot be held\": say why no Board meeting could be held.")
CONSULTATION_MISSING = ("{selection}: the FIDE President takes the decision \"in consultation with the WCOC\": name "
                        "the WCOC members consulted, the day each was consulted and what each advised.")


def check_president_grounds(no_meeting_reason: str, consulted: Iterable[Consulted], *, selection: str,
                            decided_on: date, today: date, call_opened: date) -> None:
    """Refuse a decision of the FIDE President alone that does not show the two conditions of `selection`
    (Art. 15.5): why no Presidential Board meeting could be held, and the consultation of the WCOC, each person
    consulted a WCOC member of the call, with their advice and the day they were consulted: not in the future,
    not before the call existed (`call_opened`), not after the decision. Raises DecisionError (field
    "no_meeting_reason" or "consultations")."""
    if not (no_meeting_reason or "").strip():
        raise DecisionError(NO_MEETING_REASON_MISSING.format(selection=selection), "no_meeting_reason")
    people = list(consulted)
    if not people:
        raise DecisionError(CONSULTATION_MISSING.format(selection=selection), "consultations")
    for c in people:
        if not c.in_wcoc:
            raise DecisionError(f"{selection}: the President consults the WCOC, and {c.name} is not a member of the "
                                "WCOC of this call.", "consultations")
        if not c.advice.strip():
            raise DecisionError(f"{selection}: say what {c.name} advised.", "consultations")
        if c.on is None:
            raise DecisionError(f"{selection}: say on which day {c.name} was consulted.", "consultations")
        entered = format_day(c.on)
        if c.on > today:
            raise DecisionError(f"{c.name} cannot have been consulted in the future: today is {format_day(today)} "
                                f"(you entered {entered}).", "consultations")
        if c.on < call_opened:
            raise DecisionError(f"{c.name} cannot have been consulted before the call existed: it was recorded in "
                                f"Gambit on {format_day(call_opened)} (you entered {entered}).", "consultations")
        if c.on > decided_on:
            raise DecisionError(f"{selection}: the decision is taken in consultation with the WCOC, so {c.name} is "
                                f"consulted before it: you entered {entered}, after the decision of "
                                f"{format_day(decided_on)}.", "consultations")


def president_grounds(no_meeting_reason: str, consulted: Iterable[tuple[str, date | None]], *,
                      selection: str) -> str:
    """The one sentence that the decision page, the minutes, the bidders' email, the API and the contract give
    for a decision of the FIDE President alone: why no Board meeting could be held, and whom of the WCOC the
    President consulted on which day, citing `selection`. Raises nothing."""
    reason = (no_meeting_reason or "").strip().rstrip(".")
    who = "; ".join(f"{name}, consulted on {format_day(on)}" if on else f"{name}, the day not recorded"
                    for name, on in consulted) or "no one named"
    # A decision recorded before the reason was asked for holds the migration's "Not recorded: ..." text: the
    # sentence then says that the reason is unknown instead of asserting it.
    if not reason or reason.startswith("Not recorded:"):
        return (f"Decided by the FIDE President alone, in consultation with the WCOC ({who}), under {selection}; "
                "why no Presidential Board meeting could be held was not recorded.")
    return (f"Decided by the FIDE President because a Presidential Board meeting could not be held ({reason}), in "
            f"consultation with the WCOC ({who}), under {selection}.")


def check_consultation(state: ConsultationState | str, title: str, *, article: str) -> None:
    """The decision's guard on a sponsor's bid (Art. 15.1, `article`): it cannot be selected while the host
    federation's answer is not recorded, nor after a refusal or inability to co-operate until FIDE records that it
    accepts the sponsor's proposal nonetheless. A case the President decided under Art. 16 is not refused here.
    Raises DecisionError (field "selected"); ValueError for a state that is not a ConsultationState."""
    state = ConsultationState(state)
    if state is ConsultationState.PENDING:
        raise DecisionError(f"Art. {article}: FIDE shall consult the federation where the sponsor proposes to hold "
                            f"the match. {title} is a sponsor's bid and the host federation's answer is not "
                            f"recorded: record it on the bid before the bid can be selected.", "selected")
    if state is ConsultationState.DECLINED:
        raise DecisionError(f"Art. {article}: if the federation refuses or is unable to co-operate, FIDE may still "
                            f"accept a proposal from a potential sponsor. The host federation of {title} did not "
                            f"co-operate and FIDE has not recorded that it accepts the sponsor's proposal "
                            f"nonetheless: record it on the bid before the bid can be selected.", "selected")


def check_decided_on(decided_on: date, *, today: date, last_vote: date | None, scoring_closed: date | None) -> None:
    """Gambit's sanity rule on the date of a decision: not in the future, not before the WCOC's scoring closed,
    and (by board vote) not before the last vote recorded. Raises DecisionError (field "decided_on")."""
    entered = format_day(decided_on)
    if decided_on > today:
        raise DecisionError(f"The date of the decision cannot be in the future: today is {format_day(today)} "
                            f"(you entered {entered}).", "decided_on")
    if scoring_closed is not None and decided_on < scoring_closed:
        raise DecisionError(f"The date of the decision cannot precede the close of the WCOC's scoring on "
                            f"{format_day(scoring_closed)} (you entered {entered}).", "decided_on")
    if last_vote is not None and decided_on < last_vote:
        raise DecisionError(f"The date of a decision by board vote cannot precede the last vote, cast on "
                            f"{format_day(last_vote)} (you entered {entered}).", "decided_on")
