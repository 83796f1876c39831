"""The bid form's sections: which fields each holds, in order, with their titles; findings grouped by them.

The web form saves one section at a time, the compliance report and the Board's dossier group findings the same
way, so the layout is declared once here.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.findings import Finding

# The form's sections, in order, and the BidData fields each holds; findings are grouped by them.
SECTIONS: dict[str, tuple[str, ...]] = {
    "applicant": ("applicant_type", "applicant_name", "host_federation", "contact_name", "contact_email",
                  "ioc_conflict_free"),
    "dates_venue": ("opening_date", "closing_date", "venue_name", "venue_city", "venue_country"),
    "money": ("prize_fund_eur", "fide_contribution_eur", "amounts_net_of_taxes"),
    "commitments": ("commits_fide_obligations", "commits_organisational_costs", "accepts_regulations"),
    "hotel": ("hotel_name", "hotel_stars", "room_rates"),
    "inspection": ("wcoc_inspectors_invited", "inspection_expenses_covered"),
    "guarantee": ("bank_guarantee", "has_guarantee_document"),
    "signature": ("signatory_name", "signatory_position", "signed_on", "has_signed_letter"),
    "evaluation": ("evaluation",),
}

SECTION_TITLES: dict[str, str] = {
    "applicant": "Applicant",
    "dates_venue": "Dates and venue",
    "money": "Prize fund and contribution to FIDE",
    "commitments": "Commitments",
    "hotel": "Official hotel",
    "inspection": "Inspection by the WCOC",
    "guarantee": "Bank guarantee",
    "signature": "Signature",
    "evaluation": "Evaluation",
}

_FIELD_SECTION = {name: section for section, names in SECTIONS.items() for name in names}


def section_of(field_name: str) -> str:
    """The section a finding's field belongs to ("bank_guarantee.bank" -> "guarantee").

    Raises KeyError for a field that is in no section.
    """
    return _FIELD_SECTION[field_name.split(".", 1)[0].split("[", 1)[0]]


def findings_by_section(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """The findings grouped by SECTIONS, every section present and in order; raises KeyError for an unknown field."""
    out: dict[str, list[Finding]] = {name: [] for name in SECTIONS}
    for f in findings:
        out[section_of(f.field)].append(f)
    return out
