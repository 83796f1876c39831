"""The one shape of a rule's verdict: it feeds the form error, the compliance report, the dossier and the API."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "n/a"
    # A required document that is not attached yet (the JSON import cannot carry files).
    PENDING = "pending"


@dataclass(frozen=True)
class Finding:
    """One item of the compliance report.

    `article` cites the regulations ("15.2(c)"), `field` names the form field it belongs to (so the form can
    show the message beside it), `message` is a sentence a person understands, `value` is what was entered,
    formatted for display ("" when nothing was entered).
    """

    code: str
    article: str
    field: str
    outcome: Outcome
    message: str
    value: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAIL

    @property
    def blocks_submission(self) -> bool:
        """A failed check, or a document still to attach: the bid cannot be submitted while one remains."""
        return self.outcome in (Outcome.FAIL, Outcome.PENDING)

    def as_text(self) -> str:
        """"Art. 15.2(c): ... (you entered €150,000.00)." as shown in a form and printed by the CLI."""
        text = f"Art. {self.article}: {self.message}"
        if self.value and self.outcome is Outcome.FAIL:
            text = text.rstrip(".") + f" (you entered {self.value})."
        return text

    def as_dict(self) -> dict:
        return {"code": self.code, "article": self.article, "field": self.field,
                "outcome": self.outcome.value, "message": self.message, "value": self.value}
