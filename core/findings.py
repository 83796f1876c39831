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
    # A sanity check of a figure (not a rule): shown so the figure is checked, never a refusal.
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One item of the compliance report.

    `article` cites the regulations ("15.2(c)"), only for a rule the regulations contain ("" otherwise);
    `source` says where the rule comes from as shown ("Art. 15.2(c)", "Bidding procedure: bank guarantee terms",
    "Sanity check: prize fund figure") and `kind` which of the three it is; `field` names the form field it
    belongs to (so the form can show the message beside it), `message` is a sentence a person understands,
    `value` is what was entered, formatted for display ("" when nothing was entered).
    """

    code: str
    article: str
    field: str
    outcome: Outcome
    message: str
    value: str = ""
    source: str = ""
    kind: str = "regulation"

    @property
    def cite(self) -> str:
        """How the finding cites its source: "Art. 15.2(c)", "Bidding procedure: …" or "Sanity check: …"."""
        return self.source or (f"Art. {self.article}" if self.article else "")

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAIL

    @property
    def blocks_submission(self) -> bool:
        """A failed check, or a document still to attach: the bid cannot be submitted while one remains."""
        return self.outcome in (Outcome.FAIL, Outcome.PENDING)

    def as_text(self) -> str:
        """"Art. 15.2(c): ... (you entered €150,000.00)." as shown in a form and printed by the CLI."""
        text = f"{self.cite}: {self.message}"
        if self.value and self.outcome in (Outcome.FAIL, Outcome.WARNING):
            text = text.rstrip(".") + f" (you entered {self.value})."
        return text

    def as_dict(self) -> dict:
        return {"code": self.code, "article": self.article, "field": self.field,
                "outcome": self.outcome.value, "message": self.message, "value": self.value,
                "kind": self.kind, "cite": self.cite}
