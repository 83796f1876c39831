"""A bid's data as the rules see it: `BidData` and its parts, the evaluation texts, and the form's limits.

Plain frozen dataclasses, with no behaviour of their own beyond what they hold: the database layer builds them
(`Bid.to_data()`), the JSON shape reads and writes them (bids.shape) and the compliance checks judge them
(bids.rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date
from decimal import Decimal

APPLICANT_TYPES = ("federation", "sponsor")

# Form limits, shared by the web form and the JSON import.
TEXT_MAX_CHARS = 200
EVALUATION_MAX_CHARS = 5000


@dataclass(frozen=True)
class RoomRate:
    """A special room rate for visitors, meals included (Art. 15.2(g))."""

    room_type: str | None
    eur_per_night: Decimal | None


@dataclass(frozen=True)
class BankGuarantee:
    """The bank guarantee of Art. 15.2(j). `offered=False` means none is offered (it is optional)."""

    offered: bool
    bank: str | None = None
    amount_eur: Decimal | None = None
    valid_until: date | None = None


NO_GUARANTEE = BankGuarantee(offered=False)


@dataclass(frozen=True)
class EvaluationField:
    """A free-text part of the bid that informs one criterion of Art. 15.5."""

    key: str
    label: str
    criterion: str


EVALUATION_FIELDS: tuple[EvaluationField, ...] = (
    EvaluationField("playing_conditions", "Playing conditions", "c"),
    EvaluationField("visas", "Visas for players, trainers and officials", "d"),
    EvaluationField("security", "Security assistance for players and officials", "e"),
    EvaluationField("chess_activity", "Chess activity in the host country", "f"),
    EvaluationField("media", "Media possibilities", "g"),
    EvaluationField("development", "Development of chess worldwide", "h"),
    EvaluationField("climate", "Climate during the match", "i"),
    EvaluationField("taxation", "Taxation of the prize fund in the host country", "j"),
)


@dataclass(frozen=True)
class Evaluation:
    """The bidder's texts on the criteria of Art. 15.5 c–j (see EVALUATION_FIELDS); None when not written yet."""

    playing_conditions: str | None = None
    visas: str | None = None
    security: str | None = None
    chess_activity: str | None = None
    media: str | None = None
    development: str | None = None
    climate: str | None = None
    taxation: str | None = None


@dataclass(frozen=True)
class BidData:
    """Everything a bid holds, as the rules see it. Every field is None (or empty) until filled in.

    The field names are those of the JSON import and of the web form. The three document flags are set by
    the database layer; the JSON import carries no files, so it sets `documents_known=False` and a missing
    document is then PENDING rather than a failure.
    """

    applicant_type: str | None = None
    applicant_name: str | None = None
    host_federation: str | None = None
    contact_name: str | None = None
    contact_email: str | None = None
    opening_date: date | None = None
    closing_date: date | None = None
    venue_name: str | None = None
    venue_city: str | None = None
    venue_country: str | None = None
    prize_fund_eur: Decimal | None = None
    fide_contribution_eur: Decimal | None = None
    amounts_net_of_taxes: bool | None = None
    commits_fide_obligations: bool | None = None
    commits_organisational_costs: bool | None = None
    accepts_regulations: bool | None = None
    hotel_name: str | None = None
    hotel_stars: int | None = None
    room_rates: tuple[RoomRate, ...] = ()
    wcoc_inspectors_invited: int | None = None
    inspection_expenses_covered: bool | None = None
    bank_guarantee: BankGuarantee | None = None
    ioc_conflict_free: bool | None = None
    signatory_name: str | None = None
    signatory_position: str | None = None
    signed_on: date | None = None
    evaluation: Evaluation = field(default_factory=Evaluation)
    has_guarantee_document: bool = False
    has_signed_letter: bool = False
    documents_known: bool = True

    @property
    def guarantee_offered(self) -> bool:
        return self.bank_guarantee is not None and self.bank_guarantee.offered


DOCUMENT_FIELDS = ("has_guarantee_document", "has_signed_letter", "documents_known")
# The keys of the JSON import, in order: every BidData field but the document flags.
JSON_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(BidData) if f.name not in DOCUMENT_FIELDS)
