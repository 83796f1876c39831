"""The life of a contract: its states, the one table of moves (TRANSITIONS) and who may see which version.

Pure: no Flask, no session. `contracts.services` is the only caller that changes a contract's status: it asks
`next_status` for the move (which refuses one the table does not list) and writes it with a compare-and-swap.
Pages ask `allowed_actions` which buttons to offer and `may_view_contract` whether to show a version at all.
"""

from __future__ import annotations

import enum

from contracts.rules.terms import ContractRuleError
from core.lifecycle import Lifecycle


class ContractStatus(enum.StrEnum):
    DRAFT = "draft"            # generated from the selected bid; FIDE's working copy, not shown to the organizer
    ISSUED = "issued"          # frozen: terms snapshot and PDF stored with their SHA-256; milestones tracked
    SIGNED = "signed"          # the countersigned PDF is on file
    SUPERSEDED = "superseded"  # a correction (a new version) replaced it; its record stays
    DISCARDED = "discarded"    # a draft that was never issued
    # The Board's decision was corrected and selected another bid: no new payments; what was paid stays on
    # record and is refunded by reversing it.
    CLOSED = "closed"

    @property
    def label(self) -> str:
        return {"draft": "Draft", "issued": "Issued, awaiting countersignature", "signed": "Signed",
                "superseded": "Superseded by a correction", "discarded": "Discarded draft",
                "closed": "Closed: the Board's decision was corrected"}[self.value]

    @property
    def is_frozen(self) -> bool:
        """Issued once: its terms, its PDF and its milestones never change again."""
        return self in (ContractStatus.ISSUED, ContractStatus.SIGNED, ContractStatus.SUPERSEDED,
                        ContractStatus.CLOSED)

    @property
    def in_force(self) -> bool:
        """The version whose milestones are tracked, reminded and paid."""
        return self in (ContractStatus.ISSUED, ContractStatus.SIGNED)

    @property
    def takes_reversals(self) -> bool:
        """Payments may be reversed: on the version in force, and on a contract closed by a correction of the
        decision (that is how what was paid is refunded)."""
        return self.in_force or self is ContractStatus.CLOSED

    @property
    def is_draft(self) -> bool:
        return self is ContractStatus.DRAFT

    @property
    def has_pdf(self) -> bool:
        """A PDF to read: the draft rendered on the spot, or the one stored when it was issued."""
        return self is not ContractStatus.DISCARDED

    @property
    def badge(self) -> str:
        """The css class of the status badge."""
        return "pass" if self is ContractStatus.SIGNED else "pending" if self.in_force else "na"

    @property
    def visible_to_organizer(self) -> bool:
        """The organizer sees what FIDE issued, not FIDE's drafts."""
        return self.is_frozen


class ContractAction(enum.StrEnum):
    ISSUE = "issue"
    SIGN = "sign"
    SUPERSEDE = "supersede"
    DISCARD = "discard"
    CLOSE = "close"


# (status, action) -> new status. Anything not listed is refused.
TRANSITIONS: dict[tuple[ContractStatus, ContractAction], ContractStatus] = {
    (ContractStatus.DRAFT, ContractAction.ISSUE): ContractStatus.ISSUED,
    (ContractStatus.DRAFT, ContractAction.DISCARD): ContractStatus.DISCARDED,
    (ContractStatus.ISSUED, ContractAction.SIGN): ContractStatus.SIGNED,
    # A correction issued as a new version replaces the one in force, signed or not.
    (ContractStatus.ISSUED, ContractAction.SUPERSEDE): ContractStatus.SUPERSEDED,
    (ContractStatus.SIGNED, ContractAction.SUPERSEDE): ContractStatus.SUPERSEDED,
    # A correction of the Board's decision that selects another bid closes the old winner's contract.
    (ContractStatus.ISSUED, ContractAction.CLOSE): ContractStatus.CLOSED,
    (ContractStatus.SIGNED, ContractAction.CLOSE): ContractStatus.CLOSED,
}

_STATUS_PHRASES = {ContractStatus.DRAFT: "a draft contract", ContractStatus.ISSUED: "an issued contract",
                   ContractStatus.SIGNED: "a signed contract", ContractStatus.SUPERSEDED: "a superseded contract",
                   ContractStatus.DISCARDED: "a discarded draft",
                   ContractStatus.CLOSED: "a contract closed by a correction of the Board's decision"}
_ACTION_PARTICIPLES = {ContractAction.ISSUE: "issued", ContractAction.SIGN: "signed",
                       ContractAction.SUPERSEDE: "superseded", ContractAction.DISCARD: "discarded",
                       ContractAction.CLOSE: "closed"}


CONTRACT_LIFECYCLE = Lifecycle(
    "contract", ContractStatus, ContractAction, TRANSITIONS, _STATUS_PHRASES, _ACTION_PARTICIPLES,
    error=ContractRuleError,
    refusal=lambda current, action: f"{_STATUS_PHRASES[current].capitalize()} cannot be "
                                    f"{_ACTION_PARTICIPLES[action]}.")


def next_status(current: ContractStatus | str, action: ContractAction | str) -> ContractStatus:
    """The status `action` leads to. Raises ContractRuleError for an unknown status or action, or a move
    TRANSITIONS does not allow ("a signed contract cannot be issued")."""
    return CONTRACT_LIFECYCLE.next(current, action)


def allowed_actions(current: ContractStatus | str) -> list[ContractAction]:
    """The actions TRANSITIONS allows from `current`. Raises ContractRuleError (a ValueError) for an unknown
    status."""
    return CONTRACT_LIFECYCLE.allowed(current)


def may_view_contract(*, is_admin: bool, is_owner: bool, status: ContractStatus | str) -> bool:
    """The secretariat sees every contract; the organizer (the bid's owner) sees the versions FIDE issued to
    it; nobody else sees any (they get 404). Raises ValueError for an unknown status."""
    return is_admin or (is_owner and ContractStatus(status).visible_to_organizer)
