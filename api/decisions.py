"""The selection decision in force for a call (Art. 15.5): method, selected bid, tally, reasons, and what the Board
reviewed. For the Board, the WCOC and the secretariat; bidders do not read the record."""

from __future__ import annotations

from typing import Any

from api.auth import api_error, api_user
from api.ranking import BidLeftOut
from api.routing import operation
from api.shapes import Day, Instant, Shape
from board.queries import current_decision
from board.rules import DecisionMethod
from events.services import get_event
from scoring.queries import load_scoring
from scoring.visibility import reads_the_decision_record, sight


class SelectedBid(Shape):
    id: int
    title: str


class Consulted(Shape):
    """A WCOC member the FIDE President consulted before deciding alone, the day and what they advised (`on` null
    for a record made before the day was kept)."""

    member: str
    member_id: int | None
    advice: str
    on: Day | None


class Decision(Shape):
    """The record as stored: `tally`, `ranking` and `reviewed` are the JSON the Board's record keeps
    (board.models.Decision). For the President's decision alone (`method` "president"): `no_meeting_reason`, why no
    Presidential Board meeting could be held, `consultations`, the WCOC consulted, and `grounds`, the sentence the
    minutes, the page and the bidders' email give (citing the article); all three empty for a board vote."""

    id: int
    event: str
    method: DecisionMethod
    decided_on: Day
    selected_bid: SelectedBid
    tally: Any
    no_meeting_reason: str
    consultations: list[Consulted]
    grounds: str
    rationale: str
    ranking: Any
    withheld: list[BidLeftOut]
    reviewed: list[Any]
    recorded_at: Instant
    recorded_by: str
    corrects: int | None
    correction_reason: str | None
    minutes_sha256: str | None


@operation("/events/<slug>/decision", operation_id="getDecision",
           summary="The selection decision in force: method, selected bid, tally, reasons, what the Board reviewed",
           response=Decision,
           errors={403: "Bidders do not read the record", 404: "No call with this slug, or no decision recorded yet"})
def decision(slug: str):
    ev = get_event(slug)
    if ev is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    if not reads_the_decision_record(api_user()):
        return api_error(403, "The decision record is for the Board, the WCOC and the secretariat.")
    found = current_decision(ev)
    if found is None:
        return api_error(404, "No decision is recorded for this call yet.")
    seen = sight(load_scoring(ev), api_user())
    ranking = found.loads("ranking")
    in_record = {row.get("bid") for row in ranking.get("bids") or []}
    return Decision(
        id=found.id, event=slug, method=found.how, decided_on=found.decided_on,
        selected_bid=SelectedBid(id=found.selected_bid_id, title=found.selected_bid.title),
        tally=found.loads("tally"), no_meeting_reason=found.no_meeting_reason,
        consultations=[Consulted(member=c["member"], member_id=c.get("member_id"), advice=c["advice"], on=c["on"])
                       for c in found.consulted()],
        grounds=found.grounds, rationale=found.rationale,
        ranking=seen.record_ranking(ranking),
        withheld=[BidLeftOut(**w.as_dict()) for w in seen.withheld if w.bid_id in in_record],
        reviewed=found.loads("reviewed"), recorded_at=found.recorded_at,
        recorded_by=found.recorded_by.name, corrects=found.corrects_id,
        correction_reason=found.correction_reason or None, minutes_sha256=found.minutes_sha256)
