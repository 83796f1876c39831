"""Between the Bid row and the forms and pages: form data for a section, values from a form, the bid's cost."""

from __future__ import annotations

import dataclasses
from datetime import date
from decimal import Decimal

from bids.consultation import ConsultationState, consultation_text
from bids.data import NO_GUARANTEE, BankGuarantee, BidData, Evaluation, RoomRate
from bids.forms import SECTION_FORMS, AmountField, DayField
from bids.models import DOCUMENT_KINDS, Bid
from bids.sections import SECTION_TITLES
from bids.services import SECTION_COLUMNS
from core.money import format_day, format_eur
from finance.rules import BidTerms, payment_schedule


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


def data_as_entered(bid: Bid, section: str, form) -> BidData:
    """The bid as the rules would judge it with the section's values as the form holds them (typed, not saved),
    so that the notes beside a refused form describe what was entered, not the saved state. A field the form
    could not read counts as empty (its own error says why)."""
    values, rates = values_from_form(section, form)
    fields = {f.name for f in dataclasses.fields(BidData)}
    changes = {k: v for k, v in values.items() if k in fields}
    if section == "guarantee":
        offered = values["guarantee_offered"]
        changes["bank_guarantee"] = None if offered is None else NO_GUARANTEE if not offered else BankGuarantee(
            offered=True, bank=values["guarantee_bank"], amount_eur=values["guarantee_amount_eur"],
            valid_until=values["guarantee_valid_until"])
    if section == "evaluation":
        changes["evaluation"] = Evaluation(**{k.removeprefix("eval_"): v for k, v in values.items()})
    if rates is not None:
        changes["room_rates"] = tuple(RoomRate(t, a) for t, a in rates if t or a is not None)
    return dataclasses.replace(bid.to_data(), **changes)


def cost_inputs(reg, data: BidData, *, signal_blocker_required: bool) -> tuple:
    """Everything `bid_cost` reads, as plain values: the regulation (its hash), the bid's figures (amounts as text,
    compared exactly) and whether the call requires a signal blocker. The bid page keeps what the bid costs
    rendered under them."""
    return (reg.sha256, *(None if a is None else str(a) for a in (data.prize_fund_eur, data.fide_contribution_eur)),
            data.guarantee_offered, data.venue_country, signal_blocker_required)


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
        schedule = payment_schedule(reg, terms)  # made from the obligations, which it keeps: computed once
        return schedule.obligations, schedule
    except (ValueError, TypeError):
        return None


def _stored_value(data: dict, name: str):
    """A form field's value in a submitted version's JSON (bids.shape.bid_to_json)."""
    guarantee = data.get("bank_guarantee") or {}
    if name == "guarantee_offered":
        return "yes" if data.get("bank_guarantee") else "no"
    if name.startswith("guarantee_"):
        return guarantee.get(name.removeprefix("guarantee_"))
    if name.startswith("eval_"):
        return (data.get("evaluation") or {}).get(name.removeprefix("eval_"))
    return data.get(name)


def _shown(field, value) -> str:
    """A value as people read it, by the kind of field that took it: Yes/No, 30 October 2015, €220,000.00, the
    label of a choice (a country's or a federation's name); an em dash for nothing entered."""
    if field.type == "BooleanField":
        return "Yes" if value else "No"
    if value is None or value == "":
        return "—"
    if isinstance(field, DayField):
        return format_day(date.fromisoformat(value))
    if isinstance(field, AmountField):
        return format_eur(Decimal(value))
    if field.type in ("RadioField", "SelectField"):
        return next((c.label for c in field.choices if c.value == value), str(value))
    return str(value)


def version_sections(data: dict, reg) -> list[tuple[str, list[tuple[str, str]]]]:
    """A submitted version's particulars laid out as the bid form lays them out: each section's title, then each
    field's label and its value as people read it, in the form's order (the labels are the form's own, with the
    citations of `reg`, the bid's call, filled in)."""
    sections = []
    for section, form_class in SECTION_FORMS.items():
        form = form_class(formdata=None, meta={"csrf": False}, reg=reg)
        rows = [(form[name].label.text, _shown(form[name], _stored_value(data, name)))
                for name in SECTION_COLUMNS[section]]
        if section == "hotel":
            rates = "; ".join(f"{r['room_type']}: {format_eur(Decimal(r['eur_per_night']))}"
                              if r.get("eur_per_night") is not None else r["room_type"]
                              for r in data.get("room_rates") or [])
            rows.append((form.room_rates.label.text, rates or "—"))
        sections.append((SECTION_TITLES[section], rows))
    return sections


def document_kind_label(kind: str) -> str:
    """"The signed bid letter" for signed_letter; the kind itself if unknown."""
    return DOCUMENT_KINDS.get(kind, (kind, ""))[0]


def consultation_of(bid: Bid) -> dict | None:
    """Where the consultation of the host federation on the bid stands (Art. 15.1), for the bid page, the Board's
    page, the dossier, the pack and the API: its state, the citation, the regulation's words and what was recorded.
    None for a bid that is not a sponsor's, or in a call whose regulations have no consultation: nothing is shown.
    Raises nothing."""
    rule = bid.event.regulation.consultation
    state = bid.consultation_state
    if rule is None or not state.applies:
        return None
    reg = bid.event.regulation
    cite = {"consultation": f"Art. {rule.article}", "unforeseen": str(reg.citation("unforeseen"))}
    text = consultation_text(state, consultation=bid.consultation, note=bid.consultation_note,
                             ruling_grounds=bid.consultation_ruling_grounds,
                             ruling_reason=bid.consultation_ruling_reason, cite=cite)
    return {"state": state, "article": rule.article, "rule": rule.text, "text": text,
            "blocks_selection": state.blocks_selection, "may_refer": state.may_refer_to_president,
            "ruling": ({"grounds": bid.consultation_ruling_grounds, "reason": bid.consultation_ruling_reason,
                        "cite": cite["unforeseen"]} if state is ConsultationState.PRESIDENT else None)}
