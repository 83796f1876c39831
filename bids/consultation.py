"""Art. 15.1 on a sponsor's bid: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM.
If the federation refuses or is unable to co-operate, FIDE may still accept a proposal from a potential sponsor."

Pure rules, no Flask and no session. The consultation applies to a sponsor's bid only: a federation's bid has no
consultation state at all (not "pending", not "not needed": nothing is shown). Where the host federation refused or
was unable to co-operate, the bid can be selected once FIDE has recorded that it accepts the sponsor's proposal
nonetheless. The regulations give no waiver of the consultation: a case they do not cover, or an unforeseen event,
goes to the FIDE President for final decision under Art. 16, and is recorded as such (which ground, and why).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

# The host federation's answer, as stored in Bid.consultation ("pending": none recorded yet).
CONSULTATION = ("pending", "agreed", "refused", "unable")
CONSULTATION_LABELS = {"pending": "No answer recorded yet", "agreed": "The federation agreed",
                       "refused": "The federation refused to co-operate",
                       "unable": "The federation is unable to co-operate"}
# The answers after which "FIDE may still accept a proposal from a potential sponsor".
DECLINED = frozenset({"refused", "unable"})

# Art. 16: "any grounds that are not covered or any unforeseen event shall be referred to the FIDE President, for
# final decision". The two grounds, as stored in Bid.consultation_ruling_grounds.
RULING_GROUNDS = {"not_covered": "a ground not covered by the regulations", "unforeseen": "an unforeseen event"}

FEDERATION_ONLY = "FIDE consults the host federation on a sponsor's bid only; {title} is not a sponsor's bid."
ACCEPTANCE_NEEDS_DECLINE = ("FIDE's acceptance of the sponsor's proposal nonetheless is recorded only when the "
                            "federation refuses or is unable to co-operate.")


class ConsultationState(enum.StrEnum):
    """Where the consultation of the host federation on a sponsor's bid stands."""

    NOT_APPLICABLE = "not_applicable"    # not a sponsor's bid: no consultation, nothing shown
    PENDING = "pending"                  # no answer recorded, no decision of the President
    AGREED = "agreed"                    # the federation agreed
    DECLINED = "declined"                # refused or unable; FIDE has not (yet) accepted the proposal nonetheless
    ACCEPTED = "accepted"                # refused or unable, and FIDE accepts the sponsor's proposal nonetheless
    PRESIDENT = "president"              # no answer; the FIDE President decided the case under Art. 16

    @property
    def applies(self) -> bool:
        """A sponsor's bid: the consultation is shown (bid page, Board, dossier, API) and may be recorded."""
        return self is not ConsultationState.NOT_APPLICABLE

    @property
    def blocks_selection(self) -> bool:
        """The bid cannot be selected: no answer recorded, or the federation declined and FIDE has not accepted
        the sponsor's proposal nonetheless."""
        return self in (ConsultationState.PENDING, ConsultationState.DECLINED)

    @property
    def may_refer_to_president(self) -> bool:
        """Only while no answer is recorded can the case go to the President (Art. 16): an answer, agreed or not,
        is covered by Art. 15.1."""
        return self is ConsultationState.PENDING


def consultation_state(*, applicant_type: str | None, consultation: str, fide_accepts: bool,
                       ruling_grounds: str | None) -> ConsultationState:
    """Where the consultation on a bid stands (see ConsultationState). Raises nothing."""
    if applicant_type != "sponsor":
        return ConsultationState.NOT_APPLICABLE
    if consultation == "agreed":
        return ConsultationState.AGREED
    if consultation in DECLINED:
        return ConsultationState.ACCEPTED if fide_accepts else ConsultationState.DECLINED
    if ruling_grounds:
        return ConsultationState.PRESIDENT
    return ConsultationState.PENDING


def consultation_text(state: ConsultationState, *, consultation: str, note: str, ruling_grounds: str | None,
                      ruling_reason: str | None, cite: Mapping[str, str]) -> str:
    """What the bid page, the Board's page, the dossier, the pack and the API say of the consultation. `cite` maps
    "consultation" and "unforeseen" to their citations ("Art. 15.1", "Art. 16"). "" when it does not apply."""
    noted = f" ({note})" if note else ""
    answer = CONSULTATION_LABELS.get(consultation, consultation)
    if state is ConsultationState.NOT_APPLICABLE:
        return ""
    if state is ConsultationState.PENDING:
        return (f"{cite['consultation']}: pending: the host federation's answer is not recorded; the bid cannot be "
                "selected until it is.")
    if state is ConsultationState.AGREED:
        return f"{cite['consultation']}: {answer}{noted}."
    if state is ConsultationState.DECLINED:
        return (f"{cite['consultation']}: {answer}{noted}. FIDE may still accept the sponsor's proposal; until it "
                "records that it does, the bid cannot be selected.")
    if state is ConsultationState.ACCEPTED:
        return f"{cite['consultation']}: {answer}{noted}; FIDE accepts the sponsor's proposal nonetheless."
    return (f"{cite['unforeseen']}: referred to the FIDE President as "
            f"{RULING_GROUNDS.get(ruling_grounds or '', ruling_grounds)}; the President's final decision, that the "
            "bid may be selected without the host federation's answer: "
            f"{ruling_reason}")


def check_acceptance(outcome: str, fide_accepts: bool) -> str | None:
    """Why FIDE's acceptance cannot go with this answer (`ACCEPTANCE_NEEDS_DECLINE`), or None. Raises nothing."""
    return ACCEPTANCE_NEEDS_DECLINE if fide_accepts and outcome not in DECLINED else None
