"""The WCOC's ranking of a call's bids (Art. 15.5): totals, per-criterion statistics, red flags, the weights version
used, recusals and the sensitivity summary. Scores, weights and totals are decimal strings, never floats."""

from __future__ import annotations

from api.auth import api_error, api_user
from api.routing import operation
from api.shapes import DecimalText, Instant, OpenShape, Shape
from core.db import writes_on_get
from events.lifecycle import EventStatus
from events.services import get_event
from scoring.gates import record_first_showing
from scoring.queries import build_ranking, load_scoring
from scoring.visibility import NOT_A_REVIEWER, reads_the_ranking


class EventRef(Shape):
    slug: str
    title: str
    status: EventStatus


class WeightShare(Shape):
    key: str
    label: str
    article: str
    weight: DecimalText
    percent: DecimalText


class WeightsVersion(Shape):
    """The weights the ranking used; number 0 is the weights published with the call."""

    number: int
    label: str
    reason: str
    created_at: Instant | None
    weights: list[WeightShare]


class CriterionStats(Shape):
    key: str
    label: str
    article: str
    count: int
    mean: DecimalText | None
    median: DecimalText | None
    min: DecimalText | None
    max: DecimalText | None
    range: DecimalText | None
    stdev: DecimalText | None
    disagreement: bool
    disagreement_reason: str
    contribution: DecimalText | None


class RedFlag(Shape):
    code: str
    article: str
    source: str
    criterion: str | None
    value: str
    threshold: str
    message: str
    text: str


class RankedBid(Shape):
    bid_id: int
    title: str
    host_federation: str | None
    rank: int | None
    rank_label: str
    tied: bool
    total: DecimalText | None
    scorecards: int
    expected_scorecards: int
    admitted_reason: str | None
    note: str
    criteria: list[CriterionStats]
    red_flags: list[RedFlag]


class Recusal(Shape):
    member_id: int
    member: str
    bid_id: int
    bid: str
    reason: str


class BidLeftOut(Shape):
    bid_id: int
    title: str
    reason: str


class Sensitivity(OpenShape):
    """How stable the ranking is: the summary and its reasons (scoring.sensitivity declares the rest)."""

    summary: str
    robust: bool | None
    reasons: list[str]


class Ranking(Shape):
    event: EventRef
    statistic: str
    weights_version: WeightsVersion
    leaders: list[int]
    bids: list[RankedBid]
    notes: list[str]
    recusals: list[Recusal]
    withheld: list[BidLeftOut]
    excluded: list[BidLeftOut]
    sensitivity: Sensitivity


@operation("/events/<slug>/ranking", operation_id="getRanking",
           summary="The WCOC's ranking of the bids: totals, per-criterion statistics, red flags, the weights version "
                   "used, recusals and the sensitivity summary. WCOC, Board and secretariat only; a WCOC member "
                   "once their own scorecards are in",
           response=Ranking,
           errors={403: "Not for this caller (bidders never see scores)", 404: "No call with this slug",
                   409: "The caller's declaration of conflicts changed while the ranking was read"})
@writes_on_get
def ranking(slug: str):
    user = api_user()
    if not reads_the_ranking(user):
        return api_error(403, NOT_A_REVIEWER)
    event = get_event(slug)
    if event is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    data = load_scoring(event)
    closed = data.ranking_closed_to(user)
    if closed:
        return api_error(403, closed)
    changed = record_first_showing(data, user)
    if changed:
        return api_error(409, changed)
    return Ranking.model_validate(build_ranking(data, user).as_dict())
