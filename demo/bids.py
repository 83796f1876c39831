"""Demo bids: three compliant bids for the 2015 call from different federations (one a home match), one
that fails a rule, and a half-filled draft in the practice call. Made through the real services, at dates
inside the 2015 call's window, so the audit log and the versions are what a real run would leave."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from html import escape

import flask
from sqlalchemy import select

from accounts.services import find_user_by_email
from bids import services
from bids.models import Bid
from core.db import db
from demo.signatures import signed_by
from events.lifecycle import EventStatus
from events.regulation import published_schedule
from events.services import get_event
from evidence.pdf import html_to_pdf
from finance.rules import minimum_fide_contribution


@dataclass(frozen=True)
class DemoBid:
    owner: str
    values: dict
    rates: tuple[tuple[str, str], ...]
    submit: bool = True
    consultation: str | None = None


EVAL = {
    "eval_playing_conditions": "A dedicated hall with 400 seats, a separate press centre and a VIP area.",
    "eval_visas": "Visas on arrival for every player, trainer and official; the ministry has confirmed in writing.",
    "eval_security": "Police and private security at the hall and the official hotel, around the clock.",
    "eval_chess_activity": "Thousands of registered players and a national league in six divisions.",
    "eval_media": "National television broadcasts every game; an international stream with commentary.",
    "eval_development": "A school programme in 300 schools, extended for the match.",
    "eval_climate": "Mild in October, 10 to 20 degrees.",
    "eval_taxation": "The prize fund is paid net; the organiser bears any local tax.",
}


def _above(reg, offset: str) -> Decimal:
    """A demo bidder's offer: the call's minimum prize fund plus `offset` (negative for the failing bid)."""
    return reg.prize_fund.minimum + Decimal(offset)


def _common(reg, *, opening: date, prize: Decimal, fide: Decimal | None, guarantee: bool, signed: date) -> dict:
    """The values every demo bid shares; FIDE's contribution is the least the call allows for the prize fund."""
    prize = Decimal(prize)
    fide = minimum_fide_contribution(reg, prize) if fide is None else Decimal(fide)
    closing = opening + timedelta(days=min(reg.allowed_closing_offsets()))
    last = reg.last_payment_deadline or reg.schedule.window_end
    out = {
        "opening_date": opening, "closing_date": closing, "prize_fund_eur": Decimal(prize),
        "fide_contribution_eur": Decimal(fide), "amounts_net_of_taxes": True, "commits_fide_obligations": True,
        "commits_organisational_costs": True, "accepts_regulations": True, "ioc_conflict_free": True,
        "inspection_expenses_covered": True, "wcoc_inspectors_invited": reg.inspection.min_inspectors,
        "guarantee_offered": guarantee, "signed_on": signed, **EVAL,
    }
    if guarantee:
        out.update(guarantee_bank="Demo Bank", guarantee_valid_until=last + timedelta(days=30),
                   guarantee_amount_eur=Decimal(prize) + Decimal(fide))
    return out


