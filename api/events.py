"""The calls for bids: /events and /events/<slug>, with the figures bids are judged by (from the call's data)."""

from __future__ import annotations

from api.auth import api_error
from api.routing import operation
from api.shapes import Amount, Day, DecimalText, Instant, Shape, amount
from core.urls import external_url
from events.lifecycle import EventStatus
from events.models import Event
from events.services import all_events, get_event


class EventRegulation(Shape):
    version: int
    sha256: str


class EventSummary(Shape):
    """A call for bids as listed."""

    slug: str
    title: str
    status: EventStatus
    practice: bool
    bid_deadline: Instant
    regulation: EventRegulation
    url: str


class Window(Shape):
    start: Day
    end: Day
    article: str


class Player(Shape):
    name: str
    federation: str
    country: str


class PrizeFundRule(Shape):
    minimum: Amount
    article: str
    net_of_taxes_required: bool


class FideContributionRule(Shape):
    min_share_of_prize_fund: DecimalText
    article: str


class HotelRule(Shape):
    min_stars: int
    article: str


class InspectionRule(Shape):
    min_inspectors: int
    article: str


class Criterion(Shape):
    key: str
    label: str
    weight: DecimalText
    article: str


class EventDetail(EventSummary):
    """One call, with the figures bids are judged by."""

    window: Window
    possible_opening_dates: list[Day]
    players: list[Player]
    prize_fund: PrizeFundRule
    fide_contribution: FideContributionRule
    hotel: HotelRule
    inspection: InspectionRule
    criteria: list[Criterion]


class EventList(Shape):
    events: list[EventSummary]


def _summary_fields(event: Event) -> dict:
    reg, version = event.regulation, event.regulation_version
    if version is None:  # a call is loaded with its regulation (events.services.load_event)
        raise LookupError(f"the call {event.slug!r} has no regulation version")
    return {"slug": event.slug, "title": event.title, "status": event.state, "practice": reg.event.practice,
            "bid_deadline": reg.event.bid_deadline,
            "regulation": EventRegulation(version=version.number, sha256=version.sha256),
            "url": external_url("events.public", slug=event.slug)}


def event_summary(event: Event) -> EventSummary:
    """The call as listed. Raises LookupError for a call without a regulation version (none is loaded so)."""
    return EventSummary(**_summary_fields(event))


def event_detail(event: Event) -> EventDetail:
    """The call with the figures of its regulation. Raises LookupError as event_summary does."""
    reg = event.regulation
    s = reg.schedule
    return EventDetail(
        **_summary_fields(event),
        window=Window(start=s.window_start, end=s.window_end, article=s.window_article),
        possible_opening_dates=reg.possible_opening_dates(),
        players=[Player(name=p.name, federation=p.federation, country=p.country) for p in reg.players],
        prize_fund=PrizeFundRule(minimum=amount(reg.prize_fund.minimum), article=reg.prize_fund.bid_article,
                                 net_of_taxes_required=reg.prize_fund.net_of_taxes_required),
        fide_contribution=FideContributionRule(
            min_share_of_prize_fund=str(reg.fide_contribution.min_share_of_prize_fund),
            article=reg.fide_contribution.bid_article),
        hotel=HotelRule(min_stars=reg.hotel.min_stars, article=reg.hotel.article),
        inspection=InspectionRule(min_inspectors=reg.inspection.min_inspectors, article=reg.inspection.article),
        criteria=[Criterion(key=c.key, label=c.label, weight=str(c.weight), article=c.article)
                  for c in reg.criteria])


@operation("/events", operation_id="listEvents", summary="The calls for bids", response=EventList)
def events():
    return EventList(events=[event_summary(e) for e in all_events()])


@operation("/events/<slug>", operation_id="getEvent", summary="One call, with the figures bids are judged by",
           response=EventDetail, errors={404: "No call with this slug"})
def event(slug: str):
    found = get_event(slug)
    if found is None:
        return api_error(404, f"No call with the slug {slug!r}.")
    return event_detail(found)
