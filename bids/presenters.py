"""Between the Bid row and the forms and pages: form data for a section, values from a form, the bid's cost."""

from __future__ import annotations

from bids.models import Bid
from bids.rules import BidData
from bids.services import SECTION_COLUMNS
from finance.rules import BidTerms, obligations, payment_schedule


def form_data_for(bid: Bid, section: str) -> dict:
    """The section's current values, shaped for its form."""
    data = {name: getattr(bid, name) for name in SECTION_COLUMNS[section]}
    data["revision"] = str(bid.revision)
    if section == "guarantee":
        offered = bid.guarantee_offered
        data["guarantee_offered"] = "" if offered is None else ("yes" if offered else "no")
    if section == "hotel":
        data["room_rates"] = [{"room_type": r.room_type, "eur_per_night": r.eur_per_night}
                              for r in bid.room_rates] or [{}]
    for key in ("host_federation", "venue_country", "applicant_type"):
        if key in data and data[key] is None:
            data[key] = ""
    return data


def values_from_form(section: str, form) -> tuple[dict, list | None]:
    """The column values a validated section form gives, and its room rates (hotel only)."""
    values = {}
    for name in SECTION_COLUMNS[section]:
        value = form[name].data
        if isinstance(value, str):
            value = value or None
        values[name] = value
    if section == "guarantee":
        values["guarantee_offered"] = {"yes": True, "no": False}.get(form.guarantee_offered.data or "")
    rates = None
    if section == "hotel":
        rates = [((entry.form.room_type.data or None), entry.form.eur_per_night.data) for entry in form.room_rates]
    return values, rates


def bid_cost(reg, data: BidData, *, signal_blocker_required: bool = False):
    """(obligations, schedule) from finance/, or None while the figures it needs are missing.

    `signal_blocker_required`: what the secretariat recorded on the call (Event.signal_blocker_required); the
    blocker is owed only "if required by FIDE"."""
    if data.prize_fund_eur is None or data.fide_contribution_eur is None or not data.venue_country:
        return None
    try:
        terms = BidTerms(prize_fund=data.prize_fund_eur, fide_contribution=data.fide_contribution_eur,
                         guarantee_offered=data.guarantee_offered, venue_country=data.venue_country,
                         signal_blocker_required=signal_blocker_required)
        return obligations(reg, terms), payment_schedule(reg, terms)
    except (ValueError, TypeError):
        return None
