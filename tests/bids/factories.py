"""Bids for tests: `valid_bid(reg, **overrides)` meets every minimum of the regulation it is given.

Every figure comes from the regulation (the first possible opening date, the minimum prize fund and the least
FIDE contribution for it, the minimum stars and inspectors, a guarantee that covers what it must and is valid
the day after the last payment deadline), so the same factory serves a made-up regulation. Overrides replace
fields as given; nothing is recomputed from them.
"""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from decimal import Decimal

from bids.data import BankGuarantee, BidData, Evaluation, RoomRate
from bids.shape import bid_to_json
from events.regulation import Regulation, default_event_file, load_regulation_file
from finance.rules import minimum_fide_contribution


def regulation() -> Regulation:
    """The 2015 call, as seeded."""
    return load_regulation_file(default_event_file())


def today_for(reg: Regulation) -> date:
    """The day the tests judge a bid on: the day of the bid deadline."""
    return reg.event.bid_deadline.date()


def guarantee_for(reg: Regulation, prize_fund: Decimal, fide_contribution: Decimal, **overrides) -> BankGuarantee:
    """A bank guarantee that covers exactly what the regulation asks and is valid one day past the last deadline."""
    amounts = {"prize_fund": prize_fund, "fide_contribution": fide_contribution}
    amount = sum((amounts[item] for item in reg.guarantee.must_cover), Decimal("0.00"))
    last = reg.last_payment_deadline or reg.schedule.window_end
    g = BankGuarantee(offered=True, bank="PrivatBank", amount_eur=amount, valid_until=last + timedelta(days=1))
    return dataclasses.replace(g, **overrides)


def valid_bid(reg: Regulation, **overrides) -> BidData:
    """A complete web bid (documents attached) meeting every minimum of `reg`, with fields replaced by overrides."""
    opening = reg.possible_opening_dates()[-1]
    prize = reg.prize_fund.minimum
    fide = minimum_fide_contribution(reg, prize)
    bid = BidData(
        applicant_type="federation",
        applicant_name="Chess Federation of Ukraine",
        host_federation="UKR",
        contact_name="Olena Kovalenko",
        contact_email="secretary@example.org",
        opening_date=opening,
        closing_date=opening + timedelta(days=min(reg.closing_offsets())),
        venue_name="Potocki Palace",
        venue_city="Lviv",
        venue_country="UA",
        prize_fund_eur=prize,
        fide_contribution_eur=fide,
        amounts_net_of_taxes=True,
        commits_fide_obligations=True,
        commits_organisational_costs=True,
        accepts_regulations=True,
        hotel_name="Hotel Leopolis",
        hotel_stars=reg.hotel.min_stars,
        room_rates=(RoomRate("single", Decimal("95.00")), RoomRate("double", Decimal("120.00"))),
        wcoc_inspectors_invited=reg.inspection.min_inspectors,
        inspection_expenses_covered=True,
        bank_guarantee=guarantee_for(reg, prize, fide),
        ioc_conflict_free=True,
        signatory_name="Viktor Kapustin",
        signatory_position="President",
        signed_on=today_for(reg) - timedelta(days=11),
        evaluation=Evaluation(
            playing_conditions="The Potocki Palace hall, 400 seats, air-conditioned.",
            visas="Visas on arrival for all players, trainers and officials.",
            security="Police and private security at the hall and the hotel.",
            chess_activity="Over 20,000 registered players.",
            media="National television broadcasts every game.",
            development="School chess programme in the region.",
            climate="October in Lviv: 5 to 14 degrees.",
            taxation="The prize fund is paid net; the organizer pays any local tax.",
        ),
        has_guarantee_document=True,
        has_signed_letter=True,
    )
    return dataclasses.replace(bid, **overrides)


def valid_bid_json(reg: Regulation, **overrides) -> dict:
    """`valid_bid` in the JSON import shape, with keys replaced by overrides (JSON values)."""
    data = bid_to_json(valid_bid(reg))
    data.update(overrides)
    return data