def _demo_bids(reg) -> list[DemoBid]:
    # The selected sponsor's bid (and so the contract) copies the schedule the regulations publish (game 1 on 13
    # October for 2015); the others take the first and last opening dates the call offers.
    dates = reg.possible_opening_dates()
    published = published_schedule(reg)
    first, second = dates[0], dates[-1]
    third = published[0].on if published else dates[len(dates) // 2]
    signed = reg.event.bid_deadline.date() - timedelta(days=20)
    return [
        DemoBid("bidder@example.org", {
            "applicant_type": "federation", "applicant_name": "Ukrainian Chess Federation", "host_federation": "UKR",
            "contact_name": "Oksana Bidder", "contact_email": "bidder@example.org", "venue_name": "Potocki Palace",
            "venue_city": "Lviv", "venue_country": "UA", "hotel_name": "Hotel Leopolis", "hotel_stars": 5,
            "signatory_name": "Viktor Kapustin", "signatory_position": "President",
            **_common(reg, opening=second, prize=_above(reg, "20000"), fide=None, guarantee=True, signed=signed)},
            (("single", "95.00"), ("double", "120.00"))),
        DemoBid("georgia@example.org", {
            "applicant_type": "federation", "applicant_name": "Georgian Chess Federation", "host_federation": "GEO",
            "contact_name": "Nino Bidder", "contact_email": "georgia@example.org", "venue_name": "Tbilisi Chess Palace",
            "venue_city": "Tbilisi", "venue_country": "GE", "hotel_name": "Radisson Blu Iveria", "hotel_stars": 5,
            "signatory_name": "Gia Giorgadze", "signatory_position": "President",
            **_common(reg, opening=first, prize=_above(reg, "50000"), fide=None, guarantee=False, signed=signed)},
            (("single", "110.00"), ("double", "140.00"), ("suite", "220.00"))),
        DemoBid("sponsor@example.org", {
            "applicant_type": "sponsor", "applicant_name": "Gulf Chess Promotions LLC", "host_federation": "UAE",
            "contact_name": "Omar Sponsor", "contact_email": "sponsor@example.org",
            "venue_name": "Emirates Palace Conference Centre", "venue_city": "Abu Dhabi", "venue_country": "AE",
            "hotel_name": "Emirates Palace", "hotel_stars": 5, "signatory_name": "Omar Sponsor",
            "signatory_position": "Managing Director",
            **_common(reg, opening=third, prize=_above(reg, "100000"), fide=None, guarantee=True, signed=signed)},
            (("single", "180.00"), ("double", "210.00")), consultation="agreed"),
        DemoBid("spain@example.org", {
            "applicant_type": "federation", "applicant_name": "Federación Española de Ajedrez",
            "host_federation": "ESP",
            "contact_name": "Lucia Bidder", "contact_email": "spain@example.org", "venue_name": "Palacio de Congresos",
            "venue_city": "Madrid", "venue_country": "ES", "hotel_name": "Hotel Centro", "hotel_stars": 3,
            "signatory_name": "Javier Ochoa", "signatory_position": "President",
            **_common(reg, opening=second, prize=_above(reg, "-20000"), fide=None, guarantee=False, signed=signed)},
            (("single", "80.00"),), submit=False),
    ]


def _letter(title: str, body: str) -> bytes:
    """A demo letter as a bidder would upload it: a tagged PDF with its title and language, like Gambit's own."""
    title, body = escape(title), escape(body)
    return html_to_pdf(f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
                       f"<body><h1>{title}</h1><p>{body}</p><p>Signed and stamped.</p></body></html>")


def seed_bids(*, now: datetime) -> list[str]:
    """Idempotent: a bid is made only for an owner who has none in that call yet."""
    out: list[str] = []
    event = get_event("fwwcm-2015")
    if event is None:
        return out
    reg = event.regulation
    admin = find_user_by_email("admin@example.org")
    when = reg.event.bid_deadline - timedelta(days=10)  # inside the call, before its deadline
    if not EventStatus(event.status).accepts_bids:
        return out
    upload_dir = flask.current_app.config["UPLOAD_DIR"]
    max_bytes = flask.current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024
    for spec in _demo_bids(reg):
        owner = find_user_by_email(spec.owner)
        if owner is None or db.session.scalars(select(Bid).where(Bid.event_id == event.id,
                                                                 Bid.owner_id == owner.id)).first():
            continue
        bid = services.create_bid(event, owner=owner, actor=owner, now=when)
        # Section by section, as the bidder's form saves it (the same guarded, audited service).
        for section, columns in services.SECTION_COLUMNS.items():
            values = {name: spec.values[name] for name in columns if name in spec.values}
            rates: list[tuple[str | None, Decimal | None]] | None = (
                [(t, Decimal(a)) for t, a in spec.rates] if section == "hotel" else None)
            services.save_section(bid, section, values, actor=owner, now=when, revision=bid.revision,
                                  room_rates=rates)
        letter = _letter(f"Bid of {spec.values['applicant_name']}",
                         f"We bid to organise the {reg.event.title} in {spec.values['venue_city']}.")
        # The letter carries its signatory's digital signature, issued by the demo CA (which is on the trust list).
        letter = signed_by(letter, spec.values.get("signatory_name") or "Signatory", spec.values["applicant_name"],
                           reason="Letter of application")
        services.store_document(bid, "signed_letter", filename="signed-bid-letter.pdf", content=letter,
                                upload_dir=upload_dir, max_bytes=max_bytes, actor=owner, now=when)
        if spec.values.get("guarantee_offered"):
            guarantee = signed_by(_letter("Bank guarantee", f"Guarantee of EUR "
                                          f"{spec.values['guarantee_amount_eur']}."),
                                  "Guarantees desk", spec.values.get("guarantee_bank") or "Demo bank",
                                  reason="Bank guarantee")
            services.store_document(bid, "guarantee", filename="bank-guarantee.pdf", content=guarantee,
                                    upload_dir=upload_dir, max_bytes=max_bytes, actor=owner, now=when)
        if spec.submit:
            services.submit_bid(bid, actor=owner, now=when + timedelta(hours=1))
        if spec.consultation and admin is not None:
            services.record_consultation(bid, outcome=spec.consultation, note="Letter of the federation on file.",
                                         actor=admin, now=when + timedelta(days=2))
        out.append(f"demo bid: {spec.values['applicant_name']} ({bid.state.label.lower()})")
    out += _practice_draft(now=now)
    return out


def _practice_draft(*, now: datetime) -> list[str]:
    event = get_event("fwwcm-practice")
    owner = find_user_by_email("bidder@example.org")
    if event is None or owner is None or db.session.scalars(
            select(Bid).where(Bid.event_id == event.id, Bid.owner_id == owner.id)).first():
        return []
    bid = services.create_bid(event, owner=owner, actor=owner, now=now)
    # Saved section by section, as the bidder's form saves it (so the draft's compliance report is kept with it).
    services.save_section(bid, "dates_venue", {"venue_name": "Palace of Sports", "venue_city": "Kyiv",
                                               "venue_country": "UA"}, actor=owner, now=now, revision=bid.revision)
    # the contribution to FIDE is short of the minimum share: the one rule this draft fails besides missing parts
    prize_fund = event.regulation.prize_fund.minimum
    services.save_section(bid, "money", {
        "prize_fund_eur": prize_fund,
        "fide_contribution_eur": minimum_fide_contribution(event.regulation, prize_fund) - Decimal("5000")},
        actor=owner, now=now, revision=bid.revision)
    return [f"demo draft: practice call, {bid.title} (half filled, one rule failing)"]


